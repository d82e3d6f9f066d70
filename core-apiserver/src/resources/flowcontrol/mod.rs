//! The flowcontrol.apiserver.k8s.io/v1 resources (API Priority and Fairness), after
//! upstream's `pkg/registry/flowcontrol`, `pkg/apis/flowcontrol/v1/defaults.go`,
//! `pkg/apis/flowcontrol/validation`, the printers `printFlowSchema` and
//! `printPriorityLevelConfiguration`, and the configuration producer that creates the
//! mandatory and suggested objects of `apiserver/pkg/apis/flowcontrol/bootstrap`.

pub use kas_flowcontrol::bootstrap;
pub mod flowschemas;
pub mod prioritylevelconfigurations;
pub mod status;
mod validation;

use kas_apimachinery::golang::strconv::quote;
use serde_json::Value;

pub use bootstrap::bootstrap_objects;

/// The string at a JSON pointer, or "".
fn s<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// The integer at a JSON pointer, or Go's zero.
fn int(v: &Value, pointer: &str) -> i64 {
    v.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

/// The array at a JSON pointer (a nil or absent one is empty).
fn list<'a>(v: &'a Value, pointer: &str) -> &'a [Value] {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The `*T` field at a JSON pointer, when set.
fn present<'a>(v: &'a Value, pointer: &str) -> Option<&'a Value> {
    v.pointer(pointer).filter(|v| !v.is_null())
}

/// The strings of a `[]string` field.
fn strings(v: &Value, pointer: &str) -> Vec<String> {
    list(v, pointer)
        .iter()
        .map(|i| i.as_str().unwrap_or("").to_owned())
        .collect()
}

/// A `[]string` as Go's `%#v` prints it.
fn go_strings(v: &Value, pointer: &str) -> String {
    match v.pointer(pointer).and_then(Value::as_array) {
        None => "[]string(nil)".to_owned(),
        Some(items) => {
            let items: Vec<String> = items
                .iter()
                .map(|i| quote(i.as_str().unwrap_or("")))
                .collect();
            format!("[]string{{{}}}", items.join(", "))
        }
    }
}

/// A pointer as Go's `%#v` prints it (a fixed address, as elsewhere in kas).
fn go_pointer(ty: &str, v: Option<&Value>) -> String {
    match v {
        Some(v) if !v.is_null() => format!("(*flowcontrol.{ty})(0xc000000000)"),
        _ => format!("(*flowcontrol.{ty})(nil)"),
    }
}

/// A slice of structs as Go's `%#v` prints it.
fn go_slice(ty: &str, v: &Value, pointer: &str, item: fn(&Value) -> String) -> String {
    match v.pointer(pointer).and_then(Value::as_array) {
        None => format!("[]flowcontrol.{ty}(nil)"),
        Some(items) => {
            let items: Vec<String> = items.iter().map(item).collect();
            format!("[]flowcontrol.{ty}{{{}}}", items.join(", "))
        }
    }
}

/// Go's zero values dropped, so that two specs compare as `apiequality.Semantic` compares
/// their Go structs (empty and nil slices alike; unset and zero scalars alike).
fn semantic(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| !is_zero(v))
                .map(|(k, v)| (k.clone(), semantic(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(semantic).collect()),
        other => other.clone(),
    }
}

fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        // Numbers are kept: the defaulted objects set every `*int32` of the kind.
        Value::Number(_) => false,
        Value::Array(a) => a.is_empty(),
        Value::Object(_) => false,
    }
}
