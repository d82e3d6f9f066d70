//! An object's selectable attributes (upstream's `GetAttrs` result: its labels and the
//! fields a field selector may name). The watch cache keeps these beside each object's
//! bytes instead of the decoded document, so selectors run without decoding anything.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use kas_apimachinery::labels::Labels;
use serde_json::Value;

/// A small sorted string map, compact enough to keep per cached object.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Set(Box<[(Box<str>, Box<str>)]>);

impl Set {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (&**k, &**v))
    }
}

impl Labels for Set {
    fn get(&self, key: &str) -> Option<&str> {
        self.0
            .binary_search_by(|(k, _)| (**k).cmp(key))
            .ok()
            .map(|i| &*self.0[i].1)
    }
}

impl From<BTreeMap<String, String>> for Set {
    fn from(map: BTreeMap<String, String>) -> Self {
        Set(map
            .into_iter()
            .map(|(k, v)| (k.into_boxed_str(), v.into_boxed_str()))
            .collect())
    }
}

impl fmt::Debug for Set {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// Labels and selectable fields of one object.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Attrs {
    pub labels: Set,
    pub fields: Set,
}

/// Computes an object's [`Attrs`]; one per resource, from its strategy.
pub type AttrsFunc = Arc<dyn Fn(&Value) -> Attrs + Send + Sync>;

/// `metadata.labels` of a JSON object; values that are not strings are left out.
pub fn object_labels(obj: &Value) -> Set {
    let Some(labels) = obj.pointer("/metadata/labels").and_then(Value::as_object) else {
        return Set::default();
    };
    let mut pairs: Vec<(Box<str>, Box<str>)> = labels
        .iter()
        .filter_map(|(k, v)| Some((k.as_str().into(), v.as_str()?.into())))
        .collect();
    pairs.sort();
    Set(pairs.into_boxed_slice())
}

/// The default attributes: labels, `metadata.name` and, when set, `metadata.namespace`.
pub fn default_attrs(obj: &Value) -> Attrs {
    let mut fields = BTreeMap::new();
    let meta = |f: &str| {
        obj.pointer(&format!("/metadata/{f}"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    fields.insert("metadata.name".to_owned(), meta("name").unwrap_or_default());
    if let Some(ns) = meta("namespace") {
        fields.insert("metadata.namespace".to_owned(), ns);
    }
    Attrs {
        labels: object_labels(obj),
        fields: fields.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sets_look_up_sorted_keys() {
        let obj = json!({"metadata": {"name": "a", "namespace": "ns",
            "labels": {"z": "1", "a": "2", "bad": 3}}});
        let attrs = default_attrs(&obj);
        assert_eq!(attrs.labels.get("a"), Some("2"));
        assert_eq!(attrs.labels.get("z"), Some("1"));
        assert_eq!(attrs.labels.get("bad"), None);
        assert_eq!(attrs.fields.get("metadata.name"), Some("a"));
        assert_eq!(attrs.fields.get("metadata.namespace"), Some("ns"));
        let cluster = default_attrs(&json!({"metadata": {"name": "n"}}));
        assert_eq!(cluster.fields.get("metadata.namespace"), None);
        assert!(cluster.labels.is_empty());
    }
}
