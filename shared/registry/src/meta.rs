//! Reading and writing `metadata` of JSON objects, and upstream's system fields.

use std::collections::BTreeMap;
use std::time::SystemTime;

use kas_apimachinery::golang::time::{Time, format_rfc3339};
use serde_json::{Map, Value};

pub fn metadata(obj: &Value) -> Option<&Map<String, Value>> {
    obj.get("metadata").and_then(Value::as_object)
}

/// `metadata`, created when missing or not an object.
pub fn metadata_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj.is_object() {
        *obj = Value::Object(Map::new());
    }
    let map = obj.as_object_mut().expect("just made an object");
    let meta = map
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    meta.as_object_mut().expect("just made an object")
}

pub fn str_field<'a>(obj: &'a Value, field: &str) -> &'a str {
    metadata(obj)
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
}

pub fn name(obj: &Value) -> &str {
    str_field(obj, "name")
}

pub fn namespace(obj: &Value) -> &str {
    str_field(obj, "namespace")
}

pub fn labels(obj: &Value) -> BTreeMap<String, String> {
    string_map(obj, "labels")
}

/// A `map[string]string` of the metadata (`labels`, `annotations`); values that are not
/// strings are left out.
pub fn string_map(obj: &Value, field: &str) -> BTreeMap<String, String> {
    metadata(obj)
        .and_then(|m| m.get(field))
        .and_then(Value::as_object)
        .map(|l| {
            l.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
                .collect()
        })
        .unwrap_or_default()
}

/// A new object's generation (`PrepareForCreate` of every kind that counts them).
pub fn first_generation(obj: &mut Value) {
    metadata_mut(obj).insert("generation".into(), Value::from(1));
}

/// An update's generation (`PrepareForUpdate`): the stored one, one more when the update
/// `changed` what the kind counts (its spec, for most).
pub fn next_generation(new: &mut Value, old: &Value, changed: bool) {
    let generation = old
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let next = if changed { generation + 1 } else { generation };
    metadata_mut(new).insert("generation".into(), Value::from(next));
}

/// Keeps the stored `status` in an update of the main resource, which may not change it
/// (the `PrepareForUpdate` of every strategy with a status subresource).
pub fn keep_status(new: &mut Value, old: &Value) {
    if let Some(map) = new.as_object_mut() {
        match old.get("status") {
            Some(s) => map.insert("status".into(), s.clone()),
            None => map.remove("status"),
        };
    }
}

/// Upstream `metav1.ResetObjectMetaForStatus`: a status write keeps the stored
/// deletionTimestamp, generation, labels, annotations, finalizers and owner references.
pub fn reset_object_meta_for_status(new: &mut Value, old: &Value) {
    let old_meta = metadata(old).cloned().unwrap_or_default();
    let meta = metadata_mut(new);
    for key in [
        "deletionTimestamp",
        "generation",
        "selfLink",
        "labels",
        "annotations",
        "finalizers",
        "ownerReferences",
    ] {
        match old_meta.get(key) {
            Some(v) => meta.insert(key.to_owned(), v.clone()),
            None => meta.remove(key),
        };
    }
}

/// A status write that changes no metadata (`newObj.ObjectMeta = oldObj.ObjectMeta`): the
/// stored metadata with the new managed fields, which track the write.
pub fn keep_object_meta(new: &mut Value, old: &Value) {
    let mut meta = metadata(old).cloned().unwrap_or_default();
    match metadata(new).and_then(|m| m.get("managedFields")) {
        Some(fields) => meta.insert("managedFields".into(), fields.clone()),
        None => meta.remove("managedFields"),
    };
    if let Some(map) = new.as_object_mut() {
        map.insert("metadata".into(), Value::Object(meta));
    }
}

/// Drops `kind` and `apiVersion` before an object is stored: stored objects carry no type,
/// and answers splice it in front of their bytes.
pub fn strip_type_meta(obj: &mut Value) {
    if let Some(map) = obj.as_object_mut() {
        map.remove("kind");
        map.remove("apiVersion");
    }
}

/// `metadata.name` and `metadata.namespace` (upstream's `DefaultClusterScopedAttr` /
/// `DefaultNamespaceScopedAttr`).
pub fn default_field_set(obj: &Value) -> BTreeMap<String, String> {
    let mut set = BTreeMap::new();
    set.insert("metadata.name".to_owned(), name(obj).to_owned());
    set.insert("metadata.namespace".to_owned(), namespace(obj).to_owned());
    set
}

/// RFC 3339 with second precision, UTC (`metav1.Time`'s wire format).
pub fn rfc3339(t: SystemTime) -> String {
    format_rfc3339(Time::from_system_time(t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn rfc3339_dates() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(
            rfc3339(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "2000-02-29T00:00:00Z"
        );
        assert_eq!(
            rfc3339(UNIX_EPOCH + Duration::from_secs(1_795_000_000)),
            "2026-11-18T11:06:40Z"
        );
    }

    #[test]
    fn metadata_is_created_on_demand() {
        let mut obj = serde_json::json!({"kind": "ConfigMap"});
        metadata_mut(&mut obj).insert("name".into(), "a".into());
        assert_eq!(name(&obj), "a");
        assert_eq!(namespace(&obj), "");
        let mut not_object = serde_json::json!(3);
        metadata_mut(&mut not_object);
        assert!(not_object["metadata"].is_object());
    }
}
