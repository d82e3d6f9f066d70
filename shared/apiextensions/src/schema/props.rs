//! Lenient readers of a `JSONSchemaProps` in JSON: a field of the wrong type reads as
//! unset, as nothing here may fail on a schema CRD validation should have refused.

use serde_json::{Map, Value};

pub(super) fn string(s: &Map<String, Value>, key: &str) -> String {
    s.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

pub(super) fn opt_string(s: &Map<String, Value>, key: &str) -> Option<String> {
    s.get(key).and_then(Value::as_str).map(str::to_owned)
}

pub(super) fn boolean(s: &Map<String, Value>, key: &str) -> bool {
    s.get(key).and_then(Value::as_bool).unwrap_or(false)
}

pub(super) fn float(s: &Map<String, Value>, key: &str) -> Option<f64> {
    s.get(key).and_then(Value::as_f64)
}

/// An `int64` field: only JSON integers count (Go's decoder refuses `5.0` there).
pub(super) fn int(s: &Map<String, Value>, key: &str) -> Option<i64> {
    s.get(key).and_then(Value::as_i64)
}

pub(super) fn strings(s: &Map<String, Value>, key: &str) -> Vec<String> {
    s.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// `default`, `enum` items: a JSON `null` default is no default (upstream's conversion
/// of a `null` `apiextensionsv1.JSON`).
pub(super) fn default(s: &Map<String, Value>) -> Option<Value> {
    s.get("default").filter(|v| !v.is_null()).cloned()
}

pub(super) fn object<'a>(s: &'a Map<String, Value>, key: &str) -> Option<&'a Map<String, Value>> {
    s.get(key).and_then(Value::as_object)
}

pub(super) fn objects<'a>(s: &'a Map<String, Value>, key: &str) -> Vec<&'a Map<String, Value>> {
    s.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_object).collect())
        .unwrap_or_default()
}

/// `additionalProperties` (and `additionalItems`): a schema or a boolean.
pub(super) enum SchemaOrBool<'a> {
    Schema(&'a Map<String, Value>),
    Bool(bool),
}

pub(super) fn schema_or_bool<'a>(s: &'a Map<String, Value>, key: &str) -> Option<SchemaOrBool<'a>> {
    match s.get(key)? {
        Value::Object(m) => Some(SchemaOrBool::Schema(m)),
        Value::Bool(b) => Some(SchemaOrBool::Bool(*b)),
        _ => None,
    }
}
