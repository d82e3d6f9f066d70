//! policy/v1 PodDisruptionBudgets and node.k8s.io/v1 RuntimeClasses through the
//! aggregator, as kubectl drives them.

use kas_e2e::{header_and_row, start_cluster};

fn has_row(table: &str, expected: &[&str]) -> bool {
    table
        .lines()
        .any(|l| l.split_whitespace().collect::<Vec<_>>() == expected)
}

#[test]
fn pdbs_and_runtime_classes_as_kubectl_uses_them() {
    let c = start_cluster(|_| {});
    let policy = c.kubectl_ok(&["api-resources", "--api-group=policy"]);
    let expected = [
        "poddisruptionbudgets",
        "pdb",
        "policy/v1",
        "true",
        "PodDisruptionBudget",
    ];
    assert!(has_row(&policy, &expected), "{policy}");
    let node = c.kubectl_ok(&["api-resources", "--api-group=node.k8s.io"]);
    let expected = ["runtimeclasses", "node.k8s.io/v1", "false", "RuntimeClass"];
    assert!(has_row(&node, &expected), "{node}");

    // PodDisruptionBudget: kubectl's generator, upstream's first generation and empty status.
    assert_eq!(
        c.kubectl_ok(&[
            "create",
            "pdb",
            "web",
            "--selector=app=web",
            "--min-available=1"
        ]),
        "poddisruptionbudget.policy/web created\n"
    );
    let pdb = c.kubectl_json(&["get", "pdb", "web"]);
    assert_eq!(pdb["metadata"]["generation"], 1);
    assert_eq!(pdb["spec"]["minAvailable"], 1);
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "pdb"]));
    assert_eq!(
        header,
        [
            "NAME",
            "MIN AVAILABLE",
            "MAX UNAVAILABLE",
            "ALLOWED DISRUPTIONS",
            "AGE"
        ]
    );
    assert_eq!(row[..4], ["web", "1", "N/A", "0"]);

    let both = r#"{"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "both"},
        "spec": {"minAvailable": 1, "maxUnavailable": "50%",
            "selector": {"matchLabels": {"app": "web"}}}}"#;
    let out = c.kubectl_stdin(&["create"], both);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("The PodDisruptionBudget \"both\" is invalid: spec: Invalid value: ")
            && err.contains("minAvailable and maxUnavailable cannot be both set"),
        "{err}"
    );
    let err = c.kubectl_fails(&[
        "create",
        "pdb",
        "neg",
        "--selector=app=web",
        "--max-unavailable=150%",
    ]);
    assert!(
        err.contains("spec.maxUnavailable: Invalid value: ")
            && err.contains("must not be greater than 100%"),
        "{err}"
    );

    // RuntimeClass: cluster-scoped, the handler a DNS label that never changes.
    let class = r#"{"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
        "metadata": {"name": "gvisor"}, "handler": "runsc",
        "overhead": {"podFixed": {"cpu": "250m"}},
        "scheduling": {"nodeSelector": {"runtime": "gvisor"}}}"#;
    let out = c.kubectl_stdin(&["create"], class);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "runtimeclass.node.k8s.io/gvisor created\n"
    );
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "runtimeclass"]));
    assert_eq!(header, ["NAME", "HANDLER", "AGE"]);
    assert_eq!(row[..2], ["gvisor", "runsc"]);
    let err = c.kubectl_fails(&[
        "patch",
        "runtimeclass",
        "gvisor",
        "--type=merge",
        "-p",
        r#"{"handler": "runc"}"#,
    ]);
    assert!(
        err.contains(
            "The RuntimeClass \"gvisor\" is invalid: handler: Invalid value: \"runc\": \
             field is immutable"
        ),
        "{err}"
    );
    let bad = r#"{"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
        "metadata": {"name": "bad"}, "handler": "Run_SC"}"#;
    let out = c.kubectl_stdin(&["create"], bad);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("handler: Invalid value: \"Run_SC\": a lowercase RFC 1123 label"),
        "{err}"
    );
}
