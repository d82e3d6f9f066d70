//! Upstream `unstructuredSetList` (`values.go`): a list with `x-kubernetes-list-type:
//! set`, whose `==` ignores order and whose `+` appends only what the set lacks.
//!
//! Not covered: where Go panics hashing a map or slice element (cel-go reports an
//! `internal error`), `==` is false (`+` reports the error); upstream's `+` also adds the
//! new elements to the set the left operand caches, which no later `==` here sees.

use std::collections::HashSet;

use cel::ExecutionError;
use cel::common::traits::{Adder, Container, Indexer, Iterable, Sizer, Zeroer};
use cel::common::types::{CelList, LIST_TYPE, Type};
use cel::common::value::{Builtin, BuiltinRef, CowVal, StaticVal, Val};
use serde_json::Value as Json;

use super::native::{
    Native, elements, list_capabilities, not_addable, raw_native, unhashable, val_native,
};
use super::owned;

/// A list with `x-kubernetes-list-type: set`.
#[derive(Clone, Debug)]
pub(crate) struct UnstructuredSetList {
    items: CelList<'static>,
    /// Each element as upstream holds it.
    natives: Vec<Native>,
}

impl UnstructuredSetList {
    pub fn new(raw: &[Json], items: Vec<Box<dyn Val>>) -> UnstructuredSetList {
        UnstructuredSetList {
            items: CelList::from(items),
            natives: raw.iter().map(raw_native).collect(),
        }
    }

    /// Upstream `getSet`; `Err` where Go panics.
    fn set(&self) -> Result<HashSet<&Native>, &'static str> {
        let mut set = HashSet::with_capacity(self.natives.len());
        for n in &self.natives {
            if let Native::Unhashable(t) = n {
                return Err(t);
            }
            set.insert(n);
        }
        Ok(set)
    }
}

impl Val for UnstructuredSetList {
    list_capabilities!();

    /// Upstream `unstructuredSetList.Equal`.
    fn equals(&self, other: &dyn Val) -> bool {
        let Some(others) = elements(other) else {
            return false;
        };
        if others.len() != self.natives.len() {
            return false;
        }
        let Ok(set) = self.set() else {
            return false;
        };
        others.iter().all(|o| match val_native(*o) {
            Native::Unhashable(_) => false,
            n => set.contains(&n),
        })
    }
}

impl StaticVal for UnstructuredSetList {}

impl Adder for UnstructuredSetList {
    /// Upstream `unstructuredSetList.Add`: the elements of `rhs` not in the set yet are
    /// appended, in order.
    fn add<'b, 'w>(&'b self, rhs: &(dyn Val + 'w)) -> Result<CowVal<'b, 'w>, ExecutionError>
    where
        Self: 'w,
    {
        let Some(others) = elements(rhs) else {
            return Err(not_addable(self, rhs));
        };
        let mut set: HashSet<Native> = self
            .set()
            .map_err(unhashable)?
            .into_iter()
            .cloned()
            .collect();
        let mut items: Vec<Box<dyn Val>> = self.items.inner().to_vec();
        let mut natives = self.natives.clone();
        for o in others {
            let n = val_native(o);
            if let Native::Unhashable(t) = n {
                return Err(unhashable(t));
            }
            if set.insert(n.clone()) {
                items.push(owned(o)?);
                natives.push(n);
            }
        }
        Ok(CowVal::owned(UnstructuredSetList {
            items: CelList::from(items),
            natives,
        }))
    }
}
