//! The storage.k8s.io/v1 resources, after upstream's `pkg/registry/storage`,
//! `pkg/apis/storage/v1/defaults.go`, `pkg/apis/storage/validation` and the storage
//! printers of `pkg/printers/internalversion`.

pub mod csidrivers;
pub mod csinodes;
pub mod csistoragecapacities;
pub mod storageclasses;
pub mod volumeattachments;

use kas_apimachinery::validation::field::BadValue;
use kas_registry::strategy::causes;
use serde_json::Value;

/// The string at a JSON pointer, or "".
fn s<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// A Go `%q` string.
fn quote(v: &str) -> String {
    kas_apimachinery::golang::strconv::quote(v)
}

/// A `[]string` (or a slice of a named string type `ty`) as Go's `%#v` prints it.
fn go_strings(ty: &str, list: Option<&Value>) -> String {
    match list.and_then(Value::as_array) {
        None => format!("[]{ty}(nil)"),
        Some(items) => {
            let items: Vec<String> = items
                .iter()
                .map(|i| quote(i.as_str().unwrap_or("")))
                .collect();
            format!("[]{ty}{{{}}}", items.join(", "))
        }
    }
}

/// A pointer as Go's `%#v` prints it (addresses are not reproducible; kas prints a fixed
/// one, as elsewhere).
fn go_pointer(ty: &str, v: Option<&Value>) -> String {
    match v {
        Some(v) if !v.is_null() => format!("(*{ty})(0xc000000000)"),
        _ => format!("(*{ty})(nil)"),
    }
}

/// A `*bool` field as upstream's field errors print it: `null` when unset.
fn bool_value(v: Option<&Value>) -> BadValue {
    match v.and_then(Value::as_bool) {
        Some(b) => BadValue::Bool(b),
        None => BadValue::Null,
    }
}

/// Whether a `*T` field is unset.
fn is_nil(v: &Value, key: &str) -> bool {
    v.get(key).is_none_or(Value::is_null)
}
