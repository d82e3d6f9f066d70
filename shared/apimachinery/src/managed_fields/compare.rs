//! structured-merge-diff's `TypedValue.Compare`: the paths an update added, modified and
//! removed, found by walking both objects along the type's schema as its merging walker
//! does.
//!
//! - A struct or a map (labels, data) is descended key by key; an associative list
//!   (`+listType=map`) item by item under `k:{keys}`, a set (`+listType=set`) under
//!   `v:value`. Anything else is a leaf: scalars, atomic lists and atomic structs
//!   (`+structType=atomic`), and a map or list empty or null on both sides.
//! - A leaf is added when only the new object has it, removed when only the old one
//!   does, modified when both have it with different values.
//! - A descended node is added or removed as a whole when one side lacks it; one both
//!   sides have is never modified itself, only its leaves.
//!
//! A key present with `null` is present: Go writes a zero time as `null`, and upstream
//! compares what Go writes.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::set::{FieldSet, field};
use crate::schema::{Kind, ListType, Message};

/// What an update did, path by path.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Comparison {
    pub added: FieldSet,
    pub modified: FieldSet,
    pub removed: FieldSet,
}

impl Comparison {
    /// `added ∪ modified`: what the writer now sets.
    pub fn changed(&self) -> FieldSet {
        self.added.union(&self.modified)
    }

    /// The comparison without the paths under `ignored` (structured-merge-diff's
    /// `FilterFields` with an exclude filter).
    pub fn without(self, ignored: &FieldSet) -> Comparison {
        Comparison {
            added: self.added.recursive_difference(ignored),
            modified: self.modified.recursive_difference(ignored),
            removed: self.removed.recursive_difference(ignored),
        }
    }
}

/// Compares `old` with `new`, both objects of type `msg`.
pub fn compare(old: &Value, new: &Value, msg: &'static Message) -> Comparison {
    let mut w = Walker::default();
    w.merge(Some(old), Some(new), Shape::Fields(msg));
    w.cmp
}

/// Every path of `obj`: what a writer owns after creating it from nothing.
pub fn paths(obj: &Value, msg: &'static Message) -> FieldSet {
    let mut w = Walker::default();
    w.merge(None, Some(obj), Shape::Fields(msg));
    w.cmp.added.without_root()
}

#[derive(Clone, Copy)]
pub(super) enum Shape {
    Fields(&'static Message),
    Map(&'static Kind),
    List(&'static Kind, ListType),
    Leaf,
}

pub(super) fn shape(kind: &'static Kind, list_type: Option<ListType>) -> Shape {
    match (kind, list_type) {
        (Kind::Message(m), _) if !m.atomic => Shape::Fields(m),
        (Kind::Map(inner), _) => Shape::Map(inner),
        // A deduced value's object is a map of deduced values; its list or scalar a leaf.
        (Kind::Deduced, _) => Shape::Map(&Kind::Deduced),
        (Kind::Array(inner), Some(lt @ (ListType::Map(_) | ListType::Set))) => {
            Shape::List(inner, lt)
        }
        _ => Shape::Leaf,
    }
}

#[derive(Default)]
struct Walker {
    path: Vec<String>,
    cmp: Comparison,
}

impl Walker {
    fn merge(&mut self, old: Option<&Value>, new: Option<&Value>, shape: Shape) {
        let descended = match shape {
            Shape::Fields(msg) => self.maps(old, new, |key| {
                msg.field(key)
                    .map_or(Shape::Leaf, |f| self::shape(&f.kind, f.list_type))
            }),
            Shape::Map(inner) => self.maps(old, new, |_| self::shape(inner, None)),
            Shape::List(inner, list_type) => self.lists(old, new, inner, list_type),
            Shape::Leaf => false,
        };
        if !descended {
            self.leaf(old, new);
        } else if old.is_none() {
            self.cmp.added.insert(&self.path);
        } else if new.is_none() {
            self.cmp.removed.insert(&self.path);
        }
    }

    fn leaf(&mut self, old: Option<&Value>, new: Option<&Value>) {
        match (old, new) {
            (None, Some(_)) => self.cmp.added.insert(&self.path),
            (Some(_), None) => self.cmp.removed.insert(&self.path),
            (Some(o), Some(n)) if o != n => self.cmp.modified.insert(&self.path),
            _ => {}
        }
    }

    /// Descends two maps key by key; false (a leaf) when both are empty or null.
    fn maps(
        &mut self,
        old: Option<&Value>,
        new: Option<&Value>,
        child: impl Fn(&str) -> Shape,
    ) -> bool {
        let (old, new) = (as_map(old), as_map(new));
        if old.is_none_or(Map::is_empty) && new.is_none_or(Map::is_empty) {
            return false;
        }
        let mut keys: Vec<&String> = new.iter().flat_map(|m| m.keys()).collect();
        keys.extend(old.iter().flat_map(|m| m.keys()));
        keys.sort();
        keys.dedup();
        for key in keys {
            self.path.push(field(key));
            let (o, n) = (old.and_then(|m| m.get(key)), new.and_then(|m| m.get(key)));
            self.merge(o, n, child(key));
            self.path.pop();
        }
        true
    }

    /// Descends two lists item by item, pairing items by their path element.
    fn lists<'a>(
        &mut self,
        old: Option<&'a Value>,
        new: Option<&'a Value>,
        item: &'static Kind,
        list_type: ListType,
    ) -> bool {
        let (old, new) = (as_list(old), as_list(new));
        if old.is_none_or(Vec::is_empty) && new.is_none_or(Vec::is_empty) {
            return false;
        }
        let index = |items: Option<&'a Vec<Value>>| -> BTreeMap<String, &'a Value> {
            items
                .into_iter()
                .flatten()
                .map(|v| (element(v, list_type), v))
                .collect()
        };
        let (old, new) = (index(old), index(new));
        let mut elements: Vec<&String> = new.keys().chain(old.keys()).collect();
        elements.sort();
        elements.dedup();
        for pe in elements {
            self.path.push(pe.clone());
            self.merge(
                old.get(pe).copied(),
                new.get(pe).copied(),
                shape(item, None),
            );
            self.path.pop();
        }
        true
    }
}

pub(super) fn as_map(v: Option<&Value>) -> Option<&Map<String, Value>> {
    v.and_then(Value::as_object)
}

pub(super) fn as_list(v: Option<&Value>) -> Option<&Vec<Value>> {
    v.and_then(Value::as_array)
}

/// The path element of a list item: `k:{"name":"x"}` in an associative list (its key
/// fields, sorted, as JSON), `v:"x"` in a set.
pub(super) fn element(item: &Value, list_type: ListType) -> String {
    match list_type {
        ListType::Map(keys) => {
            let key: Map<String, Value> = keys
                .iter()
                .filter_map(|k| item.get(*k).map(|v| ((*k).to_owned(), v.clone())))
                .collect();
            format!("k:{}", Value::Object(key))
        }
        _ => format!("v:{item}"),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::Field;

    static REF: Message = Message {
        name: "test.Ref",
        description: "",
        fields: &[
            Field::new("name", 1, Kind::String),
            Field::new("uid", 2, Kind::String),
        ],
        required: &[],
        atomic: true,
    };
    static ITEM: Message = Message {
        name: "test.Item",
        description: "",
        fields: &[
            Field::new("name", 1, Kind::String),
            Field::new("value", 2, Kind::String),
        ],
        required: &[],
        atomic: false,
    };
    static OBJ: Message = Message {
        name: "test.Obj",
        description: "",
        fields: &[
            Field::new("data", 1, Kind::Map(&Kind::String)),
            Field::new("ref", 2, Kind::Message(&REF)),
            Field::new("items", 3, Kind::Array(&Kind::Message(&ITEM)))
                .list_type(ListType::Map(&["name"])),
            Field::new("tags", 4, Kind::Array(&Kind::String)).list_type(ListType::Set),
            Field::new("args", 5, Kind::Array(&Kind::String)).list_type(ListType::Atomic),
            Field::new("time", 6, Kind::Time),
            Field::new("empty", 7, Kind::Message(&ITEM)),
        ],
        required: &[],
        atomic: false,
    };

    #[test]
    fn created_objects_own_every_path() {
        let obj = json!({"data": {"a": "1"}, "ref": {"name": "r"}, "items": [{"name": "x", "value": "v"}],
            "tags": ["t"], "args": ["a"], "time": null, "empty": {}});
        assert_eq!(
            paths(&obj, &OBJ).to_json(),
            json!({
                "f:args": {}, "f:data": {".": {}, "f:a": {}}, "f:empty": {},
                "f:items": {".": {}, "k:{\"name\":\"x\"}": {".": {}, "f:name": {}, "f:value": {}}},
                "f:ref": {}, "f:tags": {".": {}, "v:\"t\"": {}}, "f:time": {}})
        );
    }

    #[test]
    fn updates_are_compared_leaf_by_leaf() {
        let old = json!({"data": {"a": "1", "b": "2"}, "ref": {"name": "r"},
            "items": [{"name": "x", "value": "v"}, {"name": "y"}], "tags": ["t"]});
        let new = json!({"data": {"a": "1", "b": "3", "c": "4"}, "ref": {"name": "r", "uid": "u"},
            "items": [{"name": "x", "value": "w"}], "tags": ["t", "u"]});
        let cmp = compare(&old, &new, &OBJ);
        assert_eq!(
            cmp.added.to_json(),
            json!({"f:data": {"f:c": {}}, "f:tags": {"v:\"u\"": {}}})
        );
        assert_eq!(
            cmp.modified.to_json(),
            json!({"f:data": {"f:b": {}}, "f:items": {"k:{\"name\":\"x\"}": {"f:value": {}}}, "f:ref": {}})
        );
        assert_eq!(
            cmp.removed.to_json(),
            json!({"f:items": {"k:{\"name\":\"y\"}": {".": {}, "f:name": {}}}})
        );
        assert_eq!(compare(&old, &old, &OBJ), Comparison::default());
    }
}
