//! An empty atomic list of `number`s or `duration`s: upstream's `sum()` overload is the
//! one of the list's element type, so an empty list sums to that type's zero (`0.0`,
//! `duration('0s')`), where a list value here knows no element type (cel-rust's `sum` of
//! an empty list is `0`). Only lists as decoded carry it; an empty list a rule computes
//! (`filter`, `map`) sums to `0`.

use cel::ExecutionError;
use cel::common::traits::{Adder, Container, Indexer, Iterable, Sizer, Zeroer};
use cel::common::types::{CelDouble, CelDuration, CelList, LIST_TYPE, Type};
use cel::common::value::{Builtin, BuiltinRef, CowVal, StaticVal, Val};

use super::native::list_capabilities;

/// The zero of a summable element type.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Zero {
    Double,
    Duration,
}

#[derive(Clone, Debug)]
pub(crate) struct TypedEmptyList {
    items: CelList<'static>,
    zero: Zero,
}

impl TypedEmptyList {
    pub fn new(zero: Zero) -> TypedEmptyList {
        TypedEmptyList {
            items: CelList::default(),
            zero,
        }
    }

    pub fn zero(&self) -> Box<dyn Val> {
        match self.zero {
            Zero::Double => Box::new(CelDouble::from(0.0)),
            Zero::Duration => Box::new(CelDuration::from(chrono::Duration::zero())),
        }
    }
}

impl Val for TypedEmptyList {
    list_capabilities!();

    fn equals(&self, other: &dyn Val) -> bool {
        self.items.equals(other)
    }
}

impl StaticVal for TypedEmptyList {}

impl Adder for TypedEmptyList {
    fn add<'b, 'w>(&'b self, rhs: &(dyn Val + 'w)) -> Result<CowVal<'b, 'w>, ExecutionError>
    where
        Self: 'w,
    {
        self.items.add(rhs)
    }
}
