//! A set of field paths (structured-merge-diff's `fieldpath.Set`), kept as a tree whose
//! edges are serialized path elements: `f:<field>`, `k:<key fields as JSON>` for an item
//! of an associative list, `v:<value as JSON>` for an item of a set. A node is a member
//! when its own path is in the set; its children are the longer paths.
//!
//! The JSON form is `FieldsV1`: each node an object of its children, with `".": {}` when
//! the node is itself a member and has children; a member without children is `{}`.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSet {
    pub(super) member: bool,
    pub(super) children: BTreeMap<String, FieldSet>,
}

impl FieldSet {
    pub fn is_empty(&self) -> bool {
        !self.member && self.children.is_empty()
    }

    /// The set without the empty path (the object itself).
    pub fn without_root(mut self) -> FieldSet {
        self.member = false;
        self
    }

    /// The node under the path element `pe`.
    pub fn child(&self, pe: &str) -> Option<&FieldSet> {
        self.children.get(pe)
    }

    /// Whether the node's own path is in the set.
    pub fn is_member(&self) -> bool {
        self.member
    }

    /// Every path of the set in structured-merge-diff's order (`Set.Iterate`): at each
    /// node its member children first, then the deeper paths child by child.
    pub fn paths(&self) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        self.collect(&mut Vec::new(), &mut out);
        out
    }

    fn collect(&self, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        for (k, c) in &self.children {
            if c.member {
                let mut p = prefix.clone();
                p.push(k.clone());
                out.push(p);
            }
        }
        for (k, c) in &self.children {
            if !c.children.is_empty() {
                prefix.push(k.clone());
                c.collect(prefix, out);
                prefix.pop();
            }
        }
    }

    /// Adds `path`.
    pub fn insert(&mut self, path: &[String]) {
        match path.split_first() {
            None => self.member = true,
            Some((first, rest)) => self.children.entry(first.clone()).or_default().insert(rest),
        }
    }

    /// Whether `path` is in the set.
    pub fn has(&self, path: &[&str]) -> bool {
        match path.split_first() {
            None => self.member,
            Some((first, rest)) => self.children.get(*first).is_some_and(|c| c.has(rest)),
        }
    }

    pub fn union(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.member |= other.member;
        for (k, v) in &other.children {
            let merged = match out.children.get(k) {
                Some(mine) => mine.union(v),
                None => v.clone(),
            };
            out.children.insert(k.clone(), merged);
        }
        out
    }

    /// The paths of `self` that are not in `other`.
    pub fn difference(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet {
            member: self.member && !other.member,
            children: BTreeMap::new(),
        };
        for (k, v) in &self.children {
            let child = match other.children.get(k) {
                Some(theirs) => v.difference(theirs),
                None => v.clone(),
            };
            if !child.is_empty() {
                out.children.insert(k.clone(), child);
            }
        }
        out
    }

    pub fn intersection(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet {
            member: self.member && other.member,
            children: BTreeMap::new(),
        };
        for (k, v) in &self.children {
            if let Some(theirs) = other.children.get(k) {
                let child = v.intersection(theirs);
                if !child.is_empty() {
                    out.children.insert(k.clone(), child);
                }
            }
        }
        out
    }

    /// The paths of `self` that neither are in `other` nor lie under one of its paths.
    pub fn recursive_difference(&self, other: &FieldSet) -> FieldSet {
        if other.member {
            return FieldSet::default();
        }
        let mut out = FieldSet {
            member: self.member,
            children: BTreeMap::new(),
        };
        for (k, v) in &self.children {
            let child = match other.children.get(k) {
                Some(theirs) => v.recursive_difference(theirs),
                None => v.clone(),
            };
            if !child.is_empty() {
                out.children.insert(k.clone(), child);
            }
        }
        out
    }

    /// The `FieldsV1` JSON of the set.
    pub fn to_json(&self) -> Value {
        let mut map = Map::new();
        if self.member && !self.children.is_empty() {
            map.insert(".".into(), Value::Object(Map::new()));
        }
        for (k, v) in &self.children {
            map.insert(k.clone(), v.to_json());
        }
        Value::Object(map)
    }

    /// Reads `FieldsV1` JSON; `None` when it is not a tree of objects.
    pub fn from_json(v: &Value) -> Option<FieldSet> {
        let mut root = FieldSet::from_node(v)?;
        // The root is the object itself, never a member.
        root.member = false;
        Some(root)
    }

    fn from_node(v: &Value) -> Option<FieldSet> {
        let map = v.as_object()?;
        let mut set = FieldSet {
            member: map.is_empty(),
            children: BTreeMap::new(),
        };
        for (k, child) in map {
            if k == "." {
                set.member = true;
                continue;
            }
            set.children.insert(k.clone(), FieldSet::from_node(child)?);
        }
        Some(set)
    }
}

/// `f:<name>`.
pub fn field(name: &str) -> String {
    format!("f:{name}")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn set(paths: &[&[&str]]) -> FieldSet {
        let mut s = FieldSet::default();
        for p in paths {
            s.insert(&p.iter().map(|e| e.to_string()).collect::<Vec<_>>());
        }
        s
    }

    #[test]
    fn fields_v1_marks_members_that_have_children_with_a_dot() {
        let s = set(&[
            &["f:data"],
            &["f:data", "f:a"],
            &["f:metadata", "f:labels", "f:x"],
        ]);
        let json = json!({"f:data": {".": {}, "f:a": {}}, "f:metadata": {"f:labels": {"f:x": {}}}});
        assert_eq!(s.to_json(), json);
        assert_eq!(FieldSet::from_json(&json), Some(s));
        assert_eq!(FieldSet::from_json(&json!({"f:a": 1})), None);
    }

    #[test]
    fn set_operations() {
        let a = set(&[&["f:a"], &["f:a", "f:b"], &["f:c"]]);
        let b = set(&[&["f:a", "f:b"], &["f:d"]]);
        assert_eq!(
            a.union(&b),
            set(&[&["f:a"], &["f:a", "f:b"], &["f:c"], &["f:d"]])
        );
        assert_eq!(a.difference(&b), set(&[&["f:a"], &["f:c"]]));
        assert_eq!(a.intersection(&b), set(&[&["f:a", "f:b"]]));
        assert_eq!(a.recursive_difference(&set(&[&["f:a"]])), set(&[&["f:c"]]));
        assert_eq!(
            a.difference(&set(&[&["f:a"]])),
            set(&[&["f:a", "f:b"], &["f:c"]])
        );
        assert!(a.difference(&a).is_empty());
        assert!(a.has(&["f:a", "f:b"]) && !a.has(&["f:b"]));
    }
}
