//! How upstream prints the decoded (`interface{}`) values of a custom resource in its
//! errors: a `field.Error`'s bad value (`%q` for strings, `%v` for numbers and booleans,
//! `%#v` for maps and slices) and `json.Marshal`'s text where values are compared by it.

use kas_apimachinery::golang::fmt::sprint_v;
use kas_apimachinery::golang::json::format_float;
use kas_apimachinery::golang::strconv::quote;
use kas_apimachinery::validation::field::BadValue;
use serde_json::Value;

/// A decoded value as upstream's `field.Error` prints it as its bad value.
pub fn bad_value(v: &Value) -> BadValue {
    match v {
        Value::Null => BadValue::Null,
        Value::Bool(b) => BadValue::Bool(*b),
        Value::String(s) => BadValue::String(s.clone()),
        Value::Number(n) => match n.as_i64() {
            Some(i) => BadValue::Int(i),
            None => BadValue::Raw(sprint_v(v)),
        },
        Value::Array(_) | Value::Object(_) => BadValue::Raw(sharp_v(v)),
    }
}

/// Go's `%#v` of a decoded value: `map[string]interface {}{"a":1}`,
/// `[]interface {}{"x", 1.5}`, `interface {}(nil)` for a nil inside them.
pub(super) fn sharp_v(v: &Value) -> String {
    let mut out = String::new();
    write_sharp_v(&mut out, v, false);
    out
}

fn write_sharp_v(out: &mut String, v: &Value, nested: bool) {
    match v {
        Value::Null if nested => out.push_str("interface {}(nil)"),
        Value::Null => out.push_str("<nil>"),
        Value::String(s) => out.push_str(&quote(s)),
        Value::Bool(_) | Value::Number(_) => out.push_str(&sprint_v(v)),
        Value::Array(items) => {
            out.push_str("[]interface {}{");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_sharp_v(out, item, true);
            }
            out.push('}');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push_str("map[string]interface {}{");
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&quote(k));
                out.push(':');
                write_sharp_v(out, &map[k.as_str()], true);
            }
            out.push('}');
        }
    }
}

/// `json.Marshal` of a decoded value as far as equality goes: keys sorted, floats in Go's
/// form (so `1.0` and `1` marshal alike), strings as serde_json escapes them.
pub(super) fn marshal(v: &Value) -> String {
    let mut out = String::new();
    write_marshal(&mut out, v);
    out
}

fn write_marshal(out: &mut String, v: &Value) {
    match v {
        Value::Number(n) if !n.is_i64() && !n.is_u64() => {
            out.push_str(&format_float(n.as_f64().unwrap_or_default(), 64));
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_marshal(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_marshal(out, &map[k.as_str()]);
            }
            out.push('}');
        }
        _ => out.push_str(&v.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn sharp_v_matches_go() {
        assert_eq!(
            sharp_v(&json!({"b": [1, "x", null], "a": 1.5, "c": {}})),
            r#"map[string]interface {}{"a":1.5, "b":[]interface {}{1, "x", interface {}(nil)}, "c":map[string]interface {}{}}"#
        );
        assert_eq!(bad_value(&json!("x")).to_string(), r#""x""#);
        assert_eq!(bad_value(&json!(2.5)).to_string(), "2.5");
        assert_eq!(bad_value(&json!(null)).to_string(), r#""null""#);
        assert_eq!(bad_value(&json!([])).to_string(), "[]interface {}{}");
    }

    #[test]
    fn marshal_sorts_keys_and_writes_floats_as_go() {
        assert_eq!(
            marshal(&json!({"b": 1.0, "a": [2, "x"]})),
            r#"{"a":[2,"x"],"b":1}"#
        );
    }
}
