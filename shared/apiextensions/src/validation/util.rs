//! Small readers over the JSON form of a CRD, with Go's decoding semantics: a `null` or
//! wrongly typed field reads as its zero value, as it does after upstream decodes into
//! typed structs.

use kas_apimachinery::validation::field::BadValue;
use serde_json::{Map, Value};

/// The object under `key`, if it is one (`null` reads as absent, like a nil pointer).
pub fn obj<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|x| x.is_object())
}

/// The string under `key`; `""` when absent.
pub fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A `*string` field: `None` when absent or `null`.
pub fn opt_str<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// The boolean under `key`; `false` when absent.
pub fn bool_of(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// A `*bool` field.
pub fn opt_bool(v: &Value, key: &str) -> Option<bool> {
    v.get(key).and_then(Value::as_bool)
}

/// The array under `key`; empty when absent.
pub fn arr<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// Whether a slice field is non-nil (present as an array, maybe empty).
pub fn has_arr(v: &Value, key: &str) -> bool {
    v.get(key).is_some_and(Value::is_array)
}

/// The map under `key`, if present.
pub fn map_of<'a>(v: &'a Value, key: &str) -> Option<&'a Map<String, Value>> {
    v.get(key).and_then(Value::as_object)
}

/// The strings of a `[]string` field.
pub fn strings(v: &Value, key: &str) -> Vec<String> {
    arr(v, key)
        .iter()
        .map(|s| s.as_str().unwrap_or("").to_owned())
        .collect()
}

/// A `[]string` field as a bad value (`[]string(nil)` when absent).
pub fn strings_value(v: &Value, key: &str) -> BadValue {
    if has_arr(v, key) {
        BadValue::Strings(Some(strings(v, key)))
    } else {
        BadValue::Strings(None)
    }
}

/// `BadValue` of a `*string` shown by upstream (a pointer is followed).
pub fn ptr_str(v: Option<&str>) -> BadValue {
    v.map_or(BadValue::Null, |s| BadValue::String(s.to_owned()))
}

/// Keys whose Go field is a pointer, so `""`/`false` are still set values.
const POINTER_KEYS: &[&str] = &[
    "$ref",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
    "labelSelectorPath",
    "deprecationWarning",
    "url",
    "path",
    "port",
];

/// Keys whose Go field is a map (nil and empty are the same to `Semantic.DeepEqual`).
const MAP_KEYS: &[&str] = &[
    "properties",
    "patternProperties",
    "definitions",
    "dependencies",
];

/// Keys holding arbitrary JSON, compared verbatim.
const JSON_KEYS: &[&str] = &["default", "example", "enum"];

fn is_semantic_zero(key: &str, v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty() && !POINTER_KEYS.contains(&key),
        Value::Bool(b) => !b && !POINTER_KEYS.contains(&key),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty() && MAP_KEYS.contains(&key),
        Value::Number(_) => false,
    }
}

/// Upstream `apiequality.Semantic.DeepEqual` over decoded typed values: zero values equal
/// absent ones, nil and empty slices and maps are equal.
pub fn semantic_eq(a: Option<&Value>, b: Option<&Value>) -> bool {
    semantic_eq_key("", a, b)
}

fn semantic_eq_key(key: &str, a: Option<&Value>, b: Option<&Value>) -> bool {
    let a = a.filter(|v| !is_semantic_zero(key, v));
    let b = b.filter(|v| !is_semantic_zero(key, v));
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) if JSON_KEYS.contains(&key) => a == b,
        (Some(Value::Object(x)), Some(Value::Object(y))) => x
            .keys()
            .chain(y.keys())
            .all(|k| semantic_eq_key(k, x.get(k), y.get(k))),
        (Some(Value::Array(x)), Some(Value::Array(y))) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|(p, q)| semantic_eq_key("", Some(p), Some(q)))
        }
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn semantic_equality_treats_zero_values_as_absent() {
        let a = json!({"type": "object", "properties": {}, "required": []});
        let b = json!({"type": "object", "description": ""});
        assert!(semantic_eq(Some(&a), Some(&b)));
        let c = json!({"type": "object", "not": {}});
        assert!(!semantic_eq(Some(&b), Some(&c)));
        // JSON values compare verbatim: an empty default is a value.
        let d = json!({"default": {}});
        assert!(!semantic_eq(Some(&d), Some(&json!({}))));
        assert!(semantic_eq(None, Some(&json!(null))));
        assert!(!semantic_eq(None, Some(&json!({"status": {}}))));
    }
}
