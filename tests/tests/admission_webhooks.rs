//! MutatingAdmissionWebhook and ValidatingAdmissionWebhook end to end: a TLS webhook in
//! the test labels the configmaps created or updated in namespaces labeled
//! `webhooks=on` (a JSONPatch) and refuses those labeled `deny` (and the deletion of those
//! labeled `keep`), with upstream's Status; once the webhook is gone, the mutating
//! webhook's `failurePolicy: Ignore` lets writes through, the validating one's `Fail`
//! refuses them with upstream's calling error until it is set to `Ignore`. Custom
//! resources are admitted by the same webhooks.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use bytes::Bytes;
use http::Method;
use kas_e2e::start_cluster;
use kas_e2e::tls_server::TlsServer;
use serde_json::{Value, json};

const DENIED: &str = "configmaps labeled deny are refused";
const KEPT: &str = "configmaps labeled keep stay";

fn label<'a>(object: &'a Value, key: &str) -> Option<&'a str> {
    object["metadata"]["labels"][key].as_str()
}

/// The webhook's answer to one review.
fn answer(path: &str, review: &Value) -> Value {
    let request = &review["request"];
    let mut response = json!({"uid": request["uid"], "allowed": true});
    match path {
        "/mutate" => {
            let patch = match request["object"]["metadata"]["labels"].is_object() {
                true => json!([{"op": "add", "path": "/metadata/labels/mutated", "value": "yes"}]),
                false => {
                    json!([{"op": "add", "path": "/metadata/labels", "value": {"mutated": "yes"}}])
                }
            };
            let patch = base64::engine::general_purpose::STANDARD.encode(patch.to_string());
            response["patch"] = json!(patch);
            response["patchType"] = json!("JSONPatch");
        }
        _ => {
            if label(&request["object"], "deny").is_some() {
                response["allowed"] = json!(false);
                response["status"] = json!({"code": 403, "reason": "Forbidden", "message": DENIED});
            } else if request["operation"] == "DELETE"
                && label(&request["oldObject"], "keep").is_some()
            {
                response["allowed"] = json!(false);
                response["status"] = json!({"message": KEPT});
            } else {
                response["warnings"] = json!(["validated by kas-e2e"]);
            }
        }
    }
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})
}

fn rule(operations: Value, resource: &str) -> Value {
    json!({"operations": operations, "apiGroups": [""], "apiVersions": ["v1"], "resources": [resource]})
}

fn configuration(
    kind: &str,
    name: &str,
    url: &str,
    ca: &str,
    policy: &str,
    rules: Value,
) -> String {
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": "kas-e2e"},
        "webhooks": [{
            "name": name,
            "clientConfig": {"url": url, "caBundle": ca},
            "rules": rules,
            "namespaceSelector": {"matchLabels": {"webhooks": "on"}},
            "failurePolicy": policy,
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"]
        }]
    })
    .to_string()
}

fn configmap(name: &str, labels: Value) -> String {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "labels": labels}, "data": {"k": "v"}})
    .to_string()
}

#[test]
fn webhooks_patch_refuse_and_follow_their_failure_policy() {
    let c = start_cluster(|_| {});
    let (server, reviews) = recording_server();
    let ca = base64::engine::general_purpose::STANDARD.encode(&server.ca_pem);
    c.kubectl_ok(&["create", "namespace", "hooked"]);
    c.kubectl_ok(&["label", "namespace", "hooked", "webhooks=on"]);
    c.kubectl_ok(&["create", "namespace", "plain"]);
    let mutating = configuration(
        "MutatingWebhookConfiguration",
        "mutate.kas.test",
        &server.url("/mutate"),
        &ca,
        "Ignore",
        json!([
            rule(json!(["CREATE", "UPDATE"]), "configmaps"),
            rule(json!(["UPDATE"]), "namespaces/status")
        ]),
    );
    let validating = configuration(
        "ValidatingWebhookConfiguration",
        "validate.kas.test",
        &server.url("/validate"),
        &ca,
        "Fail",
        json!([rule(json!(["CREATE", "UPDATE", "DELETE"]), "configmaps")]),
    );
    for manifest in [&mutating, &validating] {
        let out = c.kubectl_stdin(&["create"], manifest);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    // The configurations reach the plugins through their watch: a configmap created in
    // the selected namespace comes out labeled.
    first_labeled(|attempt| {
        c.kubectl_stdin(
            &["create", "-n", "hooked", "-o", "json"],
            &configmap(&format!("probe-{attempt}"), json!({"app": "x"})),
        )
    });
    // The validating webhook saw the mutated object, and who wrote it.
    let validated = last_validation(&reviews);
    let request = &validated["review"]["request"];
    assert_eq!(validated["review"]["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(request["operation"], "CREATE");
    assert_eq!(request["namespace"], "hooked");
    assert_eq!(
        request["kind"],
        json!({"group": "", "version": "v1", "kind": "ConfigMap"})
    );
    assert_eq!(
        request["resource"],
        json!({"group": "", "version": "v1", "resource": "configmaps"})
    );
    assert_eq!(request["object"]["kind"], "ConfigMap");
    assert_eq!(label(&request["object"], "mutated"), Some("yes"));
    assert!(
        request["userInfo"]["groups"]
            .as_array()
            .is_some_and(|g| g.contains(&json!("system:authenticated"))),
        "{request}"
    );

    // A namespace the selector does not select is left alone.
    let plain: Value = serde_json::from_slice(
        &c.kubectl_stdin(
            &["create", "-n", "plain", "-o", "json"],
            &configmap("free", json!({"deny": "yes"})),
        )
        .stdout,
    )
    .unwrap();
    assert_eq!(plain["metadata"]["labels"], json!({"deny": "yes"}));

    // A refusal is upstream's Status, with the webhook's code.
    let rt = tokio::runtime::Runtime::new().unwrap();
    let create = |namespace: &str, body: String| {
        rt.block_on(c.send(
            Method::POST,
            &format!("/api/v1/namespaces/{namespace}/configmaps"),
            &[("content-type", "application/json")],
            &body,
        ))
    };
    let answer = create("hooked", configmap("refused", json!({"deny": "yes"})));
    assert_eq!(answer.status, 403);
    assert_eq!(
        answer.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": format!("admission webhook \"validate.kas.test\" denied the request: {DENIED}"),
               "reason": "Forbidden", "code": 403})
    );
    // Warnings reach the client; an update is refused as a create.
    let out = c.kubectl_stdin(&["create", "-n", "hooked"], &configmap("warned", json!({})));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Warning: validated by kas-e2e"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = c.kubectl_fails(&["label", "configmap", "warned", "-n", "hooked", "deny=yes"]);
    assert!(
        err.contains(&format!(
            "admission webhook \"validate.kas.test\" denied the request: {DENIED}"
        )),
        "{err}"
    );
    // A delete is shown the stored object as oldObject.
    c.kubectl_ok(&["label", "configmap", "warned", "-n", "hooked", "keep=yes"]);
    let err = c.kubectl_fails(&["delete", "configmap", "warned", "-n", "hooked"]);
    assert!(
        err.contains(&format!(
            "admission webhook \"validate.kas.test\" denied the request: {KEPT}"
        )),
        "{err}"
    );
    let deleted = reviews
        .lock()
        .unwrap()
        .iter()
        .rev()
        .find(|r| r["review"]["request"]["operation"] == "DELETE")
        .cloned()
        .expect("a delete review");
    assert_eq!(deleted["review"]["request"]["object"], Value::Null);
    assert_eq!(
        deleted["review"]["request"]["oldObject"]["metadata"]["name"],
        "warned"
    );
    assert_eq!(
        deleted["review"]["request"]["options"]["kind"],
        "DeleteOptions"
    );

    // A subresource's update is sent too (the namespace's own labels select it).
    let namespace = c.kubectl_json(&["get", "namespace", "hooked"]);
    let answer = rt.block_on(c.send(
        Method::PUT,
        "/api/v1/namespaces/hooked/status",
        &[("content-type", "application/json")],
        &namespace.to_string(),
    ));
    assert_eq!(answer.status, 200, "{}", answer.text());
    let status_review = reviews
        .lock()
        .unwrap()
        .iter()
        .rev()
        .find(|r| r["review"]["request"]["subResource"] == "status")
        .cloned()
        .expect("a review of namespaces/status");
    let request = &status_review["review"]["request"];
    assert_eq!(status_review["path"], "/mutate");
    assert_eq!(request["resource"]["resource"], "namespaces");
    assert_eq!(request["namespace"], "hooked");
    assert_eq!(request["oldObject"]["metadata"]["name"], "hooked");

    // The webhook gone: Ignore lets the mutating webhook's failure pass, Fail refuses.
    let url = server.url("/validate");
    let addr = server.addr;
    drop(server);
    let answer = create("hooked", configmap("unreachable", json!({})));
    assert_eq!(answer.status, 500, "{}", answer.text());
    let message = format!(
        "Internal error occurred: failed calling webhook \"validate.kas.test\": failed to call webhook: Post \"{url}?timeout=10s\": dial tcp {addr}: connect: connection refused"
    );
    assert_eq!(answer.json()["message"], json!(message));
    assert_eq!(answer.json()["reason"], "InternalError");
    c.kubectl_ok(&[
        "patch",
        "validatingwebhookconfiguration",
        "kas-e2e",
        "--type=json",
        "-p",
        r#"[{"op":"replace","path":"/webhooks/0/failurePolicy","value":"Ignore"}]"#,
    ]);
    let start = Instant::now();
    let answer = loop {
        let answer = create("hooked", configmap("ignored", json!({})));
        if answer.status != 500 || start.elapsed() > Duration::from_secs(10) {
            break answer;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(answer.status, 201, "{}", answer.text());
    assert_eq!(answer.json()["metadata"].get("labels"), None);
}

/// The first object `create` (its attempt number) answers with the mutating webhook's
/// label, once the configurations have reached the plugins through their watch; the
/// last one after 10 s.
fn first_labeled(create: impl Fn(usize) -> std::process::Output) -> Value {
    let start = Instant::now();
    for attempt in 1.. {
        let created: Value = serde_json::from_slice(&create(attempt).stdout).unwrap_or_default();
        if label(&created, "mutated") == Some("yes") || start.elapsed() > Duration::from_secs(10) {
            assert_eq!(
                created["metadata"]["labels"],
                json!({"app": "x", "mutated": "yes"})
            );
            return created;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    unreachable!()
}

/// The last review the validating webhook received.
fn last_validation(reviews: &Mutex<Vec<Value>>) -> Value {
    reviews
        .lock()
        .unwrap()
        .iter()
        .rev()
        .find(|r| r["path"] == "/validate")
        .cloned()
        .expect("a validating review")
}

/// The webhook server of a test: answers with [`answer`], records every review.
fn recording_server() -> (TlsServer, Arc<Mutex<Vec<Value>>>) {
    let reviews: Arc<Mutex<Vec<Value>>> = Arc::default();
    let seen = reviews.clone();
    let server = TlsServer::start(move |req| {
        let review: Value = serde_json::from_slice(req.body()).unwrap_or(Value::Null);
        seen.lock()
            .unwrap()
            .push(json!({"path": req.uri().path(), "review": review}));
        let out = answer(req.uri().path(), &review).to_string();
        http::Response::builder()
            .header("content-type", "application/json")
            .body(Bytes::from(out))
            .unwrap()
    });
    (server, reviews)
}

const GIZMOS: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gizmos.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gizmos, singular: gizmo, kind: Gizmo, listKind: GizmoList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
"#;

fn gizmo(name: &str, labels: Value) -> String {
    json!({"apiVersion": "example.com/v1", "kind": "Gizmo",
           "metadata": {"name": name, "labels": labels}, "spec": {"size": 1}})
    .to_string()
}

/// Custom resources are admitted by the same webhooks (extensions-apiserver follows the
/// configurations core stores), with their own kind and resource in the review.
#[test]
fn webhooks_admit_custom_resources() {
    let c = start_cluster(|_| {});
    let (server, reviews) = recording_server();
    let ca = base64::engine::general_purpose::STANDARD.encode(&server.ca_pem);
    let out = c.kubectl_stdin(&["apply"], GIZMOS);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let gizmos = |operations: Value| {
        json!([{"operations": operations, "apiGroups": ["example.com"],
                "apiVersions": ["*"], "resources": ["gizmos"]}])
    };
    // The mutating webhook always patches, which a delete may not be.
    for (kind, name, path, operations) in [
        (
            "MutatingWebhookConfiguration",
            "mutate.kas.test",
            "/mutate",
            json!(["CREATE", "UPDATE"]),
        ),
        (
            "ValidatingWebhookConfiguration",
            "validate.kas.test",
            "/validate",
            json!(["CREATE", "UPDATE", "DELETE"]),
        ),
    ] {
        let manifest = json!({
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
            "metadata": {"name": "kas-e2e-gizmos"},
            "webhooks": [{"name": name, "clientConfig": {"url": server.url(path), "caBundle": ca},
                "rules": gizmos(operations), "failurePolicy": "Fail", "sideEffects": "None",
                "admissionReviewVersions": ["v1"]}]
        });
        let out = c.kubectl_stdin(&["create"], &manifest.to_string());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    // Once the CRD is served and the configurations followed, a gizmo comes out labeled.
    first_labeled(|attempt| {
        c.kubectl_stdin(
            &["create", "-o", "json"],
            &gizmo(&format!("probe-{attempt}"), json!({"app": "x"})),
        )
    });
    let validated = last_validation(&reviews);
    let request = &validated["review"]["request"];
    assert_eq!(
        request["kind"],
        json!({"group": "example.com", "version": "v1", "kind": "Gizmo"})
    );
    assert_eq!(
        request["resource"],
        json!({"group": "example.com", "version": "v1", "resource": "gizmos"})
    );
    assert_eq!(request["namespace"], "default");
    assert_eq!(label(&request["object"], "mutated"), Some("yes"));

    // Refusals on create and on delete, in upstream's words.
    let out = c.kubectl_stdin(&["create"], &gizmo("denied", json!({"deny": "1"})));
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "admission webhook \"validate.kas.test\" denied the request: {DENIED}"
        )),
        "{err}"
    );
    let out = c.kubectl_stdin(&["create"], &gizmo("kept", json!({"keep": "1"})));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = c.kubectl_fails(&["delete", "gizmo", "kept"]);
    assert!(
        err.contains(&format!(
            "admission webhook \"validate.kas.test\" denied the request: {KEPT}"
        )),
        "{err}"
    );
}
