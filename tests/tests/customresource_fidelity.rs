//! Custom resources where upstream 1.33's CRD handler and its strategies answer in their
//! own ways: the kind check and the scale paths' causes of `customResourceValidator`,
//! status writes validated against the status schema, the plain-text 404 of paths no CRD
//! serves, lists' empty `continue`, discovery in the CRD discovery controller's order,
//! defaults that must fit their schema, and server-side apply to a CRD that keeps unknown
//! fields (upstream's `FieldValidation` conformance test).

use http::Method;
use kas_e2e::start_cluster;
use serde_json::json;

const JSON: [(&str, &str); 1] = [("content-type", "application/json")];

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
