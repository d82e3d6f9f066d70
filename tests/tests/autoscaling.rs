//! HorizontalPodAutoscalers through the aggregator: one resource served as autoscaling/v2
//! (stored, preferred) and autoscaling/v1 (converted), as kubectl drives them.

use kas_e2e::{TestCluster, header_and_row, start_cluster};
use serde_json::{Value, json};

fn raw(c: &TestCluster, version: &str, name: &str) -> Value {
    let path =
        format!("/apis/autoscaling/{version}/namespaces/default/horizontalpodautoscalers/{name}");
    serde_json::from_str(&c.kubectl_ok(&["get", "--raw", &path])).expect("an HPA")
}

fn apply_stdin(c: &TestCluster, verb: &str, manifest: &Value) -> (bool, String) {
    let out = c.kubectl_stdin(&[verb], &manifest.to_string());
    let text = if out.status.success() {
        out.stdout
    } else {
        out.stderr
    };
    (
        out.status.success(),
        String::from_utf8_lossy(&text).into_owned(),
    )
}

#[test]
fn horizontal_pod_autoscalers_in_both_versions() {
    let c = start_cluster(|_| {});
    // Discovery: v2 preferred, both versions listing the resource.
    let group: Value =
        serde_json::from_str(&c.kubectl_ok(&["get", "--raw", "/apis/autoscaling"])).unwrap();
    assert_eq!(group["preferredVersion"]["version"], "v2", "{group}");
    let resources = c.kubectl_ok(&["api-resources", "--api-group=autoscaling"]);
    assert!(
        resources
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()
                == [
                    "horizontalpodautoscalers",
                    "hpa",
                    "autoscaling/v2",
                    "true",
                    "HorizontalPodAutoscaler"
                ]),
        "{resources}"
    );

    // kubectl autoscale writes autoscaling/v2.
    c.kubectl_ok(&["create", "deployment", "web", "--image=nginx:1.27"]);
    assert_eq!(
        c.kubectl_ok(&[
            "autoscale",
            "deployment",
            "web",
            "--min=2",
            "--max=5",
            "--cpu-percent=70"
        ]),
        "horizontalpodautoscaler.autoscaling/web autoscaled\n"
    );
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "hpa"]));
    assert_eq!(
        header,
        [
            "NAME",
            "REFERENCE",
            "TARGETS",
            "MINPODS",
            "MAXPODS",
            "REPLICAS",
            "AGE"
        ]
    );
    assert_eq!(
        row[..6],
        ["web", "Deployment/web", "cpu: <unknown>/70%", "2", "5", "0"]
    );

    // Read as autoscaling/v1: the CPU metric is v1's target.
    let v1 = raw(&c, "v1", "web");
    assert_eq!(v1["apiVersion"], "autoscaling/v1");
    assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 70);
    assert_eq!(v1["spec"]["minReplicas"], 2);
    assert_eq!(v1["spec"]["scaleTargetRef"]["kind"], "Deployment");
    assert!(v1["metadata"].get("annotations").is_none(), "{v1}");

    // The status subresource: the controller's write shows in both versions and the table.
    c.kubectl_ok(&[
        "patch",
        "hpa",
        "web",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status": {"currentReplicas": 2, "desiredReplicas": 3, "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 40, "averageValue": "100m"}}}]}}"#,
    ]);
    let v1 = raw(&c, "v1", "web");
    assert_eq!(v1["status"]["currentCPUUtilizationPercentage"], 40, "{v1}");
    assert_eq!(v1["status"]["desiredReplicas"], 3);
    assert_eq!(v1["spec"]["maxReplicas"], 5);
    let (_, row) = header_and_row(&c.kubectl_ok(&["get", "hpa", "web"]));
    assert_eq!(row[2..6], ["cpu: 40%/70%", "2", "5", "2"]);
    let (_, row) = header_and_row(&c.kubectl_ok(&["get", "hpa.v1.autoscaling", "web"]));
    assert_eq!(row[2..6], ["cpu: 40%/70%", "2", "5", "2"]);

    // Created through v1, read through v2.
    let (ok, out) = apply_stdin(
        &c,
        "create",
        &json!({
            "apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "legacy"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "maxReplicas": 4, "targetCPUUtilizationPercentage": 55},
        }),
    );
    assert!(ok, "{out}");
    let v2 = raw(&c, "v2", "legacy");
    assert_eq!(v2["apiVersion"], "autoscaling/v2");
    assert_eq!(v2["spec"]["minReplicas"], 1);
    assert_eq!(
        v2["spec"]["metrics"],
        json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 55}}}])
    );

    // A v2-only metric survives an update through v1 (the annotation round trip).
    let (ok, out) = apply_stdin(
        &c,
        "create",
        &json!({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "multi"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "maxReplicas": 4, "metrics": [
                         {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}},
                         {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "1k"}}}]},
        }),
    );
    assert!(ok, "{out}");
    let mut v1 = raw(&c, "v1", "multi");
    assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 60);
    let metrics: Value = serde_json::from_str(
        v1["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/metrics"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        metrics,
        json!([{"type": "Pods", "pods": {"metricName": "qps", "targetAverageValue": "1k"}}])
    );
    v1["spec"]["maxReplicas"] = json!(7);
    let (ok, out) = apply_stdin(&c, "replace", &v1);
    assert!(ok, "{out}");
    let v2 = raw(&c, "v2", "multi");
    assert_eq!(v2["spec"]["maxReplicas"], 7);
    let metrics = v2["spec"]["metrics"].as_array().unwrap();
    assert_eq!(metrics.len(), 2, "{v2}");
    assert!(
        metrics.iter().any(|m| m["pods"]["metric"]["name"] == "qps"),
        "{v2}"
    );
    assert!(v2["metadata"].get("annotations").is_none(), "{v2}");
    let (_, row) = header_and_row(&c.kubectl_ok(&["get", "hpa", "multi"]));
    assert_eq!(row[2], "<unknown>/1k, cpu: <unknown>/60%");

    // Invalid autoscalers are refused with upstream's messages, through either version.
    let (ok, out) = apply_stdin(
        &c,
        "create",
        &json!({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "bad"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": ""}, "minReplicas": 3, "maxReplicas": 2},
        }),
    );
    assert!(!ok);
    assert!(
        out.contains("The HorizontalPodAutoscaler \"bad\" is invalid"),
        "{out}"
    );
    assert!(
        out.contains(
            "spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`"
        ),
        "{out}"
    );
    assert!(
        out.contains("spec.scaleTargetRef.name: Required value"),
        "{out}"
    );
    let (ok, out) = apply_stdin(
        &c,
        "create",
        &json!({
            "apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "bad"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "minReplicas": 0, "maxReplicas": 2},
        }),
    );
    assert!(!ok);
    assert!(
        out.contains("spec.minReplicas: Invalid value: 0: must be greater than or equal to 1"),
        "{out}"
    );

    // The status is the controller's: a create's status is dropped.
    let (ok, out) = apply_stdin(
        &c,
        "create",
        &json!({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "withstatus"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 2},
            "status": {"currentReplicas": 5, "desiredReplicas": 5},
        }),
    );
    assert!(ok, "{out}");
    let status = &raw(&c, "v2", "withstatus")["status"];
    assert_eq!(status["desiredReplicas"], 0, "{status}");
    assert!(status.get("currentReplicas").is_none(), "{status}");

    // Server-side apply through v1, read through v2, its manager recorded as v1's.
    let out = c.kubectl_stdin(
        &["apply", "--server-side", "--field-manager=ssa"],
        &json!({
            "apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "applied"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "maxReplicas": 3, "targetCPUUtilizationPercentage": 65},
        })
        .to_string(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v2 = raw(&c, "v2", "applied");
    assert_eq!(
        v2["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
        65
    );
    let managers = v2["metadata"]["managedFields"].as_array().unwrap();
    assert!(
        managers
            .iter()
            .any(|m| m["manager"] == "ssa" && m["apiVersion"] == "autoscaling/v1"),
        "{v2}"
    );
}
