//! What upstream's `customResourceValidator` checks besides the schema: the object's type
//! (`ValidateTypeMeta`: a body may name another kind, which decoding into an unstructured
//! object keeps) and the scale subresource's paths (`ValidateScaleSpec`,
//! `ValidateScaleStatus`), read as `unstructured.NestedInt64` and `NestedString` read them,
//! with their accessor errors.

use kas_apimachinery::golang::fmt::{sprint_t, sprint_v};
use kas_apimachinery::validation::field::{self, BadValue, Path};
use serde_json::Value;

/// The scale subresource's paths (`.spec.replicas`), as the CRD gives them.
#[derive(Clone, Debug, Default)]
pub struct ScalePaths {
    pub spec_replicas: String,
    pub status_replicas: String,
    pub label_selector: Option<String>,
}

impl ScalePaths {
    /// The scale subresource of a CRD version, if it has one.
    pub fn of(version: &Value) -> Option<ScalePaths> {
        let scale = version
            .pointer("/subresources/scale")
            .filter(|s| s.is_object())?;
        let path = |k: &str| scale.get(k).and_then(Value::as_str).map(str::to_owned);
        Some(ScalePaths {
            spec_replicas: path("specReplicasPath").unwrap_or_default(),
            status_replicas: path("statusReplicasPath").unwrap_or_default(),
            label_selector: path("labelSelectorPath"),
        })
    }
}

/// Upstream `ValidateTypeMeta`: the kind and apiVersion the endpoint serves.
pub fn validate_type_meta(obj: &Value, kind: &str, api_version: &str) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let text = |k: &str| obj.get(k).and_then(Value::as_str).unwrap_or("");
    if text("kind") != kind {
        let detail = format!("must be {kind}");
        errs.push(field::invalid(&Path::new("kind"), text("kind"), &detail));
    }
    if text("apiVersion") != api_version {
        let detail = format!("must be {api_version}");
        errs.push(field::invalid(
            &Path::new("apiVersion"),
            text("apiVersion"),
            &detail,
        ));
    }
    errs
}

/// Upstream `ValidateScaleSpec`: the spec replicas, when present, an int32 that is not
/// negative.
pub fn validate_scale_spec(obj: &Value, scale: &ScalePaths) -> Vec<field::Error> {
    replicas_errors(obj, &scale.spec_replicas)
}

/// Upstream `ValidateScaleStatus`: the status replicas as the spec's, and the label
/// selector, when present, a string.
pub fn validate_scale_status(obj: &Value, scale: &ScalePaths) -> Vec<field::Error> {
    let mut errs = replicas_errors(obj, &scale.status_replicas);
    if let Some(selector) = &scale.label_selector
        && let Err(message) = nested(obj, selector, "string", Value::is_string)
    {
        let path = Path::new(selector);
        errs.push(field::invalid(&path, "", &message));
    }
    errs
}

fn replicas_errors(obj: &Value, json_path: &str) -> Vec<field::Error> {
    let path = Path::new(json_path);
    let replicas = match nested(obj, json_path, "int64", Value::is_i64) {
        Err(message) => return vec![field::invalid(&path, BadValue::Int(0), &message)],
        Ok(found) => found.and_then(Value::as_i64).unwrap_or(0),
    };
    let detail = if replicas < 0 {
        "should be a non-negative integer".to_owned()
    } else if replicas > i64::from(i32::MAX) {
        format!("should be less than or equal to {}", i32::MAX)
    } else {
        return Vec::new();
    };
    vec![field::invalid(&path, BadValue::Int(replicas), &detail)]
}

/// `unstructured.NestedFieldNoCopy` then the type assertion of `NestedInt64` or
/// `NestedString` at a `.a.b` path: the value, `None` when a step is missing or nil, or
/// the accessor error.
fn nested<'a>(
    obj: &'a Value,
    json_path: &str,
    expected: &str,
    fits: fn(&Value) -> bool,
) -> Result<Option<&'a Value>, String> {
    let fields: Vec<&str> = json_path.trim_start_matches('.').split('.').collect();
    let mut val = obj;
    for (i, key) in fields.iter().enumerate() {
        if val.is_null() {
            return Ok(None);
        }
        let Some(map) = val.as_object() else {
            return Err(accessor_error(&fields[..=i], val, "map[string]interface{}"));
        };
        match map.get(*key) {
            Some(next) => val = next,
            None => return Ok(None),
        }
    }
    if fits(val) {
        Ok(Some(val))
    } else {
        Err(accessor_error(&fields, val, expected))
    }
}

/// Upstream's `%v accessor error: %v is of the type %T, expected <type>`.
fn accessor_error(fields: &[&str], val: &Value, expected: &str) -> String {
    format!(
        ".{} accessor error: {} is of the type {}, expected {expected}",
        fields.join("."),
        sprint_v(val),
        sprint_t(val)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shown(errs: Vec<field::Error>) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    fn scale() -> ScalePaths {
        ScalePaths {
            spec_replicas: ".spec.size".into(),
            status_replicas: ".status.replicas".into(),
            label_selector: Some(".status.selector".into()),
        }
    }

    #[test]
    fn replicas_are_read_as_nested_int64() {
        let obj = json!({"spec": {"size": "x"}});
        assert_eq!(
            shown(validate_scale_spec(&obj, &scale())),
            [
                ".spec.size: Invalid value: 0: .spec.size accessor error: x is of the type string, expected int64"
            ]
        );
        let obj = json!({"spec": {"size": -1}});
        assert_eq!(
            shown(validate_scale_spec(&obj, &scale())),
            [".spec.size: Invalid value: -1: should be a non-negative integer"]
        );
        let obj = json!({"spec": {"size": 2147483648_i64}});
        assert_eq!(
            shown(validate_scale_spec(&obj, &scale())),
            [".spec.size: Invalid value: 2147483648: should be less than or equal to 2147483647"]
        );
        let obj = json!({"spec": "flat"});
        assert_eq!(
            shown(validate_scale_spec(&obj, &scale())),
            [
                ".spec.size: Invalid value: 0: .spec.size accessor error: flat is of the type string, expected map[string]interface{}"
            ]
        );
        assert!(validate_scale_spec(&json!({}), &scale()).is_empty());
        assert!(validate_scale_spec(&json!({"spec": {"size": 3}}), &scale()).is_empty());
    }

    #[test]
    fn status_checks_replicas_and_the_selector() {
        let obj = json!({"status": {"replicas": 1.5, "selector": 3}});
        assert_eq!(
            shown(validate_scale_status(&obj, &scale())),
            [
                ".status.replicas: Invalid value: 0: .status.replicas accessor error: 1.5 is of the type float64, expected int64",
                ".status.selector: Invalid value: \"\": .status.selector accessor error: 3 is of the type int64, expected string",
            ]
        );
    }

    #[test]
    fn type_meta_must_be_the_endpoints() {
        let obj = json!({"kind": "Gadget", "apiVersion": "example.com/v1"});
        assert_eq!(
            shown(validate_type_meta(&obj, "Widget", "example.com/v1")),
            ["kind: Invalid value: \"Gadget\": must be Widget"]
        );
    }
}
