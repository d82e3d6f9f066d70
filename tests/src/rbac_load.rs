//! `kas-bench rbac`: the cost of RBAC authorization with a large policy loaded. Loads
//! RoleBindings and ClusterRoles as an admin, grants one unprivileged user `get` on
//! configmaps through a RoleBinding among them, then alternates rounds of GETs of one
//! configmap as the admin (`system:masters`, allowed before RBAC is asked) and as that
//! user (a decision over the whole index).

use std::time::Duration;

use anyhow::{Result, bail};
use bytes::Bytes;
use futures_util::StreamExt;
use http::{HeaderMap, Method};
use serde_json::{Value, json};

use crate::client::{Tls, connect_h2};
use crate::load::{LoadResult, LoadSpec, run};

const RBAC: &str = "rbac.authorization.k8s.io";

/// What to load and how to measure.
pub struct Spec {
    pub base: http::Uri,
    pub admin_tls: Tls,
    pub admin_headers: HeaderMap,
    pub user_tls: Tls,
    /// The user name the user's credential authenticates as.
    pub user: String,
    pub namespace: String,
    pub role_bindings: usize,
    pub cluster_roles: usize,
    pub concurrency: usize,
    pub duration: Duration,
    pub rounds: usize,
}

/// What the load left behind.
pub struct Loaded {
    /// Bytes of JSON the server answered for the objects created (what etcd holds, less
    /// the resourceVersion).
    pub json_bytes: usize,
}

fn cluster_role(i: usize) -> Value {
    json!({
        "apiVersion": format!("{RBAC}/v1"), "kind": "ClusterRole",
        "metadata": {"name": format!("bench-role-{i}"), "labels": {"bench": "rbac"}},
        "rules": [
            {"apiGroups": [""], "resources": ["pods", "services", "endpoints"], "verbs": ["get", "list", "watch"]},
            {"apiGroups": ["apps"], "resources": ["deployments", "replicasets"], "verbs": ["get", "list", "watch", "update"]},
            {"apiGroups": ["batch"], "resources": ["jobs"], "resourceNames": [format!("job-{i}")], "verbs": ["get"]},
        ],
    })
}

fn role_binding(namespace: &str, i: usize, cluster_roles: usize) -> Value {
    json!({
        "apiVersion": format!("{RBAC}/v1"), "kind": "RoleBinding",
        "metadata": {"name": format!("bench-binding-{i}"), "namespace": namespace, "labels": {"bench": "rbac"}},
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": format!("bench-role-{}", i % cluster_roles.max(1))},
        "subjects": [
            {"kind": "User", "apiGroup": RBAC, "name": format!("bench-user-{i}")},
            {"kind": "Group", "apiGroup": RBAC, "name": format!("bench-group-{}", i % 100)},
            {"kind": "ServiceAccount", "name": format!("bench-sa-{i}"), "namespace": namespace},
        ],
    })
}

/// POSTs `objects` to `path` with `concurrency` streams; the bytes of the answers. A 409
/// (left from an earlier run) counts as loaded.
async fn create_all(spec: &Spec, path: &str, objects: Vec<Value>) -> Result<usize> {
    let sender = connect_h2(&spec.base, &spec.admin_tls).await?;
    let bodies = futures_util::stream::iter(objects.into_iter().map(|object| {
        let mut sender = sender.clone();
        let uri = format!("{}{path}", spec.base.to_string().trim_end_matches('/'));
        let headers = spec.admin_headers.clone();
        async move {
            let mut req = http::Request::builder()
                .method(Method::POST)
                .uri(uri)
                .header("content-type", "application/json");
            for (k, v) in &headers {
                req = req.header(k, v);
            }
            let req = req.body(http_body_util::Full::new(Bytes::from(object.to_string())))?;
            let resp = sender.send_request(req).await?;
            let status = resp.status();
            let body = http_body_util::BodyExt::collect(resp.into_body())
                .await?
                .to_bytes();
            match status.as_u16() {
                201 => Ok(body.len()),
                409 => Ok(0),
                code => bail!("POST {path}: {code} {}", String::from_utf8_lossy(&body)),
            }
        }
    }))
    .buffer_unordered(spec.concurrency.max(1));
    let sizes: Vec<Result<usize>> = bodies.collect().await;
    sizes.into_iter().sum()
}

/// Creates the policy, the user's grant and the configmap it reads.
pub async fn load(spec: &Spec) -> Result<Loaded> {
    let ns = &spec.namespace;
    let mut json_bytes = create_all(
        spec,
        &format!("/apis/{RBAC}/v1/clusterroles"),
        (0..spec.cluster_roles).map(cluster_role).collect(),
    )
    .await?;
    json_bytes += create_all(
        spec,
        &format!("/apis/{RBAC}/v1/namespaces/{ns}/rolebindings"),
        (0..spec.role_bindings)
            .map(|i| role_binding(ns, i, spec.cluster_roles))
            .collect(),
    )
    .await?;
    let grant = vec![json!({
        "apiVersion": format!("{RBAC}/v1"), "kind": "RoleBinding",
        "metadata": {"name": "bench-user-reads-configmaps", "namespace": ns},
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "view"},
        "subjects": [{"kind": "User", "apiGroup": RBAC, "name": spec.user}],
    })];
    create_all(
        spec,
        &format!("/apis/{RBAC}/v1/namespaces/{ns}/rolebindings"),
        grant,
    )
    .await?;
    let cm = vec![json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "bench-rbac", "namespace": ns}, "data": {"k": "v"}})];
    create_all(spec, &format!("/api/v1/namespaces/{ns}/configmaps"), cm).await?;
    Ok(Loaded { json_bytes })
}

/// Alternating rounds of GETs as the admin and as the user: their results, per round.
pub async fn measure(spec: &Spec) -> Result<Vec<(LoadResult, LoadResult)>> {
    let load_as = |tls: &Tls, headers: &HeaderMap| LoadSpec {
        base: spec.base.clone(),
        tls: tls.clone(),
        method: Method::GET,
        path: format!(
            "/api/v1/namespaces/{}/configmaps/bench-rbac",
            spec.namespace
        ),
        headers: headers.clone(),
        body: Bytes::new(),
        concurrency: spec.concurrency,
        connections: 1,
        duration: spec.duration,
    };
    let admin = load_as(&spec.admin_tls, &spec.admin_headers);
    let user = load_as(&spec.user_tls, &HeaderMap::new());
    let mut rounds = Vec::new();
    for _ in 0..spec.rounds.max(1) {
        let a = run(&admin).await?;
        let u = run(&user).await?;
        if u.codes.keys().any(|c| *c != 200) || a.codes.keys().any(|c| *c != 200) {
            bail!("non-200 answers: admin {:?}, user {:?}", a.codes, u.codes);
        }
        rounds.push((a, u));
    }
    Ok(rounds)
}
