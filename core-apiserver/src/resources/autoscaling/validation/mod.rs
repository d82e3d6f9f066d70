//! Upstream's `pkg/apis/autoscaling/validation` for HorizontalPodAutoscalers, over the
//! stored autoscaling/v2 form (upstream validates the internal type, whose shape is v2's).

use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::meta::validate_nonnegative_field;
use kas_apimachinery::validation::path::is_valid_path_segment_name;
use serde_json::Value;

mod metrics;

/// Upstream `MaxPeriodSeconds`.
const MAX_PERIOD_SECONDS: i64 = 1800;
/// Upstream `MaxStabilizationWindowSeconds`.
const MAX_STABILIZATION_WINDOW_SECONDS: i64 = 3600;
const SELECT_POLICIES: &[&str] = &["Disabled", "Max", "Min"];
const POLICY_TYPES: &[&str] = &["Percent", "Pods"];

fn get<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|v| !v.is_null())
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn int_of(v: &Value, key: &str) -> i64 {
    v.get(key).and_then(Value::as_i64).unwrap_or(0)
}

/// `validateHorizontalPodAutoscalerSpec`; `min_lower_bound` is 1 unless HPAScaleToZero is
/// on or the old object already scales to zero.
pub fn validate_spec(obj: &Value, min_lower_bound: i64) -> Vec<field::Error> {
    let empty = Value::Null;
    let spec = obj.get("spec").unwrap_or(&empty);
    let path = Path::new("spec");
    let mut errs = Vec::new();
    let min = get(spec, "minReplicas").and_then(Value::as_i64);
    let max = int_of(spec, "maxReplicas");
    if let Some(min) = min.filter(|m| *m < min_lower_bound) {
        errs.push(field::invalid(
            &path.child("minReplicas"),
            min,
            &format!("must be greater than or equal to {min_lower_bound}"),
        ));
    }
    if max < 1 {
        errs.push(field::invalid(
            &path.child("maxReplicas"),
            max,
            "must be greater than 0",
        ));
    }
    if min.is_some_and(|min| max < min) {
        errs.push(field::invalid(
            &path.child("maxReplicas"),
            max,
            "must be greater than or equal to `minReplicas`",
        ));
    }
    errs.extend(validate_cross_version_ref(
        spec.get("scaleTargetRef").unwrap_or(&empty),
        &path.child("scaleTargetRef"),
    ));
    errs.extend(metrics::validate_metrics(spec, &path.child("metrics"), min));
    if let Some(b) = get(spec, "behavior") {
        let p = path.child("behavior");
        for dir in ["scaleUp", "scaleDown"] {
            if let Some(rules) = get(b, dir) {
                errs.extend(validate_scaling_rules(rules, &p.child(dir)));
            }
        }
    }
    errs
}

/// `ValidateHorizontalPodAutoscalerStatusUpdate`'s status checks.
pub fn validate_status(obj: &Value) -> Vec<field::Error> {
    let status = obj.get("status").cloned().unwrap_or(Value::Null);
    let path = Path::new("status");
    let mut errs = validate_nonnegative_field(
        int_of(&status, "currentReplicas"),
        &path.child("currentReplicas"),
    );
    errs.extend(validate_nonnegative_field(
        int_of(&status, "desiredReplicas"),
        &path.child("desiredReplicas"),
    ));
    errs
}

/// `ValidateCrossVersionObjectReference`.
fn validate_cross_version_ref(r: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    for key in ["kind", "name"] {
        let v = str_of(r, key);
        if v.is_empty() {
            errs.push(field::required(&path.child(key), ""));
        } else {
            for msg in is_valid_path_segment_name(v) {
                errs.push(field::invalid(&path.child(key), v, &msg));
            }
        }
    }
    errs
}

fn validate_scaling_rules(rules: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    if let Some(w) = get(rules, "stabilizationWindowSeconds").and_then(Value::as_i64) {
        let p = path.child("stabilizationWindowSeconds");
        if w < 0 {
            errs.push(field::invalid(
                &p,
                w,
                "must be greater than or equal to zero",
            ));
        }
        if w > MAX_STABILIZATION_WINDOW_SECONDS {
            errs.push(field::invalid(
                &p,
                w,
                &format!("must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}"),
            ));
        }
    }
    if let Some(s) = get(rules, "selectPolicy").and_then(Value::as_str)
        && !SELECT_POLICIES.contains(&s)
    {
        errs.push(field::not_supported(
            &path.child("selectPolicy"),
            s,
            SELECT_POLICIES,
        ));
    }
    let policies: &[Value] = rules
        .get("policies")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    let p = path.child("policies");
    if policies.is_empty() {
        errs.push(field::required(&p, "must specify at least one Policy"));
    }
    for (i, policy) in policies.iter().enumerate() {
        let p = p.index(i);
        let ty = str_of(policy, "type");
        if !POLICY_TYPES.contains(&ty) {
            errs.push(field::not_supported(&p.child("type"), ty, POLICY_TYPES));
        }
        let value = int_of(policy, "value");
        if value <= 0 {
            errs.push(field::invalid(
                &p.child("value"),
                value,
                "must be greater than zero",
            ));
        }
        let period = int_of(policy, "periodSeconds");
        if period <= 0 {
            errs.push(field::invalid(
                &p.child("periodSeconds"),
                period,
                "must be greater than zero",
            ));
        }
        if period > MAX_PERIOD_SECONDS {
            errs.push(field::invalid(
                &p.child("periodSeconds"),
                period,
                &format!("must be less than or equal to {MAX_PERIOD_SECONDS}"),
            ));
        }
    }
    errs
}
