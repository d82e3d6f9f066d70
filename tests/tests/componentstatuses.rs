//! core/v1 ComponentStatus: computed on each read, as upstream's `componentstatus.REST`.

use kas_e2e::start_cluster;

#[test]
fn component_statuses_are_probed_on_read() {
    let c = start_cluster(|_| {});
    let out = c.kubectl(&["get", "componentstatuses"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("Warning: v1 ComponentStatus is deprecated in v1.19+"),
        "{stderr}"
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        ["NAME", "STATUS", "MESSAGE", "ERROR"]
    );
    let etcd = lines
        .iter()
        .find(|l| l.starts_with("etcd-0"))
        .expect("etcd-0");
    assert_eq!(
        etcd.split_whitespace().collect::<Vec<_>>(),
        ["etcd-0", "Healthy", "ok"]
    );
    // Nothing serves the scheduler's port here: upstream's prober reports the dial error
    // as the message.
    let scheduler = lines
        .iter()
        .find(|l| l.starts_with("scheduler"))
        .expect("scheduler");
    assert!(
        scheduler.contains("Unhealthy")
            && scheduler.contains(
                "Get \"https://127.0.0.1:10259/healthz\": dial tcp 127.0.0.1:10259: connect: connection refused"
            ),
        "{scheduler}"
    );
    assert!(stdout.lines().any(|l| l.starts_with("controller-manager")));

    let one = c.kubectl_json(&["get", "cs", "etcd-0"]);
    assert_eq!(one["kind"], "ComponentStatus");
    // Not stored: no resourceVersion, as upstream's.
    assert_eq!(
        one["metadata"],
        serde_json::json!({"name": "etcd-0"}),
        "{one}"
    );
    assert_eq!(
        one["conditions"],
        serde_json::json!([{"type": "Healthy", "status": "True", "message": "ok"}])
    );
    let raw = c.kubectl_ok(&["get", "--raw", "/api/v1/componentstatuses"]);
    let all: serde_json::Value = serde_json::from_str(&raw).expect("a list");
    assert_eq!(all["kind"], "ComponentStatusList");
    assert_eq!(all["metadata"], serde_json::json!({}), "{all}");
    assert_eq!(all["items"].as_array().map(Vec::len), Some(3), "{all}");
    let selected = c.kubectl_json(&["get", "cs", "--field-selector", "metadata.name=etcd-0"]);
    assert_eq!(
        selected["items"].as_array().map(Vec::len),
        Some(1),
        "{selected}"
    );

    let err = c.kubectl_fails(&["get", "cs", "nope"]);
    assert!(err.contains("Component not found: nope"), "{err}");
    let err = c.kubectl_fails(&["delete", "cs", "etcd-0"]);
    assert!(err.contains("(MethodNotAllowed)"), "{err}");
}
