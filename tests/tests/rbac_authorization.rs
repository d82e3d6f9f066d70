//! RBAC authorization through the aggregator, as a secure-by-default cluster runs it:
//! anonymous clients reach only what upstream's default policy lets them, an
//! unprivileged user gets upstream's 403 bodies, grants and revocations are enforced by
//! every aggregator replica within a second, spoofed front-proxy headers are not trusted,
//! and RBAC writes that would escalate are refused.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use http::Method;
use kas_e2e::client::{Proto, Tls, request};
use kas_e2e::{Role, TestCluster, kubectl_with, start_cluster};
use kas_local::kubeconfig::Credential;
use serde_json::{Value, json};

/// A user whose client certificate the cluster's CA signed, with a kubeconfig per
/// aggregator replica.
struct User {
    name: String,
    tls: Tls,
    kubeconfigs: Vec<PathBuf>,
}

fn user(c: &TestCluster, name: &str) -> User {
    let cert = c.pki().issue_user(name, None).expect("user certificate");
    let kubeconfigs = (0..c.replicas(Role::Aggregator))
        .map(|i| c.kubeconfig_for(i, name, Credential::Certificate(&cert)))
        .collect();
    let tls = Tls::new(&c.pki().ca.cert, Some((&cert.cert, &cert.key)), Proto::H2).unwrap();
    User {
        name: name.to_owned(),
        tls,
        kubeconfigs,
    }
}

async fn get(
    c: &TestCluster,
    replica: usize,
    path: &str,
    tls: &Tls,
    headers: &[(&str, &str)],
) -> (u16, Value) {
    let url = format!("{}{path}", c.url(Role::Aggregator, replica));
    let a = request(&url, Method::GET, headers, tls, Proto::H2)
        .await
        .unwrap();
    let body = serde_json::from_slice(&a.body).unwrap_or(Value::String(a.text()));
    (a.status.as_u16(), body)
}

fn forbidden(message: &str, kind: &str) -> Value {
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "Forbidden",
        "details": {"kind": kind},
        "code": 403,
    })
}

/// Polls every aggregator replica until `path` answers `status` to `tls`; the time it took.
async fn until_every_replica(c: &TestCluster, path: &str, tls: &Tls, status: u16) -> Duration {
    let start = Instant::now();
    for replica in 0..c.replicas(Role::Aggregator) {
        loop {
            if get(c, replica, path, tls, &[]).await.0 == status {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "replica {replica} never answered {status} to {path}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    start.elapsed()
}

#[tokio::test]
async fn anonymous_and_unprivileged_users_get_upstream_s_403_and_grants_follow_within_a_second() {
    let c = start_cluster(|s| s.aggregator_replicas = 2);
    let anonymous = c.admin_tls(Proto::H2);
    for path in ["/healthz", "/livez", "/readyz", "/version"] {
        assert_eq!(get(&c, 0, path, &anonymous, &[]).await.0, 200, "{path}");
    }
    let secrets = "/api/v1/namespaces/default/secrets";
    assert_eq!(
        get(&c, 0, secrets, &anonymous, &[]).await,
        (
            403,
            forbidden(
                r#"secrets is forbidden: User "system:anonymous" cannot list resource "secrets" in API group "" in the namespace "default""#,
                "secrets"
            )
        )
    );
    // Upstream's default policy keeps discovery for authenticated users.
    let (status, body) = get(&c, 0, "/apis", &anonymous, &[]).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        body["message"],
        r#"forbidden: User "system:anonymous" cannot get path "/apis""#
    );

    let alice = user(&c, "alice");
    // Authenticated users discover the API (system:discovery) but read nothing else.
    assert_eq!(get(&c, 0, "/apis", &alice.tls, &[]).await.0, 200);
    let out = kubectl_with(&alice.kubeconfigs[0], &["get", "secrets"]);
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        r#"Error from server (Forbidden): secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "default""#
    );
    let (status, body) = get(
        &c,
        1,
        "/api/v1/namespaces/kube-system/secrets/x",
        &alice.tls,
        &[],
    )
    .await;
    assert_eq!(
        (status, body),
        (
            403,
            json!({
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": r#"secrets "x" is forbidden: User "alice" cannot get resource "secrets" in API group "" in the namespace "kube-system""#,
                "reason": "Forbidden", "details": {"name": "x", "kind": "secrets"}, "code": 403,
            })
        )
    );
    // Front-proxy headers from a client are not trusted: alice stays alice.
    let spoof = [
        ("x-remote-user", "admin"),
        ("x-remote-group", "system:masters"),
    ];
    assert_eq!(get(&c, 0, secrets, &alice.tls, &spoof).await.0, 403);

    c.kubectl_ok(&[
        "create",
        "role",
        "secret-reader",
        "--verb=get,list",
        "--resource=secrets",
    ]);
    c.kubectl_ok(&[
        "create",
        "rolebinding",
        "alice-reads-secrets",
        "--role=secret-reader",
        &format!("--user={}", alice.name),
    ]);
    let granted = until_every_replica(&c, secrets, &alice.tls, 200).await;
    assert!(
        granted < Duration::from_secs(1),
        "granted after {granted:?}"
    );
    for kubeconfig in &alice.kubeconfigs {
        let out = kubectl_with(kubeconfig, &["get", "secrets"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // Only in its namespace.
    assert_eq!(
        get(
            &c,
            1,
            "/api/v1/namespaces/kube-system/secrets",
            &alice.tls,
            &[]
        )
        .await
        .0,
        403
    );

    c.kubectl_ok(&["delete", "rolebinding", "alice-reads-secrets"]);
    let revoked = until_every_replica(&c, secrets, &alice.tls, 403).await;
    assert!(
        revoked < Duration::from_secs(1),
        "revoked after {revoked:?}"
    );
}

#[test]
fn rbac_writes_that_would_escalate_are_refused() {
    let c = start_cluster(|_| {});
    let mallory = user(&c, "mallory");
    c.kubectl_ok(&[
        "create", "role", "rbac-writer", "--verb=create,get,list",
        "--resource=roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io,configmaps",
    ]);
    c.kubectl_ok(&[
        "create",
        "rolebinding",
        "mallory-writes-rbac",
        "--role=rbac-writer",
        "--user=mallory",
    ]);
    let kubeconfig = &mallory.kubeconfigs[0];
    let wait_granted = Instant::now();
    while !kubectl_with(kubeconfig, &["get", "roles"]).status.success() {
        assert!(wait_granted.elapsed() < Duration::from_secs(5));
        std::thread::sleep(Duration::from_millis(50));
    }

    // A role with what mallory holds is fine; one with more is refused.
    let ok = kubectl_with(
        kubeconfig,
        &[
            "create",
            "role",
            "cm-reader",
            "--verb=get",
            "--resource=configmaps",
        ],
    );
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let out = kubectl_with(
        kubeconfig,
        &[
            "create",
            "role",
            "secret-deleter",
            "--verb=delete",
            "--resource=secrets",
        ],
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.trim().ends_with("roles.rbac.authorization.k8s.io \"secret-deleter\" is forbidden: user \"mallory\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"delete\"]}"),
        "{stderr}"
    );
    // Binding cluster-admin would grant everything.
    let out = kubectl_with(
        kubeconfig,
        &[
            "create",
            "rolebinding",
            "mallory-admin",
            "--clusterrole=cluster-admin",
            "--user=mallory",
        ],
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("rolebindings.rbac.authorization.k8s.io \"mallory-admin\" is forbidden: user \"mallory\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"*\"], Resources:[\"*\"], Verbs:[\"*\"]}"),
        "{stderr}"
    );
    // Binding what mallory holds is fine.
    let ok = kubectl_with(
        kubeconfig,
        &[
            "create",
            "rolebinding",
            "bob-reads",
            "--role=cm-reader",
            "--user=bob",
        ],
    );
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
}

#[tokio::test]
async fn a_kubelet_reads_only_what_its_pods_use() {
    let c = start_cluster(|_| {});
    for manifest in [
        r#"{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "mine"}, "data": {}}"#,
        r#"{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "other"}, "data": {}}"#,
        r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"nodeName": "n1",
            "containers": [{"name": "c", "image": "busybox"}],
            "volumes": [{"name": "s", "secret": {"secretName": "mine"}}]}}"#,
    ] {
        let out = c.kubectl_stdin(&["create"], manifest);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let cert = c
        .pki()
        .issue_user("system:node:n1", Some("system:nodes"))
        .unwrap();
    let tls = Tls::new(&c.pki().ca.cert, Some((&cert.cert, &cert.key)), Proto::H2).unwrap();
    let start = Instant::now();
    while get(&c, 0, "/api/v1/namespaces/default/secrets/mine", &tls, &[])
        .await
        .0
        != 200
    {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "the graph never linked the pod"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (status, body) = get(&c, 0, "/api/v1/namespaces/default/secrets/other", &tls, &[]).await;
    assert_eq!(status, 403);
    assert_eq!(
        body["message"],
        r#"secrets "other" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "default": no relationship found between node 'n1' and this object"#
    );
    // The static node rules: services may be listed.
    assert_eq!(get(&c, 0, "/api/v1/services", &tls, &[]).await.0, 200);
    // 1.33's selector checks: a kubelet lists its own pods only.
    let own = "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1";
    assert_eq!(get(&c, 0, own, &tls, &[]).await.0, 200);
    let (status, body) = get(&c, 0, "/api/v1/pods", &tls, &[]).await;
    assert_eq!(status, 403);
    assert_eq!(
        body["message"],
        r#"pods is forbidden: User "system:node:n1" cannot list resource "pods" in API group "" at the cluster scope: can only list/watch pods with spec.nodeName field selector"#
    );
    // Another node's kubelet cannot read the first one's secret.
    let cert = c
        .pki()
        .issue_user("system:node:n2", Some("system:nodes"))
        .unwrap();
    let n2 = Tls::new(&c.pki().ca.cert, Some((&cert.cert, &cert.key)), Proto::H2).unwrap();
    assert_eq!(
        get(&c, 0, "/api/v1/namespaces/default/secrets/mine", &n2, &[])
            .await
            .0,
        403
    );
}
