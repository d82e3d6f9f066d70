//! Nodes through the aggregator, as kubectl and a kubelet drive them.

use kas_e2e::{TestCluster, header_and_row, start_cluster};
use serde_json::json;

fn create(c: &TestCluster, manifest: &str) -> std::process::Output {
    c.kubectl_stdin(&["create"], manifest)
}

#[test]
fn nodes_as_kubectl_uses_them() {
    let c = start_cluster(|_| {});
    let resources = c.kubectl_ok(&["api-resources", "--api-group="]);
    assert!(
        resources
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()
                == ["nodes", "no", "v1", "false", "Node"]),
        "{resources}"
    );

    // A node keeps the status it is created with; allocatable defaults to capacity.
    let manifest = r#"{"apiVersion":"v1","kind":"Node",
        "metadata":{"name":"n1","labels":{"node-role.kubernetes.io/control-plane":""}},
        "spec":{"podCIDR":"10.244.0.0/24","podCIDRs":["10.244.0.0/24"]},
        "status":{"capacity":{"cpu":"4","memory":"8Gi","pods":"110"}}}"#;
    let out = create(&c, manifest);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "node/n1 created\n");
    let node = c.kubectl_json(&["get", "node", "n1"]);
    assert_eq!(
        node["status"]["allocatable"],
        json!({"cpu": "4", "memory": "8Gi", "pods": "110"})
    );
    assert!(node["metadata"].get("namespace").is_none());

    // The printer, narrow and wide.
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "nodes"]));
    assert_eq!(header, ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]);
    assert_eq!(row[..3], ["n1", "Unknown", "control-plane"]);
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "nodes", "-o", "wide"]));
    assert_eq!(
        header,
        [
            "NAME",
            "STATUS",
            "ROLES",
            "AGE",
            "VERSION",
            "INTERNAL-IP",
            "EXTERNAL-IP",
            "OS-IMAGE",
            "KERNEL-VERSION",
            "CONTAINER-RUNTIME"
        ]
    );
    // The empty Version cell collapses in this split.
    assert_eq!(
        row[4..],
        ["<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"]
    );

    // A kubelet's status write: Ready, with its system info and addresses.
    c.kubectl_ok(&[
        "patch",
        "node",
        "n1",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady"}],
            "addresses":[{"type":"InternalIP","address":"10.0.0.5"}],
            "nodeInfo":{"kubeletVersion":"v1.33.0","osImage":"Debian GNU/Linux 12",
                "kernelVersion":"6.1.0","containerRuntimeVersion":"containerd://2.0.0",
                "machineID":"","systemUUID":"","bootID":"","kubeProxyVersion":"",
                "operatingSystem":"linux","architecture":"amd64"}}}"#,
    ]);
    let (_, row) = header_and_row(&c.kubectl_ok(&["get", "nodes", "-o", "wide"]));
    assert_eq!(
        row,
        [
            "n1",
            "Ready",
            "control-plane",
            row[3].as_str(),
            "v1.33.0",
            "10.0.0.5",
            "<none>",
            "Debian GNU/Linux 12",
            "6.1.0",
            "containerd://2.0.0"
        ]
    );

    // cordon and uncordon write spec.unschedulable, which field selectors see.
    assert_eq!(c.kubectl_ok(&["cordon", "n1"]), "node/n1 cordoned\n");
    let (_, row) = header_and_row(&c.kubectl_ok(&["get", "nodes"]));
    assert_eq!(row[1], "Ready,SchedulingDisabled");
    assert_eq!(
        c.kubectl_ok(&[
            "get",
            "nodes",
            "--field-selector=spec.unschedulable=true",
            "-o",
            "name"
        ]),
        "node/n1\n"
    );
    let refused = c.kubectl_fails(&["get", "nodes", "--field-selector=spec.podCIDR=x"]);
    assert!(
        refused.contains("field label not supported: spec.podCIDR"),
        "{refused}"
    );
    assert_eq!(c.kubectl_ok(&["uncordon", "n1"]), "node/n1 uncordoned\n");
    let (_, row) = header_and_row(&c.kubectl_ok(&["get", "nodes"]));
    assert_eq!(row[1], "Ready");

    // The main resource keeps the status; podCIDRs are set once.
    c.kubectl_ok(&[
        "patch",
        "node",
        "n1",
        "--type=merge",
        "-p",
        r#"{"status":{"conditions":[]}}"#,
    ]);
    assert_eq!(
        c.kubectl_ok(&[
            "get",
            "node",
            "n1",
            "-o",
            "jsonpath={.status.conditions[0].type}"
        ]),
        "Ready"
    );
    let refused = c.kubectl_fails(&[
        "patch",
        "node",
        "n1",
        "--type=merge",
        "-p",
        r#"{"spec":{"podCIDRs":["10.245.0.0/24"],"podCIDR":"10.245.0.0/24"}}"#,
    ]);
    assert!(
        refused.contains(
            r#"spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid"#
        ),
        "{refused}"
    );
    // The singular field alone changes the list too (it wins when they differ, as the
    // conversion through the internal version makes it), so it is refused the same way.
    let refused = c.kubectl_fails(&[
        "patch",
        "node",
        "n1",
        "--type=merge",
        "-p",
        r#"{"spec":{"podCIDR":"10.245.0.0/24"}}"#,
    ]);
    assert!(
        refused.contains("node updates may not change podCIDR"),
        "{refused}"
    );
    // A node given only `podCIDR` gets it mirrored into `podCIDRs`, and the other way.
    let out = create(
        &c,
        r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"n2"},"spec":{"podCIDR":"10.246.0.0/24"}}"#,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let n2 = c.kubectl_json(&["get", "node", "n2"]);
    assert_eq!(n2["spec"]["podCIDRs"], json!(["10.246.0.0/24"]));
    let out = create(
        &c,
        r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"n3"},"spec":{"podCIDRs":["10.247.0.0/24","fd00::/64"]}}"#,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let n3 = c.kubectl_json(&["get", "node", "n3"]);
    assert_eq!(n3["spec"]["podCIDR"], "10.247.0.0/24");
    c.kubectl_ok(&["delete", "node", "n2", "n3"]);

    // An invalid node is refused with upstream's message.
    let out = create(
        &c,
        r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"bad"},
            "spec":{"taints":[{"key":"dedicated","value":"gpu","effect":"Sometimes"}]}}"#,
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            r#"The Node "bad" is invalid: metadata.taints[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute""#
        ),
        "{stderr}"
    );

    assert_eq!(
        c.kubectl_ok(&["delete", "node", "n1"]),
        "node \"n1\" deleted\n"
    );
    assert_eq!(c.kubectl_ok(&["get", "nodes", "-o", "name"]), "");
}
