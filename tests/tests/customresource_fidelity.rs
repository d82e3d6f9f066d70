//! Custom resources where upstream 1.33's CRD handler and its strategies answer in their
//! own ways: the kind check and the scale paths' causes of `customResourceValidator`,
//! status writes validated against the status schema, the plain-text 404 of paths no CRD
//! serves, lists' empty `continue`, discovery in the CRD discovery controller's order,
//! defaults that must fit their schema, and server-side apply to a CRD that keeps unknown
//! fields (upstream's `FieldValidation` conformance test).

use http::Method;
use kas_e2e::{NOT_FOUND_BODY, TestCluster, start_cluster};
use serde_json::{Value, json};

const JSON: [(&str, &str); 1] = [("content-type", "application/json")];
const MERGE: [(&str, &str); 1] = [("content-type", "application/merge-patch+json")];
const WIDGETS: &str = "/apis/example.com/v1/namespaces/default/widgets";

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
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.size, statusReplicasPath: .status.replicas}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer, maximum: 10}}}
          status: {type: object, properties: {replicas: {type: integer}}}
"#;

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

fn causes(status: &Value) -> Vec<(String, String)> {
    status["details"]["causes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or("").to_owned();
            (s("field"), s("message"))
        })
        .collect()
}

/// A cluster serving `CRD`.
async fn widgets() -> TestCluster {
    let c = start_cluster(|_| {});
    c.apply_and_wait_served(CRD, WIDGETS).await;
    c
}

async fn create(c: &TestCluster, size: Value) -> kas_e2e::client::Answer {
    let w = json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w1"}, "spec": {"size": size}});
    c.send(Method::POST, WIDGETS, &JSON, &w.to_string()).await
}

#[tokio::test(flavor = "multi_thread")]
async fn kinds_and_schema_failures_are_the_validators() {
    let c = widgets().await;

    // Another kind in the body is the validator's 422, naming the kind it carries.
    let gadget = json!({"apiVersion": "example.com/v1", "kind": "Gadget",
        "metadata": {"name": "w1"}, "spec": {"size": 2}});
    let a = c
        .send(Method::POST, WIDGETS, &JSON, &gadget.to_string())
        .await;
    assert_eq!(a.status, 422, "{}", a.text());
    assert_eq!(
        a.json()["message"],
        "Gadget.example.com \"w1\" is invalid: kind: Invalid value: \"Gadget\": must be Widget"
    );
    assert_eq!(a.json()["details"]["kind"], "Gadget");

    // A spec replicas path that is no integer: the schema's cause and the scale path's.
    let a = create(&c, json!("x")).await;
    assert_eq!(a.status, 422, "{}", a.text());
    assert_eq!(
        causes(&a.json()),
        [
            (
                "spec.size".to_owned(),
                "Invalid value: \"string\": spec.size in body must be of type integer: \"string\""
                    .to_owned()
            ),
            (
                ".spec.size".to_owned(),
                "Invalid value: 0: .spec.size accessor error: x is of the type string, expected int64"
                    .to_owned()
            ),
        ]
    );

    let a = create(&c, json!(2)).await;
    assert_eq!(a.status, 201, "{}", a.text());
    let created = a.json();

    // A status write is checked against the status schema, its messages naming the path
    // inside it; then the scale's status path.
    let a = c
        .send(
            Method::PATCH,
            &format!("{WIDGETS}/w1/status"),
            &MERGE,
            r#"{"status":{"replicas":"x"}}"#,
        )
        .await;
    assert_eq!(a.status, 422, "{}", a.text());
    assert_eq!(
        causes(&a.json()),
        [
            (
                "status.replicas".to_owned(),
                "Invalid value: \"string\": replicas in body must be of type integer: \"string\""
                    .to_owned()
            ),
            (
                ".status.replicas".to_owned(),
                "Invalid value: 0: .status.replicas accessor error: x is of the type string, expected int64"
                    .to_owned()
            ),
        ]
    );

    // A replace that changes nothing keeps the generation.
    let a = c
        .send(
            Method::PUT,
            &format!("{WIDGETS}/w1"),
            &JSON,
            &created.to_string(),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.json()["metadata"]["generation"], 1);
}

/// Lists carry an empty continue, as unstructured lists do (`SetContinue("")`).
#[tokio::test(flavor = "multi_thread")]
async fn lists_carry_an_empty_continue() {
    let c = widgets().await;
    assert_eq!(create(&c, json!(2)).await.status, 201);
    let a = c.send(Method::GET, WIDGETS, &[], "").await;
    assert_eq!(a.json()["metadata"]["continue"], "", "{}", a.text());
    assert_eq!(a.json()["items"][0]["metadata"]["name"], "w1");
}

/// A path no route of a CRD takes is the CRD handler's delegate: Go's plain text.
#[tokio::test(flavor = "multi_thread")]
async fn paths_no_crd_serves_are_the_plain_404() {
    let c = widgets().await;
    for path in [
        "/apis/example.com/v1/widgets/w1",
        "/apis/example.com/v1/namespaces/default/nothings",
        "/apis/example.com/v2/namespaces/default/widgets",
    ] {
        let a = c.send(Method::GET, path, &[], "").await;
        assert_eq!(a.status, 404, "{path}");
        assert_eq!(a.text(), NOT_FOUND_BODY, "{path}");
    }
}

/// Discovery lists upstream's CRD discovery controller's verbs in its order, and the
/// status subresource before the scale one.
#[tokio::test(flavor = "multi_thread")]
async fn discovery_follows_the_crd_discovery_controller() {
    let c = widgets().await;
    let a = c.send(Method::GET, "/apis/example.com/v1", &[], "").await;
    let resources = a.json()["resources"].clone();
    let names: Vec<&str> = resources
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(names, ["widgets", "widgets/status", "widgets/scale"]);
    assert_eq!(
        resources[0]["verbs"],
        json!([
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "create",
            "update",
            "watch"
        ])
    );
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
    c.apply_and_wait_served(FREE_CRD, free).await;
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
