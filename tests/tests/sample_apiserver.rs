//! Upstream's own aggregated API server, unmodified, behind the aggregator: k8s.io's
//! sample-apiserver (`wardle.example.com`) in a network namespace with its own etcd,
//! registered by an APIService, authenticating the aggregator's proxied requests from
//! `kube-system/extension-apiserver-authentication` and delegating authorization back
//! through SubjectAccessReviews. Upstream's binary is not part of this tree: build it from
//! a Kubernetes tree (`go build k8s.io/sample-apiserver`) and run
//! `KAS_SAMPLE_APISERVER=/path/to/sample-apiserver cargo test -p kas-e2e --test sample_apiserver -- --ignored`.

use std::net::IpAddr;
use std::time::{Duration, Instant};

use http::{Method, StatusCode};
use kas_e2e::netns::Netns;
use kas_e2e::pki::ServingCa;
use kas_e2e::{Role, TestCluster, start_cluster};
use serde_json::{Value, json};

fn apply(c: &TestCluster, manifest: &Value) {
    let out = c.kubectl_stdin(&["apply"], &manifest.to_string());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn wait(what: &str, mut done: impl FnMut() -> Option<String>) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut last;
    loop {
        last = match done() {
            None => return,
            Some(why) => why,
        };
        assert!(Instant::now() < deadline, "{what}: {last}");
        std::thread::sleep(Duration::from_millis(250));
    }
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs upstream's sample-apiserver binary in KAS_SAMPLE_APISERVER"]
async fn upstreams_sample_apiserver_works_through_the_aggregator() {
    let binary = std::env::var("KAS_SAMPLE_APISERVER").expect("KAS_SAMPLE_APISERVER");
    let c = start_cluster(|_| {});
    let dir = tempfile::tempdir().unwrap();
    let ns = Netns::new();
    let etcd = kas_local::Tools::from_env().etcd().expect("etcd");
    let data = dir.path().join("etcd");
    let _etcd = ns.spawn(
        &etcd,
        [
            "--data-dir",
            data.to_str().unwrap(),
            "--listen-client-urls",
            "http://127.0.0.1:2379",
            "--advertise-client-urls",
            "http://127.0.0.1:2379",
            "--listen-peer-urls",
            "http://127.0.0.1:2380",
        ],
        dir.path().join("etcd.log"),
    );
    // Inside the namespace, the cluster's kubeconfig reaches the aggregator unchanged.
    let aggregator: std::net::SocketAddr = c
        .url(Role::Aggregator, 0)
        .trim_start_matches("https://")
        .parse()
        .unwrap();
    ns.forward(aggregator, aggregator);
    let cluster_ip = ns.claim_address_in("10.0.0.0/24");
    let ca = ServingCa::new("sample-apiserver CA").unwrap();
    let ips = [IpAddr::V4(ns.ip()), IpAddr::V4(cluster_ip)];
    let serving = ca
        .issue_for_service(dir.path(), "api", "wardle", &ips)
        .unwrap();
    let kubeconfig = c.kubeconfig_path().to_str().unwrap().to_owned();
    let mut sample = ns.spawn(
        &binary,
        [
            "--etcd-servers=http://127.0.0.1:2379".to_owned(),
            "--secure-port=443".to_owned(),
            format!("--tls-cert-file={}", serving.cert.display()),
            format!("--tls-private-key-file={}", serving.key.display()),
            format!("--kubeconfig={kubeconfig}"),
            format!("--authentication-kubeconfig={kubeconfig}"),
            format!("--authorization-kubeconfig={kubeconfig}"),
        ],
        dir.path().join("sample-apiserver.log"),
    );

    apply(
        &c,
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "wardle"}}),
    );
    apply(
        &c,
        &json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "api", "namespace": "wardle"},
        "spec": {"clusterIP": cluster_ip.to_string(),
                 "ports": [{"name": "https", "port": 443, "targetPort": 443}]}}),
    );
    apply(
        &c,
        &json!({"apiVersion": "v1", "kind": "Endpoints",
        "metadata": {"name": "api", "namespace": "wardle"},
        "subsets": [{"addresses": [{"ip": ns.ip().to_string()}],
                     "ports": [{"name": "https", "port": 443}]}]}),
    );
    apply(
        &c,
        &json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
        "metadata": {"name": "v1alpha1.wardle.example.com"},
        "spec": {"group": "wardle.example.com", "version": "v1alpha1",
                 "groupPriorityMinimum": 1000, "versionPriority": 15,
                 "service": {"name": "api", "namespace": "wardle", "port": 443},
                 "caBundle": ca.ca_bundle()}}),
    );
    wait("the APIService to become Available", || {
        assert!(sample.alive(), "sample-apiserver exited: {}", sample.log());
        let api_service = c.kubectl_json(&["get", "apiservice", "v1alpha1.wardle.example.com"]);
        let condition = &api_service["status"]["conditions"][0];
        (condition["status"] != "True").then(|| condition.to_string())
    });

    // The aggregator's identity headers are trusted from the ConfigMap; the backend asks
    // the cluster whether the user may, and stores the object.
    let path = "/apis/wardle.example.com/v1alpha1/namespaces/wardle/flunders";
    let body = json!({"apiVersion": "wardle.example.com/v1alpha1", "kind": "Flunder",
        "metadata": {"name": "my-first-flunder"}, "spec": {"reference": "a"}});
    let created = c
        .send(
            Method::POST,
            path,
            &[("content-type", "application/json")],
            &body.to_string(),
        )
        .await;
    assert_eq!(
        created.status,
        StatusCode::CREATED,
        "{}\n{}",
        created.text(),
        sample.log()
    );
    let listed = c.kubectl_json(&["get", "flunders.wardle.example.com", "-n", "wardle"]);
    assert_eq!(
        listed["items"][0]["metadata"]["name"], "my-first-flunder",
        "{listed}"
    );
    let explained = c.kubectl_ok(&["explain", "flunders.wardle.example.com.spec"]);
    assert!(explained.contains("reference"), "{explained}");
}
