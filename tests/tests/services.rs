//! Services through the aggregator: cluster IPs and node ports allocated from the
//! configured ranges, never twice, and given back when a Service stops holding them.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use http::Method;
use kas_e2e::{TestCluster, start_cluster};
use serde_json::{Value, json};

fn create(c: &TestCluster, manifest: Value) -> std::process::Output {
    c.kubectl_stdin(&["create"], &manifest.to_string())
}

fn service(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec})
}

fn in_range(ip: &str) -> bool {
    ip.parse::<Ipv4Addr>().is_ok_and(|ip| {
        ip.octets()[..3] == [10, 0, 0] && ip.octets()[3] != 0 && ip.octets()[3] != 255
    })
}

#[test]
fn services_as_kubectl_creates_them() {
    let c = start_cluster(|_| {});
    let resources = c.kubectl_ok(&["api-resources", "--api-group="]);
    assert!(
        resources
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()
                == ["services", "svc", "v1", "true", "Service"]),
        "{resources}"
    );
    assert_eq!(
        c.kubectl_ok(&["create", "service", "clusterip", "web", "--tcp=80:8080"]),
        "service/web created\n"
    );
    let web = c.kubectl_json(&["get", "svc", "web"]);
    let spec = &web["spec"];
    let ip = spec["clusterIP"].as_str().unwrap_or("").to_owned();
    assert!(in_range(&ip), "{web}");
    assert_eq!(spec["clusterIPs"], json!([ip]));
    assert_eq!(spec["ipFamilies"], json!(["IPv4"]));
    assert_eq!(spec["ipFamilyPolicy"], "SingleStack");
    assert_eq!(spec["type"], "ClusterIP");
    assert_eq!(spec["sessionAffinity"], "None");
    assert_eq!(spec["internalTrafficPolicy"], "Cluster");
    assert_eq!(spec["ports"][0]["targetPort"], 8080);
    assert_eq!(spec["ports"][0]["protocol"], "TCP");

    c.kubectl_ok(&["create", "service", "nodeport", "np", "--tcp=80:8080"]);
    let np = c.kubectl_json(&["get", "svc", "np"]);
    let node_port = np["spec"]["ports"][0]["nodePort"].as_u64().unwrap_or(0);
    assert!((30000..=32767).contains(&node_port), "{np}");
    assert_eq!(np["spec"]["externalTrafficPolicy"], "Cluster");
    let table = c.kubectl_ok(&["get", "svc", "np"]);
    let row: Vec<&str> = table
        .lines()
        .nth(1)
        .unwrap_or("")
        .split_whitespace()
        .collect();
    assert_eq!(row[1], "NodePort", "{table}");
    assert_eq!(row[3], "<none>", "{table}");
    assert_eq!(row[4], format!("80:{node_port}/TCP"), "{table}");

    // What is taken cannot be asked for again.
    let out = create(
        &c,
        service("dup", json!({"clusterIP": ip, "ports": [{"port": 80}]})),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("spec.clusterIPs: Invalid value: []string{{\"{ip}\"}}: failed to allocate IP {ip}: provided IP is already allocated")),
        "{err}"
    );
    let out = create(
        &c,
        service(
            "dup",
            json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": node_port}]}),
        ),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "spec.ports[0].nodePort: Invalid value: {node_port}: provided port is already allocated"
        )),
        "{err}"
    );
    let out = create(
        &c,
        service(
            "far",
            json!({"clusterIP": "10.9.0.1", "ports": [{"port": 80}]}),
        ),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the provided IP (10.9.0.1) is not in the valid range. The range of valid IPs is 10.0.0.0/24"),
        "{err}"
    );
    // The failed creates gave back what they took: the same IP is refused only as taken.
    // (Beside the `kubernetes` Service the aggregator keeps in `default`.)
    assert!(
        c.kubectl_json(&["get", "svc", "-l", "provider!=kubernetes"])["items"]
            .as_array()
            .is_some_and(|i| i.len() == 2)
    );

    // A NodePort service turned ClusterIP gives its node port back.
    c.kubectl_ok(&[
        "patch",
        "svc",
        "np",
        "-p",
        r#"{"spec":{"type":"ClusterIP"}}"#,
    ]);
    let np = c.kubectl_json(&["get", "svc", "np"]);
    assert!(np["spec"]["ports"][0].get("nodePort").is_none(), "{np}");
    assert!(np["spec"].get("externalTrafficPolicy").is_none(), "{np}");
    let out = create(
        &c,
        service(
            "again",
            json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": node_port}]}),
        ),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // A deleted service gives its cluster IP back.
    c.kubectl_ok(&["delete", "svc", "web"]);
    let out = create(
        &c,
        service("reuse", json!({"clusterIP": ip, "ports": [{"port": 80}]})),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // kubectl expose: the selector from the pod's labels.
    c.kubectl_ok(&["run", "api", "--image=nginx", "--labels=app=api"]);
    assert_eq!(
        c.kubectl_ok(&["expose", "pod", "api", "--port=80"]),
        "service/api exposed\n"
    );
    let api = c.kubectl_json(&["get", "svc", "api"]);
    assert_eq!(api["spec"]["selector"], json!({"app": "api"}));
    assert_eq!(
        c.kubectl_ok(&[
            "get",
            "svc",
            "--field-selector=spec.type=NodePort",
            "-o",
            "name"
        ]),
        "service/again\n"
    );
    // Invalid Services are refused with upstream's field paths, and take nothing.
    let out = create(
        &c,
        service(
            "bad",
            json!({"type": "ClusterIP", "ports": [{"port": 0}, {"port": 80, "nodePort": 30500}]}),
        ),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    for expected in [
        "spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
        "spec.ports[0].name: Required value",
        "spec.ports[1].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'",
    ] {
        assert!(err.contains(expected), "{expected} in {err}");
    }
    // Headless and ExternalName services take no IP.
    let out = create(
        &c,
        service(
            "headless",
            json!({"clusterIP": "None", "selector": {"app": "api"}, "ports": [{"port": 80}]}),
        ),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        c.kubectl_json(&["get", "svc", "headless"])["spec"]["clusterIPs"],
        json!(["None"])
    );
    let out = create(
        &c,
        service(
            "ext",
            json!({"type": "ExternalName", "externalName": "db.example.com"}),
        ),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ext = c.kubectl_json(&["get", "svc", "ext"]);
    assert!(ext["spec"].get("clusterIP").is_none(), "{ext}");
}

/// 200 Services created at once through two core replicas get 200 distinct cluster IPs
/// and node ports.
#[tokio::test(flavor = "multi_thread")]
async fn concurrent_creates_never_share_an_ip_or_a_port() {
    let c = start_cluster(|s| s.core_replicas = 2);
    let c = std::sync::Arc::new(c);
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..200 {
        let c = c.clone();
        tasks.spawn(async move {
            let body = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": format!("s{i}")},
                "spec": {"type": "NodePort", "ports": [{"port": 80}]}});
            let answer = c
                .send(
                    http::Method::POST,
                    "/api/v1/namespaces/default/services",
                    &[("content-type", "application/json")],
                    &body.to_string(),
                )
                .await;
            assert_eq!(answer.status, 201, "{}", answer.text());
            let created = answer.json();
            (
                created["spec"]["clusterIP"].as_str().unwrap_or("").to_owned(),
                created["spec"]["ports"][0]["nodePort"].as_u64().unwrap_or(0),
            )
        });
    }
    let mut ips = BTreeSet::new();
    let mut ports = BTreeSet::new();
    while let Some(done) = tasks.join_next().await {
        let (ip, port) = done.expect("task");
        assert!(in_range(&ip), "{ip}");
        assert!(ips.insert(ip.clone()), "{ip} handed out twice");
        assert!(ports.insert(port), "{port} handed out twice");
    }
    assert_eq!((ips.len(), ports.len()), (200, 200));
}

/// What etcd holds for the Services: their cluster IPs and node ports, the IPAddress
/// records, and the node port bitmap's ports.
struct Records {
    service_ips: Vec<String>,
    service_ports: Vec<u64>,
    ip_records: BTreeSet<String>,
    port_bits: BTreeSet<u64>,
}

async fn records(etcd: &mut etcd_client::Client) -> Records {
    let opts = || Some(etcd_client::GetOptions::new().with_prefix());
    let services = etcd
        .get("/registry/services/specs/", opts())
        .await
        .expect("etcd");
    let mut service_ips = Vec::new();
    let mut service_ports = Vec::new();
    for kv in services.kvs() {
        let svc = kas_e2e::stored_document(kv.key_str().unwrap_or(""), kv.value());
        service_ips.extend(
            svc["spec"]["clusterIPs"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|ip| ip.as_str().map(str::to_owned)),
        );
        service_ports.extend(
            svc["spec"]["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p["nodePort"].as_u64()),
        );
    }
    let ips = etcd
        .get("/registry/ipaddresses/", opts())
        .await
        .expect("etcd");
    let ip_records = ips
        .kvs()
        .iter()
        .filter_map(|kv| kv.key_str().ok()?.rsplit('/').next().map(str::to_owned))
        .collect();
    let bitmap = etcd
        .get("/registry/ranges/servicenodeports", None)
        .await
        .expect("etcd");
    let mut port_bits = BTreeSet::new();
    if let Some(kv) = bitmap.kvs().first() {
        let range = kas_e2e::stored_document("/ranges/servicenodeports", kv.value());
        let data = range["data"].as_str().unwrap_or("");
        let big_endian = kas_apimachinery::golang::base64::STD_ENCODING
            .decode_string(data)
            .expect("base64");
        for (i, byte) in big_endian.iter().rev().enumerate() {
            for bit in 0..8 {
                if byte & (1 << bit) != 0 {
                    port_bits.insert(30000 + (i * 8 + bit) as u64);
                }
            }
        }
    }
    Records {
        service_ips,
        service_ports,
        ip_records,
        port_bits,
    }
}

/// A core replica killed while Services are being created leaks no cluster IP or node
/// port: the surviving replica's repair passes give back what no Service holds, and no
/// two Services share one.
#[tokio::test(flavor = "multi_thread")]
async fn a_core_killed_mid_create_loses_and_doubles_nothing() {
    let c = std::sync::Arc::new(start_cluster(|s| s.core_replicas = 2));
    let pid = c.pid(kas_e2e::Role::Core, 1).expect("core 1 runs");
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..120 {
        let c = c.clone();
        tasks.spawn(async move {
            let body = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": format!("k{i}")},
                "spec": {"type": "NodePort", "ports": [{"port": 80}]}});
            c.send(
                http::Method::POST,
                "/api/v1/namespaces/default/services",
                &[("content-type", "application/json")],
                &body.to_string(),
            )
            .await
            .status
        });
    }
    tokio::time::sleep(std::time::Duration::from_millis(40)).await;
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("kill");
    while tasks.join_next().await.is_some() {}

    let mut etcd = etcd_client::Client::connect([c.etcd_url()], None)
        .await
        .expect("etcd");
    // What a replica killed between allocating and writing leaves behind, made certain:
    // an IP record and a node port bit that no Service holds.
    let leaked = json!({"metadata": {"name": "10.0.0.250", "uid": "leaked",
        "creationTimestamp": "2020-01-01T00:00:00Z"},
        "spec": {"parentRef": {"group": "", "resource": "services", "namespace": "default", "name": "gone"}}});
    etcd.put("/registry/ipaddresses/10.0.0.250", leaked.to_string(), None)
        .await
        .expect("etcd");
    let bitmap = etcd
        .get("/registry/ranges/servicenodeports", None)
        .await
        .expect("etcd");
    let kv = bitmap.kvs().first().expect("a node port bitmap");
    let mut range = kas_e2e::stored_document("/ranges/servicenodeports", kv.value());
    let b64 = kas_apimachinery::golang::base64::STD_ENCODING;
    let mut big_endian = b64
        .decode_string(range["data"].as_str().unwrap_or(""))
        .expect("base64");
    // Port 32767 is bit 2767: byte 345 from the least significant end, bit 7.
    let need = 346;
    if big_endian.len() < need {
        let mut padded = vec![0u8; need - big_endian.len()];
        padded.extend(big_endian);
        big_endian = padded;
    }
    let at = big_endian.len() - 346;
    big_endian[at] |= 0x80;
    range["data"] = json!(b64.encode_to_string(&big_endian));
    let txn = etcd_client::Txn::new()
        .when([etcd_client::Compare::mod_revision(
            kv.key(),
            etcd_client::CompareOp::Equal,
            kv.mod_revision(),
        )])
        .and_then([etcd_client::TxnOp::put(kv.key(), range.to_string(), None)]);
    assert!(etcd.txn(txn).await.expect("etcd").succeeded());
    assert!(records(&mut etcd).await.port_bits.contains(&32767));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let r = loop {
        let r = records(&mut etcd).await;
        let ips: BTreeSet<String> = r.service_ips.iter().cloned().collect();
        let ports: BTreeSet<u64> = r.service_ports.iter().copied().collect();
        if (ips == r.ip_records && ports == r.port_bits) || std::time::Instant::now() > deadline {
            break r;
        }
        tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    };
    assert!(!r.service_ips.is_empty());
    let ips: BTreeSet<String> = r.service_ips.iter().cloned().collect();
    let ports: BTreeSet<u64> = r.service_ports.iter().copied().collect();
    assert_eq!(ips.len(), r.service_ips.len(), "an IP held twice");
    assert_eq!(ports.len(), r.service_ports.len(), "a node port held twice");
    assert_eq!(ips, r.ip_records, "IP records and Services differ");
    assert_eq!(ports, r.port_bits, "node port bits and Services differ");
}

/// Upstream 1.33 locks `AllowServiceLBStatusOnNonLB` off: a load balancer's ingress is
/// refused in a ClusterIP Service's status, and 1.33's conformance test writes it to a
/// LoadBalancer Service of a `loadBalancerClass`, which takes it.
#[tokio::test(flavor = "multi_thread")]
async fn load_balancer_status_belongs_to_load_balancers() {
    let c = start_cluster(|_| {});
    let merge = [("content-type", "application/merge-patch+json")];
    let json_type = [("content-type", "application/json")];
    let services = "/api/v1/namespaces/default/services";
    let ingress = r#"{"status":{"loadBalancer":{"ingress":[{"ip":"203.0.113.1"}]}}}"#;
    let plain = service("plain", json!({"ports": [{"port": 80}]}));
    let a = c
        .send(Method::POST, services, &json_type, &plain.to_string())
        .await;
    assert_eq!(a.status, 201, "{}", a.text());
    let a = c
        .send(
            Method::PATCH,
            &format!("{services}/plain/status"),
            &merge,
            ingress,
        )
        .await;
    assert_eq!(a.status, 422, "{}", a.text());
    assert_eq!(
        a.json()["message"],
        "Service \"plain\" is invalid: status.loadBalancer.ingress: Forbidden: may only be used when `spec.type` is 'LoadBalancer'"
    );
    let lb = service(
        "lb",
        json!({"type": "LoadBalancer", "ports": [{"port": 80}],
        "loadBalancerClass": "example.com/internal-vip", "allocateLoadBalancerNodePorts": false}),
    );
    let a = c
        .send(Method::POST, services, &json_type, &lb.to_string())
        .await;
    assert_eq!(a.status, 201, "{}", a.text());
    let a = c
        .send(
            Method::PATCH,
            &format!("{services}/lb/status"),
            &merge,
            ingress,
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(
        a.json()["status"]["loadBalancer"]["ingress"][0]["ip"],
        "203.0.113.1"
    );
}
