//! What kube-apiserver's post-start controllers keep for controllers and kubelets to read:
//! the identity Leases (core-apiserver holds `apiserver-<hash>` in `kube-system` as upstream
//! 1.33's lease controller writes it, renews it, and collects the expired Leases of other
//! kube-apiservers; the hidden period flags shorten upstream's 10 s and 1 h, as its
//! integration tests do) and the legacy token tracking ConfigMap.

use std::time::{Duration, Instant};

use http::Method;
use kas_e2e::{Role, start_cluster};
use serde_json::{Value, json};

const LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases";
const JSON: [(&str, &str); 1] = [("content-type", "application/json")];

#[tokio::test(flavor = "multi_thread")]
async fn core_holds_renews_and_collects_identity_leases() {
    let c = start_cluster(|spec| {
        spec.extra_args.insert(
            Role::Core,
            vec![
                "--identity-lease-renew-interval=1s".to_owned(),
                "--identity-lease-gc-period=1s".to_owned(),
            ],
        );
    });
    let hostname = nix::unistd::gethostname().unwrap().into_string().unwrap();
    let selector = "labelSelector=apiserver.kubernetes.io%2Fidentity%3Dkube-apiserver";
    let list = || async {
        let a = c
            .send(Method::GET, &format!("{LEASES}?{selector}"), &[], "")
            .await;
        assert_eq!(a.status, 200, "{}", a.text());
        a.json()["items"].as_array().cloned().unwrap_or_default()
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    let lease = loop {
        if let [lease] = list().await.as_slice() {
            break lease.clone();
        }
        assert!(Instant::now() < deadline, "no identity lease");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let name = lease["metadata"]["name"].as_str().unwrap().to_owned();
    assert!(name.starts_with("apiserver-") && name.len() == 36, "{name}");
    assert_eq!(
        lease["metadata"]["labels"],
        json!({"apiserver.kubernetes.io/identity": "kube-apiserver",
            "kubernetes.io/hostname": hostname})
    );
    let spec = &lease["spec"];
    let holder = spec["holderIdentity"].as_str().unwrap();
    assert!(holder.starts_with(&format!("{name}_")), "{holder}");
    assert_eq!(spec["leaseDurationSeconds"], 3600);
    let renewed = spec["renewTime"].as_str().unwrap().to_owned();
    // MicroTime: six digits of fraction.
    assert_eq!(
        renewed.len(),
        "2026-01-01T00:00:00.000000Z".len(),
        "{renewed}"
    );
    assert_eq!(
        lease["metadata"]["managedFields"][0]["manager"],
        "kube-apiserver"
    );

    // Renewed: a later renewTime, the same holder.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let a = c
            .send(Method::GET, &format!("{LEASES}/{name}"), &[], "")
            .await;
        let now = a.json();
        if now["spec"]["renewTime"].as_str() != Some(&renewed) {
            assert_eq!(now["spec"]["holderIdentity"], holder);
            break;
        }
        assert!(Instant::now() < deadline, "never renewed: {now}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // Another kube-apiserver's expired Lease is collected; other Leases are not.
    let expired = |name: &str, labels: Value| {
        json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": name, "labels": labels},
            "spec": {"holderIdentity": format!("{name}_x"), "leaseDurationSeconds": 3600,
                "renewTime": "2026-01-01T00:00:00.000000Z"}})
    };
    let gone = expired(
        "apiserver-gone",
        json!({"apiserver.kubernetes.io/identity": "kube-apiserver"}),
    );
    let other = expired(
        "other-component",
        json!({"apiserver.kubernetes.io/identity": "sample-apiserver"}),
    );
    for lease in [gone, other] {
        let a = c
            .send(Method::POST, LEASES, &JSON, &lease.to_string())
            .await;
        assert_eq!(a.status, 201, "{}", a.text());
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let a = c
            .send(Method::GET, &format!("{LEASES}/apiserver-gone"), &[], "")
            .await;
        if a.status == 404 {
            break;
        }
        assert!(Instant::now() < deadline, "never collected: {}", a.text());
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let a = c
        .send(Method::GET, &format!("{LEASES}/other-component"), &[], "")
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    let a = c
        .send(Method::GET, &format!("{LEASES}/{name}"), &[], "")
        .await;
    assert_eq!(a.status, 200, "its own Lease stays: {}", a.text());
}

/// kube-controller-manager's legacy-serviceaccount-token-cleaner reads since when legacy
/// tokens are tracked.
#[tokio::test(flavor = "multi_thread")]
async fn core_keeps_the_legacy_token_tracking_configmap() {
    let c = start_cluster(|_| {});
    let path = "/api/v1/namespaces/kube-system/configmaps/kube-apiserver-legacy-service-account-token-tracking";
    // Written in the background once core started.
    let deadline = Instant::now() + Duration::from_secs(20);
    let a = loop {
        let a = c.send(Method::GET, path, &[], "").await;
        if a.status == 200 || Instant::now() > deadline {
            break a;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(a.status, 200, "{}", a.text());
    let since = a.json()["data"]["since"].as_str().unwrap().to_owned();
    let today = std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%d"])
        .output()
        .unwrap();
    assert_eq!(since, String::from_utf8_lossy(&today.stdout).trim());
    assert_eq!(
        a.json()["metadata"]["managedFields"][0]["manager"],
        "kube-apiserver"
    );
}
