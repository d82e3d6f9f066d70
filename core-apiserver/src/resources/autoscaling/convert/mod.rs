//! autoscaling/v1 HorizontalPodAutoscaler ↔ the stored autoscaling/v2 form, after upstream's
//! `pkg/apis/autoscaling/v1/conversion.go` and `DropRoundTripHorizontalPodAutoscalerAnnotations`.
//! v1 keeps only the CPU utilization target and its current value; every other metric,
//! the current metrics, the conditions and the behavior travel in annotations, so a v1
//! client that reads and writes an autoscaler back loses nothing.
//!
//! The metrics and current-metrics annotations hold autoscaling/v1's `MetricSpec` and
//! `MetricStatus` (the v2beta1 shape: `targetAverageValue`, `metricName`...). The behavior
//! annotation holds upstream's internal type, which has no JSON tags: its keys are Go's
//! field names (`ScaleUp`, `StabilizationWindowSeconds`...), read back case-insensitively.

mod metrics;

use kas_registry::strategy::Conversion;
use metrics::{
    cross_ref, get, is_cpu_resource, metric_spec_to_v1, metric_spec_to_v2, metric_status_to_v1,
    metric_status_to_v2, put,
};
use serde_json::{Map, Value, json};

pub const METRIC_SPECS: &str = "autoscaling.alpha.kubernetes.io/metrics";
pub const METRIC_STATUSES: &str = "autoscaling.alpha.kubernetes.io/current-metrics";
pub const CONDITIONS: &str = "autoscaling.alpha.kubernetes.io/conditions";
pub const BEHAVIOR: &str = "autoscaling.alpha.kubernetes.io/behavior";
const ROUND_TRIP: [&str; 4] = [METRIC_SPECS, BEHAVIOR, METRIC_STATUSES, CONDITIONS];

/// Upstream `autoscaling.DefaultCPUUtilization`.
pub const DEFAULT_CPU_UTILIZATION: i64 = 80;

/// autoscaling/v1 over the autoscaling/v2 storage of horizontal pod autoscalers.
pub(super) struct AutoscalingV1;

impl Conversion for AutoscalingV1 {
    fn to_stored(&self, served: Value) -> Value {
        v1_to_v2(served)
    }

    fn to_served(&self, stored: Value) -> Value {
        v2_to_v1(stored)
    }

    fn stored_schema(&self) -> Option<&'static kas_apimachinery::schema::Message> {
        Some(&kas_api::autoscaling::v2::HORIZONTAL_POD_AUTOSCALER)
    }
}

/// (v2 JSON name, Go field name) of the internal behavior types.
const GO_NAMES: &[(&str, &str)] = &[
    ("scaleUp", "ScaleUp"),
    ("scaleDown", "ScaleDown"),
    ("stabilizationWindowSeconds", "StabilizationWindowSeconds"),
    ("selectPolicy", "SelectPolicy"),
    ("policies", "Policies"),
    ("tolerance", "Tolerance"),
    ("type", "Type"),
    ("value", "Value"),
    ("periodSeconds", "PeriodSeconds"),
];

/// The behavior as Go marshals the internal type: Go field names, nil pointers as null.
fn behavior_to_go(b: &Value) -> Value {
    let rules = |r: Option<&Value>| -> Value {
        let Some(r) = r.filter(|r| !r.is_null()) else {
            return Value::Null;
        };
        let policies: Vec<Value> = r
            .get("policies")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|p| {
                json!({"Type": p.get("type").cloned().unwrap_or(json!("")),
                       "Value": p.get("value").cloned().unwrap_or(json!(0)),
                       "PeriodSeconds": p.get("periodSeconds").cloned().unwrap_or(json!(0))})
            })
            .collect();
        let field = |k: &str| r.get(k).cloned().unwrap_or(Value::Null);
        json!({
            "StabilizationWindowSeconds": field("stabilizationWindowSeconds"),
            "SelectPolicy": field("selectPolicy"),
            "Policies": if r.get("policies").is_some_and(Value::is_array) { json!(policies) } else { Value::Null },
            "Tolerance": field("tolerance"),
        })
    };
    json!({"ScaleUp": rules(b.get("scaleUp")), "ScaleDown": rules(b.get("scaleDown"))})
}

/// The behavior annotation read back as `encoding/json` reads it (keys case-insensitive),
/// into the v2 shape; nulls are dropped.
fn behavior_from_go(v: &Value) -> Value {
    match v {
        Value::Object(map) => {
            let mut out = Map::new();
            for (k, val) in map {
                if val.is_null() {
                    continue;
                }
                if let Some((json_name, _)) =
                    GO_NAMES.iter().find(|(_, go)| go.eq_ignore_ascii_case(k))
                {
                    out.insert((*json_name).to_owned(), behavior_from_go(val));
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(behavior_from_go).collect()),
        other => other.clone(),
    }
}

fn annotations_mut(obj: &mut Value) -> Option<&mut Map<String, Value>> {
    obj.pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
}

/// Removes a round-trip annotation and parses it as JSON; invalid JSON counts as absent.
fn take_annotation(obj: &mut Value, key: &str) -> Option<Value> {
    let raw = annotations_mut(obj)?.remove(key)?;
    serde_json::from_str(raw.as_str()?).ok()
}

fn drop_empty_annotations(obj: &mut Value) {
    if annotations_mut(obj).is_some_and(|a| a.is_empty())
        && let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut)
    {
        meta.remove("annotations");
    }
}

fn copy_fields(from: &Value, to: &mut Map<String, Value>, keys: &[&str]) {
    for k in keys {
        put(to, k, from.get(*k));
    }
}

/// The stored v2 form of a v1 autoscaler (`Convert_v1_HorizontalPodAutoscaler_To_autoscaling_...`).
pub fn v1_to_v2(mut v1: Value) -> Value {
    let other_metrics = take_annotation(&mut v1, METRIC_SPECS);
    let current_metrics = take_annotation(&mut v1, METRIC_STATUSES);
    let conditions = take_annotation(&mut v1, CONDITIONS);
    let behavior = take_annotation(&mut v1, BEHAVIOR);
    drop_empty_annotations(&mut v1);
    let Some(map) = v1.as_object_mut() else {
        return v1;
    };
    let spec = map.remove("spec").unwrap_or_else(|| json!({}));
    let status = map.remove("status");

    let mut new_spec = Map::new();
    if let Some(r) = get(&spec, "scaleTargetRef") {
        new_spec.insert("scaleTargetRef".into(), r.clone());
    }
    copy_fields(&spec, &mut new_spec, &["minReplicas", "maxReplicas"]);
    let mut metrics: Vec<Value> = other_metrics
        .as_ref()
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(metric_spec_to_v2)
        .collect();
    if let Some(cpu) = get(&spec, "targetCPUUtilizationPercentage") {
        metrics.push(cpu_metric(cpu.clone()));
    }
    if metrics.is_empty() {
        // autoscaling/v1's implicit default, applied where all the metrics are known.
        metrics.push(cpu_metric(json!(DEFAULT_CPU_UTILIZATION)));
    }
    new_spec.insert("metrics".into(), Value::Array(metrics));
    if let Some(b) = behavior.filter(Value::is_object) {
        new_spec.insert("behavior".into(), behavior_from_go(&b));
    }
    map.insert("spec".into(), Value::Object(new_spec));

    if let Some(status) = status.filter(Value::is_object) {
        let mut s = Map::new();
        copy_fields(
            &status,
            &mut s,
            &[
                "observedGeneration",
                "lastScaleTime",
                "currentReplicas",
                "desiredReplicas",
            ],
        );
        if let Some(current) = current_metrics.as_ref().and_then(Value::as_array) {
            s.insert(
                "currentMetrics".into(),
                Value::Array(current.iter().map(metric_status_to_v2).collect()),
            );
        } else if let Some(cpu) = get(&status, "currentCPUUtilizationPercentage") {
            s.insert(
                "currentMetrics".into(),
                json!([{"type": "Resource", "resource": {"name": "cpu",
                    "current": {"averageUtilization": cpu}}}]),
            );
        }
        if let Some(c) = conditions.filter(Value::is_array) {
            s.insert("conditions".into(), c);
        }
        map.insert("status".into(), Value::Object(s));
    }
    v1
}

fn cpu_metric(utilization: Value) -> Value {
    json!({"type": "Resource", "resource": {"name": "cpu",
        "target": {"type": "Utilization", "averageUtilization": utilization}}})
}

fn set_annotation(obj: &mut Value, key: &str, value: &Value) {
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
    if let Some(a) = annotations.as_object_mut() {
        a.insert(key.to_owned(), Value::String(super::gojson::marshal(value)));
    }
}

/// The v1 form of a stored v2 autoscaler (`Convert_autoscaling_HorizontalPodAutoscaler_To_v1_...`).
pub fn v2_to_v1(mut v2: Value) -> Value {
    // Only the annotations this conversion writes survive it.
    if let Some(a) = annotations_mut(&mut v2) {
        for k in ROUND_TRIP {
            a.remove(k);
        }
    }
    drop_empty_annotations(&mut v2);
    let Some(map) = v2.as_object_mut() else {
        return v2;
    };
    let spec = map.remove("spec").unwrap_or_else(|| json!({}));
    let status = map.remove("status");
    let metrics: &[Value] = spec
        .get("metrics")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);

    let mut new_spec = Map::new();
    new_spec.insert(
        "scaleTargetRef".into(),
        cross_ref(spec.get("scaleTargetRef")),
    );
    copy_fields(&spec, &mut new_spec, &["minReplicas", "maxReplicas"]);
    if let Some(cpu) = metrics.iter().find(|m| is_cpu_resource(m)) {
        put(
            &mut new_spec,
            "targetCPUUtilizationPercentage",
            cpu.pointer("/resource/target/averageUtilization"),
        );
    }
    map.insert("spec".into(), Value::Object(new_spec));
    let other: Vec<Value> = metrics
        .iter()
        .filter(|m| {
            !(is_cpu_resource(m)
                && m.pointer("/resource/target/averageUtilization")
                    .is_some_and(|u| !u.is_null()))
        })
        .map(metric_spec_to_v1)
        .collect();

    let status = status.unwrap_or_else(|| json!({}));
    let current: &[Value] = status
        .get("currentMetrics")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    let mut s = Map::new();
    copy_fields(&status, &mut s, &["observedGeneration", "lastScaleTime"]);
    s.insert(
        "currentReplicas".into(),
        status.get("currentReplicas").cloned().unwrap_or(json!(0)),
    );
    s.insert(
        "desiredReplicas".into(),
        status.get("desiredReplicas").cloned().unwrap_or(json!(0)),
    );
    for m in current.iter().filter(|m| is_cpu_resource(m)) {
        put(
            &mut s,
            "currentCPUUtilizationPercentage",
            m.pointer("/resource/current/averageUtilization"),
        );
    }
    map.insert("status".into(), Value::Object(s));

    if !other.is_empty() {
        set_annotation(&mut v2, METRIC_SPECS, &Value::Array(other));
    }
    if !current.is_empty() {
        let v1: Vec<Value> = current.iter().map(metric_status_to_v1).collect();
        set_annotation(&mut v2, METRIC_STATUSES, &Value::Array(v1));
    }
    if let Some(b) = get(&spec, "behavior") {
        set_annotation(&mut v2, BEHAVIOR, &behavior_to_go(b));
    }
    if let Some(c) = status
        .get("conditions")
        .and_then(Value::as_array)
        .filter(|c| !c.is_empty())
    {
        set_annotation(&mut v2, CONDITIONS, &Value::Array(c.clone()));
    }
    v2
}
