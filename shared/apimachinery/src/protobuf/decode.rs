//! Protobuf bytes → JSON value, in two steps as upstream takes them: gogo's `Unmarshal`
//! fills a struct ([`State`], one [`Slot`] per field), then `encoding/json` writes it
//! ([`super::render`]). Keeping the struct step makes gogo's merge rules fall out: a
//! repeated singular message merges into the earlier one, scalars take the last value,
//! repeated fields and maps accumulate.

use std::collections::BTreeMap;

use serde_json::Value;

use super::render::{render, render_value};
use super::state::{Slot, State};
use super::wire::{FIXED64, LEN, Reader, VARINT};
use super::{Error, MAX_DEPTH, Result};
use crate::golang::json::coerce_utf8;
use crate::schema::{Field, Kind, Message};

/// Decodes `bytes`, a message of type `msg`, into the JSON Go would write for it. Fields of
/// tag 0 (`apiVersion`, `kind`) are left out: they come from the envelope.
pub fn decode(bytes: &[u8], msg: &Message) -> Result<Value> {
    let mut state = State::new(msg);
    decode_into(bytes, msg, &mut state, 0)?;
    render(state, msg, 0)
}

/// `metav1.Timestamp`, the protobuf form of Time and MicroTime.
pub(super) static TIMESTAMP: Message = carrier(
    "io.k8s.apimachinery.pkg.apis.meta.v1.Timestamp",
    &[
        Field::new("seconds", 1, Kind::Int64),
        Field::new("nanos", 2, Kind::Int32),
    ],
);
/// `resource.Quantity`'s hand-written message.
pub(super) static QUANTITY: Message = carrier(
    "io.k8s.apimachinery.pkg.api.resource.Quantity",
    &[Field::new("string", 1, Kind::String)],
);
/// `intstr.IntOrString`.
pub(super) static INT_OR_STRING: Message = carrier(
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
    &[
        Field::new("type", 1, Kind::Int64),
        Field::new("intVal", 2, Kind::Int32),
        Field::new("strVal", 3, Kind::String),
    ],
);
/// `metav1.FieldsV1`.
pub(super) static FIELDS_V1: Message = carrier(
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
    &[Field::new("raw", 1, Kind::Bytes)],
);
/// apiextensions' `JSON`.
pub(super) static JSON: Message = carrier(
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON",
    &[Field::new("raw", 1, Kind::Bytes)],
);
/// `runtime.RawExtension`.
pub(super) static RAW_EXTENSION: Message = carrier(
    "io.k8s.apimachinery.pkg.runtime.RawExtension",
    &[Field::new("raw", 1, Kind::Bytes)],
);

const fn carrier(name: &'static str, fields: &'static [Field]) -> Message {
    Message {
        name,
        description: "",
        fields,
        required: &[],
        atomic: false,
    }
}

/// The message a struct-like kind is decoded as.
fn struct_message(kind: &Kind) -> Option<&'static Message> {
    match kind {
        Kind::Quantity => Some(&QUANTITY),
        Kind::IntOrString => Some(&INT_OR_STRING),
        Kind::FieldsV1 => Some(&FIELDS_V1),
        Kind::RawExtension => Some(&RAW_EXTENSION),
        Kind::Json | Kind::Deduced => Some(&JSON),
        Kind::Message(m)
        | Kind::JsonSchemaPropsOrArray(m)
        | Kind::JsonSchemaPropsOrBool(m)
        | Kind::JsonSchemaPropsOrStringArray(m) => Some(m),
        _ => None,
    }
}

/// gogo's `Unmarshal` of `bytes` into `state`, merging with what is there.
pub(super) fn decode_into(
    bytes: &[u8],
    msg: &Message,
    state: &mut State,
    depth: usize,
) -> Result<()> {
    if depth > MAX_DEPTH {
        return Err(Error::TooDeep);
    }
    let fields: &'static [Field] = msg.fields;
    let mut r = Reader::new(bytes);
    while let Some((tag, wire_type)) = r.next_field(msg.short_name())? {
        let found = fields
            .iter()
            .zip(state.slots.iter_mut())
            .find(|(f, _)| f.tag == tag);
        match found {
            Some((field, slot)) if field.wrapped => {
                decode_wrapped(field, wire_type, &mut r, slot, depth)?
            }
            Some((field, slot)) => {
                decode_occurrence(&field.kind, field.name, wire_type, &mut r, slot, depth)?
            }
            // Unknown fields are skipped, as gogo does.
            None => r.skip(wire_type)?,
        }
    }
    Ok(())
}

/// A named slice type's wrapper message: its field 1 occurrences are the items. Seen at
/// all, the slice is not nil.
fn decode_wrapped(
    field: &'static Field,
    wire_type: u8,
    r: &mut Reader<'_>,
    slot: &mut Slot,
    depth: usize,
) -> Result<()> {
    expect_wire(wire_type, LEN, field.name)?;
    if depth > MAX_DEPTH {
        return Err(Error::TooDeep);
    }
    if !matches!(slot, Slot::List(_)) {
        *slot = Slot::List(Vec::new());
    }
    let mut inner = Reader::new(r.bytes()?);
    while let Some((tag, wire_type)) = inner.next_field("wrapper")? {
        if tag == 1 {
            decode_occurrence(
                &field.kind,
                field.name,
                wire_type,
                &mut inner,
                slot,
                depth + 1,
            )?;
        } else {
            inner.skip(wire_type)?;
        }
    }
    Ok(())
}

/// Reads one occurrence of a field of `kind` into its slot.
fn decode_occurrence(
    kind: &'static Kind,
    name: &'static str,
    wire_type: u8,
    r: &mut Reader<'_>,
    slot: &mut Slot,
    depth: usize,
) -> Result<()> {
    match kind {
        Kind::Bool | Kind::Int32 | Kind::Int64 => {
            expect_wire(wire_type, VARINT, name)?;
            *slot = Slot::Scalar(varint_value(kind, r.varint()?));
        }
        Kind::Float64 => {
            expect_wire(wire_type, FIXED64, name)?;
            *slot = Slot::Float(f64::from_bits(r.fixed64()?));
        }
        Kind::String => {
            expect_wire(wire_type, LEN, name)?;
            *slot = Slot::Scalar(Value::String(coerce_utf8(r.bytes()?).into_owned()));
        }
        Kind::Bytes => {
            expect_wire(wire_type, LEN, name)?;
            *slot = Slot::Bytes(r.bytes()?.to_vec());
        }
        Kind::Time | Kind::MicroTime => {
            expect_wire(wire_type, LEN, name)?;
            *slot = Slot::Time(decode_timestamp(r.bytes()?, depth)?);
        }
        Kind::Array(elem) => decode_repeated(elem, name, wire_type, r, slot, depth)?,
        Kind::Map(elem) => {
            expect_wire(wire_type, LEN, name)?;
            let (key, value) = decode_entry(elem, name, r.bytes()?, depth)?;
            if !matches!(slot, Slot::Map(_)) {
                *slot = Slot::Map(BTreeMap::new());
            }
            if let Slot::Map(map) = slot {
                map.insert(key, value);
            }
        }
        Kind::Quantity
        | Kind::IntOrString
        | Kind::FieldsV1
        | Kind::RawExtension
        | Kind::Json
        | Kind::Deduced
        | Kind::JsonSchemaPropsOrArray(_)
        | Kind::JsonSchemaPropsOrBool(_)
        | Kind::JsonSchemaPropsOrStringArray(_)
        | Kind::Message(_) => {
            expect_wire(wire_type, LEN, name)?;
            let data = r.bytes()?;
            // Every kind of this arm has a message; the fallback is never taken.
            let msg = struct_message(kind).unwrap_or(&RAW_EXTENSION);
            let mut state = match std::mem::replace(slot, Slot::Unset) {
                Slot::Struct(state) => state,
                _ => Box::new(State::new(msg)),
            };
            decode_into(data, msg, &mut state, depth + 1)?;
            *slot = Slot::Struct(state);
        }
    }
    Ok(())
}

/// One element of a repeated field; scalars may come one by one or packed.
fn decode_repeated(
    elem: &'static Kind,
    name: &'static str,
    wire_type: u8,
    r: &mut Reader<'_>,
    slot: &mut Slot,
    depth: usize,
) -> Result<()> {
    if !matches!(slot, Slot::List(_)) {
        *slot = Slot::List(Vec::new());
    }
    let Slot::List(list) = slot else {
        return Ok(());
    };
    let scalar = matches!(elem, Kind::Bool | Kind::Int32 | Kind::Int64);
    if scalar && wire_type == LEN {
        let mut packed = Reader::new(r.bytes()?);
        while !packed.is_empty() {
            list.push(varint_value(elem, packed.varint()?));
        }
        return Ok(());
    }
    list.push(decode_element(elem, name, wire_type, r, depth)?);
    Ok(())
}

/// An array element or map value, in its JSON form. An array or map here is
/// go-to-protobuf's wrapper message holding it as field 1.
fn decode_element(
    kind: &'static Kind,
    name: &'static str,
    wire_type: u8,
    r: &mut Reader<'_>,
    depth: usize,
) -> Result<Value> {
    let mut slot = Slot::Unset;
    if matches!(kind, Kind::Array(_) | Kind::Map(_)) {
        expect_wire(wire_type, LEN, name)?;
        if depth > MAX_DEPTH {
            return Err(Error::TooDeep);
        }
        let mut inner = Reader::new(r.bytes()?);
        while let Some((tag, wire_type)) = inner.next_field("wrapper")? {
            if tag == 1 {
                decode_occurrence(kind, name, wire_type, &mut inner, &mut slot, depth + 1)?;
            } else {
                inner.skip(wire_type)?;
            }
        }
    } else {
        decode_occurrence(kind, name, wire_type, r, &mut slot, depth)?;
    }
    Ok(render_value(kind, slot, false, false, depth)?.unwrap_or(Value::Null))
}

/// A map entry `{key = 1, value = 2}`; a missing value is the zero value, and a missing
/// `[]byte` value is empty, not nil, as gogo initializes it.
fn decode_entry(
    elem: &'static Kind,
    name: &'static str,
    bytes: &[u8],
    depth: usize,
) -> Result<(String, Value)> {
    let mut r = Reader::new(bytes);
    let mut key = String::new();
    let mut value = None;
    // gogo's entry loop checks no key: every field but 1 and 2 is skipped.
    while !r.is_empty() {
        let wire = r.varint()?;
        let wire_type = (wire & 7) as u8;
        match wire >> 3 {
            1 => {
                expect_wire(wire_type, LEN, name)?;
                key = coerce_utf8(r.bytes()?).into_owned();
            }
            2 => value = Some(decode_element(elem, name, wire_type, &mut r, depth)?),
            _ => r.skip(wire_type)?,
        }
    }
    let value = match value {
        Some(v) => v,
        None if matches!(elem, Kind::Bytes) => Value::String(String::new()),
        None => render_value(elem, Slot::Unset, false, false, depth)?.unwrap_or(Value::Null),
    };
    Ok((key, value))
}

/// `Time.Unmarshal`: empty bytes are the zero time; anything else is a Timestamp, read
/// afresh (not merged).
fn decode_timestamp(bytes: &[u8], depth: usize) -> Result<Option<(i64, i32)>> {
    if bytes.is_empty() {
        return Ok(None);
    }
    let mut state = State::new(&TIMESTAMP);
    decode_into(bytes, &TIMESTAMP, &mut state, depth + 1)?;
    let int = |slot: &Slot| match slot {
        Slot::Scalar(v) => v.as_i64().unwrap_or(0),
        _ => 0,
    };
    let seconds = state.slots.first().map(int).unwrap_or(0);
    let nanos = state.slots.get(1).map(int).unwrap_or(0);
    Ok(Some((seconds, nanos as i32)))
}

/// A varint as gogo stores it in a field of `kind`: `int32` keeps the low 32 bits, as Go's
/// shifts into an `int32` do.
fn varint_value(kind: &Kind, v: u64) -> Value {
    match kind {
        Kind::Bool => Value::Bool(v != 0),
        Kind::Int32 => Value::from(v as u32 as i32),
        _ => Value::from(v as i64),
    }
}

fn expect_wire(wire_type: u8, want: u8, name: &str) -> Result<()> {
    if wire_type == want {
        return Ok(());
    }
    Err(Error::WrongWireType {
        wire_type,
        field: go_field_name(name),
    })
}

/// The Go name of a field, as gogo's errors name it: the JSON name capitalized, which is
/// the Go name for all but initialisms (`uid` is Go's `UID`).
fn go_field_name(json: &str) -> String {
    let mut chars = json.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
