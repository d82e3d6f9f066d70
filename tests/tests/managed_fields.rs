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
            // An apply that changed nothing leaves its entry without a time, as upstream's
            // managedFieldsUpdater does.
            let time = e["time"].as_str().unwrap_or("");
            let untimed_apply = time.is_empty() && e["operation"] == "Apply";
            assert!(
                untimed_apply || (time.ends_with('Z') && time.len() == 20),
                "{e}"
            );
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

    // `[{}]` (or `[]`) resets the entries: none are left, and upstream's
    // `skipNonAppliedManager` then records no later update of the unmanaged object.
    ok(
        &c,
        &[
            "patch",
            "configmap",
            "c",
            "--type=merge",
            "-p",
            r#"{"metadata":{"managedFields":[{}]}}"#,
        ],
    );
    assert_eq!(entries(&c, &["get", "configmap", "c"]), []);
    ok(&c, &["label", "configmap", "c", "app=y", "--overwrite"]);
    assert_eq!(entries(&c, &["get", "configmap", "c"]), []);
    ok(
        &c,
        &[
            "patch",
            "configmap",
            "c",
            "--type=merge",
            "-p",
            r#"{"metadata":{"managedFields":[]}}"#,
        ],
    );
    assert_eq!(entries(&c, &["get", "configmap", "c"]), []);

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

/// The object's `.data`.
fn data(c: &TestCluster, name: &str) -> Value {
    let obj: Value =
        serde_json::from_str(&ok(c, &["get", "configmap", name, "-o", "json"])).unwrap();
    obj["data"].clone()
}

#[tokio::test]
async fn server_side_apply_merges_owns_prunes_and_reports_conflicts() {
    let c = start_cluster(|_| {});
    let write = |file: &str, data: &str| -> String {
        let path = c.state_dir().join(file);
        let manifest = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\n  labels: {{app: demo}}\ndata:\n{data}"
        );
        std::fs::write(&path, manifest).unwrap();
        path.to_string_lossy().into_owned()
    };
    let mine = write("mine.yaml", "  a: \"1\"\n  b: \"2\"\n");
    let apply = |extra: &[&str], file: &str| {
        let mut args = vec!["apply", "--server-side", "-f", file];
        args.extend(extra);
        c.kubectl(&args)
    };

    // The first apply creates the object, owned by kubectl as an Apply.
    let out = apply(&[], &mine);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "configmap/s serverside-applied"
    );
    let kubectl_owns = |data: Value| {
        (
            "kubectl".to_owned(),
            "Apply".to_owned(),
            "v1".to_owned(),
            json!({"f:data": data, "f:metadata": {"f:labels": {"f:app": {}}}}),
        )
    };
    assert_eq!(
        entries(&c, &["get", "configmap", "s"]),
        [kubectl_owns(json!({"f:a": {}, "f:b": {}}))]
    );

    // Applying the same configuration again writes nothing.
    let rv = |c: &TestCluster| {
        ok(
            c,
            &[
                "get",
                "configmap",
                "s",
                "-o",
                "jsonpath={.metadata.resourceVersion}",
            ],
        )
    };
    let before = rv(&c);
    assert!(apply(&[], &mine).status.success());
    assert_eq!(rv(&c), before);

    // Another writer changes a: applying the old value is a conflict naming it.
    ok(
        &c,
        &[
            "patch",
            "configmap",
            "s",
            "--type=merge",
            "-p",
            r#"{"data":{"a":"9"}}"#,
        ],
    );
    let out = apply(&[], &mine);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            r#"Apply failed with 1 conflict: conflict with "kubectl-patch" using v1: .data.a"#
        ),
        "{err}"
    );
    assert_eq!(data(&c, "s")["a"], "9");

    // A second applier sets b to the value it has: both own it, without a conflict.
    let theirs = write("theirs.yaml", "  b: \"2\"\n");
    let out = apply(&["--field-manager=other"], &theirs);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // kubectl forces a back and stops applying b: b stays, as other still applies it;
    // kubectl-patch lost its only field and its entry.
    let mine = write("mine.yaml", "  a: \"1\"\n");
    let out = apply(&["--force-conflicts"], &mine);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(data(&c, "s"), json!({"a": "1", "b": "2"}));
    let mut got = entries(&c, &["get", "configmap", "s"]);
    got.sort_by(|x, y| x.0.cmp(&y.0));
    assert_eq!(
        got,
        [
            kubectl_owns(json!({"f:a": {}})),
            (
                "other".to_owned(),
                "Apply".to_owned(),
                "v1".to_owned(),
                json!({"f:data": {"f:b": {}}, "f:metadata": {"f:labels": {"f:app": {}}}})
            ),
        ]
    );

    // When other stops applying b too, nobody owns it and it is removed.
    let none = c.state_dir().join("none.yaml");
    std::fs::write(
        &none,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\n",
    )
    .unwrap();
    let out = apply(&["--field-manager=other"], none.to_str().unwrap());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(data(&c, "s"), json!({"a": "1"}));

    // From client-side to server-side apply: a changed value applies without a
    // conflict, and the last-applied annotation follows the configuration, so that
    // client-side apply still works afterwards.
    let csa = c.state_dir().join("csa.yaml");
    let manifest = |v: &str| {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: csa\ndata:\n  a: \"{v}\"\n")
    };
    std::fs::write(&csa, manifest("1")).unwrap();
    let csa = csa.to_str().unwrap();
    ok(&c, &["apply", "-f", csa]);
    std::fs::write(csa, manifest("2")).unwrap();
    assert!(apply(&[], csa).status.success());
    let obj: Value =
        serde_json::from_str(&ok(&c, &["get", "configmap", "csa", "-o", "json"])).unwrap();
    assert_eq!(obj["data"]["a"], "2");
    let last = obj["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
        .as_str()
        .unwrap();
    assert!(
        last.contains(r#""data":{"a":"2"}"#) && last.ends_with('\n'),
        "{last}"
    );
    std::fs::write(csa, manifest("3")).unwrap();
    ok(&c, &["apply", "-f", csa]);
    assert_eq!(data(&c, "csa")["a"], "3");

    // Creating is admitted as a create: not in a namespace that does not exist.
    let out = apply(&["--namespace=nope"], &mine);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(r#"namespaces "nope" not found"#), "{err}");

    // Apply needs a field manager (kubectl always sends one); a field the type does not
    // declare fails as upstream's type converter fails it.
    let url = format!(
        "{}/api/v1/namespaces/default/configmaps/s",
        c.url(Role::Aggregator, 0)
    );
    let bearer = c.bearer();
    let send = |query: &'static str, body: &'static str| {
        let url = format!("{url}{query}");
        let bearer = bearer.clone();
        let tls = c.admin_tls(Proto::H2);
        async move {
            request_with_body(
                &url,
                Method::PATCH,
                &[
                    ("authorization", bearer.as_str()),
                    ("content-type", "application/apply-patch+yaml"),
                ],
                body.into(),
                &tls,
                Proto::H2,
            )
            .await
            .unwrap()
        }
    };
    let body = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\nspec: {}\n";
    let r = send("", body).await;
    assert_eq!(r.status, 422, "{}", r.text());
    assert!(
        r.text()
            .contains("fieldManager: Required value: is required for apply patch"),
        "{}",
        r.text()
    );
    let r = send("?fieldManager=x", body).await;
    assert_eq!(r.status, 500, "{}", r.text());
    assert!(
        r.text().contains(
            "failed to create typed patch object (/s; /v1, Kind=ConfigMap): .spec: field not declared in schema"
        ),
        "{}",
        r.text()
    );
    // A value of the wrong type is refused the same way, and nothing is written.
    let body = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\ndata: [1, 2]\n";
    let r = send("?fieldManager=x", body).await;
    assert_eq!(r.status, 500, "{}", r.text());
    assert!(
        r.text().contains(".data: expected map, got [1,2]"),
        "{}",
        r.text()
    );
    assert_eq!(data(&c, "s"), json!({"a": "1"}));
}

#[tokio::test]
async fn namespace_status_is_patched_and_applied_through_its_subresource() {
    let c = start_cluster(|_| {});
    ok(&c, &["create", "namespace", "st"]);

    // Discovery lists the subresources as upstream does.
    let discovery: Value = serde_json::from_str(&ok(&c, &["get", "--raw", "/api/v1"])).unwrap();
    let verbs = |name: &str| -> Value {
        discovery["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .map(|r| r["verbs"].clone())
            .unwrap_or(Value::Null)
    };
    assert_eq!(
        verbs("namespaces/status"),
        json!(["get", "patch", "update"])
    );
    assert_eq!(verbs("namespaces/finalize"), json!(["update"]));

    // A patch of /status writes the status only; the spec it carries is ignored.
    let condition = r#"{"status":{"conditions":[{"type":"NamespaceDeletionDiscoveryFailure","status":"False","reason":"R","message":"m"}]},"spec":{"finalizers":[]}}"#;
    ok(
        &c,
        &[
            "patch",
            "namespace",
            "st",
            "--subresource=status",
            "--type=merge",
            "-p",
            condition,
        ],
    );
    let ns: Value =
        serde_json::from_str(&ok(&c, &["get", "namespace", "st", "-o", "json"])).unwrap();
    assert_eq!(ns["spec"]["finalizers"], json!(["kubernetes"]));
    assert_eq!(ns["status"]["conditions"][0]["reason"], "R");
    assert_eq!(ns["status"]["phase"], "Active");

    // The phase follows the deletionTimestamp (ValidateNamespaceStatusUpdate).
    let out = c.kubectl(&[
        "patch",
        "namespace",
        "st",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"phase":"Terminating"}}"#,
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "status.Phase: Invalid value: \"Terminating\": may only be 'Active' if `deletionTimestamp` is empty"
        ),
        "{err}"
    );

    // An apply of /status is recorded under the subresource, and conflicts with the
    // patcher's fields there.
    let manifest = c.state_dir().join("status.yaml");
    std::fs::write(
        &manifest,
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: st}\nstatus:\n  conditions:\n  - {type: NamespaceDeletionDiscoveryFailure, status: \"True\", reason: A, message: applied}\n",
    )
    .unwrap();
    let file = manifest.to_str().unwrap();
    let out = c.kubectl(&["apply", "--server-side", "--subresource=status", "-f", file]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(r#"Apply failed with 3 conflicts: conflicts with "kubectl-patch" with subresource "status" using v1:"#)
            && err.contains(r#"- .status.conditions[type="NamespaceDeletionDiscoveryFailure"].reason"#),
        "{err}"
    );
    ok(
        &c,
        &[
            "apply",
            "--server-side",
            "--subresource=status",
            "--force-conflicts",
            "-f",
            file,
        ],
    );
    let ns: Value = serde_json::from_str(&ok(
        &c,
        &[
            "get",
            "namespace",
            "st",
            "-o",
            "json",
            "--show-managed-fields",
        ],
    ))
    .unwrap();
    assert_eq!(ns["status"]["conditions"][0]["message"], "applied");
    let applier = ns["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["operation"] == "Apply")
        .cloned()
        .unwrap();
    assert_eq!(applier["subresource"], "status");
    assert_eq!(applier["manager"], "kubectl");
}

/// The managed fields of writes whose shape upstream's handlers decide: a `scale` write
/// has its own entry (upstream's `ScaleHandler`: the parent's version and replicas path,
/// and the time the parent had for it, none when new), a DaemonSet's creator owns the
/// template generation annotation its conversion writes, and a TokenRequest's answer
/// names what its requester sent.
#[tokio::test(flavor = "multi_thread")]
async fn scale_daemon_set_and_token_writes_record_upstreams_fields() {
    let c = start_cluster(|_| {});
    let json_type = [("content-type", "application/json")];
    let merge_type = [("content-type", "application/merge-patch+json")];
    let deployments = "/apis/apps/v1/namespaces/default/deployments";
    let deploy = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "x"}]}}}});
    let a = c
        .send(
            Method::POST,
            &format!("{deployments}?fieldManager=maker"),
            &json_type,
            &deploy.to_string(),
        )
        .await;
    assert_eq!(a.status, 201, "{}", a.text());
    let a = c
        .send(
            Method::PATCH,
            &format!("{deployments}/d/scale?fieldManager=maker"),
            &merge_type,
            r#"{"spec":{"replicas":3}}"#,
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    let a = c
        .send(Method::GET, &format!("{deployments}/d"), &[], "")
        .await;
    let managed = a.json()["metadata"]["managedFields"].clone();
    // The same manager keeps two entries, the scale one first for it has no time.
    assert_eq!(
        managed[0],
        json!({"manager": "maker", "operation": "Update",
        "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": {"f:replicas": {}}}, "subresource": "scale"})
    );
    assert_eq!(managed[1]["manager"], "maker");
    assert_eq!(managed[1].get("subresource"), None);
    assert!(
        managed[1]["fieldsV1"]["f:spec"].get("f:replicas").is_none(),
        "{managed}"
    );
    assert_eq!(managed.as_array().map(Vec::len), Some(2));

    let ds = json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "ds"},
        "spec": {"selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "x"}]}}}});
    let a = c
        .send(
            Method::POST,
            "/apis/apps/v1/namespaces/default/daemonsets",
            &json_type,
            &ds.to_string(),
        )
        .await;
    assert_eq!(a.status, 201, "{}", a.text());
    let got = a.json();
    assert_eq!(
        got["metadata"]["annotations"]["deprecated.daemonset.template.generation"],
        "1"
    );
    assert_eq!(
        got["metadata"]["managedFields"][0]["fieldsV1"]["f:metadata"],
        json!({"f:annotations": {".": {}, "f:deprecated.daemonset.template.generation": {}}})
    );

    ok(&c, &["create", "serviceaccount", "tr"]);
    let request = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
        "spec": {"audiences": ["acceptance.example.com"]}});
    let a = c
        .send(
            Method::POST,
            "/api/v1/namespaces/default/serviceaccounts/tr/token?fieldManager=asker",
            &json_type,
            &request.to_string(),
        )
        .await;
    assert_eq!(a.status, 201, "{}", a.text());
    let got = a.json();
    let entry = &got["metadata"]["managedFields"][0];
    assert_eq!(entry["manager"], "asker");
    assert_eq!(entry["subresource"], "token");
    assert_eq!(entry["apiVersion"], "authentication.k8s.io/v1");
    assert_eq!(
        entry["fieldsV1"],
        json!({"f:spec": {"f:audiences": {}, "f:expirationSeconds": {}}})
    );
    assert_eq!(got["spec"]["boundObjectRef"], Value::Null);
    assert!(
        got["spec"]
            .as_object()
            .unwrap()
            .contains_key("boundObjectRef")
    );
}
