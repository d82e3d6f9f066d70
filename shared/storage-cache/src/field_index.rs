//! Upstream's watch cache `Indexers` (pods index `spec.nodeName`): the keys of the cached
//! objects by their value of one selectable field, so that a list whose field selector
//! pins that field reads the objects of that value only (a kubelet's list of its pods
//! reads its node's, not every pod of the cluster). Values are read as a field selector
//! reads them: a missing field is "". Pure data.

use std::collections::{BTreeSet, HashMap};

use kas_apimachinery::labels::Labels;
use kas_storage::Attrs;

pub(crate) struct FieldIndex {
    field: Box<str>,
    /// Keys by value, each value's in key order (a list answers in key order).
    keys: HashMap<Box<str>, BTreeSet<Box<str>>>,
}

impl FieldIndex {
    pub(crate) fn new(field: &str) -> Self {
        FieldIndex {
            field: field.into(),
            keys: HashMap::new(),
        }
    }

    pub(crate) fn field(&self) -> &str {
        &self.field
    }

    fn value<'a>(&self, attrs: &'a Attrs) -> &'a str {
        attrs.fields.get(&self.field).unwrap_or("")
    }

    /// The object at `key` changed from `old` to `new` (either `None`: it did not exist,
    /// or no longer does).
    pub(crate) fn update(&mut self, key: &str, old: Option<&Attrs>, new: Option<&Attrs>) {
        let old = old.map(|a| self.value(a));
        let new = new.map(|a| self.value(a));
        if old == new {
            return;
        }
        if let Some(old) = old
            && let Some(keys) = self.keys.get_mut(old)
        {
            keys.remove(key);
            if keys.is_empty() {
                self.keys.remove(old);
            }
        }
        if let Some(new) = new {
            self.keys.entry(new.into()).or_default().insert(key.into());
        }
    }

    pub(crate) fn clear(&mut self) {
        self.keys.clear();
    }

    /// The keys filed under `value`, in order, from `start` on.
    pub(crate) fn keys_from<'a>(
        &'a self,
        value: &str,
        start: &str,
    ) -> impl Iterator<Item = &'a str> + 'a {
        let start: Box<str> = start.into();
        self.keys
            .get(value)
            .into_iter()
            .flat_map(move |keys| keys.range(start.clone()..))
            .map(|k| &**k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn on(node: &str) -> Attrs {
        Attrs {
            fields: BTreeMap::from([("spec.nodeName".to_owned(), node.to_owned())]).into(),
            ..Default::default()
        }
    }

    fn keys(index: &FieldIndex, value: &str, start: &str) -> Vec<String> {
        index.keys_from(value, start).map(str::to_owned).collect()
    }

    #[test]
    fn keys_follow_their_objects_values() {
        let mut index = FieldIndex::new("spec.nodeName");
        index.update("/pods/ns/b", None, Some(&on("n1")));
        index.update("/pods/ns/a", None, Some(&on("n1")));
        index.update("/pods/other/c", None, Some(&on("n1")));
        index.update("/pods/ns/u", None, Some(&Attrs::default()));
        assert_eq!(
            keys(&index, "n1", "/pods/"),
            ["/pods/ns/a", "/pods/ns/b", "/pods/other/c"]
        );
        assert_eq!(keys(&index, "n1", "/pods/other/"), ["/pods/other/c"]);
        assert_eq!(
            keys(&index, "", "/pods/"),
            ["/pods/ns/u"],
            "missing is \"\""
        );
        // Bound, moved, deleted.
        index.update("/pods/ns/u", Some(&Attrs::default()), Some(&on("n2")));
        index.update("/pods/ns/a", Some(&on("n1")), Some(&on("n2")));
        index.update("/pods/ns/b", Some(&on("n1")), None);
        assert_eq!(keys(&index, "n2", "/pods/"), ["/pods/ns/a", "/pods/ns/u"]);
        assert_eq!(keys(&index, "n1", "/pods/"), ["/pods/other/c"]);
        assert!(keys(&index, "", "/pods/").is_empty());
        assert!(!index.keys.contains_key(""), "empty values are dropped");
        index.clear();
        assert!(keys(&index, "n2", "/").is_empty());
    }
}
