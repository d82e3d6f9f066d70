//! JSON value → protobuf bytes: what gogo's `Marshal` writes for the struct Go's
//! `encoding/json` decodes from the value (see the module header for the rules).

use serde_json::{Map, Value};

use super::wire::{
    begin_nested, end_nested, write_bytes_field, write_double_field, write_varint_field,
};
use super::{Error, MAX_DEPTH, Result, quantity};
use crate::golang::base64::STD_ENCODING;
use crate::golang::json::describe;
use crate::golang::time::{Time, parse_rfc3339};
use crate::schema::{Field, Kind, Message};

/// Appends the protobuf encoding of `value`, an object of type `msg`, to `out`. Fields of
/// tag 0 (`apiVersion`, `kind`) are not encoded: they travel in the envelope.
pub fn encode(value: &Value, msg: &Message, out: &mut Vec<u8>) -> Result<()> {
    let mut ctx = Ctx {
        path: Vec::new(),
        structs: vec![msg.short_name()],
    };
    let obj = match value {
        Value::Null => None,
        Value::Object(obj) => Some(obj),
        other => {
            return Err(Error::JsonValueType {
                value: describe(other).to_owned(),
                go_type: format!("v1.{}", msg.short_name()),
            });
        }
    };
    encode_fields(obj, msg, out, &mut ctx)
}

/// Where in the value the encoder is, for `encoding/json`-style errors.
struct Ctx {
    path: Vec<&'static str>,
    structs: Vec<&'static str>,
}

impl Ctx {
    fn type_error(&self, v: &Value, kind: &Kind) -> Error {
        self.type_error_named(describe(v).to_owned(), kind)
    }

    fn type_error_named(&self, value: String, kind: &Kind) -> Error {
        Error::JsonType {
            value,
            strukt: self.structs.last().copied().unwrap_or(""),
            field: self.path.join("."),
            go_type: go_type(kind),
        }
    }
}

/// A JSON value as Go sees it: `null` and an absent key both leave the zero value.
fn present(v: Option<&Value>) -> Option<&Value> {
    v.filter(|v| !v.is_null())
}

fn encode_fields(
    obj: Option<&Map<String, Value>>,
    msg: &Message,
    out: &mut Vec<u8>,
    ctx: &mut Ctx,
) -> Result<()> {
    if ctx.structs.len() > MAX_DEPTH {
        return Err(Error::TooDeep);
    }
    let fields: &'static [Field] = msg.fields;
    let mut write = |field: &'static Field| {
        if field.tag == 0 {
            return Ok(());
        }
        if let (true, Kind::Message(m)) = (field.inline, &field.kind) {
            // An embedded struct: its fields are this object's keys.
            let mark = begin_nested(field.tag, out);
            encode_fields(obj, m, out, ctx)?;
            end_nested(mark, out);
            return Ok(());
        }
        ctx.path.push(field.name);
        let v = present(obj.and_then(|o| o.get(field.name)));
        let result = encode_field(field, v, out, ctx);
        ctx.path.pop();
        result
    };
    // gogo writes fields in tag order, which need not be the Go struct's order.
    if fields.is_sorted_by_key(|f| f.tag) {
        fields.iter().try_for_each(&mut write)
    } else {
        let mut sorted: Vec<&'static Field> = fields.iter().collect();
        sorted.sort_by_key(|f| f.tag);
        sorted.into_iter().try_for_each(write)
    }
}

fn encode_field(
    field: &'static Field,
    v: Option<&Value>,
    out: &mut Vec<u8>,
    ctx: &mut Ctx,
) -> Result<()> {
    match field.kind {
        // A named slice type: its wrapper message, when the slice is not nil.
        Kind::Array(_) if field.wrapped => {
            let Some(v) = v else { return Ok(()) };
            let mark = begin_nested(field.tag, out);
            encode_struct(&field.kind, Some(v), out, ctx)?;
            end_nested(mark, out);
            Ok(())
        }
        Kind::Array(elem) => {
            let Some(v) = v else { return Ok(()) };
            let items = v.as_array().ok_or_else(|| ctx.type_error(v, &field.kind))?;
            for item in items {
                encode_value(field.tag, elem, present(Some(item)), out, ctx)?;
            }
            Ok(())
        }
        Kind::Map(elem) => match v {
            Some(v) => encode_map(field.tag, &field.kind, elem, v, out, ctx),
            None => Ok(()),
        },
        // A nil []byte is not written; any string, "" included, makes it non-nil.
        Kind::Bytes if v.is_none() => Ok(()),
        _ if v.is_none() && field.pointer => Ok(()),
        _ => encode_value(field.tag, &field.kind, v, out, ctx),
    }
}

/// Writes one occurrence of field `tag`: a singular field, an array element or a map
/// value. `None` is Go's zero value of the kind.
fn encode_value(
    tag: u32,
    kind: &'static Kind,
    v: Option<&Value>,
    out: &mut Vec<u8>,
    ctx: &mut Ctx,
) -> Result<()> {
    match kind {
        Kind::String => {
            let s = expect_str(v, kind, ctx)?.unwrap_or("");
            write_bytes_field(tag, s.as_bytes(), out);
        }
        Kind::Bool => {
            let b = match v {
                None => false,
                Some(Value::Bool(b)) => *b,
                Some(other) => return Err(ctx.type_error(other, kind)),
            };
            write_varint_field(tag, u64::from(b), out);
        }
        // Go converts int32 to uint64 with sign extension: negatives take ten bytes.
        Kind::Int32 | Kind::Int64 => write_varint_field(tag, expect_int(v, kind, ctx)? as u64, out),
        Kind::Float64 => {
            let f = match v {
                None => 0.0,
                Some(Value::Number(n)) => n.as_f64().unwrap_or(0.0),
                Some(other) => return Err(ctx.type_error(other, kind)),
            };
            write_double_field(tag, f, out);
        }
        Kind::Bytes => {
            let bytes = match expect_str(v, kind, ctx)? {
                Some(s) => STD_ENCODING
                    .decode_string(s)
                    .map_err(|e| Error::Base64(e.0))?,
                None => Vec::new(),
            };
            write_bytes_field(tag, &bytes, out);
        }
        _ => {
            let mark = begin_nested(tag, out);
            encode_struct(kind, v, out, ctx)?;
            end_nested(mark, out);
        }
    }
    Ok(())
}

/// The content of a length-delimited struct-like value.
fn encode_struct(
    kind: &'static Kind,
    v: Option<&Value>,
    out: &mut Vec<u8>,
    ctx: &mut Ctx,
) -> Result<()> {
    match kind {
        Kind::Time | Kind::MicroTime => encode_time(kind, v, out, ctx),
        Kind::Quantity => encode_quantity(v, out, ctx),
        Kind::IntOrString => encode_int_or_string(v, out, ctx),
        Kind::JsonSchemaPropsOrArray(u) => encode_schema_or_array(u, v, out, ctx),
        Kind::JsonSchemaPropsOrBool(u) => encode_schema_or_bool(u, v, out, ctx),
        Kind::JsonSchemaPropsOrStringArray(u) => encode_schema_or_string_array(u, v, out, ctx),
        Kind::FieldsV1 | Kind::RawExtension | Kind::Json | Kind::Deduced => {
            // Go keeps the JSON bytes it read; compact JSON is what those bytes are when
            // the object was written by a Go client or by this server.
            if let Some(v) = v {
                let raw = crate::golang::json::to_vec(v).map_err(|source| Error::EmbeddedJson {
                    what: embedded_name(kind),
                    source,
                })?;
                write_bytes_field(1, &raw, out);
            }
            Ok(())
        }
        Kind::Message(m) => {
            let obj = match v {
                None => None,
                Some(Value::Object(o)) => Some(o),
                Some(other) => return Err(ctx.type_error(other, kind)),
            };
            ctx.structs.push(m.short_name());
            let result = encode_fields(obj, m, out, ctx);
            ctx.structs.pop();
            result
        }
        // An array or map inside an array or map: go-to-protobuf's wrapper message.
        Kind::Array(elem) => {
            let Some(v) = v else { return Ok(()) };
            let items = v.as_array().ok_or_else(|| ctx.type_error(v, kind))?;
            for item in items {
                encode_value(1, elem, present(Some(item)), out, ctx)?;
            }
            Ok(())
        }
        Kind::Map(elem) => match v {
            Some(v) => encode_map(1, kind, elem, v, out, ctx),
            None => Ok(()),
        },
        Kind::String | Kind::Bool | Kind::Int32 | Kind::Int64 | Kind::Float64 | Kind::Bytes => {
            encode_value(1, kind, v, out, ctx)
        }
    }
}

/// `JSONSchemaPropsOrArray` (`u`, its protobuf message): an object is its `schema` (1), an
/// array its `jSONSchemas` (2); anything else leaves both empty, as its `UnmarshalJSON`
/// does.
fn encode_schema_or_array(
    u: &'static Message,
    v: Option<&Value>,
    out: &mut Vec<u8>,
    ctx: &mut Ctx,
) -> Result<()> {
    match (v, u.field_by_tag(1), u.field_by_tag(2)) {
        (Some(v @ Value::Object(_)), Some(schema), _) => {
            encode_value(schema.tag, &schema.kind, Some(v), out, ctx)
        }
        (Some(v @ Value::Array(_)), _, Some(schemas)) => encode_field(schemas, Some(v), out, ctx),
        _ => Ok(()),
    }
}

/// `JSONSchemaPropsOrBool`: `allows` (1) is written always, true for an object, which is
/// also its `schema` (2); a value neither boolean nor object is refused.
fn encode_schema_or_bool(
    u: &'static Message,
    v: Option<&Value>,
    out: &mut Vec<u8>,
    ctx: &mut Ctx,
) -> Result<()> {
    let allows = match v {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Object(_)) => true,
        Some(_) => return Err(Error::SchemaOrBool),
    };
    if let Some(f) = u.field_by_tag(1) {
        write_varint_field(f.tag, u64::from(allows), out);
    }
    match (v, u.field_by_tag(2)) {
        (Some(v @ Value::Object(_)), Some(schema)) => {
            encode_value(schema.tag, &schema.kind, Some(v), out, ctx)
        }
        _ => Ok(()),
    }
}

/// `JSONSchemaPropsOrStringArray`: an object is its `schema` (1), an array its `property`
/// (2); anything else leaves both empty.
fn encode_schema_or_string_array(
    u: &'static Message,
    v: Option<&Value>,
    out: &mut Vec<u8>,
    ctx: &mut Ctx,
) -> Result<()> {
    match (v, u.field_by_tag(1), u.field_by_tag(2)) {
        (Some(v @ Value::Object(_)), Some(schema), _) => {
            encode_value(schema.tag, &schema.kind, Some(v), out, ctx)
        }
        (Some(v @ Value::Array(_)), _, Some(property)) => encode_field(property, Some(v), out, ctx),
        _ => Ok(()),
    }
}

/// Map entries `{key = 1, value = 2}` in key order, as gogo sorts them.
fn encode_map(
    tag: u32,
    kind: &'static Kind,
    elem: &'static Kind,
    v: &Value,
    out: &mut Vec<u8>,
    ctx: &mut Ctx,
) -> Result<()> {
    let obj = v.as_object().ok_or_else(|| ctx.type_error(v, kind))?;
    let mut entries: Vec<(&String, &Value)> = obj.iter().collect();
    if !entries.is_sorted_by(|a, b| a.0 <= b.0) {
        entries.sort_by(|a, b| a.0.cmp(b.0));
    }
    for (key, value) in entries {
        let value = present(Some(value));
        let mark = begin_nested(tag, out);
        write_bytes_field(1, key.as_bytes(), out);
        // A nil []byte value is the one map value gogo leaves out.
        if !(matches!(elem, Kind::Bytes) && value.is_none()) {
            encode_value(2, elem, value, out, ctx)?;
        }
        end_nested(mark, out);
    }
    Ok(())
}

fn encode_time(kind: &Kind, v: Option<&Value>, out: &mut Vec<u8>, ctx: &mut Ctx) -> Result<()> {
    let Some(s) = expect_str(v, kind, ctx)? else {
        return Ok(());
    };
    let micro = matches!(kind, Kind::MicroTime);
    let t = parse_rfc3339(s).ok_or_else(|| Error::Time {
        value: crate::golang::strconv::quote(s),
        layout: if micro {
            "2006-01-02T15:04:05.000000Z07:00"
        } else {
            "2006-01-02T15:04:05Z07:00"
        },
    })?;
    if t.is_zero() {
        return Ok(());
    }
    // Time drops the fraction in protobuf (upstream's JSON has none either).
    let t = if micro {
        t.truncate_micros()
    } else {
        Time { nanos: 0, ..t }
    };
    write_varint_field(1, t.seconds as u64, out);
    write_varint_field(2, i64::from(t.nanos) as u64, out);
    Ok(())
}

fn encode_quantity(v: Option<&Value>, out: &mut Vec<u8>, ctx: &mut Ctx) -> Result<()> {
    // Quantity.UnmarshalJSON reads a number's text as it reads a string.
    let number;
    let s = match v {
        None => "0",
        Some(Value::String(s)) => s.trim(),
        Some(Value::Number(n)) => {
            number = n.to_string();
            &number
        }
        Some(other) => return Err(ctx.type_error(other, &Kind::Quantity)),
    };
    quantity::check(s).map_err(Error::Quantity)?;
    write_bytes_field(1, s.as_bytes(), out);
    Ok(())
}

fn encode_int_or_string(v: Option<&Value>, out: &mut Vec<u8>, ctx: &mut Ctx) -> Result<()> {
    let (ty, int, s) = match v {
        Some(Value::String(s)) => (1, 0, s.as_str()),
        _ => (0, expect_int(v, &Kind::Int32, ctx)?, ""),
    };
    write_varint_field(1, ty, out);
    write_varint_field(2, int as u64, out);
    write_bytes_field(3, s.as_bytes(), out);
    Ok(())
}

fn expect_str<'v>(v: Option<&'v Value>, kind: &Kind, ctx: &Ctx) -> Result<Option<&'v str>> {
    match v {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(ctx.type_error(other, kind)),
    }
}

/// An integer as `encoding/json` decodes it into `int32` or `int64`: no fraction, no
/// exponent, in range.
fn expect_int(v: Option<&Value>, kind: &Kind, ctx: &Ctx) -> Result<i64> {
    let Some(v) = v else { return Ok(0) };
    let Value::Number(n) = v else {
        return Err(ctx.type_error(v, kind));
    };
    let int = n
        .as_i64()
        .filter(|i| !matches!(kind, Kind::Int32) || i32::try_from(*i).is_ok());
    int.ok_or_else(|| ctx.type_error_named(format!("number {n}"), kind))
}

/// The Go type of an embedded JSON document, for errors.
pub(crate) fn embedded_name(kind: &Kind) -> &'static str {
    match kind {
        Kind::FieldsV1 => "metav1.FieldsV1",
        Kind::Json => "v1.JSON",
        _ => "RawExtension",
    }
}

/// The Go type a field of `kind` has, as errors name it; a message is assumed to live in a
/// package named `v1`, true of most API types.
pub(crate) fn go_type(kind: &Kind) -> String {
    match kind {
        Kind::String => "string".into(),
        Kind::Bool => "bool".into(),
        Kind::Int32 => "int32".into(),
        Kind::Int64 => "int64".into(),
        Kind::Float64 => "float64".into(),
        Kind::Bytes => "[]uint8".into(),
        Kind::Time => "v1.Time".into(),
        Kind::MicroTime => "v1.MicroTime".into(),
        Kind::Quantity => "resource.Quantity".into(),
        Kind::IntOrString => "intstr.IntOrString".into(),
        Kind::FieldsV1 => "v1.FieldsV1".into(),
        Kind::RawExtension => "runtime.RawExtension".into(),
        Kind::Json | Kind::Deduced => "v1.JSON".into(),
        Kind::Message(m)
        | Kind::JsonSchemaPropsOrArray(m)
        | Kind::JsonSchemaPropsOrBool(m)
        | Kind::JsonSchemaPropsOrStringArray(m) => format!("v1.{}", m.short_name()),
        Kind::Array(k) => format!("[]{}", go_type(k)),
        Kind::Map(k) => format!("map[string]{}", go_type(k)),
    }
}
