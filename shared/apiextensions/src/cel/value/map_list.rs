//! Upstream `unstructuredMapList` (`values.go`): a list with `x-kubernetes-list-type:
//! map`, whose `==` matches entries by key in any order and whose `+` merges by key.
//! An entry's key is the Go values of its key properties, looked up under their escaped
//! names as upstream does (so a property whose name escapes is never found).
//!
//! Not covered: the key of an entry of the other list that is not a map-list entry is
//! read from its CEL values (upstream reads the object as decoded; an integral double is
//! taken for an `int64`), also for a map literal, whose key upstream never matches (its
//! type checker rejects comparing objects with map literals; only `dyn` gets there);
//! where Go panics hashing a key, `==` is false (`+` reports the error); an entry
//! upstream's `+` keeps as a Go value it cannot convert back (a map literal) stays the
//! CEL value it was.

use std::collections::HashMap;

use cel::ExecutionError;
use cel::common::traits::{Adder, Container, Indexer, Iterable, Sizer, Zeroer};
use cel::common::types::{CelList, CelMap, CelMapKey, LIST_TYPE, Type};
use cel::common::value::{Builtin, BuiltinRef, CowVal, StaticVal, Val};
use kas_apimachinery::golang::strconv::format_float;
use serde_json::Value as Json;

use super::super::escaping::escape;
use super::native::{
    Native, elements, list_capabilities, not_addable, raw_native, unhashable, val_native,
};
use super::owned;

/// Upstream `toMapKey`: an entry's identity among the entries of a map list.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum MapKey {
    /// The values of up to three key properties.
    Values(Vec<Native>),
    /// Four or more, as `fmt.Sprintf("%v", values)`.
    Printed(String),
    /// An element that is not an object: a key equal to no other.
    Unique,
}

impl MapKey {
    /// The type Go fails to hash, if the key holds one.
    fn unhashable(&self) -> Option<&'static str> {
        match self {
            MapKey::Values(vs) => vs.iter().find_map(|v| match v {
                Native::Unhashable(t) => Some(*t),
                _ => None,
            }),
            _ => None,
        }
    }

    fn of(values: Vec<Native>, printed: impl FnOnce(&[Native]) -> String) -> MapKey {
        if values.len() <= 3 {
            MapKey::Values(values)
        } else {
            MapKey::Printed(printed(&values))
        }
    }
}

/// `%v` of the Go values of a key, for four or more key properties.
fn print(values: &[Native]) -> String {
    let items: Vec<String> = values
        .iter()
        .map(|v| match v {
            Native::Nil => "<nil>".to_owned(),
            Native::Bool(b) => b.to_string(),
            Native::Int(i) => i.to_string(),
            Native::UInt(u) => u.to_string(),
            Native::Float(bits) => format_float(f64::from_bits(*bits), b'g', 64),
            Native::String(s) => s.clone(),
            other => format!("{other:?}"),
        })
        .collect();
    format!("[{}]", items.join(" "))
}

/// A list with `x-kubernetes-list-type: map`.
#[derive(Clone, Debug)]
pub(crate) struct UnstructuredMapList {
    items: CelList<'static>,
    /// Each entry's key, from the entry as upstream decoded it.
    keys: Vec<MapKey>,
    /// Upstream `escapedKeyProps`: escaped where the name can be, else as it is.
    props: Vec<String>,
}

impl UnstructuredMapList {
    pub fn new(raw: &[Json], items: Vec<Box<dyn Val>>, props: Vec<&str>) -> UnstructuredMapList {
        let props: Vec<String> = props
            .into_iter()
            .map(|p| escape(p).unwrap_or_else(|| p.to_owned()))
            .collect();
        // Upstream looks the escaped names up in the entry as decoded.
        let keys = raw
            .iter()
            .map(|e| match e {
                Json::Object(o) => {
                    let values = props
                        .iter()
                        .map(|p| o.get(p).map_or(Native::Nil, raw_native))
                        .collect();
                    MapKey::of(values, print)
                }
                _ => MapKey::Unique,
            })
            .collect();
        UnstructuredMapList {
            items: CelList::from(items),
            keys,
            props,
        }
    }

    /// The keys of `other`'s entries, under this list's key properties.
    fn keys_of(&self, other: &dyn Val, entries: &[&dyn Val]) -> Vec<MapKey> {
        if let Some(o) = other.downcast_ref::<UnstructuredMapList>()
            && o.props == self.props
        {
            return o.keys.clone();
        }
        entries.iter().map(|e| self.key_of(*e)).collect()
    }

    /// The key of an entry known only as a CEL value: an object's fields as upstream
    /// would have decoded them (integral doubles as `int64`, as JSON numbers decode).
    /// Upstream looks a property up in the decoded object under its escaped name, which
    /// is the property whose CEL name is that name escaped again.
    fn key_of(&self, entry: &dyn Val) -> MapKey {
        let Some(map) = entry.downcast_ref::<CelMap>() else {
            return MapKey::Unique;
        };
        let values = self
            .props
            .iter()
            .map(|p| {
                let field = escape(p).and_then(|f| map.inner().get(&CelMapKey::from(f)));
                let Some(v) = field else {
                    return Native::Nil;
                };
                match val_native(v.as_ref()) {
                    Native::NullValue => Native::Nil,
                    Native::Float(bits) => {
                        let f = f64::from_bits(bits);
                        if f.fract() == 0.0 && f.abs() < 9.0e15 {
                            Native::Int(f as i64)
                        } else {
                            Native::Float(bits)
                        }
                    }
                    n => n,
                }
            })
            .collect();
        MapKey::of(values, print)
    }

    /// Upstream `getMap`: the last entry of each key; `Err` where Go panics.
    fn index(&self) -> Result<HashMap<&MapKey, usize>, &'static str> {
        let mut index = HashMap::with_capacity(self.keys.len());
        for (i, k) in self.keys.iter().enumerate() {
            if let Some(t) = k.unhashable() {
                return Err(t);
            }
            if *k != MapKey::Unique {
                index.insert(k, i);
            }
        }
        Ok(index)
    }
}

impl Val for UnstructuredMapList {
    list_capabilities!();

    /// Upstream `unstructuredMapList.Equal`: each entry of `other` equals the entry of
    /// this list with its key.
    fn equals(&self, other: &dyn Val) -> bool {
        let Some(others) = elements(other) else {
            return false;
        };
        if others.len() != self.keys.len() {
            return false;
        }
        let Ok(index) = self.index() else {
            return false;
        };
        let keys = self.keys_of(other, &others);
        others.iter().zip(&keys).all(|(o, k)| {
            k.unhashable().is_none()
                && index
                    .get(k)
                    .and_then(|i| self.items.inner().get(*i))
                    .is_some_and(|mine| mine.equals(*o))
        })
    }
}

impl StaticVal for UnstructuredMapList {}

impl Adder for UnstructuredMapList {
    /// Upstream `unstructuredMapList.Add`: an entry of `rhs` replaces the entry of this
    /// list with its key, in place; the others are appended, in order.
    fn add<'b, 'w>(&'b self, rhs: &(dyn Val + 'w)) -> Result<CowVal<'b, 'w>, ExecutionError>
    where
        Self: 'w,
    {
        let Some(others) = elements(rhs) else {
            return Err(not_addable(self, rhs));
        };
        let index: HashMap<MapKey, usize> = self
            .index()
            .map_err(unhashable)?
            .into_iter()
            .map(|(k, i)| (k.clone(), i))
            .collect();
        let mut items: Vec<Box<dyn Val>> = self.items.inner().to_vec();
        let mut keys = self.keys.clone();
        let other_keys = self.keys_of(rhs, &others);
        for (o, k) in others.into_iter().zip(other_keys) {
            if let Some(t) = k.unhashable() {
                return Err(unhashable(t));
            }
            match index.get(&k) {
                Some(i) => items[*i] = owned(o)?,
                None => {
                    items.push(owned(o)?);
                    keys.push(k);
                }
            }
        }
        Ok(CowVal::owned(UnstructuredMapList {
            items: CelList::from(items),
            keys,
            props: self.props.clone(),
        }))
    }
}
