//! TypeMeta and ObjectMeta of custom resources and of the resources embedded in them
//! (`x-kubernetes-embedded-resource`), after upstream's `pkg/apiserver/schema/objectmeta`:
//! metadata decoded into `metav1.ObjectMeta` and written back ([`get_object_meta`],
//! [`coerce`]), and checked ([`validate_embedded_resources`]).

mod coerce;
mod validate;

use kas_api::meta::v1::OBJECT_META;
use kas_apimachinery::golang::fmt::sprint_t;
use kas_apimachinery::golang::time::{format_rfc3339, parse_rfc3339};
use kas_apimachinery::protobuf;
use kas_apimachinery::schema::{Kind, go_encoded, prune};
use kas_apimachinery::validation::field::Path;
use serde_json::{Map, Value};

pub use coerce::coerce;
pub use validate::validate_embedded_resources;

/// Upstream `ObjectMetaOptions`.
#[derive(Clone, Copy, Debug, Default)]
pub struct ObjectMetaOptions {
    /// Drop the fields of the wrong type instead of failing.
    pub drop_malformed_fields: bool,
    /// Report unknown fields as `<parent>.metadata.<field>`.
    pub return_unknown_field_paths: bool,
}

/// Go's `json.Unmarshal` of `metadata` into a `metav1.ObjectMeta`: `Err` is Go's error text
/// for a value of the wrong type.
fn decode_error(metadata: &Value) -> Option<String> {
    protobuf::encode(metadata, &OBJECT_META, &mut Vec::new())
        .err()
        .map(|e| e.to_string())
}

/// The paths of the keys of `v` that `kind` does not know, as sigs.k8s.io/json's strict
/// decoding names them (`ownerReferences[0].foo`).
fn unknown_fields(v: &Value, kind: &Kind, prefix: &str, out: &mut Vec<String>) {
    let join = |k: &str| {
        if prefix.is_empty() {
            k.to_owned()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match (kind, v) {
        (Kind::Message(m), Value::Object(map)) => {
            for (k, v) in map {
                match m.field(k) {
                    Some(f) => unknown_fields(v, &f.kind, &join(k), out),
                    None => out.push(join(k)),
                }
            }
        }
        (Kind::Array(inner), Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                unknown_fields(item, inner, &format!("{prefix}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// Upstream `GetObjectMetaWithOptions` then `SetObjectMeta`, in place: `obj.metadata`
/// becomes what Go writes for the `ObjectMeta` decoded from it (unknown fields dropped,
/// empty ones left out), without a zero `creationTimestamp`. Returns whether there was
/// metadata and the unknown fields' paths under `parent` (sorted); `Err` is Go's decoding
/// error (with `drop_malformed_fields`, only for metadata that is no object).
pub fn get_object_meta(
    obj: &mut Map<String, Value>,
    parent: &Path,
    opts: ObjectMetaOptions,
) -> Result<(bool, Vec<String>), String> {
    let Some(metadata) = obj.get_mut("metadata") else {
        return Ok((false, Vec::new()));
    };
    if metadata.is_null() {
        *metadata = Value::Object(Map::new());
    }
    if let Some(err) = decode_error(metadata) {
        if !opts.drop_malformed_fields {
            return Err(err);
        }
        let Value::Object(map) = metadata else {
            return Err(format!(
                "invalid metadata: expected object, got {}",
                sprint_t(metadata)
            ));
        };
        // Field by field: a field that does not decode is dropped whole.
        map.retain(|k, v| {
            let mut single = Map::new();
            single.insert(k.clone(), v.clone());
            decode_error(&Value::Object(single)).is_none()
        });
    }
    let mut unknown = Vec::new();
    if opts.return_unknown_field_paths {
        let prefix = parent.child("metadata").to_string();
        let mut fields = Vec::new();
        unknown_fields(metadata, &Kind::Message(&OBJECT_META), "", &mut fields);
        unknown = fields
            .into_iter()
            .map(|f| format!("{prefix}.{f}"))
            .collect();
        unknown.sort();
    }
    let kind = Kind::Message(&OBJECT_META);
    prune(metadata, &kind);
    go_encoded(metadata, &kind);
    if let Value::Object(map) = metadata {
        // metav1.Time writes UTC seconds.
        for k in ["creationTimestamp", "deletionTimestamp"] {
            if let Some(t) = map.get(k).and_then(Value::as_str).and_then(parse_rfc3339) {
                map.insert(k.to_owned(), Value::String(format_rfc3339(t)));
            }
        }
        if map.get("creationTimestamp").is_some_and(Value::is_null) {
            map.remove("creationTimestamp");
        }
    }
    Ok((true, unknown))
}

#[cfg(test)]
mod tests;
