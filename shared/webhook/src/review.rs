//! What the TokenReview and SubjectAccessReview exchanges share: the request's encoding as
//! Go's JSON encoder writes a typed object, and the answer's fields read with Go's
//! `UnmarshalTypeError` texts.

use std::collections::BTreeMap;

use kas_apimachinery::golang::json::describe;
use serde::Serialize;
use serde_json::Value;

/// A zero `ObjectMeta`: Go writes its `creationTimestamp` as `null`.
#[derive(Default, Serialize)]
pub struct EmptyMeta {
    #[serde(rename = "creationTimestamp")]
    creation_timestamp: Option<()>,
}

/// `json.NewEncoder(w).Encode(obj)`: Go's escaping and a trailing newline.
pub fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    let mut out = kas_apimachinery::golang::json::to_vec(value).unwrap_or_default();
    out.push(b'\n');
    out
}

/// A field of a Go struct: the struct's type, the JSON path of the struct in the document
/// and the field's JSON name, as Go names them in its decoding errors.
pub struct Field {
    strukt: &'static str,
    parent: &'static str,
    name: &'static str,
}

impl Field {
    /// A field of the document's top-level struct.
    pub fn root(strukt: &'static str, name: &'static str) -> Field {
        Field {
            strukt,
            parent: "",
            name,
        }
    }

    /// A field of the struct at `parent`.
    pub fn nested(strukt: &'static str, parent: &'static str, name: &'static str) -> Field {
        Field {
            strukt,
            parent,
            name,
        }
    }

    fn error(&self, v: &Value, go_type: &str) -> String {
        let path = match self.parent {
            "" => self.name.to_owned(),
            parent => format!("{parent}.{}", self.name),
        };
        format!(
            "json: cannot unmarshal {} into Go struct field {}.{path} of type {go_type}",
            describe(v),
            self.strukt
        )
    }
}

/// A struct-typed field: `None` when absent or null.
pub fn field<'a>(obj: &'a Value, at: &Field) -> Result<Option<&'a Value>, String> {
    match obj.get(at.name) {
        None | Some(Value::Null) => Ok(None),
        Some(v @ Value::Object(_)) => Ok(Some(v)),
        Some(v) => Err(at.error(v, "struct")),
    }
}

pub fn string(obj: &Value, at: &Field) -> Result<String, String> {
    match obj.get(at.name) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(v) => Err(at.error(v, "string")),
    }
}

pub fn boolean(obj: &Value, at: &Field) -> Result<bool, String> {
    match obj.get(at.name) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(v) => Err(at.error(v, "bool")),
    }
}

fn string_list(v: &Value, at: &Field, go_type: &str) -> Result<Vec<String>, String> {
    match v {
        Value::Null => Ok(Vec::new()),
        Value::Array(items) => items
            .iter()
            .map(|item| match item {
                Value::String(s) => Ok(s.clone()),
                // Go leaves a null element as the zero string.
                Value::Null => Ok(String::new()),
                other => Err(at.error(other, "string")),
            })
            .collect(),
        other => Err(at.error(other, go_type)),
    }
}

pub fn strings(obj: &Value, at: &Field) -> Result<Vec<String>, String> {
    string_list(obj.get(at.name).unwrap_or(&Value::Null), at, "[]string")
}

/// A `map[string]ExtraValue` field.
pub fn extra(obj: &Value, at: &Field) -> Result<BTreeMap<String, Vec<String>>, String> {
    match obj.get(at.name) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| Ok((k.clone(), string_list(v, at, "v1.ExtraValue")?)))
            .collect(),
        Some(v) => Err(at.error(v, "map[string]v1.ExtraValue")),
    }
}
