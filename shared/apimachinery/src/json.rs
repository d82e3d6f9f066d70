//! JSON bytes as Go's `encoding/json` writes them, which is what upstream's serializer
//! puts on the wire: compact, and with `<`, `>`, `&`, U+2028 and U+2029 escaped as `\u003c`,
//! `\u003e`, `\u0026`, `\u2028` and `\u2029` (serde_json leaves them as they are).

use std::io;

use serde::Serialize;

/// Compact JSON of `value`, escaped as Go's `json.Marshal` escapes it (no trailing newline).
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(128);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, GoFormatter);
    value.serialize(&mut ser)?;
    Ok(out)
}

/// serde_json's compact formatter, but escaping the characters Go's encoder escapes for
/// HTML safety. Everything else (control characters, quotes, backslash) serde_json already
/// escapes the way Go 1.22+ does.
struct GoFormatter;

impl serde_json::ser::Formatter for GoFormatter {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        write_string_fragment(writer, fragment)
    }
}

/// A string fragment with the characters Go escapes for HTML safety written as `\uXXXX`;
/// the one place every Go-compatible JSON formatter of the project escapes strings.
pub fn write_string_fragment<W: ?Sized + io::Write>(
    writer: &mut W,
    fragment: &str,
) -> io::Result<()> {
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
        writer.write_all(&fragment.as_bytes()[start..i])?;
        writer.write_all(escaped.as_bytes())?;
        start = i + c.len_utf8();
    }
    writer.write_all(&fragment.as_bytes()[start..])
}

#[cfg(test)]
mod tests {
    use super::to_vec;

    #[test]
    fn escapes_like_go() {
        let got = to_vec("a<b>&c\u{2028}\u{2029}\"\\\n\u{1}é").unwrap();
        assert_eq!(
            String::from_utf8(got).unwrap(),
            r#""a\u003cb\u003e\u0026c\u2028\u2029\"\\\n\u0001é""#
        );
    }

    #[test]
    fn compact_maps_keep_field_order() {
        #[derive(serde::Serialize)]
        struct T {
            b: u8,
            a: &'static str,
        }
        let got = to_vec(&T { b: 1, a: "<x>" }).unwrap();
        assert_eq!(got, br#"{"b":1,"a":"\u003cx\u003e"}"#);
    }
}
