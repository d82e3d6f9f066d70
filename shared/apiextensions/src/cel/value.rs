//! JSON → CEL values following the structural schema, after upstream's
//! `UnstructuredToVal` (`k8s.io/apiserver/pkg/cel/common/values.go`).
//!
//! Upstream converts lazily, so a bad value only fails the rules that reach it; this
//! converts eagerly, so a nested value that does not convert is left out of its object
//! (a rule reaching it sees `no such key`), and only a bad `self` fails the rule.
//!
//! Values are cel-rust `Val` trait objects built directly, not its `Value` enum, which
//! holds only the built-in types: lists with `x-kubernetes-list-type` `set` or `map`
//! need types of their own (`set_list.rs`, `map_list.rs`), as cel-rust resolves `==`
//! with `Val::equals` of the left operand and `+` with its `Val::as_adder`, so only the
//! value can carry upstream's semantics, and it must stay that value wherever it travels
//! (nested in `self` or `oldSelf`, through comprehensions and library calls). A
//! `Value::Opaque` cannot be one: it is not a list (no `size`, indexing, `in` or
//! comprehensions). Each wraps a `CelList` and is that list for everything but `==` and
//! `+`, so a list literal on the left of `==` compares in order, as cel-go's
//! `baseList.Equal` does, and library functions see a plain list. Atomic lists are
//! `CelList`s, as before. The tree is built once per node and bound to each of its
//! rules by reference (`borrowed.rs`), where binding a `Value` copied it for each rule.

mod borrowed;
mod map_list;
mod native;
mod set_list;
mod typed_empty;

use std::collections::HashMap;

use cel::common::types::{
    CelBool, CelBytes, CelDouble, CelDuration, CelInt, CelList, CelMap, CelMapKey, CelNull,
    CelString, CelTimestamp,
};
use cel::common::value::Val;
use kas_apimachinery::golang::{base64, fmt::sprint_t, time};
use serde_json::{Map as JsonMap, Value as Json};

use super::escaping::escape;
use super::node::Node;

pub(crate) use borrowed::Borrowed;
use map_list::UnstructuredMapList;
use set_list::UnstructuredSetList;
use typed_empty::{TypedEmptyList, Zero};

/// A CEL value that owns its data.
pub(crate) type Boxed = Box<dyn Val>;

/// Upstream `UnstructuredToVal` for `v` under `schema`; `resource_root` adds what
/// `WithTypeAndObjectMeta` adds (`apiVersion`, `kind`, `metadata.name`,
/// `metadata.generateName`).
pub(crate) fn to_cel(v: &Json, schema: Node<'_>, resource_root: bool) -> Result<Boxed, String> {
    if v.is_null() {
        return if schema.nullable() {
            Ok(Box::new(CelNull))
        } else {
            Err("invalid data, got null for schema with nullable=false".to_owned())
        };
    }
    if schema.int_or_string() {
        return match v {
            Json::String(s) => Ok(string_val(s)),
            Json::Number(n) if n.as_i64().is_some() => Ok(int_val(n.as_i64().unwrap_or(0))),
            _ => Err(
                "invalid data, expected XIntOrString value to be either a string or integer"
                    .to_owned(),
            ),
        };
    }
    match schema.type_() {
        "object" => object(v, schema, resource_root),
        "array" => array(v, schema),
        "string" => string(v, schema),
        "number" => match v.as_f64() {
            Some(f) => Ok(Box::new(CelDouble::from(f))),
            None => Err(format!("invalid data, expected float, got {}", sprint_t(v))),
        },
        "integer" => match v.as_i64() {
            Some(i) => Ok(int_val(i)),
            None => Err(format!("invalid data, expected int, got {}", sprint_t(v))),
        },
        "boolean" => match v {
            Json::Bool(b) => Ok(Box::new(CelBool::from(*b))),
            _ => Err(format!("invalid data, expected bool, got {}", sprint_t(v))),
        },
        _ if schema.preserve_unknown_fields() => Ok(dyn_value(v)),
        other => Err(format!(
            "invalid type, expected object, array, number, integer, boolean or string, or no type with x-kubernetes-int-or-string or x-kubernetes-preserve-unknown-fields is true, got {other}"
        )),
    }
}

fn object(v: &Json, schema: Node<'_>, resource_root: bool) -> Result<Boxed, String> {
    let Json::Object(m) = v else {
        return Err(
            "invalid data, expected a map for the provided schema with type=object".to_owned(),
        );
    };
    let embedded = resource_root || schema.embedded_resource();
    let mut out: HashMap<CelMapKey<'static>, Boxed> = HashMap::new();
    if embedded || schema.properties().is_some() {
        // Null fields of an object are absent to CEL (`has()` is false), as upstream's
        // `unstructuredMap.Find` treats them; null map values stay.
        for (k, field) in m.iter().filter(|(_, v)| !v.is_null()) {
            let converted = if embedded && matches!(k.as_str(), "apiVersion" | "kind") {
                field.as_str().map(string_val)
            } else if embedded && k == "metadata" {
                Some(object_meta(field))
            } else if let Some(prop) = schema.property(k).filter(|p| p.has_decl_type()) {
                to_cel(field, prop, false).ok()
            } else {
                None
            };
            if let (Some(name), Some(val)) = (escape(k), converted) {
                out.insert(CelMapKey::from(name), val);
            }
        }
    } else if let Some(additional) = schema.additional_properties() {
        for (k, field) in m {
            if let Ok(val) = to_cel(field, additional, additional.embedded_resource()) {
                out.insert(CelMapKey::from(k.clone()), val);
            }
        }
    }
    // An object without properties: its unknown fields, even preserved ones, are hidden.
    Ok(Box::new(CelMap::from(out)))
}

/// `metadata` of a resource as CEL sees it: only `name` and `generateName`.
fn object_meta(v: &Json) -> Boxed {
    let mut out: HashMap<CelMapKey<'static>, Boxed> = HashMap::new();
    for key in ["name", "generateName"] {
        if let Some(s) = v.get(key).and_then(Json::as_str) {
            out.insert(CelMapKey::from(key.to_owned()), string_val(s));
        }
    }
    Box::new(CelMap::from(out))
}

fn array(v: &Json, schema: Node<'_>) -> Result<Boxed, String> {
    let Json::Array(items) = v else {
        return Err(
            "invalid data, expected an array for the provided schema with type=array".to_owned(),
        );
    };
    let Some(item_schema) = schema.items() else {
        return Err("invalid array type, expected Items with a non-empty Schema".to_owned());
    };
    let lt = schema.list_type();
    if !matches!(lt, "" | "map" | "set" | "atomic") {
        return Err(format!(
            "invalid x-kubernetes-list-type, expected 'map', 'set' or 'atomic' but got {lt}"
        ));
    }
    let embedded = item_schema.embedded_resource();
    let list: Vec<Boxed> = items
        .iter()
        .map(|i| to_cel(i, item_schema, embedded).unwrap_or_else(|_| Box::new(CelNull)))
        .collect();
    Ok(match lt {
        "set" => Box::new(UnstructuredSetList::new(items, list)),
        "map" => Box::new(UnstructuredMapList::new(
            items,
            list,
            schema.list_map_keys(),
        )),
        _ => match sum_zero_type(item_schema).filter(|_| items.is_empty()) {
            Some(zero) => Box::new(TypedEmptyList::new(zero)),
            None => Box::new(CelList::from(list)),
        },
    })
}

/// The element types whose zero upstream's `sum()` returns, other than `int`.
fn sum_zero_type(items: Node<'_>) -> Option<Zero> {
    if items.int_or_string() {
        return None;
    }
    match (items.type_(), items.format()) {
        ("number", _) => Some(Zero::Double),
        ("string", "duration") => Some(Zero::Duration),
        _ => None,
    }
}

/// What `sum()` of `list` is when its type decides (an empty list of doubles or
/// durations as decoded).
pub(crate) fn typed_sum_zero(list: &dyn Val) -> Option<Boxed> {
    list.downcast_ref::<TypedEmptyList>()
        .map(TypedEmptyList::zero)
}

fn string(v: &Json, schema: Node<'_>) -> Result<Boxed, String> {
    let Json::String(s) = v else {
        return Err(format!(
            "invalid data, expected string, got {}",
            sprint_t(v)
        ));
    };
    match schema.format() {
        "duration" => match time::parse_duration(s) {
            Ok(d) => Ok(Box::new(CelDuration::from(chrono::Duration::nanoseconds(
                d.0,
            )))),
            Err(e) => Err(format!("Invalid duration {s}: {e}")),
        },
        "date" => Some(s)
            .filter(|s| s.len() == 10)
            .and_then(|s| timestamp(&format!("{s}T00:00:00Z")))
            .ok_or_else(|| format!("Invalid date formatted string {s}")),
        "date-time" => {
            timestamp(s).ok_or_else(|| format!("Invalid date-time formatted string {s}"))
        }
        "byte" => match base64::STD_ENCODING.decode_string(s) {
            Ok(b) => Ok(Box::new(CelBytes::from(b))),
            Err(e) => Err(format!("Invalid byte formatted string {s}: {e}")),
        },
        _ => Ok(string_val(s)),
    }
}

/// A timestamp keeping its offset, as Go's `time.Time` (and so `string()` of it) does.
fn timestamp(rfc3339: &str) -> Option<Boxed> {
    let t = time::parse_rfc3339(rfc3339)?;
    let dt = match chrono::DateTime::parse_from_rfc3339(rfc3339) {
        Ok(dt) => dt,
        Err(_) => chrono::DateTime::from_timestamp(t.seconds, u32::try_from(t.nanos).ok()?)?
            .fixed_offset(),
    };
    Some(Box::new(CelTimestamp::from(dt)))
}

/// A value under `x-kubernetes-preserve-unknown-fields` with no type: plain CEL data.
fn dyn_value(v: &Json) -> Boxed {
    match v {
        Json::Null => Box::new(CelNull),
        Json::Bool(b) => Box::new(CelBool::from(*b)),
        Json::Number(n) => match n.as_i64() {
            Some(i) => int_val(i),
            None => Box::new(CelDouble::from(n.as_f64().unwrap_or(0.0))),
        },
        Json::String(s) => string_val(s),
        Json::Array(a) => Box::new(CelList::from(a.iter().map(dyn_value).collect::<Vec<_>>())),
        Json::Object(m) => dyn_object(m),
    }
}

fn dyn_object(m: &JsonMap<String, Json>) -> Boxed {
    let map: HashMap<CelMapKey<'static>, Boxed> = m
        .iter()
        .map(|(k, v)| (CelMapKey::from(k.clone()), dyn_value(v)))
        .collect();
    Box::new(CelMap::from(map))
}

fn string_val(s: &str) -> Boxed {
    Box::new(CelString::from(s.to_owned()))
}

fn int_val(i: i64) -> Boxed {
    Box::new(CelInt::from(i))
}

/// A copy of `v` that borrows nothing, keeping the set and map lists in it.
pub(crate) fn owned(v: &dyn Val) -> Result<Box<dyn Val>, cel::ExecutionError> {
    if let Some(l) = v.downcast_ref::<UnstructuredSetList>() {
        return Ok(Box::new(l.clone()));
    }
    if let Some(l) = v.downcast_ref::<UnstructuredMapList>() {
        return Ok(Box::new(l.clone()));
    }
    if let Some(l) = v.downcast_ref::<CelList>() {
        let items = l.inner().iter().map(|i| owned(i.as_ref()));
        return Ok(Box::new(CelList::from(
            items.collect::<Result<Vec<_>, _>>()?,
        )));
    }
    if let Some(m) = v.downcast_ref::<CelMap>() {
        let entries = m
            .inner()
            .iter()
            .map(|(k, v)| Ok((k.clone().into_static(), owned(v.as_ref())?)));
        return Ok(Box::new(CelMap::from(
            entries.collect::<Result<HashMap<_, _>, cel::ExecutionError>>()?,
        )));
    }
    cel::Value::try_from(v)?.try_into()
}
