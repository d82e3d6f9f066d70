//! An object's document without `metadata.managedFields`, for the readers that only select
//! on it (the watch cache's labels and field sets). A field manager's record is most of
//! the small allocations of a decoded object and none of it is selectable; skipping it
//! makes the decode cheaper and, because the cache decodes every object it fills with
//! while keeping small pieces of each, leaves far less allocator fragmentation behind.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};

/// The document in `json` without `metadata.managedFields`.
pub fn without_managed_fields(json: &[u8]) -> serde_json::Result<Value> {
    let mut de = serde_json::Deserializer::from_slice(json);
    let value = Skipping::Object.deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// Where in the document a value is.
#[derive(Clone, Copy)]
enum Skipping {
    /// The object: its `metadata` is read as [`Skipping::Metadata`].
    Object,
    /// The metadata: its `managedFields` is skipped.
    Metadata,
}

impl<'de> DeserializeSeed<'de> for Skipping {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Skipping {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            match (self, key.as_str()) {
                (Skipping::Object, "metadata") => {
                    let meta = map.next_value_seed(Skipping::Metadata)?;
                    out.insert(key, meta);
                }
                (Skipping::Metadata, "managedFields") => {
                    map.next_value::<IgnoredAny>()?;
                }
                _ => {
                    let v = map.next_value::<Value>()?;
                    out.insert(key, v);
                }
            }
        }
        Ok(Value::Object(out))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn managed_fields_are_left_out_and_the_rest_is_kept() {
        let doc = json!({"metadata": {"name": "a", "labels": {"x": "1"},
            "managedFields": [{"manager": "m", "fieldsV1": {"f:data": {}}}]},
            "data": {"managedFields": "kept"}, "status": {"phase": "Active"}});
        let bytes = serde_json::to_vec(&doc).unwrap();
        let mut expected = doc.clone();
        expected["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("managedFields");
        assert_eq!(without_managed_fields(&bytes).unwrap(), expected);
        assert_eq!(
            without_managed_fields(br#"{"metadata":null}"#).unwrap(),
            json!({"metadata": null})
        );
        assert!(without_managed_fields(b"[1]").is_err());
        assert!(without_managed_fields(br#"{"a":1} x"#).is_err());
    }
}
