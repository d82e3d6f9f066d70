//! Reading the v1 JSON of a pod spec as upstream reads its Go structs: a missing or
//! mistyped field is the zero value (`""`, `0`, `false`, nil).

use std::collections::BTreeMap;

use kas_apimachinery::validation::field::{self, BadValue, Path};
use serde_json::Value;

/// A string field, `""` when absent.
pub fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A pointer-to-string field: `None` when absent or null.
pub fn opt_str<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// An integer field, `None` when absent (upstream's nil pointer).
pub fn int_of(v: &Value, key: &str) -> Option<i64> {
    v.get(key).and_then(Value::as_i64)
}

/// An integer field, 0 when absent.
pub fn int0(v: &Value, key: &str) -> i64 {
    int_of(v, key).unwrap_or(0)
}

/// A boolean field, false when absent.
pub fn bool_of(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// A pointer-to-boolean field.
pub fn opt_bool(v: &Value, key: &str) -> Option<bool> {
    v.get(key).and_then(Value::as_bool)
}

/// A list field, empty when absent.
pub fn arr<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// A pointer-to-struct field: `None` when absent or null.
pub fn obj<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|x| x.is_object())
}

/// True when the field is present and not null (a non-nil pointer, slice or map).
pub fn has(v: &Value, key: &str) -> bool {
    v.get(key).is_some_and(|x| !x.is_null())
}

/// A `map[string]string` field, keys in sorted order.
pub fn str_map(v: &Value, key: &str) -> BTreeMap<String, String> {
    v.get(key)
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, x)| (k.clone(), x.as_str().unwrap_or("").to_owned()))
                .collect()
        })
        .unwrap_or_default()
}

/// The strings of a `[]string` field.
pub fn strings<'a>(v: &'a Value, key: &str) -> Vec<&'a str> {
    arr(v, key)
        .iter()
        .map(|x| x.as_str().unwrap_or(""))
        .collect()
}

/// Upstream `field.Invalid` once per message.
pub fn invalid_each(path: &Path, value: &str, msgs: Vec<String>) -> Vec<field::Error> {
    msgs.iter()
        .map(|m| field::invalid(path, value, m))
        .collect()
}

/// A bad value Go prints with `%v` / `%#v`.
pub fn raw(s: impl Into<String>) -> BadValue {
    BadValue::Raw(s.into())
}
