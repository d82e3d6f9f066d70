//! Go's `json.Indent`, which `json.MarshalIndent` applies: two-space indentation of
//! compact JSON, on the bytes, keeping key order.

use super::is_space;

/// Go's `json.Indent(dst, src, "", "  ")` over compact JSON: what `json.MarshalIndent`
/// writes for the value `src` encodes, keeping its key order. Works on the bytes, so a
/// large list is re-indented without being decoded. Trailing whitespace is dropped, as
/// `MarshalIndent` writes none.
pub fn indent(src: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(src.len() + src.len() / 4);
    Indenter::default().push(src, &mut out);
    out
}

/// [`indent`] over a document that arrives in pieces. The only look-ahead, whether a
/// container is empty (`{}`, `[]`), stays within a piece: a piece must not end right
/// after an opening `{` or `[` whose container continues in the next one.
#[derive(Debug, Default)]
pub struct Indenter {
    depth: usize,
    in_string: bool,
    escaped: bool,
}

impl Indenter {
    /// Appends the indented form of `src`, the next piece of the document, to `out`.
    pub fn push(&mut self, src: &[u8], out: &mut Vec<u8>) {
        let newline = |out: &mut Vec<u8>, depth: usize| {
            out.push(b'\n');
            out.extend(std::iter::repeat_n(b' ', depth * 2));
        };
        let mut i = 0;
        while i < src.len() {
            let c = src[i];
            i += 1;
            if self.in_string {
                out.push(c);
                match (self.escaped, c) {
                    (true, _) => self.escaped = false,
                    (false, b'\\') => self.escaped = true,
                    (false, b'"') => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match c {
                b'"' => {
                    self.in_string = true;
                    out.push(c);
                }
                b'{' | b'[' => {
                    out.push(c);
                    let close = if c == b'{' { b'}' } else { b']' };
                    let next = src[i..].iter().position(|b| !is_space(*b)).map(|p| i + p);
                    if let Some(j) = next.filter(|&j| src[j] == close) {
                        out.push(close);
                        i = j + 1;
                    } else {
                        self.depth += 1;
                        newline(out, self.depth);
                    }
                }
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    newline(out, self.depth);
                    out.push(c);
                }
                b',' => {
                    out.push(c);
                    newline(out, self.depth);
                }
                b':' => out.extend_from_slice(b": "),
                c if is_space(c) => {}
                c => out.push(c),
            }
        }
    }
}

#[cfg(test)]
mod indent_tests {
    use super::indent;

    #[test]
    fn indents_like_go_marshal_indent() {
        let src = br#"{"kind":"List","items":[{"a":"x,y:{\"z\"}","b":[]},{}],"m":{},"n":[1,2]}
"#;
        let want = "{\n  \"kind\": \"List\",\n  \"items\": [\n    {\n      \"a\": \"x,y:{\\\"z\\\"}\",\n      \"b\": []\n    },\n    {}\n  ],\n  \"m\": {},\n  \"n\": [\n    1,\n    2\n  ]\n}";
        assert_eq!(String::from_utf8(indent(src)).unwrap(), want);
        assert_eq!(indent(b"\"s\"\n"), b"\"s\"");
        // Unbalanced input does not panic.
        assert_eq!(indent(b"]]}"), b"\n]\n]\n}");
    }
}
