//! The ClusterRole aggregation controller (upstream's
//! `pkg/controller/clusterroleaggregation`): an aggregated ClusterRole's rules follow the
//! rules of the ClusterRoles its selectors match.

use kas_e2e::{TestCluster, start_cluster};
use serde_json::{Value, json};

const LABEL: &str = "rbac.example.com/aggregate-to-monitoring";

fn created(c: &TestCluster, manifest: Value) {
    let out = c.kubectl_stdin(&["create"], &manifest.to_string());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Waits until `monitoring`'s rules are `expected` (absent counting as empty).
fn rules_become(c: &TestCluster, expected: Value) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let role = c.kubectl_json(&["get", "clusterrole", "monitoring"]);
        let rules = match &role["rules"] {
            Value::Null => json!([]),
            r => r.clone(),
        };
        if rules == expected {
            return role;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "monitoring's rules are {rules}, not {expected}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

#[test]
fn aggregated_cluster_roles_follow_their_selected_roles() {
    let c = start_cluster(|_| {});
    created(
        &c,
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "monitoring"},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {LABEL: "true"}}]}}),
    );
    let pods = json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]});
    let services = json!({"apiGroups": [""], "resources": ["services"], "verbs": ["get"]});
    let metrics = json!({"nonResourceURLs": ["/metrics"], "verbs": ["get"]});
    created(
        &c,
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "monitoring-pods", "labels": {LABEL: "true"}},
            "rules": [pods, services]}),
    );
    rules_become(&c, json!([pods, services]));
    let role = c.kubectl_json(&["get", "clusterrole", "monitoring", "--show-managed-fields"]);
    let managers: Vec<&str> = role["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["manager"].as_str())
        .collect();
    assert!(
        managers.contains(&"clusterrole-aggregation-controller"),
        "{managers:?}"
    );

    // A second labeled role, sorted before the first: its rules come first, and the rule
    // both have comes once.
    created(
        &c,
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "a-monitoring-metrics", "labels": {LABEL: "true"}},
            "rules": [metrics, services]}),
    );
    rules_become(&c, json!([metrics, services, pods]));

    // An unlabeled role is not aggregated; removing a label drops its rules.
    c.kubectl_ok(&[
        "create",
        "clusterrole",
        "unrelated",
        "--verb=*",
        "--resource=nodes",
    ]);
    c.kubectl_ok(&[
        "label",
        "clusterrole",
        "monitoring-pods",
        &format!("{LABEL}-"),
    ]);
    rules_become(&c, json!([metrics, services]));

    // Rules written by hand on an aggregated role are put back.
    c.kubectl_ok(&[
        "patch",
        "clusterrole",
        "monitoring",
        "--type=merge",
        "-p",
        r#"{"rules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]}"#,
    ]);
    rules_become(&c, json!([metrics, services]));

    c.kubectl_ok(&["delete", "clusterrole", "a-monitoring-metrics"]);
    rules_become(&c, json!([]));
}
