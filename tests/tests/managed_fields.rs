//! `metadata.managedFields` through the aggregator: kubectl's writes are recorded under
//! its field managers as upstream records them, fields move between managers, and a
//! client without `fieldManager` is named by its User-Agent.

use http::Method;
use kas_e2e::client::{Proto, request_with_body};
use kas_e2e::{Role, TestCluster, start_cluster};
use serde_json::{Value, json};

fn ok(c: &TestCluster, args: &[&str]) -> String {
    let out = c.kubectl(args);
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The object's entries as (manager, operation, apiVersion, fieldsV1), and whether every
/// entry has the rest of upstream's shape.
fn entries(c: &TestCluster, args: &[&str]) -> Vec<(String, String, String, Value)> {
    let mut args = args.to_vec();
    args.extend(["-o", "json", "--show-managed-fields"]);
    let obj: Value = serde_json::from_str(&ok(c, &args)).unwrap();
    let managed = obj["metadata"]["managedFields"].as_array().cloned();
    managed
        .unwrap_or_default()
        .into_iter()
        .map(|e| {
            assert_eq!(e["fieldsType"], "FieldsV1", "{e}");
            let time = e["time"].as_str().unwrap_or("");
            assert!(time.ends_with('Z') && time.len() == 20, "{e}");
            let s = |k: &str| e[k].as_str().unwrap_or("").to_owned();
            (
                s("manager"),
                s("operation"),
                s("apiVersion"),
                e["fieldsV1"].clone(),
            )
        })
        .collect()
}

fn entry(manager: &str, api_version: &str, fields: Value) -> (String, String, String, Value) {
    (manager.into(), "Update".into(), api_version.into(), fields)
}

#[tokio::test]
async fn writes_record_their_field_managers() {
    let c = start_cluster(|_| {});

    ok(
        &c,
        &[
            "create",
            "configmap",
            "c",
            "--from-literal=a=1",
            "--from-literal=b=2",
        ],
    );
    assert_eq!(
        entries(&c, &["get", "configmap", "c"]),
        [entry(
            "kubectl-create",
            "v1",
            json!({"f:data": {".": {}, "f:a": {}, "f:b": {}}})
        )]
    );

    // A label belongs to kubectl-label; a patched value moves from its creator to
    // kubectl-patch; a write that changes nothing records nothing.
    ok(&c, &["label", "configmap", "c", "app=x"]);
    ok(
        &c,
        &[
            "patch",
            "configmap",
            "c",
            "--type=merge",
            "-p",
            r#"{"data":{"a":"9"}}"#,
        ],
    );
    ok(
        &c,
        &[
            "patch",
            "configmap",
            "c",
            "--type=merge",
            "-p",
            r#"{"data":{"a":"9"}}"#,
        ],
    );
    assert_eq!(
        entries(&c, &["get", "configmap", "c"]),
        [
            entry(
                "kubectl-create",
                "v1",
                json!({"f:data": {".": {}, "f:b": {}}})
            ),
            entry(
                "kubectl-label",
                "v1",
                json!({"f:metadata": {"f:labels": {".": {}, "f:app": {}}}})
            ),
            entry("kubectl-patch", "v1", json!({"f:data": {"f:a": {}}})),
        ]
    );

    // A field manager is at most 128 printable bytes, checked as the patch's options.
    let long = format!("--field-manager={}", "m".repeat(129));
    let out = c.kubectl(&["label", "configmap", "c", "other=y", &long]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            r#"The PatchOptions "" is invalid: fieldManager: Too long: may not be more than 128 bytes"#
        ),
        "{err}"
    );

    // A namespace's status is reset by the server, so its creator owns only the name
    // label defaulting adds.
    ok(&c, &["create", "namespace", "n"]);
    assert_eq!(
        entries(&c, &["get", "namespace", "n"]),
        [entry(
            "kubectl-create",
            "v1",
            json!({"f:metadata": {"f:labels": {".": {}, "f:kubernetes.io/metadata.name": {}}}})
        )]
    );

    // Without fieldManager the manager is the User-Agent up to its first slash.
    let url = format!(
        "{}/api/v1/namespaces/default/configmaps",
        c.url(Role::Aggregator, 0)
    );
    let bearer = c.bearer();
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ua"},
        "data": {"k": "v"}});
    let a = request_with_body(
        &url,
        Method::POST,
        &[
            ("authorization", bearer.as_str()),
            ("content-type", "application/json"),
            ("user-agent", "my-operator/v2.1 (linux/amd64)"),
        ],
        body.to_string().into(),
        &c.admin_tls(Proto::H2),
        Proto::H2,
    )
    .await
    .unwrap();
    assert_eq!(a.status, 201, "{}", a.text());
    assert_eq!(
        entries(&c, &["get", "configmap", "ua"]),
        [entry(
            "my-operator",
            "v1",
            json!({"f:data": {".": {}, "f:k": {}}})
        )]
    );
}

#[tokio::test]
async fn event_managers_are_compared_in_the_version_they_wrote() {
    let c = start_cluster(|_| {});
    let manifest = c.state_dir().join("event.yaml");
    std::fs::write(
        &manifest,
        "apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: e, namespace: default}
eventTime: \"2024-05-01T10:00:00.000000Z\"
reportingController: example.com/s
reportingInstance: s-1
action: Binding
reason: Scheduled
note: hello
type: Normal
regarding: {apiVersion: v1, kind: Pod, name: p, namespace: default}
",
    )
    .unwrap();
    ok(&c, &["create", "-f", manifest.to_str().unwrap()]);
    // The core/v1 message is events.k8s.io/v1's note: patching it takes the note from
    // the creator, whose entry stays in its own version's names.
    ok(
        &c,
        &[
            "patch",
            "events",
            "e",
            "--type=merge",
            "-p",
            r#"{"message":"changed"}"#,
        ],
    );
    let creator = json!({"f:action": {}, "f:eventTime": {}, "f:reason": {}, "f:regarding": {},
        "f:reportingController": {}, "f:reportingInstance": {}, "f:type": {}});
    assert_eq!(
        entries(&c, &["get", "events", "e"]),
        [
            entry("kubectl-create", "events.k8s.io/v1", creator),
            entry("kubectl-patch", "v1", json!({"f:message": {}})),
        ]
    );
}
