//! ResourceQuota and LimitRange through the aggregator, as kubectl drives them.

use kas_e2e::{TestCluster, start_cluster};

fn ok(c: &TestCluster, args: &[&str]) -> String {
    c.kubectl_ok(args)
}

fn fails(c: &TestCluster, args: &[&str]) -> String {
    c.kubectl_fails(args)
}

#[test]
fn resource_quotas_as_kubectl_uses_them() {
    let c = start_cluster(|_| {});
    let resources = ok(&c, &["api-resources", "--api-group="]);
    assert!(
        resources
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()
                == ["resourcequotas", "quota", "v1", "true", "ResourceQuota"]),
        "{resources}"
    );

    assert_eq!(
        ok(
            &c,
            &[
                "create",
                "quota",
                "q1",
                "--hard=cpu=1000m,memory=1024Mi,pods=10"
            ]
        ),
        "resourcequota/q1 created\n"
    );
    // Quantities come back as Go writes them.
    let hard = ok(&c, &["get", "quota", "q1", "-o", "jsonpath={.spec.hard}"]);
    let hard: serde_json::Value = serde_json::from_str(&hard).expect("json");
    assert_eq!(
        hard,
        serde_json::json!({"cpu": "1", "memory": "1Gi", "pods": "10"})
    );

    // The status subresource; the printer shows used/hard by resource.
    ok(
        &c,
        &[
            "patch",
            "quota",
            "q1",
            "--subresource=status",
            "--type=merge",
            "-p",
            r#"{"status":{"hard":{"pods":"10","limits.cpu":"2"},"used":{"pods":"1"}}}"#,
        ],
    );
    let table = ok(&c, &["get", "quota", "q1"]);
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split_whitespace().collect();
    assert_eq!(header, ["NAME", "AGE", "REQUEST", "LIMIT"], "{table}");
    let row = lines.next().unwrap_or("");
    assert!(
        row.starts_with("q1") && row.contains("pods: 1/10") && row.contains("limits.cpu: 0/2"),
        "{table}"
    );
    // A client may not set status through the object.
    ok(
        &c,
        &[
            "patch",
            "quota",
            "q1",
            "--type=merge",
            "-p",
            r#"{"spec":{"hard":{"pods":"20"}},"status":{"used":{"pods":"9"}}}"#,
        ],
    );
    let used = ok(
        &c,
        &["get", "quota", "q1", "-o", "jsonpath={.status.used.pods}"],
    );
    assert_eq!(used, "1");

    // Invalid names and values, with upstream's messages.
    let err = fails(&c, &["create", "quota", "q2", "--hard=foo=1,pods=1500m"]);
    for part in [
        r#"ResourceQuota "q2" is invalid"#,
        r#"spec.hard[foo]: Invalid value: "foo": must be a standard resource type or fully qualified"#,
        r#"spec.hard[foo]: Invalid value: "foo": must be a standard resource for quota"#,
        r#"spec.hard[pods]: Invalid value: resource.Quantity{i:resource.int64Amount{value:1500, scale:-3}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"1500m", Format:"DecimalSI"}: must be an integer"#,
    ] {
        assert!(err.contains(part), "missing {part:?} in {err}");
    }
    // Scopes are fixed once set, and must suit the resources.
    ok(
        &c,
        &[
            "create",
            "quota",
            "q3",
            "--hard=pods=1",
            "--scopes=BestEffort",
        ],
    );
    let err = fails(
        &c,
        &[
            "patch",
            "quota",
            "q3",
            "--type=merge",
            "-p",
            r#"{"spec":{"scopes":["NotBestEffort"]}}"#,
        ],
    );
    assert!(
        err.contains(r#"spec.scopes: Invalid value: []core.ResourceQuotaScope{"NotBestEffort"}: field is immutable"#),
        "{err}"
    );
    let err = fails(
        &c,
        &[
            "create",
            "quota",
            "q4",
            "--hard=secrets=1",
            "--scopes=BestEffort",
        ],
    );
    assert!(
        err.contains("unsupported scope applied to resource"),
        "{err}"
    );
    assert_eq!(
        ok(&c, &["delete", "quota", "q1"]),
        "resourcequota \"q1\" deleted\n"
    );
}

fn apply_stdin(c: &TestCluster, verb: &[&str], manifest: &str) -> std::process::Output {
    c.kubectl_stdin(verb, manifest)
}

const LIMITS: &str = "apiVersion: v1
kind: LimitRange
metadata:
  name: limits
spec:
  limits:
  - type: Container
    max:
      cpu: 2000m
    min:
      memory: 64Mi
  - type: Pod
    max:
      memory: 1Gi
";

#[test]
fn limit_ranges_are_defaulted_and_checked() {
    let c = start_cluster(|_| {});
    let out = apply_stdin(&c, &["create"], LIMITS);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // SetDefaults_LimitRangeItem: a container's default is its max, its default request
    // the default or the min.
    let limits = ok(
        &c,
        &["get", "limits", "limits", "-o", "jsonpath={.spec.limits}"],
    );
    let limits: serde_json::Value = serde_json::from_str(&limits).expect("json");
    assert_eq!(
        limits,
        serde_json::json!([
            {"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "64Mi"},
             "default": {"cpu": "2"}, "defaultRequest": {"cpu": "2", "memory": "64Mi"}},
            {"type": "Pod", "max": {"memory": "1Gi"}},
        ])
    );
    let table = ok(&c, &["get", "limitranges"]);
    let header: Vec<&str> = table
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    assert_eq!(header, ["NAME", "CREATED", "AT"], "{table}");

    let bad = LIMITS
        .replace("name: limits", "name: bad")
        .replace("memory: 64Mi", "cpu: 3");
    let out = apply_stdin(&c, &["create"], &bad);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    for part in [
        r#"LimitRange "bad" is invalid"#,
        "spec.limits[0].min[cpu]: Invalid value: resource.Quantity{",
        "min value 3 is greater than max value 2",
    ] {
        assert!(err.contains(part), "missing {part:?} in {err}");
    }
}
