//! Upstream's storage metrics in each role: `apiserver_storage_objects` counts every store's
//! objects each `--etcd-count-metric-poll-period` (core's built-in resources, extensions'
//! CRDs and each served CRD's custom resources, whose series goes with the CRD, the
//! aggregator's APIServices), and the etcd database's size is
//! `apiserver_storage_size_bytes{storage_cluster_id="etcd-0"}` and, polled every
//! `--etcd-db-metric-poll-interval`, `apiserver_storage_db_total_size_in_bytes{endpoint}`.

use std::time::{Duration, Instant};

use kas_e2e::{Role, TestCluster, metric_value, start_cluster};

/// Waits until `role`'s `apiserver_storage_objects{resource}` is `expected` (`None`: the
/// series is gone).
async fn wait_count(c: &TestCluster, role: Role, resource: &str, expected: Option<f64>) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let text = c.metrics(role).await;
        let value = metric_value(
            &text,
            "apiserver_storage_objects",
            &[("resource", resource)],
        );
        if value == expected {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{role} {resource}: {value:?}, expected {expected:?}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

#[tokio::test]
async fn object_counts_and_database_size_as_upstream_reports_them() {
    let c = start_cluster(|spec| {
        for role in [Role::Aggregator, Role::Core, Role::Extensions] {
            spec.extra_args.entry(role).or_default().extend([
                "--etcd-count-metric-poll-period=1s".to_owned(),
                "--etcd-db-metric-poll-interval=1s".to_owned(),
            ]);
        }
    });
    c.kubectl_ok(&["create", "namespace", "counted"]);
    for i in 0..3 {
        c.kubectl_ok(&["create", "configmap", "-n", "counted", &format!("cm-{i}")]);
    }
    // Every namespace has its kube-root-ca.crt only where a controller manager runs; here
    // the configmaps are ours alone.
    let configmaps = c.kubectl_json(&["get", "configmaps", "-A", "-o", "json"]);
    let n = configmaps["items"].as_array().unwrap().len() as f64;
    wait_count(&c, Role::Core, "configmaps", Some(n)).await;
    wait_count(&c, Role::Core, "deployments.apps", Some(0.0)).await;
    let apiservices = c.kubectl_json(&["get", "apiservices", "-o", "json"]);
    let n = apiservices["items"].as_array().unwrap().len() as f64;
    wait_count(
        &c,
        Role::Aggregator,
        "apiservices.apiregistration.k8s.io",
        Some(n),
    )
    .await;

    let crd = r#"{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
      "metadata": {"name": "gadgets.example.com"},
      "spec": {"group": "example.com", "scope": "Namespaced",
        "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
        "versions": [{"name": "v1", "served": true, "storage": true,
          "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}}"#;
    c.apply_and_wait_served(crd, "/apis/example.com/v1/gadgets")
        .await;
    wait_count(
        &c,
        Role::Extensions,
        "customresourcedefinitions.apiextensions.k8s.io",
        Some(1.0),
    )
    .await;
    let gadget = r#"{"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g", "namespace": "counted"}}"#;
    let out = c.kubectl_stdin(&["create"], gadget);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    wait_count(&c, Role::Extensions, "gadgets.example.com", Some(1.0)).await;
    c.kubectl_ok(&["delete", "crd", "gadgets.example.com"]);
    wait_count(&c, Role::Extensions, "gadgets.example.com", None).await;

    for role in [Role::Aggregator, Role::Core, Role::Extensions] {
        let text = c.metrics(role).await;
        let size = metric_value(
            &text,
            "apiserver_storage_size_bytes",
            &[("storage_cluster_id", "etcd-0")],
        );
        assert!(size.is_some_and(|s| s > 0.0), "{role}: {size:?}");
        let endpoint = c.etcd_url();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let text = c.metrics(role).await;
            let polled = metric_value(
                &text,
                "apiserver_storage_db_total_size_in_bytes",
                &[("endpoint", endpoint.as_str())],
            );
            if polled.is_some_and(|s| s > 0.0) {
                break;
            }
            assert!(Instant::now() < deadline, "{role}: {polled:?}");
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    }
}
