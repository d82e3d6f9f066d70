//! Dual-stack Services (upstream `initIPFamilyFields` and `updateClusterIPs`): the IP
//! families a policy gets on a dual-stack and on a single-stack cluster, and the
//! secondary cluster IP (with its IPAddress record) allocated on an upgrade and released
//! on a downgrade.

use std::net::IpAddr;
use std::time::{Duration, Instant};

use kas_e2e::{Role, TestCluster, start_cluster};
use serde_json::{Value, json};

const RANGES: &str = "--service-cluster-ip-range=10.0.0.0/24,fd00::/108";

fn create(c: &TestCluster, name: &str, spec: Value) -> Value {
    let svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
        "spec": spec});
    let out = c.kubectl_stdin(&["create"], &svc.to_string());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    c.kubectl_json(&["get", "svc", name])
}

fn patch(c: &TestCluster, name: &str, patch: Value) -> Value {
    c.kubectl_ok(&[
        "patch",
        "svc",
        name,
        "--type=merge",
        "-p",
        &patch.to_string(),
    ]);
    c.kubectl_json(&["get", "svc", name])
}

fn ips(svc: &Value) -> Vec<IpAddr> {
    svc["spec"]["clusterIPs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|ip| ip.as_str().unwrap_or("").parse().expect("an IP"))
        .collect()
}

fn in_ranges(ip: &IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.octets()[..3] == [10, 0, 0],
        IpAddr::V6(v6) => v6.segments()[..6] == [0xfd00, 0, 0, 0, 0, 0] && v6.segments()[6] < 16,
    }
}

/// Whether the IPAddress object of `ip` exists, as the API serves it and as etcd holds it
/// (the two must agree).
fn recorded(c: &TestCluster, ip: &IpAddr) -> bool {
    let name = ip.to_string();
    let out = c.kubectl(&["get", "ipaddresses.networking.k8s.io", &name, "-o", "json"]);
    let served = out.status.success();
    if served {
        let addr: Value = serde_json::from_slice(&out.stdout).expect("JSON");
        assert_eq!(addr["spec"]["parentRef"]["resource"], "services", "{addr}");
    }
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let stored = rt.block_on(async {
        let mut etcd = etcd_client::Client::connect([c.etcd_url()], None)
            .await
            .expect("etcd");
        let got = etcd
            .get(format!("/registry/ipaddresses/{name}"), None)
            .await
            .expect("etcd");
        !got.kvs().is_empty()
    });
    assert_eq!(served, stored, "IPAddress {name}");
    served
}

/// Waits (briefly) for the record of `ip` to be `present`.
fn assert_recorded(c: &TestCluster, ip: &IpAddr, present: bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while recorded(c, ip) != present {
        assert!(
            Instant::now() < deadline,
            "record of {ip} present: {}",
            !present
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn assert_dual(svc: &Value) {
    let got = ips(svc);
    assert_eq!(got.len(), 2, "{svc}");
    assert!(got[0].is_ipv4() && got[1].is_ipv6(), "{svc}");
    assert!(got.iter().all(in_ranges), "{svc}");
    assert_eq!(svc["spec"]["clusterIP"], got[0].to_string());
    assert_eq!(svc["spec"]["ipFamilies"], json!(["IPv4", "IPv6"]), "{svc}");
}

fn assert_single(svc: &Value) {
    let got = ips(svc);
    assert_eq!(got.len(), 1, "{svc}");
    assert!(got[0].is_ipv4() && in_ranges(&got[0]), "{svc}");
    assert_eq!(svc["spec"]["ipFamilies"], json!(["IPv4"]), "{svc}");
    assert_eq!(svc["spec"]["ipFamilyPolicy"], "SingleStack", "{svc}");
}

#[test]
fn dual_stack_cluster_upgrades_and_downgrades_services() {
    let c = start_cluster(|spec| {
        spec.extra_args.insert(Role::Core, vec![RANGES.to_owned()]);
        spec.extra_args
            .insert(Role::Aggregator, vec![RANGES.to_owned()]);
    });
    let ports = json!([{"port": 80}]);

    let req = create(
        &c,
        "req",
        json!({"ipFamilyPolicy": "RequireDualStack", "ports": ports}),
    );
    assert_dual(&req);
    assert_eq!(req["spec"]["ipFamilyPolicy"], "RequireDualStack");
    for ip in ips(&req) {
        assert_recorded(&c, &ip, true);
    }
    let pref = create(
        &c,
        "pref",
        json!({"ipFamilyPolicy": "PreferDualStack", "ports": ports}),
    );
    assert_dual(&pref);
    assert_eq!(pref["spec"]["ipFamilyPolicy"], "PreferDualStack");
    let single = create(&c, "single", json!({"ports": ports}));
    assert_single(&single);

    // Upgrade: the secondary IP is allocated, with its record.
    let up = patch(
        &c,
        "single",
        json!({"spec": {"ipFamilyPolicy": "PreferDualStack"}}),
    );
    assert_dual(&up);
    assert_eq!(ips(&up)[0], ips(&single)[0]);
    let secondary = ips(&up)[1];
    assert_recorded(&c, &secondary, true);

    // Downgrade with the fields trimmed: released.
    let v4 = ips(&up)[0].to_string();
    let down = patch(
        &c,
        "single",
        json!({"spec": {"ipFamilyPolicy": "SingleStack", "clusterIPs": [v4], "ipFamilies": ["IPv4"]}}),
    );
    assert_single(&down);
    assert_eq!(ips(&down)[0], ips(&single)[0]);
    assert_recorded(&c, &secondary, false);

    // Downgrade by the policy alone: the unchanged fields are trimmed.
    let down = patch(
        &c,
        "req",
        json!({"spec": {"ipFamilyPolicy": "SingleStack"}}),
    );
    assert_single(&down);
    assert_recorded(&c, &ips(&req)[0], true);
    assert_recorded(&c, &ips(&req)[1], false);

    // Releasing the secondary needs SingleStack.
    let v4 = ips(&pref)[0].to_string();
    let err = c.kubectl_fails(&[
        "patch",
        "svc",
        "pref",
        "--type=merge",
        "-p",
        &json!({"spec": {"clusterIPs": [v4]}}).to_string(),
    ]);
    assert!(
        err.contains(r#"The Service "pref" is invalid: spec.ipFamilyPolicy: Invalid value: "PreferDualStack": must be 'SingleStack' to release the secondary cluster IP"#),
        "{err}"
    );
    assert_eq!(
        c.kubectl_json(&["get", "svc", "pref"])["spec"],
        pref["spec"]
    );

    // A type change keeps both IPs; to ExternalName releases both.
    let np = patch(&c, "pref", json!({"spec": {"type": "NodePort"}}));
    assert_eq!(ips(&np), ips(&pref));
    patch(
        &c,
        "pref",
        json!({"spec": {"type": "ExternalName", "externalName": "example.com"}}),
    );
    for ip in ips(&pref) {
        assert_recorded(&c, &ip, false);
    }
}

#[test]
fn single_stack_cluster_refuses_require_dual_stack() {
    let c = start_cluster(|_| {});
    let svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "req"},
        "spec": {"ipFamilyPolicy": "RequireDualStack", "ports": [{"port": 80}]}});
    let out = c.kubectl_stdin(&["create"], &svc.to_string());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(r#"The Service "req" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services"#),
        "{err}"
    );
    let svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "v6"},
        "spec": {"ipFamilies": ["IPv6"], "ports": [{"port": 80}]}});
    let out = c.kubectl_stdin(&["create"], &svc.to_string());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(r#"The Service "v6" is invalid: spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster"#),
        "{err}"
    );
    let pref = create(
        &c,
        "pref",
        json!({"ipFamilyPolicy": "PreferDualStack", "ports": [{"port": 80}]}),
    );
    assert_eq!(ips(&pref).len(), 1, "{pref}");
    assert_eq!(pref["spec"]["ipFamilies"], json!(["IPv4"]));
    assert_eq!(pref["spec"]["ipFamilyPolicy"], "PreferDualStack");
}
