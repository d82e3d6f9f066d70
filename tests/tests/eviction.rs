//! pods/eviction with PodDisruptionBudgets, as upstream's `EvictionREST` consults and
//! charges them.

use http::Method;
use kas_e2e::{TestCluster, start_cluster};
use serde_json::{Value, json};

const JSON: (&str, &str) = ("content-type", "application/json");

async fn send(c: &TestCluster, method: Method, path: &str, body: &Value) -> (u16, Value) {
    let answer = c.send(method, path, &[JSON], &body.to_string()).await;
    let value = serde_json::from_slice(&answer.body).unwrap_or(Value::Null);
    (answer.status.as_u16(), value)
}

async fn running_pod(c: &TestCluster, name: &str) {
    let pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    let (code, created) = send(c, Method::POST, "/api/v1/namespaces/default/pods", &pod).await;
    assert_eq!(code, 201, "{created}");
    let mut running = created.clone();
    running["status"] = json!({"phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}]});
    let path = format!("/api/v1/namespaces/default/pods/{name}/status");
    let (code, body) = send(c, Method::PUT, &path, &running).await;
    assert_eq!(code, 200, "{body}");
}

async fn evict(c: &TestCluster, name: &str) -> (u16, Value) {
    let eviction = json!({"apiVersion": "policy/v1", "kind": "Eviction",
        "metadata": {"name": name, "namespace": "default"}});
    let path = format!("/api/v1/namespaces/default/pods/{name}/eviction");
    send(c, Method::POST, &path, &eviction).await
}

async fn set_budget_status(c: &TestCluster, name: &str, allowed: i64) {
    let path = format!("/apis/policy/v1/namespaces/default/poddisruptionbudgets/{name}");
    let (_, mut budget) = send(c, Method::GET, &path, &Value::Null).await;
    budget["status"] = json!({"observedGeneration": budget["metadata"]["generation"],
        "disruptionsAllowed": allowed, "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1});
    let (code, body) = send(c, Method::PUT, &format!("{path}/status"), &budget).await;
    assert_eq!(code, 200, "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn evictions_respect_disruption_budgets() {
    let c = start_cluster(|_| {});
    // No budget: the pod goes.
    running_pod(&c, "free").await;
    let (code, body) = evict(&c, "free").await;
    assert_eq!(code, 201, "{body}");
    assert_eq!(body["status"], "Success");

    let budget = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "web"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}});
    let (code, body) = send(
        &c,
        Method::POST,
        "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
        &budget,
    )
    .await;
    assert_eq!(code, 201, "{body}");

    // A budget no controller observed yet.
    running_pod(&c, "web").await;
    let (code, body) = evict(&c, "web").await;
    assert_eq!(code, 429, "{body}");
    assert_eq!(
        body["message"],
        "Cannot evict pod as it would violate the pod's disruption budget."
    );
    assert_eq!(body["reason"], "TooManyRequests");
    assert_eq!(
        body["details"]["causes"],
        json!([{"reason": "DisruptionBudget",
            "message": "The disruption budget web is still being processed by the server."}])
    );
    assert_eq!(body["details"]["retryAfterSeconds"], 10);

    // A budget that allows nothing.
    set_budget_status(&c, "web", 0).await;
    let (code, body) = evict(&c, "web").await;
    assert_eq!(code, 429, "{body}");
    assert_eq!(
        body["details"]["causes"][0]["message"],
        "The disruption budget web needs 1 healthy pods and has 1 currently"
    );

    // A budget that allows one: the eviction takes it.
    set_budget_status(&c, "web", 1).await;
    let (code, body) = evict(&c, "web").await;
    assert_eq!(code, 201, "{body}");
    let (_, pdb) = send(
        &c,
        Method::GET,
        "/apis/policy/v1/namespaces/default/poddisruptionbudgets/web",
        &Value::Null,
    )
    .await;
    assert_eq!(pdb["status"]["disruptionsAllowed"], 0, "{pdb}");
    assert!(pdb["status"]["disruptedPods"]["web"].is_string(), "{pdb}");
    let condition = &pdb["status"]["conditions"][0];
    assert_eq!(
        (
            &condition["type"],
            &condition["status"],
            &condition["reason"]
        ),
        (
            &json!("DisruptionAllowed"),
            &json!("False"),
            &json!("InsufficientPods")
        )
    );
    let (code, _) = send(
        &c,
        Method::GET,
        "/api/v1/namespaces/default/pods/web",
        &Value::Null,
    )
    .await;
    assert_eq!(code, 404);

    // A pending pod is no disruption: the budget is not consulted.
    let pending = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "pending", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    send(
        &c,
        Method::POST,
        "/api/v1/namespaces/default/pods",
        &pending,
    )
    .await;
    let (code, body) = evict(&c, "pending").await;
    assert_eq!(code, 201, "{body}");

    // Two budgets over one pod: upstream's 500.
    let mut second = budget.clone();
    second["metadata"]["name"] = json!("web2");
    send(
        &c,
        Method::POST,
        "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
        &second,
    )
    .await;
    running_pod(&c, "both").await;
    let (code, body) = evict(&c, "both").await;
    assert_eq!(code, 500, "{body}");
    assert_eq!(
        body["message"],
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
    );
}
