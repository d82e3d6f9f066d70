//! discovery.k8s.io/v1 EndpointSlices and scheduling.k8s.io/v1 PriorityClasses, as kubectl
//! drives them.

use kas_e2e::{header_and_row, start_cluster};

fn created(out: std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn refused(out: std::process::Output) -> String {
    assert!(
        !out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn endpointslices_and_priorityclasses_as_kubectl_uses_them() {
    let c = start_cluster(|_| {});
    let resources = c.kubectl_ok(&["api-resources"]);
    for expected in [
        vec![
            "endpointslices",
            "discovery.k8s.io/v1",
            "true",
            "EndpointSlice",
        ],
        vec![
            "priorityclasses",
            "pc",
            "scheduling.k8s.io/v1",
            "false",
            "PriorityClass",
        ],
    ] {
        assert!(
            resources
                .lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>() == expected),
            "{resources}"
        );
    }

    // EndpointSlice: ports defaulted, listed with upstream's columns.
    let slice = r#"{"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "web-abc", "labels": {"kubernetes.io/service-name": "web"}},
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.1.0.1"]}, {"addresses": ["10.1.0.2"]}],
        "ports": [{"name": "http", "port": 80}]}"#;
    assert_eq!(
        created(c.kubectl_stdin(&["create"], slice)),
        "endpointslice.discovery.k8s.io/web-abc created\n"
    );
    let eps = c.kubectl_json(&["get", "endpointslice", "web-abc"]);
    assert_eq!(eps["ports"][0]["protocol"], "TCP");
    assert_eq!(eps["metadata"]["generation"], 1);
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "endpointslices"]));
    assert_eq!(header, ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]);
    assert_eq!(row[..4], ["web-abc", "IPv4", "80", "10.1.0.1,10.1.0.2"]);

    let bad_type = r#"{"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "bad"}, "addressType": "IP", "endpoints": []}"#;
    let err = refused(c.kubectl_stdin(&["create"], bad_type));
    assert!(
        err.contains(
            "The EndpointSlice \"bad\" is invalid: addressType: Unsupported value: \"IP\": \
             supported values: \"FQDN\", \"IPv4\", \"IPv6\""
        ),
        "{err}"
    );

    // PriorityClass: kubectl's generator, the default preemption policy.
    // The system classes exist from the start, as kube-apiserver creates them.
    let node_critical = c.kubectl_json(&["get", "pc", "system-node-critical"]);
    assert_eq!(node_critical["value"], 2_000_001_000);
    assert_eq!(
        node_critical["description"],
        "Used for system critical pods that must not be moved from their current node."
    );
    let cluster_critical = c.kubectl_json(&["get", "pc", "system-cluster-critical"]);
    assert_eq!(cluster_critical["value"], 2_000_000_000);
    assert_eq!(cluster_critical["preemptionPolicy"], "PreemptLowerPriority");

    assert_eq!(
        c.kubectl_ok(&["create", "priorityclass", "high", "--value=1000"]),
        "priorityclass.scheduling.k8s.io/high created\n"
    );
    let pc = c.kubectl_json(&["get", "pc", "high"]);
    assert_eq!(pc["preemptionPolicy"], "PreemptLowerPriority");
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "pc", "high"]));
    assert_eq!(
        header,
        ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"]
    );
    assert_eq!(row[..3], ["high", "1000", "false"]);
    assert_eq!(row[4], "PreemptLowerPriority");

    let err = c.kubectl_fails(&["create", "priorityclass", "huge", "--value=1000000001"]);
    assert!(
        err.contains(
            "value: Forbidden: maximum allowed value of a user defined priority is 1000000000"
        ),
        "{err}"
    );
    let err = c.kubectl_fails(&[
        "patch",
        "pc",
        "high",
        "--type=merge",
        "-p",
        r#"{"value":2000}"#,
    ]);
    assert!(
        err.contains("value: Forbidden: may not be changed in an update."),
        "{err}"
    );
}

/// The Priority admission plugin resolves a pod's class from the PriorityClasses served,
/// and a global default class gives pods without one its value.
#[test]
fn pods_take_their_priority_from_priority_classes() {
    let c = start_cluster(|_| {});
    c.kubectl_ok(&["create", "priorityclass", "high", "--value=1000"]);
    let manifest = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"vip"},
        "spec":{"priorityClassName":"high","containers":[{"name":"a","image":"nginx"}]}}"#;
    let out = c.kubectl_stdin(&["create"], manifest);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pod = c.kubectl_json(&["get", "pod", "vip"]);
    assert_eq!(pod["spec"]["priority"], 1000);
    c.kubectl_ok(&[
        "create",
        "priorityclass",
        "everyone",
        "--value=7",
        "--global-default",
        "--preemption-policy=Never",
    ]);
    c.kubectl_ok(&["run", "plain", "--image=nginx"]);
    let pod = c.kubectl_json(&["get", "pod", "plain"]);
    assert_eq!(pod["spec"]["priorityClassName"], "everyone");
    assert_eq!(pod["spec"]["priority"], 7);
    assert_eq!(pod["spec"]["preemptionPolicy"], "Never");
}
