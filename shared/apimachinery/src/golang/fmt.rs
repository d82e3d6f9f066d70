//! Go's `fmt` verbs on a decoded JSON value, as upstream prints the `interface{}` values
//! of an unstructured object in its errors: `%v` (`map[a:1 b:[x y]]`), `%s` and `%T`.
//! Values are typed as upstream decodes them, ints preserved (`int64`), as
//! `UnmarshalCaseSensitivePreserveInts` and `ToUnstructured` leave them.

use serde_json::Value;

use crate::golang::strconv::format_float;

/// Go's dynamic type of a decoded value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GoKind {
    Nil,
    Bool,
    Int,
    Float,
    String,
    Map,
    Slice,
}

impl GoKind {
    pub fn of(v: &Value) -> GoKind {
        match v {
            Value::Null => GoKind::Nil,
            Value::Bool(_) => GoKind::Bool,
            Value::Number(n) if n.is_i64() => GoKind::Int,
            Value::Number(_) => GoKind::Float,
            Value::String(_) => GoKind::String,
            Value::Array(_) => GoKind::Slice,
            Value::Object(_) => GoKind::Map,
        }
    }

    /// The Go type's name; `None` for nil, which has no type.
    pub fn type_name(self) -> Option<&'static str> {
        Some(match self {
            GoKind::Nil => return None,
            GoKind::Bool => "bool",
            GoKind::Int => "int64",
            GoKind::Float => "float64",
            GoKind::String => "string",
            GoKind::Map => "map[string]interface {}",
            GoKind::Slice => "[]interface {}",
        })
    }
}

/// `fmt.Sprintf("%T", v)`: the type's name, `<nil>` for nil.
pub fn sprint_t(v: &Value) -> &'static str {
    GoKind::of(v).type_name().unwrap_or("<nil>")
}

/// `fmt.Sprintf("%s", reflect.TypeOf(v))`: as `%T`, but nil's nil `reflect.Type` prints
/// as `%!s(<nil>)`.
pub fn sprint_type_of(v: &Value) -> &'static str {
    GoKind::of(v).type_name().unwrap_or("%!s(<nil>)")
}

/// `fmt.Sprintf("%v", v)`: `map[k:v ...]` with sorted keys, `[a b]`, `<nil>`, floats as
/// `%g` with the shortest digits.
pub fn sprint_v(v: &Value) -> String {
    let mut out = String::new();
    write_v(&mut out, v);
    out
}

fn write_v(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("<nil>"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::String(s) => out.push_str(s),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => out.push_str(&i.to_string()),
            (None, Some(u)) => out.push_str(&format_float(u as f64, b'g', 64)),
            _ => out.push_str(&format_float(n.as_f64().unwrap_or_default(), b'g', 64)),
        },
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_v(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push_str("map[");
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(k);
                out.push(':');
                write_v(out, &map[k.as_str()]);
            }
            out.push(']');
        }
    }
}

/// `fmt.Sprintf("%s", v)`: strings as they are, other scalars as `%!s(T=v)`.
pub fn sprint_s(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "%!s(<nil>)".to_owned(),
        Value::Bool(_) | Value::Number(_) => {
            format!("%!s({}={})", sprint_t(v), sprint_v(v))
        }
        _ => sprint_v(v),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn percent_v_matches_go() {
        assert_eq!(
            sprint_v(&json!({"b": [1, "x"], "a": null, "c": {"d": true}})),
            "map[a:<nil> b:[1 x] c:map[d:true]]"
        );
        assert_eq!(sprint_v(&json!(1.5)), "1.5");
        assert_eq!(sprint_v(&json!(1234567.0)), "1.234567e+06");
        assert_eq!(sprint_v(&json!(u64::MAX)), "1.8446744073709552e+19");
    }

    #[test]
    fn percent_s_and_types_match_go() {
        assert_eq!(sprint_s(&json!("x")), "x");
        assert_eq!(sprint_s(&json!(null)), "%!s(<nil>)");
        assert_eq!(sprint_s(&json!(5)), "%!s(int64=5)");
        assert_eq!(sprint_s(&json!(0.5)), "%!s(float64=0.5)");
        assert_eq!(sprint_s(&json!([true])), "[true]");
        assert_eq!(sprint_t(&json!(null)), "<nil>");
        assert_eq!(sprint_type_of(&json!(null)), "%!s(<nil>)");
        assert_eq!(sprint_t(&json!({})), "map[string]interface {}");
        assert_eq!(sprint_t(&json!([])), "[]interface {}");
        assert_eq!(sprint_t(&json!(u64::MAX)), "float64");
        assert_eq!(sprint_t(&json!(-1)), "int64");
    }
}
