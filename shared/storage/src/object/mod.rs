//! Stored objects and the versioner rules (upstream's `APIObjectVersioner`): the
//! resourceVersion is never written to storage; every read sets it from the revision.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;

use crate::error::{Error, Result};

mod selectable;

/// One object as storage returns it: its bytes, never its decoded document, so that what
/// the watch cache holds is little more than the JSON itself. Immutable and shared: readers
/// clone the [`ObjectRef`] and reuse `json` instead of serializing again; the few that need
/// the document decode it with [`Object::value`].
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    /// The key as the caller gave it (without the store's path prefix).
    pub key: String,
    /// The etcd mod revision this state was written at (or, on a DELETED event or a delete
    /// result, the revision of the deletion).
    pub resource_version: u64,
    /// The JSON document, with `metadata.resourceVersion` set to `resource_version`.
    pub json: Bytes,
}

/// A shared [`Object`].
pub type ObjectRef = Arc<Object>;

impl Object {
    /// Sets `metadata.resourceVersion` to `resource_version` (a decimal string) and
    /// serializes the result. Fails if `value` is not a JSON object.
    pub fn new(key: impl Into<String>, resource_version: u64, mut value: Value) -> Result<Self> {
        let key = key.into();
        set_resource_version(&key, &mut value, resource_version)?;
        Object::encode(key, resource_version, &value)
    }

    /// An object that is not stored (a computed resource's, such as a component status):
    /// no resourceVersion, and revision 0, which no stored object has.
    pub fn unversioned(key: impl Into<String>, value: &Value) -> Result<Self> {
        Object::encode(key.into(), 0, value)
    }

    /// Like [`Object::new`], and hands back the stamped document for callers that go on
    /// to read it (filters, the watch cache's attributes).
    pub fn new_with_value(
        key: impl Into<String>,
        resource_version: u64,
        mut value: Value,
    ) -> Result<(Self, Value)> {
        let key = key.into();
        set_resource_version(&key, &mut value, resource_version)?;
        let obj = Object::encode(key, resource_version, &value)?;
        Ok((obj, value))
    }

    fn encode(key: String, resource_version: u64, value: &Value) -> Result<Self> {
        let json = serde_json::to_vec(value).map_err(|e| invalid(&key, e.to_string()))?;
        Ok(Object {
            key,
            resource_version,
            json: exact(json),
        })
    }

    /// Decodes bytes read from storage and stamps them with `resource_version`.
    pub fn from_stored(key: impl Into<String>, resource_version: u64, data: &[u8]) -> Result<Self> {
        Object::decode(key, resource_version, data).map(|(obj, _)| obj)
    }

    /// [`Object::from_stored`], handing back the stamped document too.
    pub fn decode(
        key: impl Into<String>,
        resource_version: u64,
        data: &[u8],
    ) -> Result<(Self, Value)> {
        let key = key.into();
        let value: Value = serde_json::from_slice(data)
            .map_err(|e| invalid(&key, format!("decoding stored object: {e}")))?;
        Object::new_with_value(key, resource_version, value)
    }

    /// The document, decoded from `json`.
    pub fn value(&self) -> Result<Value> {
        serde_json::from_slice(&self.json).map_err(|e| invalid(&self.key, e.to_string()))
    }

    /// The document without `metadata.managedFields`: what selectors read, decoded
    /// with far fewer allocations.
    pub fn selectable_value(&self) -> Result<Value> {
        selectable::without_managed_fields(&self.json)
            .map_err(|e| invalid(&self.key, e.to_string()))
    }

    /// The same state stamped with another revision (a deletion's).
    pub fn with_resource_version(&self, resource_version: u64) -> Result<Self> {
        Object::new(self.key.clone(), resource_version, self.value()?)
    }
}

/// `json` in an allocation of its own size, for bytes kept long (a cached object, a served
/// document). The vector grew by doubling, so it would keep up to twice its size;
/// `shrink_to_fit` does not help, as mimalloc keeps a block that shrinks by less than half
/// where it is. A copy gets a block of the JSON's own size class.
pub fn exact(json: Vec<u8>) -> Bytes {
    if json.capacity() - json.len() > json.len() / 8 {
        Bytes::copy_from_slice(&json)
    } else {
        Bytes::from(json)
    }
}

/// The bytes to write to storage: `value` without `metadata.resourceVersion`
/// (upstream's `PrepareObjectForStorage`). The caller's value is left as it was.
pub fn encode_for_storage(key: &str, value: &Value) -> Result<Vec<u8>> {
    let Value::Object(map) = value else {
        return Err(invalid(key, "object is not a JSON object".into()));
    };
    let has_rv = map
        .get("metadata")
        .and_then(Value::as_object)
        .is_some_and(|m| m.contains_key("resourceVersion"));
    let result = if has_rv {
        let mut stripped = value.clone();
        if let Some(Value::Object(meta)) = stripped.get_mut("metadata") {
            meta.remove("resourceVersion");
        }
        serde_json::to_vec(&stripped)
    } else {
        serde_json::to_vec(value)
    };
    result.map_err(|e| invalid(key, e.to_string()))
}

fn set_resource_version(key: &str, value: &mut Value, rv: u64) -> Result<()> {
    let Value::Object(map) = value else {
        return Err(invalid(key, "object is not a JSON object".into()));
    };
    let meta = map
        .entry("metadata")
        .or_insert_with(|| Value::Object(Default::default()));
    let Value::Object(meta) = meta else {
        return Err(invalid(key, "metadata is not a JSON object".into()));
    };
    meta.insert("resourceVersion".into(), Value::String(rv.to_string()));
    Ok(())
}

fn invalid(key: &str, message: String) -> Error {
    Error::InvalidObj {
        key: key.to_string(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_stamp_the_revision_and_writes_strip_it() {
        let obj = Object::new("/pods/a", 7, json!({"metadata": {"name": "a"}})).unwrap();
        let value = obj.value().unwrap();
        assert_eq!(value["metadata"]["resourceVersion"], "7");
        let stored = encode_for_storage("/pods/a", &value).unwrap();
        assert_eq!(
            serde_json::from_slice::<Value>(&stored).unwrap(),
            json!({"metadata": {"name": "a"}})
        );
        let back = Object::from_stored("/pods/a", 9, &stored).unwrap();
        assert_eq!(back.value().unwrap()["metadata"]["resourceVersion"], "9");
        let (restamped, value) = Object::decode("/pods/a", 10, &stored).unwrap();
        assert_eq!(value, restamped.value().unwrap());
    }

    #[test]
    fn non_objects_are_invalid() {
        assert!(matches!(
            Object::new("/k", 1, json!([1])),
            Err(Error::InvalidObj { .. })
        ));
        assert!(matches!(
            encode_for_storage("/k", &json!("s")),
            Err(Error::InvalidObj { .. })
        ));
        let obj = Object::new("/k", 1, json!({})).unwrap();
        assert_eq!(
            obj.value().unwrap(),
            json!({"metadata": {"resourceVersion": "1"}})
        );
    }
}
