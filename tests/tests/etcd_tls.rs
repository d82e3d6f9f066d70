//! etcd as production clusters run it: TLS only, client certificates of its own CA
//! required (`--client-cert-auth`). Every role reaches it with `--etcd-cafile`,
//! `--etcd-certfile` and `--etcd-keyfile`; a client certificate etcd does not trust stops
//! a role at start with the reason.

use http::Method;
use kas_e2e::{Role, start_cluster};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn the_roles_use_etcd_over_mutual_tls() {
    let c = start_cluster(|spec| spec.etcd_tls = true);
    assert!(c.etcd_url().starts_with("https://"), "{}", c.etcd_url());
    create_configmap(&c, "over-tls").await;
    let path = "/api/v1/namespaces/default/configmaps";
    let a = c
        .send(Method::GET, &format!("{path}/over-tls"), &[], "")
        .await;
    assert_eq!(a.json()["data"]["k"], "v", "{}", a.text());
    let a = c.send(Method::GET, "/readyz?verbose", &[], "").await;
    assert!(a.text().contains("[+]etcd ok"), "{}", a.text());

    // The same flags but a client certificate of the cluster's CA, which etcd does not
    // trust: core-apiserver stops at start and says why.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap();
    let mut args = kas_local::cluster::role_args(
        Role::Core,
        port,
        c.pki(),
        &c.etcd_url(),
        &c.urls(Role::Extensions),
    );
    let at = args.iter().position(|a| a == "--etcd-certfile").unwrap();
    args[at + 1] = c.pki().admin.cert.display().to_string();
    args[at + 3] = c.pki().admin.key.display().to_string();
    let out = std::process::Command::new(kas_e2e::bin_dir().join("core-apiserver"))
        .args(&args)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("connecting to etcd")
            && stderr.contains(&c.etcd_url())
            && stderr.contains("BadCertificate"),
        "{stderr}"
    );
}

/// Rotated client certificate files are taken without a restart: files etcd does not
/// trust leave each role's client as it was (and it serves on), a new certificate of
/// etcd's CA replaces it (the roles check the files every 10 s).
#[tokio::test(flavor = "multi_thread")]
async fn changed_client_certificate_files_are_taken_without_a_restart() {
    let c = start_cluster(|spec| spec.etcd_tls = true);
    let pki = c.pki().clone();
    let files = &pki.etcd_client;
    let log = c.log_path(Role::Core, 0);
    let wait_for_log = |line: &'static str| {
        let log = log.clone();
        async move {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(40);
            loop {
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                if text.contains(line) {
                    return;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "no {line:?} in:\n{text}"
                );
                tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            }
        }
    };

    std::fs::copy(&pki.admin.cert, &files.cert).unwrap();
    std::fs::copy(&pki.admin.key, &files.key).unwrap();
    wait_for_log("do not connect; keeping the previous ones").await;
    create_configmap(&c, "after-untrusted-files").await;

    let dir = tempfile::tempdir().unwrap();
    let (cert, key) =
        kas_e2e::pki::sign_client(&pki.etcd_ca, "kube-apiserver-etcd-client", dir.path()).unwrap();
    std::fs::copy(&cert, &files.cert).unwrap();
    std::fs::copy(&key, &files.key).unwrap();
    wait_for_log("reloaded the etcd client certificate files").await;
    create_configmap(&c, "after-rotation").await;
}

/// Creates ConfigMap `name` (`data: {k: v}`) in `default` through the aggregator.
async fn create_configmap(c: &kas_e2e::TestCluster, name: &str) {
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
        "data": {"k": "v"}});
    let a = c
        .send(
            Method::POST,
            "/api/v1/namespaces/default/configmaps",
            &[("content-type", "application/json")],
            &cm.to_string(),
        )
        .await;
    assert_eq!(a.status, 201, "{name}: {}", a.text());
}
