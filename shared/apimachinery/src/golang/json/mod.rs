//! Go's `encoding/json` where its bytes and texts reach the wire:
//!
//! - encoding: compact or indented JSON as `json.Marshal` / `json.MarshalIndent` write it,
//!   with `<`, `>`, `&`, U+2028 and U+2029 escaped as `\u003c`, ... (serde_json leaves
//!   them as they are) and floats in Go's form (`1`, not `1.0`; `1e+21`, `1e-7`);
//! - decoding: the scanner's syntax errors ([`check_valid`]), invalid UTF-8 in strings
//!   coerced one U+FFFD per byte, and the JSON kind words of `UnmarshalTypeError`
//!   (`json: cannot unmarshal array into ...`).

mod indent;
mod scanner;

use std::borrow::Cow;
use std::io;

use serde::Serialize;
use serde_json::Value;

pub use indent::{Indenter, indent};
pub use scanner::check_valid;
pub(crate) use scanner::is_space;

/// Compact JSON of `value` as Go's `json.Marshal` writes it (no trailing newline).
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(128);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Formatter::new(false));
    value.serialize(&mut ser)?;
    Ok(out)
}

/// `json.Unmarshal(data, &interface{})`: Go's syntax error text first (see
/// [`check_valid`]), then the value, invalid UTF-8 in strings coerced as Go does. `Err` is
/// Go's error text (or serde_json's, for a document Go takes and serde_json does not, such
/// as one nested deeper than serde_json's 128 levels).
pub fn unmarshal(data: &[u8]) -> Result<Value, String> {
    check_valid(data)?;
    serde_json::from_str(&coerce_utf8(data)).map_err(|e| e.to_string())
}

/// Bytes as Go's decoder reads a string: each byte that is not part of valid UTF-8
/// becomes U+FFFD (Rust's lossy conversion may use one U+FFFD for several bytes).
/// Borrows when the bytes are valid.
pub fn coerce_utf8(bytes: &[u8]) -> Cow<'_, str> {
    let first = match std::str::from_utf8(bytes) {
        Ok(valid) => return Cow::Borrowed(valid),
        Err(e) => e,
    };
    let mut out = String::with_capacity(bytes.len() + 8);
    let mut rest = bytes;
    let mut err = Some(first);
    while let Some(e) = err {
        let (valid, after) = rest.split_at(e.valid_up_to());
        out.push_str(std::str::from_utf8(valid).unwrap_or_default());
        out.push('\u{fffd}');
        rest = after.get(1..).unwrap_or_default();
        err = std::str::from_utf8(rest).err();
    }
    out.push_str(std::str::from_utf8(rest).unwrap_or_default());
    Cow::Owned(out)
}

/// The `Value` word of Go's `UnmarshalTypeError`: the JSON kind of `v` as in
/// `json: cannot unmarshal array into Go value of type ...`. (Go writes `number <text>`
/// instead when a number does not fit an integer or float field.)
pub fn describe(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Go's float text in `encoding/json` (`floatEncoder`): the shortest digits of a float of
/// `bit_size` bits, exponent form below 1e-6 and from 1e21 with a one-digit exponent kept
/// short (`1e+21`, `1e-7`), plain decimal otherwise (`1`, not `1.0`).
pub fn format_float(f: f64, bit_size: u32) -> String {
    let abs = if bit_size == 32 {
        f64::from((f as f32).abs())
    } else {
        f.abs()
    };
    if abs == 0.0 || (1e-6..1e21).contains(&abs) {
        return crate::golang::strconv::format_float(f, b'f', bit_size);
    }
    let mut s = crate::golang::strconv::format_float(f, b'e', bit_size);
    // Go cleans up `e-09` to `e-9`.
    let n = s.len();
    if n >= 4 && s.as_bytes()[n - 4..n - 1] == *b"e-0" {
        s.remove(n - 2);
    }
    s
}

/// A string fragment with the characters Go escapes for HTML safety written as `\uXXXX`.
/// Everything else (control characters, quotes, backslash) serde_json already escapes the
/// way Go 1.22+ does.
pub fn write_string_fragment<W: ?Sized + io::Write>(
    writer: &mut W,
    fragment: &str,
) -> io::Result<()> {
    let bytes = fragment.as_bytes();
    // Most strings have none of these: a vectorized scan for `<`, `>`, `&` and 0xE2 (the
    // first byte of U+2028 and U+2029) spares decoding their characters.
    if memchr::memchr3(b'<', b'>', b'&', bytes).is_none() && memchr::memchr(0xE2, bytes).is_none() {
        return writer.write_all(bytes);
    }
    let mut start = 0;
    for (i, c) in fragment.char_indices() {
        let escaped = match c {
            '<' => "\\u003c",
            '>' => "\\u003e",
            '&' => "\\u0026",
            '\u{2028}' => "\\u2028",
            '\u{2029}' => "\\u2029",
            _ => continue,
        };
        writer.write_all(&bytes[start..i])?;
        writer.write_all(escaped.as_bytes())?;
        start = i + c.len_utf8();
    }
    writer.write_all(&bytes[start..])
}

/// Go's `compact(dst, src, escapeHTML=true)`, which `json.Marshal` applies to what a
/// `json.Marshaler` (`json.RawMessage`, `runtime.Unknown`) returns: the whitespace between
/// tokens dropped, and `<`, `>`, `&`, U+2028 and U+2029 inside strings escaped. `src` must
/// be valid JSON (a `RawValue` is).
pub fn compact<W: ?Sized + io::Write>(writer: &mut W, src: &[u8]) -> io::Result<()> {
    let mut in_string = false;
    let mut escaped = false;
    let mut start = 0;
    for (i, &c) in src.iter().enumerate() {
        // What replaces the bytes from `i` on, and how many it replaces.
        let replacement: Option<(&[u8], usize)> = if !in_string {
            in_string = c == b'"';
            is_space(c).then_some((b"", 1))
        } else if escaped {
            escaped = false;
            None
        } else {
            match c {
                b'\\' => {
                    escaped = true;
                    None
                }
                b'"' => {
                    in_string = false;
                    None
                }
                b'<' => Some((b"\\u003c", 1)),
                b'>' => Some((b"\\u003e", 1)),
                b'&' => Some((b"\\u0026", 1)),
                // U+2028 and U+2029 are E2 80 A8 and E2 80 A9.
                0xE2 if src[i + 1..].starts_with(&[0x80, 0xA8]) => Some((b"\\u2028", 3)),
                0xE2 if src[i + 1..].starts_with(&[0x80, 0xA9]) => Some((b"\\u2029", 3)),
                _ => None,
            }
        };
        if let Some((text, len)) = replacement {
            writer.write_all(&src[start..i])?;
            writer.write_all(text)?;
            start = i + len;
        }
    }
    writer.write_all(&src[start..])
}

/// serde_json's compact or pretty (two-space) formatter writing strings and floats as
/// Go's encoder does.
pub struct Formatter {
    pretty: Option<serde_json::ser::PrettyFormatter<'static>>,
}

impl Formatter {
    pub fn new(pretty: bool) -> Formatter {
        Formatter {
            pretty: pretty.then(serde_json::ser::PrettyFormatter::new),
        }
    }
}

macro_rules! delegate {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $name<W: ?Sized + io::Write>(&mut self, w: &mut W $(, $arg: $ty)*) -> io::Result<()> {
            match &mut self.pretty {
                Some(p) => p.$name(w $(, $arg)*),
                None => serde_json::ser::CompactFormatter.$name(w $(, $arg)*),
            }
        }
    )*};
}

impl serde_json::ser::Formatter for Formatter {
    delegate! {
        begin_array();
        end_array();
        begin_array_value(first: bool);
        end_array_value();
        begin_object();
        end_object();
        begin_object_key(first: bool);
        end_object_key();
        begin_object_value();
        end_object_value();
    }

    fn write_f64<W: ?Sized + io::Write>(&mut self, w: &mut W, v: f64) -> io::Result<()> {
        w.write_all(format_float(v, 64).as_bytes())
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, w: &mut W, v: f32) -> io::Result<()> {
        w.write_all(format_float(f64::from(v), 32).as_bytes())
    }

    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        write_string_fragment(w, fragment)
    }

    fn write_raw_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        // Pretty output leaves a raw part compact (Go's MarshalIndent indents it too).
        compact(w, fragment.as_bytes())
    }
}

#[cfg(test)]
mod tests;
