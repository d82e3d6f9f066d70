//! The envelope of a protobuf body (`pkg/runtime/serializer/protobuf/protobuf.go`): the
//! magic `k8s\0`, then a `runtime.Unknown` message
//! (`pkg/runtime/generated.proto`):
//!
//! ```text
//! message Unknown {
//!   optional TypeMeta typeMeta = 1;        // { apiVersion = 1; kind = 2; }
//!   optional bytes raw = 2;                // the object's own message
//!   optional string contentEncoding = 3;
//!   optional string contentType = 4;
//! }
//! ```
//!
//! The serializer writes every field, the two empty strings included (`Unknown`'s
//! `NestedMarshalTo`), so `encode_envelope` does too.

use serde_json::Value;

use super::wire::{Reader, begin_nested, end_nested, write_bytes_field};
use super::{Error, Result, encode};
use crate::golang::json::coerce_utf8;
use crate::schema::Message;

/// `runtime.ContentTypeProtobuf`.
pub const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// The four bytes in front of every enveloped message: `k8s` and encoding style 0.
pub const MAGIC: [u8; 4] = *b"k8s\x00";

/// `runtime.Unknown`: an object's type and its encoded bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unknown {
    pub api_version: String,
    pub kind: String,
    /// The object's message, encoded.
    pub raw: Vec<u8>,
    pub content_encoding: String,
    pub content_type: String,
}

impl Unknown {
    /// Appends the magic and this message, as the serializer writes an `Unknown`. `raw` is
    /// always written: Go leaves out only a nil `Raw`, which an encoded object never is.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&MAGIC);
        write_unknown(&self.api_version, &self.kind, out, |out| {
            out.extend_from_slice(&self.raw)
        });
        write_bytes_field(3, self.content_encoding.as_bytes(), out);
        write_bytes_field(4, self.content_type.as_bytes(), out);
    }
}

/// The envelope of an object whose message is `raw`: what the serializer writes for a
/// typed object of `api_version` and `kind` (content encoding and type empty).
pub fn encode_envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len() + api_version.len() + kind.len() + 16);
    write_envelope(api_version, kind, raw, &mut out);
    out
}

/// [`encode_envelope`], appending to `out`.
pub fn write_envelope(api_version: &str, kind: &str, raw: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&MAGIC);
    write_unknown(api_version, kind, out, |out| out.extend_from_slice(raw));
    write_bytes_field(3, b"", out);
    write_bytes_field(4, b"", out);
}

/// The envelope of `value`, an object of type `msg`, encoded straight into place.
pub fn encode_object(
    value: &Value,
    msg: &Message,
    api_version: &str,
    kind: &str,
) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(&MAGIC);
    let mut result = Ok(());
    write_unknown(api_version, kind, &mut out, |out| {
        result = encode(value, msg, out)
    });
    result?;
    write_bytes_field(3, b"", &mut out);
    write_bytes_field(4, b"", &mut out);
    Ok(out)
}

/// Fields 1 (type meta) and 2 (raw, whose content `raw` writes).
fn write_unknown(api_version: &str, kind: &str, out: &mut Vec<u8>, raw: impl FnOnce(&mut Vec<u8>)) {
    let mark = begin_nested(1, out);
    write_bytes_field(1, api_version.as_bytes(), out);
    write_bytes_field(2, kind.as_bytes(), out);
    end_nested(mark, out);
    let mark = begin_nested(2, out);
    raw(out);
    end_nested(mark, out);
}

/// Reads an envelope, with the serializer's errors for bodies that are not one.
pub fn decode_envelope(data: &[u8]) -> Result<Unknown> {
    if data.is_empty() {
        return Err(Error::EmptyData);
    }
    let Some(body) = data.strip_prefix(&MAGIC) else {
        return Err(Error::MissingPrefix);
    };
    if body.is_empty() {
        return Err(Error::EmptyBody);
    }
    let mut unknown = Unknown::default();
    let mut r = Reader::new(body);
    while let Some((tag, wire_type)) = r.next_field("Unknown")? {
        let field = match tag {
            1 => "TypeMeta",
            2 => "Raw",
            3 => "ContentEncoding",
            4 => "ContentType",
            _ => {
                r.skip(wire_type)?;
                continue;
            }
        };
        if wire_type != super::wire::LEN {
            return Err(Error::WrongWireType {
                wire_type,
                field: field.into(),
            });
        }
        let bytes = r.bytes()?;
        match tag {
            1 => decode_type_meta(bytes, &mut unknown)?,
            2 => unknown.raw = bytes.to_vec(),
            3 => unknown.content_encoding = coerce_utf8(bytes).into_owned(),
            _ => unknown.content_type = coerce_utf8(bytes).into_owned(),
        }
    }
    Ok(unknown)
}

/// `runtime.TypeMeta`, merged into what earlier occurrences set.
fn decode_type_meta(bytes: &[u8], unknown: &mut Unknown) -> Result<()> {
    let mut r = Reader::new(bytes);
    while let Some((tag, wire_type)) = r.next_field("TypeMeta")? {
        if tag > 2 {
            r.skip(wire_type)?;
            continue;
        }
        if wire_type != super::wire::LEN {
            let field = if tag == 1 { "APIVersion" } else { "Kind" };
            return Err(Error::WrongWireType {
                wire_type,
                field: field.into(),
            });
        }
        let s = coerce_utf8(r.bytes()?).into_owned();
        if tag == 1 {
            unknown.api_version = s;
        } else {
            unknown.kind = s;
        }
    }
    Ok(())
}
