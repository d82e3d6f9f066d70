//! The decoded struct → JSON, as `encoding/json` writes it: `omitempty` drops zero
//! strings, numbers and bools, nil or empty slices and maps, and nil pointers, but never a
//! struct; without `omitempty` a nil slice, map or pointer is `null`.

use serde_json::{Map, Value};

use super::encode::embedded_name;
use super::state::{Slot, State};
use super::{Error, MAX_DEPTH, Result, quantity};
use crate::golang::base64::STD_ENCODING;
use crate::golang::json::coerce_utf8;
use crate::golang::time::{Time, format_rfc3339, format_rfc3339_micro};
use crate::schema::{Kind, Message, zero_value};

/// The JSON object of a decoded message, fields in the message's (Go struct's) order.
pub(super) fn render(state: State, msg: &Message, depth: usize) -> Result<Value> {
    if depth > MAX_DEPTH {
        return Err(Error::TooDeep);
    }
    let mut obj = Map::new();
    for (field, slot) in msg.fields.iter().zip(state.slots) {
        if field.tag == 0 {
            continue;
        }
        if let (true, Kind::Message(m)) = (field.inline, &field.kind) {
            // An embedded struct: its fields join this object.
            let inner = match slot {
                Slot::Struct(state) => render(*state, m, depth + 1)?,
                _ => zero_value(&field.kind),
            };
            if let Value::Object(inner) = inner {
                obj.extend(inner);
            }
            continue;
        }
        let value = render_value(&field.kind, slot, field.pointer, field.omit_empty, depth)?;
        if let Some(v) = value {
            obj.insert(field.name.to_owned(), v);
        }
    }
    Ok(Value::Object(obj))
}

/// The JSON of one field, or `None` when `encoding/json` leaves it out.
pub(super) fn render_value(
    kind: &'static Kind,
    slot: Slot,
    pointer: bool,
    omit_empty: bool,
    depth: usize,
) -> Result<Option<Value>> {
    if pointer && matches!(slot, Slot::Unset) {
        return Ok((!omit_empty).then_some(Value::Null));
    }
    let v = match (kind, slot) {
        (Kind::String | Kind::Bool | Kind::Int32 | Kind::Int64, Slot::Scalar(v)) => v,
        (Kind::Float64, Slot::Float(f)) => render_float(f)?,
        (Kind::Bytes, Slot::Bytes(b)) => Value::String(STD_ENCODING.encode_to_string(&b)),
        (Kind::Time | Kind::MicroTime, Slot::Time(Some((seconds, nanos)))) => {
            render_time(kind, seconds, nanos)
        }
        (Kind::Quantity, Slot::Struct(state)) => render_quantity(*state)?,
        (Kind::IntOrString, Slot::Struct(state)) => render_int_or_string(*state)?,
        (Kind::FieldsV1 | Kind::RawExtension, Slot::Struct(state)) => render_raw(kind, *state)?,
        (Kind::Json | Kind::Deduced, Slot::Struct(state)) => render_json(*state)?,
        (
            Kind::JsonSchemaPropsOrArray(u)
            | Kind::JsonSchemaPropsOrBool(u)
            | Kind::JsonSchemaPropsOrStringArray(u),
            Slot::Struct(state),
        ) => render_union(kind, render(*state, u, depth + 1)?, u),
        (Kind::Message(m), Slot::Struct(state)) => render(*state, m, depth + 1)?,
        (Kind::Array(_), Slot::List(items)) => Value::Array(items),
        (Kind::Map(_), Slot::Map(entries)) => Value::Object(entries.into_iter().collect()),
        // Unset: the zero value, which is `null` for nil slices, maps and []byte, FieldsV1
        // and RawExtension without bytes, and the zero Time.
        _ => zero_value(kind),
    };
    if omit_empty && !pointer && is_empty(kind, &v) {
        return Ok(None);
    }
    Ok(Some(v))
}

/// `encoding/json`'s `isEmptyValue` for the kinds where `omitempty` applies; structs
/// (every well-known type included) are never empty.
fn is_empty(kind: &Kind, v: &Value) -> bool {
    match kind {
        Kind::String | Kind::Bytes => v.is_null() || v.as_str() == Some(""),
        Kind::Bool => v.as_bool() == Some(false),
        Kind::Int32 | Kind::Int64 | Kind::Float64 => v.as_f64() == Some(0.0),
        Kind::Array(_) => v.is_null() || v.as_array().is_some_and(Vec::is_empty),
        Kind::Map(_) => v.is_null() || v.as_object().is_some_and(Map::is_empty),
        _ => false,
    }
}

/// A float64 as `encoding/json` writes it (`1`, `0.5`, `1e+21`); it refuses NaN and
/// infinities.
fn render_float(f: f64) -> Result<Value> {
    if !f.is_finite() {
        return Err(Error::UnsupportedFloat(
            crate::golang::strconv::format_float(f, b'g', 64),
        ));
    }
    serde_json::from_str(&crate::golang::json::format_float(f, 64))
        .map_err(|e| Error::JsonMarshal(e.to_string()))
}

/// apiextensions' `JSON.MarshalJSON`: its bytes as they are, `null` when there are none;
/// `encoding/json` checks that they are JSON.
fn render_json(state: State) -> Result<Value> {
    let Some(Slot::Bytes(raw)) = state.slots.into_iter().next() else {
        return Ok(Value::Null);
    };
    if raw.is_empty() {
        return Ok(Value::Null);
    }
    crate::golang::json::check_valid(&raw).map_err(Error::JsonMarshal)?;
    serde_json::from_slice(&raw)
        .or_else(|_| serde_json::from_str(&coerce_utf8(&raw)))
        .map_err(|e| Error::JsonMarshal(e.to_string()))
}

/// The `MarshalJSON` of a `JSONSchemaProps` union, from its message `u` rendered as a
/// struct (`omitempty` leaves out what is unset): `OrArray` writes its schemas when there
/// are any, else its schema (`null` when nil); `OrBool` its schema, else `allows`;
/// `OrStringArray` its strings when there are any, else its schema, else `null`.
fn render_union(kind: &Kind, rendered: Value, u: &Message) -> Value {
    let Value::Object(mut obj) = rendered else {
        return Value::Null;
    };
    let mut take = |tag: u32| u.field_by_tag(tag).and_then(|f| obj.remove(f.name));
    match kind {
        Kind::JsonSchemaPropsOrBool(_) => take(2).or_else(|| take(1)).unwrap_or(Value::Bool(false)),
        _ => take(2).or_else(|| take(1)).unwrap_or(Value::Null),
    }
}

/// Time keeps whole seconds (`time_proto.go` ignores nanos); MicroTime truncates nanos to
/// microseconds, toward zero as Go's `Duration.Truncate` does before `time.Unix` carries.
fn render_time(kind: &Kind, seconds: i64, nanos: i32) -> Value {
    let micro = matches!(kind, Kind::MicroTime);
    let nanos = if micro { nanos - nanos % 1000 } else { 0 };
    let t = Time::from_unix(seconds, i64::from(nanos));
    if t.is_zero() {
        return Value::Null;
    }
    Value::String(if micro {
        format_rfc3339_micro(t)
    } else {
        format_rfc3339(t)
    })
}

fn scalar(state: &State, index: usize) -> Option<&Value> {
    match state.slots.get(index) {
        Some(Slot::Scalar(v)) => Some(v),
        _ => None,
    }
}

/// Quantity's `Unmarshal` parses the string, so a malformed one fails to decode.
fn render_quantity(state: State) -> Result<Value> {
    match scalar(&state, 0).and_then(Value::as_str) {
        Some(s) => {
            quantity::check(s).map_err(Error::Quantity)?;
            Ok(Value::String(s.to_owned()))
        }
        None => Ok(Value::String("0".into())),
    }
}

/// `IntOrString.MarshalJSON`: the int or the string by `type`, an error for other types.
fn render_int_or_string(state: State) -> Result<Value> {
    let ty = scalar(&state, 0).and_then(Value::as_i64).unwrap_or(0);
    match ty {
        0 => Ok(scalar(&state, 1).cloned().unwrap_or(Value::from(0))),
        1 => Ok(scalar(&state, 2)
            .cloned()
            .unwrap_or(Value::String(String::new()))),
        _ => Err(Error::IntOrStringType),
    }
}

/// FieldsV1 and RawExtension write their bytes as JSON (`null` when nil). Bytes that start
/// like CBOR would be transcoded upstream; this codec does not read CBOR.
fn render_raw(kind: &Kind, state: State) -> Result<Value> {
    let Some(Slot::Bytes(raw)) = state.slots.into_iter().next() else {
        return Ok(Value::Null);
    };
    let what = embedded_name(kind);
    let first = raw.first().copied();
    let json_start = match kind {
        Kind::FieldsV1 => !matches!(first, Some(0xf6 | 0xa0..=0xbf | 0xc6..=0xdb)),
        // RawExtension.guessContentType: JSON only when the first byte can start JSON.
        _ => matches!(
            first,
            Some(b'\t' | b'\r' | b'\n' | b' ' | b'{' | b'[' | b'n' | b't' | b'f' | b'"' | b'-')
                | Some(b'0'..=b'9')
        ),
    };
    if !json_start {
        return Err(Error::EmbeddedContentType(what));
    }
    serde_json::from_slice(&raw).or_else(|source| {
        // Go passes invalid UTF-8 inside JSON strings through as U+FFFD.
        serde_json::from_str(&coerce_utf8(&raw)).map_err(|_| Error::EmbeddedJson { what, source })
    })
}
