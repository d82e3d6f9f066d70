//! Metadata sent through a subresource, as upstream 1.33's subresource strategies keep
//! it: a status write (and a CSR's `approval`, a namespace's `finalize`) takes the
//! client's metadata with its status and the stored spec; custom resources keep the
//! stored metadata, but the writer's managed-fields entry still owns what it sent, as
//! upstream's field manager records it before the strategy resets it. This is what
//! upstream's conformance tests check ("patched object should have the applied
//! annotation").

use http::Method;
use kas_e2e::start_cluster;
use serde_json::{Value, json};

const JSON: [(&str, &str); 1] = [("content-type", "application/json")];
const MERGE: [(&str, &str); 1] = [("content-type", "application/merge-patch+json")];

const CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}}}
          status: {type: object, properties: {replicas: {type: integer}}}
"#;

/// A PEM certificate request of a fresh P-256 key.
fn csr_pem() -> String {
    let key = rcgen::KeyPair::generate().unwrap();
    let params = rcgen::CertificateParams::new(vec!["e2e-user".to_owned()]).unwrap();
    params.serialize_request(&key).unwrap().pem().unwrap()
}

fn base64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The managed-fields entry of `subresource`.
fn entry<'a>(obj: &'a Value, subresource: &str) -> &'a Value {
    obj["metadata"]["managedFields"]
        .as_array()
        .and_then(|es| es.iter().find(|e| e["subresource"] == subresource))
        .unwrap_or_else(|| panic!("no {subresource} entry: {obj}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn status_and_approval_writes_keep_the_metadata_they_carry() {
    let c = start_cluster(|_| {});

    // A CSR's approval and status (upstream's `CSR API operations`).
    let csrs = "/apis/certificates.k8s.io/v1/certificatesigningrequests";
    let csr = json!({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
        "metadata": {"name": "csr1", "labels": {"a": "b"}},
        "spec": {"request": base64(csr_pem().as_bytes()), "signerName": "example.com/signer",
            "usages": ["client auth"]}});
    let a = c.send(Method::POST, csrs, &JSON, &csr.to_string()).await;
    assert_eq!(a.status, 201, "{}", a.text());
    let approval = json!({"metadata": {"annotations": {"patchedapproval": "true"}},
        "status": {"conditions": [{"type": "ApprovalPatch", "status": "True", "reason": "e2e"}]}});
    let a = c
        .send(
            Method::PATCH,
            &format!("{csrs}/csr1/approval"),
            &MERGE,
            &approval.to_string(),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(
        a.json()["metadata"]["annotations"]["patchedapproval"],
        "true"
    );
    assert_eq!(
        entry(&a.json(), "approval")["fieldsV1"]["f:metadata"],
        json!({"f:annotations": {".": {}, "f:patchedapproval": {}}})
    );
    let status = json!({"metadata": {"annotations": {"patchedstatus": "true"}},
        "status": {"conditions": [{"type": "StatusPatch", "status": "True", "reason": "e2e"}]}});
    let a = c
        .send(
            Method::PATCH,
            &format!("{csrs}/csr1/status"),
            &MERGE,
            &status.to_string(),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    let got = a.json();
    assert_eq!(got["metadata"]["annotations"]["patchedstatus"], "true");
    assert_eq!(got["metadata"]["annotations"]["patchedapproval"], "true");
    let types: Vec<&Value> = got["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["type"])
        .collect();
    // A merge patch replaces the list: only Approved and Denied conditions are kept.
    assert_eq!(types, [&json!("StatusPatch")]);

    // A namespace's status (`should apply changes to a namespace status`).
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "nsx"}});
    let a = c
        .send(Method::POST, "/api/v1/namespaces", &JSON, &ns.to_string())
        .await;
    assert_eq!(a.status, 201, "{}", a.text());
    let patch = json!({"metadata": {"annotations": {"e2e-patched-ns-status": "nsx"}},
        "status": {"conditions": [{"type": "StatusUpdate", "status": "True",
            "reason": "E2E", "message": "Set from an e2e test"}]}});
    let a = c
        .send(
            Method::PATCH,
            "/api/v1/namespaces/nsx/status",
            &MERGE,
            &patch.to_string(),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(
        a.json()["metadata"]["annotations"]["e2e-patched-ns-status"],
        "nsx"
    );
    assert_eq!(a.json()["status"]["conditions"][0]["type"], "StatusUpdate");

    // A CronJob's status, patched then replaced with a body naming no namespace.
    let cronjobs = "/apis/batch/v1/namespaces/default/cronjobs";
    let cronjob = json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cj"},
        "spec": {"schedule": "*/1 * * * ?", "jobTemplate": {"spec": {"template": {"spec": {
            "restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "x"}]}}}}}});
    let a = c
        .send(Method::POST, cronjobs, &JSON, &cronjob.to_string())
        .await;
    assert_eq!(a.status, 201, "{}", a.text());
    let patch = json!({"metadata": {"annotations": {"patchedstatus": "true"}},
        "status": {"lastScheduleTime": "2024-01-01T00:00:00Z"}});
    let a = c
        .send(
            Method::PATCH,
            &format!("{cronjobs}/cj/status"),
            &MERGE,
            &patch.to_string(),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.json()["metadata"]["annotations"]["patchedstatus"], "true");
    let mut put = cronjob.clone();
    put["metadata"]["annotations"] = json!({"updatedstatus": "true"});
    put["spec"]["schedule"] = json!("*/5 * * * ?");
    put["status"] = json!({});
    let a = c
        .send(
            Method::PUT,
            &format!("{cronjobs}/cj/status"),
            &JSON,
            &put.to_string(),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    let got = a.json();
    assert_eq!(
        got["metadata"]["annotations"],
        json!({"updatedstatus": "true"})
    );
    assert_eq!(got["metadata"]["namespace"], "default");
    // The spec is the stored one: a status write does not change it.
    assert_eq!(got["spec"]["schedule"], "*/1 * * * ?");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_custom_resource_status_write_keeps_the_stored_metadata() {
    let c = start_cluster(|_| {});
    let out = c.kubectl_stdin(&["apply"], CRD);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    c.kubectl_ok(&[
        "wait",
        "--for=condition=Established",
        "crd/widgets.example.com",
    ]);
    let widgets = "/apis/example.com/v1/namespaces/default/widgets";
    let w = json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w1"}, "spec": {"size": 1}});
    let mut a = c.send(Method::POST, widgets, &JSON, &w.to_string()).await;
    for _ in 0..50 {
        if a.status != 404 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        a = c.send(Method::POST, widgets, &JSON, &w.to_string()).await;
    }
    assert_eq!(a.status, 201, "{}", a.text());
    let patch = json!({"metadata": {"labels": {"a": "b"}}, "status": {"replicas": 2}});
    let a = c
        .send(
            Method::PATCH,
            &format!("{widgets}/w1/status"),
            &MERGE,
            &patch.to_string(),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    let got = a.json();
    assert_eq!(got["status"]["replicas"], 2);
    assert_eq!(got["metadata"].get("labels"), None, "{got}");
    assert_eq!(
        entry(&got, "status")["fieldsV1"],
        json!({"f:metadata": {"f:labels": {".": {}, "f:a": {}}},
            "f:status": {".": {}, "f:replicas": {}}})
    );
}
