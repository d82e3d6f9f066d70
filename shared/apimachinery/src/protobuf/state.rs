//! The Go struct a protobuf message is decoded into before `encoding/json` writes it: what
//! [`super::decode`] fills and [`super::render`] writes.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::schema::Message;

/// The Go struct being filled: one slot per field of the message, in the same order.
#[derive(Debug)]
pub(super) struct State {
    pub(super) slots: Vec<Slot>,
}

impl State {
    pub(super) fn new(msg: &Message) -> State {
        State {
            slots: msg.fields.iter().map(|_| Slot::Unset).collect(),
        }
    }
}

/// One field of the struct being filled.
#[derive(Debug)]
pub(super) enum Slot {
    /// Never seen: Go's zero value, or a nil pointer, slice or map.
    Unset,
    /// A string, bool or integer (the last occurrence wins).
    Scalar(Value),
    /// A `float64` (the last occurrence wins); NaN and infinities included.
    Float(f64),
    /// A `[]byte`, non-nil once seen.
    Bytes(Vec<u8>),
    /// A Time or MicroTime: seconds and nanos, or `None` when the last occurrence was an
    /// empty message (the zero time).
    Time(Option<(i64, i32)>),
    /// A message or a well-known struct, merged across occurrences.
    Struct(Box<State>),
    /// A repeated field's elements, already in their JSON form.
    List(Vec<Value>),
    /// A map field's entries, already in their JSON form.
    Map(BTreeMap<String, Value>),
}
