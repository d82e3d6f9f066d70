//! Custom resources where upstream 1.33's CRD handler and its strategies answer in their
//! own ways: the kind check and the scale paths' causes of `customResourceValidator`,
//! status writes validated against the status schema, the plain-text 404 of paths no CRD
//! serves, lists' empty `continue`, discovery in the CRD discovery controller's order,
//! defaults that must fit their schema, and server-side apply to a CRD that keeps unknown
//! fields (upstream's `FieldValidation` conformance test).

use http::Method;
use kas_e2e::{TestCluster, start_cluster};
use serde_json::json;

const JSON: [(&str, &str); 1] = [("content-type", "application/json")];

/// A cluster-scoped CRD whose versions keep unknown fields, as upstream's e2e fixture
/// `NewRandomNameMultipleVersionCustomResourceDefinition` makes it.
const FREE_CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: fooxyzas.mygroup.example.com}
spec:
  group: mygroup.example.com
  scope: Cluster
  names: {plural: fooxyzas, singular: fooxyza, kind: fooxyza, listKind: fooxyzaList}
  versions:
  - name: v1beta1
    served: true
    storage: false
    subresources: {status: {}}
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
"#;

/// Creates a CRD and waits until `probe` answers something else than a 404.
async fn served(c: &TestCluster, crd: &str, probe: &str) {
    let out = c.kubectl_stdin(&["apply"], crd);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for _ in 0..100 {
        if c.send(Method::GET, probe, &[], "").await.status != 404 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("{probe} is not served");
}

#[tokio::test(flavor = "multi_thread")]
async fn defaults_must_fit_their_schema() {
    let c = start_cluster(|_| {});
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "things", "singular": "thing", "kind": "Thing", "listKind": "ThingList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                    "type": "object",
                    "properties": {"size": {"type": "integer", "default": "string"}}}}}}}]}});
    let a = c
        .send(
            Method::POST,
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            &JSON,
            &crd.to_string(),
        )
        .await;
    assert_eq!(a.status, 422, "{}", a.text());
    // kube-openapi names the value "" (its validator's root): two spaces.
    assert_eq!(
        a.json()["message"],
        "CustomResourceDefinition.apiextensions.k8s.io \"things.example.com\" is invalid: spec.validation.openAPIV3Schema.properties[spec].properties[size].default: Invalid value: \"string\":  in body must be of type integer: \"string\""
    );
}

/// Upstream's `FieldValidation` conformance test: a strict apply of unknown fields to a
/// CRD whose schema keeps them.
#[tokio::test(flavor = "multi_thread")]
async fn unknown_fields_are_applied_to_a_crd_that_keeps_them() {
    let c = start_cluster(|_| {});
    let free = "/apis/mygroup.example.com/v1beta1/fooxyzas";
    served(&c, FREE_CRD, free).await;
    let config = r#"
apiVersion: mygroup.example.com/v1beta1
kind: fooxyza
metadata:
  name: mytest
spec:
  unknown: uk1
  cronSpec: "* * * * */5"
  ports:
  - name: x
    containerPort: 80
    protocol: TCP"#;
    let a = c
        .send(
            Method::PATCH,
            &format!("{free}/mytest?fieldManager=field_validation_mgr&fieldValidation=Strict"),
            &[("content-type", "application/apply-patch+yaml")],
            config,
        )
        .await;
    assert_eq!(a.status, 201, "{}", a.text());
    let got = a.json();
    assert_eq!(got["spec"]["unknown"], "uk1");
    // The unknown fields are deduced: a map's keys one by one, a list whole.
    assert_eq!(
        got["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:spec": {".": {}, "f:cronSpec": {}, "f:ports": {}, "f:unknown": {}}})
    );
}
