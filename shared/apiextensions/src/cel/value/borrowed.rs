//! A value bound to a rule's variable by reference: `self` and `oldSelf` are converted
//! once per schema node and shared by all its rules, where binding the value itself
//! (cel-rust's `Context` owns its variables) would copy the whole tree for each rule.

use std::any::Any;

use cel::common::traits::{
    Adder, Comparer, Container, Divider, Indexer, Iterable, Modder, Multiplier, Negator, Sizer,
    Subtractor, Zeroer,
};
use cel::common::types::Type;
use cel::common::value::{Builtin, BuiltinRef, Val};

/// `Val` of the value it refers to, capability by capability; a copy of it is another
/// reference (comprehensions copy the variables they bind).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Borrowed<'a>(pub &'a (dyn Val + 'a));

impl<'a> Val for Borrowed<'a> {
    fn get_type(&self) -> &Type {
        self.0.get_type()
    }

    fn cel_type() -> &'static Type {
        // Only named by overload-registration macros, which never name this type.
        &cel::common::types::DYN_TYPE
    }

    fn as_adder<'b, 'w>(&'b self) -> Option<&'b (dyn Adder + 'w)>
    where
        Self: 'w,
    {
        self.0.as_adder()
    }

    fn as_comparer(&self) -> Option<&dyn Comparer> {
        self.0.as_comparer()
    }

    fn as_container(&self) -> Option<&dyn Container> {
        self.0.as_container()
    }

    fn as_divider<'b, 'w>(&'b self) -> Option<&'b (dyn Divider + 'w)>
    where
        Self: 'w,
    {
        self.0.as_divider()
    }

    fn as_indexer<'b, 'w>(&'b self) -> Option<&'b (dyn Indexer + 'w)>
    where
        Self: 'w,
    {
        self.0.as_indexer()
    }

    fn into_indexer<'w>(self: Box<Self>) -> Option<Box<dyn Indexer + 'w>>
    where
        Self: 'w,
    {
        self.0.clone_as_boxed().into_indexer()
    }

    fn as_iterable<'b, 'w>(&'b self) -> Option<&'b (dyn Iterable + 'w)>
    where
        Self: 'w,
    {
        self.0.as_iterable()
    }

    fn as_modder<'b, 'w>(&'b self) -> Option<&'b (dyn Modder + 'w)>
    where
        Self: 'w,
    {
        self.0.as_modder()
    }

    fn as_multiplier<'b, 'w>(&'b self) -> Option<&'b (dyn Multiplier + 'w)>
    where
        Self: 'w,
    {
        self.0.as_multiplier()
    }

    fn as_negator<'b, 'w>(&'b self) -> Option<&'b (dyn Negator + 'w)>
    where
        Self: 'w,
    {
        self.0.as_negator()
    }

    fn as_sizer(&self) -> Option<&dyn Sizer> {
        self.0.as_sizer()
    }

    fn as_subtractor<'b, 'w>(&'b self) -> Option<&'b (dyn Subtractor + 'w)>
    where
        Self: 'w,
    {
        self.0.as_subtractor()
    }

    fn as_zeroer(&self) -> Option<&dyn Zeroer> {
        self.0.as_zeroer()
    }

    fn equals(&self, other: &dyn Val) -> bool {
        self.0.equals(other)
    }

    fn clone_as_boxed<'w>(&self) -> Box<dyn Val + 'w>
    where
        Self: 'w,
    {
        Box::new(*self)
    }

    fn as_any(&self) -> Option<&dyn Any> {
        self.0.as_any()
    }

    fn as_builtin<'b, 'w>(&'b self) -> BuiltinRef<'b, 'w>
    where
        Self: 'w,
    {
        self.0.as_builtin()
    }

    fn into_builtin<'w>(self: Box<Self>) -> Option<Builtin<'w>>
    where
        Self: 'w,
    {
        self.0.clone_as_boxed().into_builtin()
    }
}
