//! The stored form's rules: defaults, status handling, validation messages, and the v1
//! conversion's round trips.

use super::convert::{self, AutoscalingV1};
use super::*;
use crate::resources::messages;
use kas_registry::Strategy as _;
use kas_registry::strategy::Conversion;

fn hpa(spec: Value) -> Value {
    let mut obj = json!({"metadata": {"name": "web", "namespace": "default"}, "spec": spec});
    Strategy.default(&mut obj);
    obj
}

fn target() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"})
}

#[test]
fn defaults_follow_set_defaults_horizontal_pod_autoscaler() {
    let obj = hpa(json!({"scaleTargetRef": target(), "maxReplicas": 5}));
    assert_eq!(obj["spec"]["minReplicas"], 1);
    assert_eq!(
        obj["spec"]["metrics"],
        json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 80}}}])
    );
    assert!(obj["spec"].get("behavior").is_none());
    let obj = hpa(json!({"scaleTargetRef": target(), "maxReplicas": 5,
        "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}}));
    assert_eq!(
        obj["spec"]["behavior"],
        json!({
            "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
                {"type": "Pods", "value": 4, "periodSeconds": 15},
                {"type": "Percent", "value": 100, "periodSeconds": 15}]},
            "scaleDown": {"stabilizationWindowSeconds": 60, "selectPolicy": "Max", "policies": [
                {"type": "Percent", "value": 100, "periodSeconds": 15}]},
        })
    );
}

#[test]
fn create_resets_status_and_update_keeps_it() {
    let mut obj = hpa(json!({"scaleTargetRef": target(), "maxReplicas": 5}));
    obj["status"] = json!({"currentReplicas": 3});
    Strategy.prepare_for_create(&mut obj);
    assert_eq!(obj["status"], json!({}));
    assert!(Strategy.validate(&obj).is_empty());
    let old = json!({"status": {"currentReplicas": 2}});
    obj["status"] = json!({"currentReplicas": 9});
    Strategy.prepare_for_update(&mut obj, &old);
    assert_eq!(obj["status"], json!({"currentReplicas": 2}));
    assert_eq!(Strategy.reset_fields(""), ["status"]);
    assert_eq!(Strategy.reset_fields("status"), ["spec"]);
}

#[test]
fn spec_rules_and_messages() {
    let obj = hpa(
        json!({"scaleTargetRef": {"kind": "", "name": "a/b"}, "minReplicas": 0,
        "maxReplicas": 0}),
    );
    assert_eq!(
        messages(&Strategy.validate(&obj)),
        [
            "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1",
            "spec.maxReplicas: Invalid value: 0: must be greater than 0",
            "spec.scaleTargetRef.kind: Required value",
            "spec.scaleTargetRef.name: Invalid value: \"a/b\": may not contain '/'",
            "spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas",
        ]
    );
    let obj = hpa(json!({"scaleTargetRef": target(), "minReplicas": 3, "maxReplicas": 2}));
    assert_eq!(
        messages(&Strategy.validate(&obj)),
        ["spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`"]
    );
    // An autoscaler already at zero may stay there (HPAScaleToZero is off).
    let mut old = obj.clone();
    old["spec"]["minReplicas"] = json!(0);
    let mut new = old.clone();
    new["spec"]["metrics"] = json!([{"type": "External", "external": {"metric": {"name": "q"},
        "target": {"type": "Value", "value": "1"}}}]);
    assert!(Strategy.validate_update(&new, &old).is_empty());
}

#[test]
fn metric_rules_and_messages() {
    let obj = hpa(
        json!({"scaleTargetRef": target(), "maxReplicas": 5, "metrics": [
            {"type": "Resource", "resource": {"name": "", "target": {"type": "Utilization", "averageUtilization": 0}}},
            {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}, "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "1"}}},
            {"type": "Bogus"},
            {"type": "External", "external": {"metric": {"name": "q"}, "target": {"type": "Wrong", "value": "-1"}}},
        ]}),
    );
    assert_eq!(
        messages(&Strategy.validate(&obj)),
        [
            "spec.metrics[0].resource.name: Required value: must specify a resource name",
            "spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0",
            "spec.metrics[1].pods: Forbidden: must populate the given metric source only",
            "spec.metrics[2].type: Unsupported value: \"Bogus\": supported values: \"ContainerResource\", \"External\", \"Object\", \"Pods\", \"Resource\"",
            "spec.metrics[2].type: Unsupported value: \"Bogus\": supported values: \"ContainerResource\", \"External\", \"Object\", \"Pods\", \"Resource\"",
            "spec.metrics[3].external.target.type: Invalid value: \"Wrong\": must be either Utilization, Value, or AverageValue",
            "spec.metrics[3].external.target.value: Invalid value: -1: must be positive",
        ]
    );
}

#[test]
fn behavior_rules_and_messages() {
    let obj = hpa(
        json!({"scaleTargetRef": target(), "maxReplicas": 5, "behavior": {
            "scaleUp": {"stabilizationWindowSeconds": 3601, "selectPolicy": "Most", "policies": [
                {"type": "Nodes", "value": 0, "periodSeconds": 1801}]},
            "scaleDown": {"policies": []},
        }}),
    );
    assert_eq!(
        messages(&Strategy.validate(&obj)),
        [
            "spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: 3601: must be less than or equal to 3600",
            "spec.behavior.scaleUp.selectPolicy: Unsupported value: \"Most\": supported values: \"Disabled\", \"Max\", \"Min\"",
            "spec.behavior.scaleUp.policies[0].type: Unsupported value: \"Nodes\": supported values: \"Percent\", \"Pods\"",
            "spec.behavior.scaleUp.policies[0].value: Invalid value: 0: must be greater than zero",
            "spec.behavior.scaleUp.policies[0].periodSeconds: Invalid value: 1801: must be less than or equal to 1800",
            "spec.behavior.scaleDown.policies: Required value: must specify at least one Policy",
        ]
    );
}

#[test]
fn status_updates_need_nonnegative_replicas() {
    let old = hpa(json!({"scaleTargetRef": target(), "maxReplicas": 5}));
    let mut new = old.clone();
    new["status"] = json!({"currentReplicas": -1, "desiredReplicas": 2});
    assert_eq!(
        messages(&Strategy.validate_status_update(&new, &old)),
        ["status.currentReplicas: Invalid value: -1: must be greater than or equal to 0"]
    );
}

#[test]
fn v1_cpu_target_is_a_v2_metric_and_back() {
    let v1 = json!({"metadata": {"name": "web"}, "spec": {"scaleTargetRef": {"kind": "Deployment",
        "name": "web"}, "minReplicas": 1, "maxReplicas": 3, "targetCPUUtilizationPercentage": 70},
        "status": {"currentReplicas": 1, "desiredReplicas": 1, "currentCPUUtilizationPercentage": 40}});
    let v2 = AutoscalingV1.to_stored(v1.clone());
    assert_eq!(
        v2["spec"]["metrics"],
        json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 70}}}])
    );
    assert_eq!(
        v2["status"]["currentMetrics"][0]["resource"]["current"]["averageUtilization"],
        40
    );
    let back = AutoscalingV1.to_served(v2);
    assert_eq!(back["spec"], v1["spec"]);
    assert_eq!(back["status"]["currentCPUUtilizationPercentage"], 40);
    // The current metrics ride in an annotation (v1's MetricStatus shape).
    let current: Value = serde_json::from_str(
        back["metadata"]["annotations"][convert::METRIC_STATUSES]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        current,
        json!([{"type": "Resource", "resource": {"name": "cpu",
            "currentAverageUtilization": 40, "currentAverageValue": "0"}}])
    );
    // No target: v1's implicit 80%.
    let bare = json!({"metadata": {"name": "w"}, "spec": {"maxReplicas": 2}});
    assert_eq!(
        AutoscalingV1.to_stored(bare)["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
        80
    );
}

#[test]
fn v2_only_fields_round_trip_through_v1_annotations() {
    let stored = hpa(json!({"scaleTargetRef": target(), "maxReplicas": 5,
    "behavior": {"scaleUp": {"stabilizationWindowSeconds": 30}},
    "metrics": [
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}},
        {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "1k"}}},
    ]}));
    let v1 = AutoscalingV1.to_served(stored.clone());
    assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 60);
    let annotations = &v1["metadata"]["annotations"];
    let metrics: Value =
        serde_json::from_str(annotations[convert::METRIC_SPECS].as_str().unwrap()).unwrap();
    assert_eq!(
        metrics,
        json!([{"type": "Pods", "pods": {"metricName": "qps", "targetAverageValue": "1k"}}])
    );
    let behavior: Value =
        serde_json::from_str(annotations[convert::BEHAVIOR].as_str().unwrap()).unwrap();
    assert_eq!(behavior["ScaleUp"]["StabilizationWindowSeconds"], 30);
    assert_eq!(behavior["ScaleDown"]["Policies"][0]["Type"], "Percent");
    // Back: the other metrics first, then v1's CPU target, and no annotation left.
    let back = AutoscalingV1.to_stored(v1);
    let mut expected = stored["spec"].clone();
    expected["metrics"] = json!([stored["spec"]["metrics"][1], stored["spec"]["metrics"][0]]);
    assert_eq!(back["spec"], expected);
    assert!(back["metadata"].get("annotations").is_none());
}

#[test]
fn table_cells_match_columns() {
    let obj = hpa(json!({"scaleTargetRef": target(), "minReplicas": 2, "maxReplicas": 5}));
    let cells = Strategy.table_cells(&obj);
    assert_eq!(cells.len(), DESCRIPTOR.table_columns.len());
    assert_eq!(cells[1], json!("cpu: <unknown>/80%"));
    let v1 = AutoscalingV1.to_served(obj);
    assert_eq!(v1::Strategy.table_cells(&v1), cells);
}

#[test]
fn both_versions_name_the_v2_storage_and_v2_is_preferred() {
    let v2 = kas_endpoints::discovery::api_resource_list("autoscaling", "v2", &[&DESCRIPTOR]);
    let v1 = kas_endpoints::discovery::api_resource_list("autoscaling", "v1", &[&v1::DESCRIPTOR]);
    assert_eq!(
        v1["resources"][0]["storageVersionHash"],
        v2["resources"][0]["storageVersionHash"]
    );
    assert_eq!(
        v2["resources"][0]["storageVersionHash"],
        kas_endpoints::discovery::storage_version_hash(
            "autoscaling",
            "v2",
            "HorizontalPodAutoscaler"
        )
    );
    let groups = kas_endpoints::discovery::groups([&DESCRIPTOR, &v1::DESCRIPTOR].into_iter());
    assert_eq!(groups["autoscaling"], ["v2", "v1"]);
}

#[test]
fn tolerance_is_dropped_while_its_gate_is_off() {
    let mut obj = hpa(json!({"scaleTargetRef": target(), "maxReplicas": 5,
        "behavior": {"scaleUp": {"tolerance": "50m"}}}));
    Strategy.prepare_for_create(&mut obj);
    assert!(
        obj["spec"]["behavior"]["scaleUp"]
            .get("tolerance")
            .is_none()
    );
    // An object already using one keeps it.
    let mut old = obj.clone();
    old["spec"]["behavior"]["scaleUp"]["tolerance"] = json!("50m");
    let mut new = old.clone();
    Strategy.prepare_for_update(&mut new, &old);
    assert_eq!(new["spec"]["behavior"]["scaleUp"]["tolerance"], "50m");
}

#[test]
fn conditions_ride_in_their_annotation() {
    let condition = json!({"type": "AbleToScale", "status": "True",
        "lastTransitionTime": "2025-01-01T00:00:00Z", "reason": "ReadyForNewScale", "message": "ok"});
    let mut stored = hpa(json!({"scaleTargetRef": target(), "maxReplicas": 5}));
    stored["status"] = json!({"desiredReplicas": 1, "conditions": [condition]});
    let v1 = AutoscalingV1.to_served(stored.clone());
    assert_eq!(
        v1["metadata"]["annotations"][convert::CONDITIONS],
        r#"[{"type":"AbleToScale","status":"True","lastTransitionTime":"2025-01-01T00:00:00Z","reason":"ReadyForNewScale","message":"ok"}]"#
    );
    assert_eq!(
        AutoscalingV1.to_stored(v1)["status"]["conditions"],
        stored["status"]["conditions"]
    );
}
