//! The `default/kubernetes` Service, Endpoints and EndpointSlice that the aggregator
//! replicas keep (upstream's kubernetes-service controller and lease endpoint reconciler).

use std::time::{Duration, Instant};

use kas_e2e::{Role, TestCluster, start_cluster};
use serde_json::{Value, json};

/// Polls `get` until `done` holds of it, for up to 20 s.
fn eventually(what: &str, get: impl Fn() -> Value, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let value = get();
        if done(&value) {
            return value;
        }
        assert!(Instant::now() < deadline, "{what}: {value}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn get(c: &TestCluster, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["-o", "json", "--ignore-not-found"]);
    let out = c.kubectl_ok(&all);
    serde_json::from_str(&out).unwrap_or(Value::Null)
}

fn addresses(endpoints: &Value) -> Vec<String> {
    endpoints["subsets"][0]["addresses"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|x| x["ip"].as_str().unwrap_or("").to_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn port_of(url: &str) -> u16 {
    url.rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("port")
}

#[test]
fn aggregators_keep_the_kubernetes_service_and_its_endpoints() {
    let c = start_cluster(|spec| {
        spec.extra_args.insert(
            Role::Aggregator,
            vec!["--advertise-address=10.1.2.3".to_owned()],
        );
    });
    let port = port_of(&c.url(Role::Aggregator, 0));

    let svc = eventually(
        "the kubernetes Service",
        || get(&c, &["get", "service", "kubernetes", "-n", "default"]),
        |s| !s.is_null(),
    );
    assert_eq!(svc["spec"]["clusterIP"], "10.0.0.1", "{svc}");
    assert_eq!(svc["spec"]["type"], "ClusterIP", "{svc}");
    assert_eq!(svc["spec"]["ipFamilyPolicy"], "SingleStack", "{svc}");
    assert_eq!(
        svc["spec"]["ports"],
        json!([{"name": "https", "port": 443, "protocol": "TCP", "targetPort": port}]),
        "{svc}"
    );
    assert_eq!(
        svc["metadata"]["labels"],
        json!({"component": "apiserver", "provider": "kubernetes"})
    );

    let ep = eventually(
        "the kubernetes Endpoints",
        || get(&c, &["get", "endpoints", "kubernetes", "-n", "default"]),
        |e| addresses(e) == ["10.1.2.3"],
    );
    assert_eq!(
        ep["subsets"][0]["ports"],
        json!([{"name": "https", "port": port, "protocol": "TCP"}])
    );
    assert_eq!(
        ep["metadata"]["labels"]["endpointslice.kubernetes.io/skip-mirror"],
        "true"
    );
    let slice = eventually(
        "the kubernetes EndpointSlice",
        || {
            get(
                &c,
                &[
                    "get",
                    "endpointslices.discovery.k8s.io",
                    "kubernetes",
                    "-n",
                    "default",
                ],
            )
        },
        |s| !s.is_null(),
    );
    assert_eq!(slice["addressType"], "IPv4");
    assert_eq!(
        slice["endpoints"],
        json!([{"addresses": ["10.1.2.3"], "conditions": {"ready": true}}])
    );
    assert_eq!(
        slice["ports"],
        json!([{"name": "https", "port": port, "protocol": "TCP"}])
    );
    assert_eq!(
        slice["metadata"]["labels"]["kubernetes.io/service-name"],
        "kubernetes"
    );

    // A second replica advertising another address joins the endpoints...
    let extra_port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let mut args = kas_local::cluster::role_args(
        Role::Aggregator,
        extra_port,
        c.pki(),
        &c.etcd_url(),
        &c.urls(Role::Core),
    );
    args.push("--advertise-address=10.1.2.4".to_owned());
    let log = std::fs::File::create(c.state_dir().join("extra-aggregator.log")).expect("log");
    let mut extra = std::process::Command::new(kas_e2e::bin_dir().join("aggregator"))
        .args(&args)
        .stdout(std::process::Stdio::null())
        .stderr(log)
        .spawn()
        .expect("a second aggregator");
    eventually(
        "both replicas in the Endpoints",
        || get(&c, &["get", "endpoints", "kubernetes", "-n", "default"]),
        |e| addresses(e) == ["10.1.2.3", "10.1.2.4"],
    );
    eventually(
        "both replicas in the EndpointSlice",
        || {
            get(
                &c,
                &[
                    "get",
                    "endpointslices.discovery.k8s.io",
                    "kubernetes",
                    "-n",
                    "default",
                ],
            )
        },
        |s| s["endpoints"].as_array().map(Vec::len) == Some(2),
    );

    // ...and leaves them when it shuts down (it drops its lease; the first replica would
    // also drop it once the lease expired).
    let status = std::process::Command::new("kill")
        .args(["-TERM", &extra.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let _ = extra.wait();
    eventually(
        "the stopped replica out of the Endpoints",
        || get(&c, &["get", "endpoints", "kubernetes", "-n", "default"]),
        |e| addresses(e) == ["10.1.2.3"],
    );
    // The Service stays as it was created.
    let again = get(&c, &["get", "service", "kubernetes", "-n", "default"]);
    assert_eq!(again["metadata"]["uid"], svc["metadata"]["uid"]);
}

#[test]
fn a_loopback_advertise_address_is_refused_by_endpoints_validation() {
    // The launcher's cluster listens on 127.0.0.1: the Service is made, but core refuses
    // loopback endpoints, as upstream's validation refuses them.
    let c = start_cluster(|_| {});
    eventually(
        "the kubernetes Service",
        || get(&c, &["get", "service", "kubernetes", "-n", "default"]),
        |s| s["spec"]["clusterIP"] == "10.0.0.1",
    );
    std::thread::sleep(Duration::from_secs(2));
    let ep = get(&c, &["get", "endpoints", "kubernetes", "-n", "default"]);
    assert!(ep.is_null(), "{ep}");
}
