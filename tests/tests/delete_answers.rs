//! What a DELETE answers, as upstream's `Store.Delete` and `finalizeDelete` decide: the
//! deleted object for a store with `ReturnDeletedObject` (services, pods, namespaces,
//! persistent volumes and claims, service accounts, quotas, pod templates, storage
//! classes, CSI drivers and nodes, volume attachments), a `Status` naming the resource
//! for the others, and the marked object while something holds the deletion.

use http::Method;
use kas_e2e::start_cluster;
use serde_json::json;

const JSON: [(&str, &str); 1] = [("content-type", "application/json")];

#[tokio::test(flavor = "multi_thread")]
async fn deletes_answer_the_object_where_upstream_returns_it() {
    let c = start_cluster(|_| {});
    let ns = "/api/v1/namespaces/default";

    // A Service answers its last state.
    let svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s1"},
        "spec": {"clusterIP": "None", "ports": [{"port": 80}]}});
    let a = c
        .send(
            Method::POST,
            &format!("{ns}/services"),
            &JSON,
            &svc.to_string(),
        )
        .await;
    assert_eq!(a.status, 201, "{}", a.text());
    let a = c
        .send(Method::DELETE, &format!("{ns}/services/s1"), &[], "")
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.json()["kind"], "Service", "{}", a.text());
    assert_eq!(a.json()["metadata"]["name"], "s1");

    // A pod no node runs is deleted at once and answered marked, as it was last stored.
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1"},
        "spec": {"containers": [{"name": "c", "image": "x"}]}});
    let a = c
        .send(Method::POST, &format!("{ns}/pods"), &JSON, &pod.to_string())
        .await;
    assert_eq!(a.status, 201, "{}", a.text());
    assert_eq!(a.json()["metadata"]["generation"], 1);
    let a = c
        .send(Method::DELETE, &format!("{ns}/pods/p1"), &[], "")
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    let gone = a.json();
    assert_eq!(gone["kind"], "Pod", "{gone}");
    assert_eq!(gone["metadata"]["deletionGracePeriodSeconds"], 0);
    assert!(gone["metadata"]["deletionTimestamp"].is_string(), "{gone}");
    assert_eq!(gone["metadata"]["generation"], 2);
    let a = c.send(Method::GET, &format!("{ns}/pods/p1"), &[], "").await;
    assert_eq!(a.status, 404);

    // A Deployment's store returns a Status naming the resource.
    let deploy = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "d1"}, "spec": {"selector": {"matchLabels": {"a": "b"}},
        "template": {"metadata": {"labels": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "image": "x"}]}}}});
    let deployments = "/apis/apps/v1/namespaces/default/deployments";
    let a = c
        .send(Method::POST, deployments, &JSON, &deploy.to_string())
        .await;
    assert_eq!(a.status, 201, "{}", a.text());
    let uid = a.json()["metadata"]["uid"].clone();
    let a = c
        .send(Method::DELETE, &format!("{deployments}/d1"), &[], "")
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(
        a.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
            "details": {"name": "d1", "group": "apps", "kind": "deployments", "uid": uid}})
    );

    // A held deletion answers the marked object whatever the store.
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c1", "finalizers": ["example.com/hold"]}});
    let a = c
        .send(
            Method::POST,
            &format!("{ns}/configmaps"),
            &JSON,
            &cm.to_string(),
        )
        .await;
    assert_eq!(a.status, 201, "{}", a.text());
    let a = c
        .send(Method::DELETE, &format!("{ns}/configmaps/c1"), &[], "")
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(a.json()["kind"], "ConfigMap");
    assert!(a.json()["metadata"]["deletionTimestamp"].is_string());
}
