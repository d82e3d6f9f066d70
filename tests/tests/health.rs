//! Health end to end, in every role: the `etcd` and `etcd-readiness` checks that each
//! binary hands its server (from kas-storage-etcd's flags), and upstream's plain-text
//! not-found answer for a check nobody registered.

use http::Method;
use kas_e2e::client::{Proto, request};
use kas_e2e::{Role, start_cluster};

const ROLES: [Role; 3] = [Role::Aggregator, Role::Core, Role::Extensions];

#[tokio::test]
async fn every_role_checks_etcd_and_answers_unknown_checks_with_gos_not_found() {
    let c = start_cluster(|_| {});
    let bearer = c.bearer();
    for role in ROLES {
        // The aggregator takes the admin's token; core and extensions take their peers.
        let (tls, headers): (_, Vec<(&str, &str)>) = match role {
            Role::Aggregator => (
                c.admin_tls(Proto::H2),
                vec![("authorization", bearer.as_str())],
            ),
            _ => (
                c.peer_tls(Proto::H2),
                vec![
                    ("x-remote-user", "admin"),
                    ("x-remote-group", "system:masters"),
                ],
            ),
        };
        let base = c.url(role, 0);
        let get = |path: String| {
            let (tls, headers) = (tls.clone(), headers.clone());
            async move {
                request(&path, Method::GET, &headers, &tls, Proto::H2)
                    .await
                    .unwrap()
            }
        };

        // Core and the aggregator list the post-start hooks whose work they do at start,
        // as upstream's.
        let hooks: String = match role {
            Role::Core => core_apiserver_hooks().to_vec(),
            Role::Aggregator => aggregator_hooks().to_vec(),
            Role::Extensions => Vec::new(),
        }
        .iter()
        .map(|h| match *h {
            // A boot-sequence check among the hooks, as upstream's aggregator adds it.
            "autoregister-completion" => format!("[+]{h} ok\n"),
            h => format!("[+]poststarthook/{h} ok\n"),
        })
        .collect();
        let ready = get(format!("{base}/readyz?verbose")).await;
        assert_eq!(ready.status, 200, "{role}: {}", ready.text());
        assert_eq!(
            ready.text(),
            format!(
                "[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]etcd-readiness ok\n{hooks}[+]shutdown ok\nreadyz check passed\n"
            ),
            "{role}"
        );
        let etcd = get(format!("{base}/readyz/etcd")).await;
        assert_eq!((etcd.status.as_u16(), etcd.text().as_str()), (200, "ok"));
        // `etcd` is upstream's `AddHealthChecks` (all three endpoints), `etcd-readiness`
        // its `AddReadyzChecks`.
        let live = get(format!("{base}/livez?verbose")).await;
        assert_eq!(
            live.text(),
            format!("[+]ping ok\n[+]log ok\n[+]etcd ok\n{hooks}livez check passed\n"),
            "{role}"
        );

        for path in [
            "/healthz/nope",
            "/livez/etcd-readiness",
            "/readyz/nope",
            "/livez/ping/x",
        ] {
            let a = get(format!("{base}{path}")).await;
            assert_eq!(
                (a.status.as_u16(), a.text().as_str()),
                (404, "404 page not found\n"),
                "{role} {path}"
            );
            assert_eq!(a.headers["content-type"], "text/plain; charset=utf-8");
            assert_eq!(a.headers["x-content-type-options"], "nosniff");
        }
    }
}

/// Upstream's names of the aggregator's post-start hooks this role runs, with the
/// cluster-authentication-trust controller's (kube-apiserver's, registered before the
/// aggregator's), and `autoregister-completion`, in upstream's order. The local cluster
/// gives the front-proxy client certificate's files, so their reload has its hook.
fn aggregator_hooks() -> [&'static str; 12] {
    [
        "start-cluster-authentication-info-controller",
        "aggregator-reload-proxy-client-cert",
        "start-kube-aggregator-informers",
        "apiservice-status-local-available-controller",
        "apiservice-status-remote-available-controller",
        "apiservice-registration-controller",
        "apiservice-wait-for-first-sync",
        "apiservice-discovery-controller",
        "kube-apiserver-autoregistration",
        "autoregister-completion",
        "apiservice-openapi-controller",
        "apiservice-openapiv3-controller",
    ]
}

/// Upstream's names of the post-start hooks core runs, in its order.
fn core_apiserver_hooks() -> [&'static str; 8] {
    [
        "start-system-namespaces-controller",
        "start-kube-apiserver-identity-lease-controller",
        "start-kube-apiserver-identity-lease-garbage-collector",
        "start-legacy-token-tracking-controller",
        "rbac/bootstrap-roles",
        "scheduling/bootstrap-system-priority-classes",
        "priority-and-fairness-config-producer",
        "start-kubernetes-service-cidr-controller",
    ]
}
