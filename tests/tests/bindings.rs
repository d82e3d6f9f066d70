//! core/v1 `bindings` (upstream's LegacyBindingREST) and the resource list of the core
//! group as upstream 1.33 serves it.

use http::Method;
use kas_e2e::start_cluster;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread")]
async fn legacy_bindings_bind_pods() {
    let c = start_cluster(|_| {});
    let resources = c.kubectl_ok(&["api-resources", "--api-group=", "-o", "name"]);
    let mut names: Vec<&str> = resources.lines().collect();
    names.sort();
    assert_eq!(
        names,
        [
            "bindings",
            "componentstatuses",
            "configmaps",
            "endpoints",
            "events",
            "limitranges",
            "namespaces",
            "nodes",
            "persistentvolumeclaims",
            "persistentvolumes",
            "pods",
            "podtemplates",
            "replicationcontrollers",
            "resourcequotas",
            "secrets",
            "serviceaccounts",
            "services",
        ]
    );

    let json_header = [("content-type", "application/json")];
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    let created = c
        .send(
            Method::POST,
            "/api/v1/namespaces/default/pods",
            &json_header,
            &pod.to_string(),
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.text());
    let binding = json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"},
        "target": {"kind": "Node", "name": "n1"}});
    let bound = c
        .send(
            Method::POST,
            "/api/v1/namespaces/default/bindings",
            &json_header,
            &binding.to_string(),
        )
        .await;
    assert_eq!(bound.status, 201, "{}", bound.text());
    let answer: Value = serde_json::from_slice(&bound.body).expect("json");
    assert_eq!(
        answer,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})
    );
    let pod = c.kubectl_json(&["get", "pod", "p"]);
    assert_eq!(pod["spec"]["nodeName"], "n1");
    let scheduled = pod["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "PodScheduled"))
        .cloned()
        .unwrap_or(Value::Null);
    assert_eq!(scheduled["status"], "True", "{pod}");

    let again = c
        .send(
            Method::POST,
            "/api/v1/namespaces/default/bindings",
            &json_header,
            &binding.to_string(),
        )
        .await;
    assert_eq!(again.status, 409, "{}", again.text());
    assert!(
        again
            .text()
            .contains("pod p is already assigned to node \\\"n1\\\""),
        "{}",
        again.text()
    );
    let mut missing = binding.clone();
    missing["metadata"]["name"] = json!("nope");
    let gone = c
        .send(
            Method::POST,
            "/api/v1/namespaces/default/bindings",
            &json_header,
            &missing.to_string(),
        )
        .await;
    assert_eq!(gone.status, 404, "{}", gone.text());
    assert!(
        gone.text().contains("pods \\\"nope\\\" not found"),
        "{}",
        gone.text()
    );
    // Nothing to read: create is the only verb.
    let list = c
        .send(Method::GET, "/api/v1/namespaces/default/bindings", &[], "")
        .await;
    assert_eq!(list.status, 405, "{}", list.text());
}
