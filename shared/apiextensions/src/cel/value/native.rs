//! The Go values upstream's set and map lists compare (`values.go`): its own elements
//! as they were decoded (`int64` for an integral JSON number, also in a `number` list;
//! the strings of `date-time` or `duration` lists), the other list's elements as CEL
//! values' `Value()` (`float64` for a double, `time.Time`, `time.Duration`,
//! `structpb.NullValue` for `null`). So a set of integral `number`s is not equal to its
//! copy, as upstream. And what both list types share.

use cel::common::types::{
    CelBool, CelBytes, CelDouble, CelDuration, CelInt, CelNull, CelString, CelTimestamp, CelUInt,
    Kind,
};
use cel::common::value::Val;
use cel::{ExecutionError, Value};
use serde_json::Value as Json;

/// A Go value as upstream's set and map lists hash it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum Native {
    Nil,
    Bool(bool),
    Int(i64),
    UInt(u64),
    /// The bits of a `float64`, `-0` as `0` (Go's `==`).
    Float(u64),
    String(String),
    /// `time.Duration`, in nanoseconds.
    Duration(i64),
    /// `time.Time`: seconds, nanoseconds, offset.
    Time(i64, u32, i32),
    /// `structpb.NullValue`, what cel-go's `null` is as a Go value.
    NullValue,
    /// A value equal to no other (cel-go's error values, `types.Err` pointers).
    Unique,
    /// A map or slice, which Go cannot hash: its type's name.
    Unhashable(&'static str),
}

pub(super) fn float(f: f64) -> Native {
    Native::Float(if f == 0.0 { 0 } else { f.to_bits() })
}

/// An element as upstream decoded it.
pub(super) fn raw_native(v: &Json) -> Native {
    match v {
        Json::Null => Native::Nil,
        Json::Bool(b) => Native::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Native::Int(i),
            None => float(n.as_f64().unwrap_or_default()),
        },
        Json::String(s) => Native::String(s.clone()),
        Json::Array(_) => Native::Unhashable("[]interface {}"),
        Json::Object(_) => Native::Unhashable("map[string]interface {}"),
    }
}

/// cel-go's `Value()` of a CEL value.
pub(super) fn val_native(v: &dyn Val) -> Native {
    if let Some(i) = v.downcast_ref::<CelInt>() {
        return Native::Int(*i.inner());
    }
    if let Some(s) = v.downcast_ref::<CelString>() {
        return Native::String(s.inner().to_owned());
    }
    if let Some(d) = v.downcast_ref::<CelDouble>() {
        return float(*d.inner());
    }
    if let Some(b) = v.downcast_ref::<CelBool>() {
        return Native::Bool(*b.inner());
    }
    if let Some(u) = v.downcast_ref::<CelUInt>() {
        return Native::UInt(*u.inner());
    }
    if let Some(d) = v.downcast_ref::<CelDuration>() {
        return d
            .inner()
            .num_nanoseconds()
            .map_or(Native::Unique, Native::Duration);
    }
    if let Some(t) = v.downcast_ref::<CelTimestamp>() {
        let t = t.inner();
        return Native::Time(
            t.timestamp(),
            t.timestamp_subsec_nanos(),
            t.offset().local_minus_utc(),
        );
    }
    if v.downcast_ref::<CelNull>().is_some() {
        return Native::NullValue;
    }
    if v.downcast_ref::<CelBytes>().is_some() {
        return Native::Unhashable("[]uint8");
    }
    match v.get_type().kind() {
        Kind::List => Native::Unhashable("[]interface {}"),
        Kind::Map => Native::Unhashable("map[string]interface {}"),
        _ => Native::Unique,
    }
}

/// The elements of a list operand, or `None` for another type.
pub(super) fn elements(v: &dyn Val) -> Option<Vec<&dyn Val>> {
    if v.get_type().kind() != Kind::List {
        return None;
    }
    let mut it = v.as_iterable()?.iter();
    let mut out = Vec::new();
    while let Some(e) = it.next() {
        out.push(e);
    }
    Some(out)
}

/// What Go's runtime panics with, as cel-go reports a panic during evaluation.
pub(super) fn unhashable(type_name: &str) -> ExecutionError {
    ExecutionError::function_error(
        "_+_",
        format!("internal error: runtime error: hash of unhashable type {type_name}"),
    )
}

pub(super) fn not_addable(lhs: &dyn Val, rhs: &dyn Val) -> ExecutionError {
    ExecutionError::UnsupportedBinaryOperator(
        "add",
        Value::try_from(lhs).unwrap_or(Value::Null),
        Value::try_from(rhs).unwrap_or(Value::Null),
    )
}

/// The `Val` methods a set or map list shares: the type `list`, its own `+`, and
/// everything else (indexing, `in`, `size`, iteration, copies, and being the built-in
/// list that library functions and `Value` convert) from its `items: CelList`.
macro_rules! list_capabilities {
    () => {
        fn get_type(&self) -> &Type {
            &LIST_TYPE
        }

        fn cel_type() -> &'static Type {
            &LIST_TYPE
        }

        fn as_adder<'b, 'w>(&'b self) -> Option<&'b (dyn Adder + 'w)>
        where
            Self: 'w,
        {
            Some(self)
        }

        fn as_container(&self) -> Option<&dyn Container> {
            self.items.as_container()
        }

        fn as_indexer<'b, 'w>(&'b self) -> Option<&'b (dyn Indexer + 'w)>
        where
            Self: 'w,
        {
            Some(&self.items)
        }

        fn into_indexer<'w>(self: Box<Self>) -> Option<Box<dyn Indexer + 'w>>
        where
            Self: 'w,
        {
            Some(Box::new(self.items))
        }

        fn as_iterable<'b, 'w>(&'b self) -> Option<&'b (dyn Iterable + 'w)>
        where
            Self: 'w,
        {
            Some(&self.items)
        }

        fn as_sizer(&self) -> Option<&dyn Sizer> {
            self.items.as_sizer()
        }

        fn as_zeroer(&self) -> Option<&dyn Zeroer> {
            self.items.as_zeroer()
        }

        fn clone_as_boxed<'w>(&self) -> Box<dyn Val + 'w>
        where
            Self: 'w,
        {
            Box::new(self.clone())
        }

        fn as_any(&self) -> Option<&dyn std::any::Any> {
            Some(self)
        }

        fn as_builtin<'b, 'w>(&'b self) -> BuiltinRef<'b, 'w>
        where
            Self: 'w,
        {
            BuiltinRef::List(&self.items)
        }

        fn into_builtin<'w>(self: Box<Self>) -> Option<Builtin<'w>>
        where
            Self: 'w,
        {
            Some(Builtin::List(self.items))
        }
    };
}
pub(super) use list_capabilities;
