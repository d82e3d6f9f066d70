//! Upstream's metric checks (`validateMetrics`, `validateMetricSpec` and the per-source
//! ones, `validateMetricTarget`, `validateMetricIdentifier`).

use kas_apimachinery::resource::Quantity;
use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::path::is_valid_path_segment_name;
use serde_json::Value;

use super::{get, str_of, validate_cross_version_ref};

/// Upstream `validMetricSourceTypesList` (a sorted set).
const METRIC_SOURCE_TYPES: &[&str] = &[
    "ContainerResource",
    "External",
    "Object",
    "Pods",
    "Resource",
];

pub(super) fn validate_metrics(spec: &Value, path: &Path, min: Option<i64>) -> Vec<field::Error> {
    let metrics: &[Value] = spec
        .get("metrics")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    let mut errs = Vec::new();
    let mut scales_to_zero = false;
    for (i, m) in metrics.iter().enumerate() {
        errs.extend(validate_metric_spec(m, &path.index(i)));
        scales_to_zero |= matches!(str_of(m, "type"), "Object" | "External");
    }
    if min == Some(0) && !scales_to_zero {
        errs.push(field::forbidden(
            path,
            "must specify at least one Object or External metric to support scaling to zero replicas",
        ));
    }
    errs
}

/// (JSON field, metric source type) in upstream's order of checks.
const SOURCES: &[(&str, &str)] = &[
    ("object", "Object"),
    ("external", "External"),
    ("pods", "Pods"),
    ("resource", "Resource"),
    ("containerResource", "ContainerResource"),
];

fn validate_metric_spec(m: &Value, path: &Path) -> Vec<field::Error> {
    let ty = str_of(m, "type");
    let mut errs = Vec::new();
    if ty.is_empty() {
        errs.push(field::required(
            &path.child("type"),
            "must specify a metric source type",
        ));
    }
    if !METRIC_SOURCE_TYPES.contains(&ty) {
        errs.push(field::not_supported(
            &path.child("type"),
            ty,
            METRIC_SOURCE_TYPES,
        ));
    }
    let present: Vec<&str> = SOURCES
        .iter()
        .map(|(f, _)| *f)
        .filter(|f| get(m, f).is_some())
        .collect();
    if let Some(first) = present.first() {
        let src = &m[*first];
        let p = path.child(first);
        errs.extend(match *first {
            "object" => validate_object_source(src, &p),
            "external" => validate_external_source(src, &p),
            "pods" => validate_pods_source(src, &p),
            "resource" => validate_resource_source(src, &p, false),
            _ => validate_resource_source(src, &p, true),
        });
    }
    let expected = SOURCES.iter().find(|(_, t)| *t == ty).map(|(f, _)| *f);
    match expected {
        Some(f) if get(m, f).is_none() => {
            errs.push(field::required(
                &path.child(f),
                "must populate information for the given metric source",
            ));
        }
        Some(_) => {}
        None => errs.push(field::not_supported(
            &path.child("type"),
            ty,
            METRIC_SOURCE_TYPES,
        )),
    }
    if present.len() != 1 {
        // Upstream ranges over a set: sorted.
        let mut others: Vec<&str> = present
            .into_iter()
            .filter(|f| Some(*f) != expected)
            .collect();
        others.sort_unstable();
        for f in others {
            errs.push(field::forbidden(
                &path.child(f),
                "must populate the given metric source only",
            ));
        }
    }
    errs
}

fn validate_object_source(src: &Value, path: &Path) -> Vec<field::Error> {
    let empty = Value::Null;
    let mut errs = validate_cross_version_ref(
        src.get("describedObject").unwrap_or(&empty),
        &path.child("describedObject"),
    );
    errs.extend(validate_metric_identifier(src, &path.child("metric")));
    let target = src.get("target").unwrap_or(&empty);
    errs.extend(validate_metric_target(target, &path.child("target")));
    if get(target, "value").is_none() && get(target, "averageValue").is_none() {
        errs.push(field::required(
            &path.child("target").child("averageValue"),
            "must set either a target value or averageValue",
        ));
    }
    errs
}

fn validate_external_source(src: &Value, path: &Path) -> Vec<field::Error> {
    let empty = Value::Null;
    let mut errs = validate_metric_identifier(src, &path.child("metric"));
    let target = src.get("target").unwrap_or(&empty);
    errs.extend(validate_metric_target(target, &path.child("target")));
    let (value, average) = (
        get(target, "value").is_some(),
        get(target, "averageValue").is_some(),
    );
    if !value && !average {
        errs.push(field::required(
            &path.child("target").child("averageValue"),
            "must set either a target value for metric or a per-pod target",
        ));
    }
    if value && average {
        errs.push(field::forbidden(
            &path.child("target").child("value"),
            "may not set both a target value for metric and a per-pod target",
        ));
    }
    errs
}

fn validate_pods_source(src: &Value, path: &Path) -> Vec<field::Error> {
    let empty = Value::Null;
    let mut errs = validate_metric_identifier(src, &path.child("metric"));
    let target = src.get("target").unwrap_or(&empty);
    errs.extend(validate_metric_target(target, &path.child("target")));
    if get(target, "averageValue").is_none() {
        errs.push(field::required(
            &path.child("target").child("averageValue"),
            "must specify a positive target averageValue",
        ));
    }
    errs
}

fn validate_resource_source(src: &Value, path: &Path, container: bool) -> Vec<field::Error> {
    let empty = Value::Null;
    let mut errs = Vec::new();
    if str_of(src, "name").is_empty() {
        errs.push(field::required(
            &path.child("name"),
            "must specify a resource name",
        ));
    }
    if container && str_of(src, "container").is_empty() {
        errs.push(field::required(
            &path.child("container"),
            "must specify a container",
        ));
    }
    let target = src.get("target").unwrap_or(&empty);
    errs.extend(validate_metric_target(target, &path.child("target")));
    let (utilization, average) = (
        get(target, "averageUtilization").is_some(),
        get(target, "averageValue").is_some(),
    );
    if !utilization && !average {
        errs.push(field::required(
            &path.child("target").child("averageUtilization"),
            "must set either a target raw value or a target utilization",
        ));
    }
    if utilization && average {
        errs.push(field::forbidden(
            &path.child("target").child("averageValue"),
            "may not set both a target raw value and a target utilization",
        ));
    }
    errs
}

/// A quantity's sign: whether it is greater than zero.
fn positive(q: &Value) -> bool {
    let zero = Quantity::parse("0").expect("zero parses");
    q.as_str()
        .and_then(|s| Quantity::parse(s).ok())
        .is_some_and(|q| q.cmp_value(&zero).is_gt())
}

fn validate_metric_target(t: &Value, path: &Path) -> Vec<field::Error> {
    let ty = str_of(t, "type");
    let mut errs = Vec::new();
    if ty.is_empty() {
        errs.push(field::required(
            &path.child("type"),
            "must specify a metric target type",
        ));
    }
    if !matches!(ty, "Utilization" | "Value" | "AverageValue") {
        errs.push(field::invalid(
            &path.child("type"),
            ty,
            "must be either Utilization, Value, or AverageValue",
        ));
    }
    for key in ["value", "averageValue"] {
        if let Some(q) = get(t, key).filter(|q| !positive(q)) {
            let shown = BadValue::Raw(q.as_str().unwrap_or("").to_owned());
            errs.push(field::invalid(&path.child(key), shown, "must be positive"));
        }
    }
    if let Some(u) = get(t, "averageUtilization")
        .and_then(Value::as_i64)
        .filter(|u| *u < 1)
    {
        errs.push(field::invalid(
            &path.child("averageUtilization"),
            u,
            "must be greater than 0",
        ));
    }
    errs
}

fn validate_metric_identifier(src: &Value, path: &Path) -> Vec<field::Error> {
    let name = src
        .pointer("/metric/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    if name.is_empty() {
        return vec![field::required(
            &path.child("name"),
            "must specify a metric name",
        )];
    }
    is_valid_path_segment_name(name)
        .into_iter()
        .map(|msg| field::invalid(&path.child("name"), name, &msg))
        .collect()
}
