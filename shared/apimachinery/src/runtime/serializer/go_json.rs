use std::io;

use crate::gostr::quote;
use crate::schema::{Kind, Message};

/// Go's `maxNestingDepth`.
const MAX_DEPTH: usize = 10000;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Parse {
    ObjectKey,
    ObjectValue,
    ArrayValue,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    BeginValueOrEmpty,
    BeginValue,
    BeginStringOrEmpty,
    BeginString,
    EndValue,
    EndTop,
    InString,
    InStringEsc,
    InStringEscU(u8),
    Neg,
    One,
    Zero,
    Dot,
    Dot0,
    E,
    ESign,
    E0,
    Literal(&'static [u8], u8),
}

/// Go's `quoteChar`.
fn quote_char(c: u8) -> String {
    match c {
        b'\'' => r"'\''".to_owned(),
        b'"' => r#"'"'"#.to_owned(),
        _ => {
            let q = quote(&char::from(c).to_string());
            format!("'{}'", &q[1..q.len() - 1])
        }
    }
}

struct Scanner {
    state: State,
    stack: Vec<Parse>,
    err: Option<String>,
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

impl Scanner {
    fn error(&mut self, c: u8, context: &str) {
        self.err = Some(format!("invalid character {} {context}", quote_char(c)));
    }

    fn push(&mut self, p: Parse, next: State) {
        self.stack.push(p);
        if self.stack.len() > MAX_DEPTH {
            self.err = Some("exceeded max depth".to_owned());
        }
        self.state = next;
    }

    fn begin_value(&mut self, c: u8) {
        if is_space(c) {
            return;
        }
        self.state = match c {
            b'{' => return self.push(Parse::ObjectKey, State::BeginStringOrEmpty),
            b'[' => return self.push(Parse::ArrayValue, State::BeginValueOrEmpty),
            b'"' => State::InString,
            b'-' => State::Neg,
            b'0' => State::Zero,
            b'1'..=b'9' => State::One,
            b't' => State::Literal(b"rue", 0),
            b'f' => State::Literal(b"alse", 0),
            b'n' => State::Literal(b"ull", 0),
            _ => return self.error(c, "looking for beginning of value"),
        };
    }

    fn end_value(&mut self, c: u8) {
        let Some(top) = self.stack.last().copied() else {
            self.state = State::EndTop;
            return self.end_top(c);
        };
        if is_space(c) {
            self.state = State::EndValue;
            return;
        }
        let n = self.stack.len() - 1;
        match (top, c) {
            (Parse::ObjectKey, b':') => {
                self.stack[n] = Parse::ObjectValue;
                self.state = State::BeginValue;
            }
            (Parse::ObjectKey, _) => self.error(c, "after object key"),
            (Parse::ObjectValue, b',') => {
                self.stack[n] = Parse::ObjectKey;
                self.state = State::BeginString;
            }
            (Parse::ObjectValue, b'}') | (Parse::ArrayValue, b']') => {
                self.stack.pop();
                self.state = if self.stack.is_empty() {
                    State::EndTop
                } else {
                    State::EndValue
                };
            }
            (Parse::ObjectValue, _) => self.error(c, "after object key:value pair"),
            (Parse::ArrayValue, b',') => self.state = State::BeginValue,
            (Parse::ArrayValue, _) => self.error(c, "after array element"),
        }
    }

    fn end_top(&mut self, c: u8) {
        if !is_space(c) {
            self.error(c, "after top-level value");
        }
    }

    fn step(&mut self, c: u8) {
        match self.state {
            State::BeginValueOrEmpty => {
                if is_space(c) {
                    return;
                }
                if c == b']' {
                    return self.end_value(c);
                }
                self.begin_value(c)
            }
            State::BeginValue => self.begin_value(c),
            State::BeginStringOrEmpty => {
                if is_space(c) {
                    return;
                }
                if c == b'}' {
                    let n = self.stack.len() - 1;
                    self.stack[n] = Parse::ObjectValue;
                    return self.end_value(c);
                }
                self.begin_string(c)
            }
            State::BeginString => self.begin_string(c),
            State::EndValue => self.end_value(c),
            State::EndTop => self.end_top(c),
            State::InString => match c {
                b'"' => self.state = State::EndValue,
                b'\\' => self.state = State::InStringEsc,
                0..0x20 => self.error(c, "in string literal"),
                _ => {}
            },
            State::InStringEsc => match c {
                b'b' | b'f' | b'n' | b'r' | b't' | b'\\' | b'/' | b'"' => {
                    self.state = State::InString
                }
                b'u' => self.state = State::InStringEscU(0),
                _ => self.error(c, "in string escape code"),
            },
            State::InStringEscU(n) => {
                if !c.is_ascii_hexdigit() {
                    return self.error(c, "in \\u hexadecimal character escape");
                }
                self.state = if n == 3 {
                    State::InString
                } else {
                    State::InStringEscU(n + 1)
                };
            }
            State::Neg => match c {
                b'0' => self.state = State::Zero,
                b'1'..=b'9' => self.state = State::One,
                _ => self.error(c, "in numeric literal"),
            },
            State::One if c.is_ascii_digit() => {}
            State::One | State::Zero => match c {
                b'.' => self.state = State::Dot,
                b'e' | b'E' => self.state = State::E,
                _ => self.end_value(c),
            },
            State::Dot if c.is_ascii_digit() => self.state = State::Dot0,
            State::Dot => self.error(c, "after decimal point in numeric literal"),
            State::Dot0 => match c {
                b'0'..=b'9' => {}
                b'e' | b'E' => self.state = State::E,
                _ => self.end_value(c),
            },
            State::E if c == b'+' || c == b'-' => self.state = State::ESign,
            State::E | State::ESign => {
                if c.is_ascii_digit() {
                    self.state = State::E0;
                } else {
                    self.error(c, "in exponent of numeric literal");
                }
            }
            State::E0 if c.is_ascii_digit() => {}
            State::E0 => self.end_value(c),
            State::Literal(rest, i) => {
                let want = rest[usize::from(i)];
                if c != want {
                    let word = match rest {
                        b"rue" => "true",
                        b"alse" => "false",
                        _ => "null",
                    };
                    let context = format!("in literal {word} (expecting {})", quote_char(want));
                    return self.error(c, &context);
                }
                self.state = if usize::from(i) + 1 == rest.len() {
                    State::EndValue
                } else {
                    State::Literal(rest, i + 1)
                };
            }
        }
    }

    fn begin_string(&mut self, c: u8) {
        if is_space(c) {
            return;
        }
        if c == b'"' {
            self.state = State::InString;
        } else {
            self.error(c, "looking for beginning of object key string");
        }
    }
}

/// Go's `checkValid`: `Err` holds the `SyntaxError` text.
pub fn check_valid(data: &[u8]) -> Result<(), String> {
    let mut s = Scanner {
        state: State::BeginValue,
        stack: Vec::new(),
        err: None,
    };
    for &c in data {
        s.step(c);
        if let Some(e) = s.err.take() {
            return Err(e);
        }
    }
    if s.state == State::EndTop {
        return Ok(());
    }
    s.step(b' ');
    if let Some(e) = s.err.take() {
        return Err(e);
    }
    if s.state == State::EndTop {
        return Ok(());
    }
    Err("unexpected end of JSON input".to_owned())
}

/// Paths of repeated object keys in document order (`a.b`, `items[0].name`).
pub fn duplicate_fields(data: &[u8]) -> Vec<String> {
    strict_fields(data, None)
        .into_iter()
        .filter_map(|f| match f {
            StrictField::Duplicate(path) => Some(path),
            StrictField::Unknown(_) => None,
        })
        .collect()
}

/// What strict decoding (sigs.k8s.io/json's `UnmarshalStrict`) reports about a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StrictField {
    /// A key repeated in one object.
    Duplicate(String),
    /// A key the type does not have (case-sensitive, as upstream's decoder). Reported once;
    /// nothing under it is looked at.
    Unknown(String),
}

/// Repeated keys and, when `schema` is given, keys the type does not know, in document
/// order, as paths (`spec.template`, `items[0].name`).
pub fn strict_fields(data: &[u8], schema: Option<&'static Message>) -> Vec<StrictField> {
    let mut walker = Walker {
        data,
        pos: 0,
        out: Vec::new(),
    };
    let kind = schema.map(Kind::Message);
    let ctx = kind.as_ref().map_or(Ctx::Loose, Ctx::Typed);
    let _ = walker.value(&mut String::new(), ctx);
    walker.out
}

struct Walker<'a> {
    data: &'a [u8],
    pos: usize,
    out: Vec<StrictField>,
}

/// What the walker knows of the value it is in.
#[derive(Clone, Copy)]
enum Ctx<'k> {
    /// No schema: only repeated keys are reported.
    Loose,
    /// A value of this kind.
    Typed(&'k Kind),
    /// Content the decoder does not look into (an unknown field's value, raw JSON).
    Skip,
}

impl<'k> Ctx<'k> {
    /// Whether `key` is a member of this object, and the context of its value.
    fn member(self, key: &str) -> (bool, Ctx<'k>) {
        match self {
            Ctx::Typed(Kind::Message(m)) => match m.field(key) {
                Some(f) => (true, Ctx::Typed(&f.kind)),
                None => (false, Ctx::Skip),
            },
            Ctx::Typed(Kind::Map(inner)) => (true, Ctx::Typed(inner)),
            Ctx::Typed(_) | Ctx::Skip => (true, Ctx::Skip),
            Ctx::Loose => (true, Ctx::Loose),
        }
    }

    fn element(self) -> Ctx<'k> {
        match self {
            Ctx::Typed(Kind::Array(inner)) => Ctx::Typed(inner),
            Ctx::Loose => Ctx::Loose,
            _ => Ctx::Skip,
        }
    }
}

impl Walker<'_> {
    fn skip_space(&mut self) {
        while self.pos < self.data.len() && is_space(self.data[self.pos]) {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.data.get(self.pos).copied()
    }

    /// Walks one value; recursion depth is bounded by the scanner's 10000 levels
    /// only when `check_valid` ran first, so it is bounded here as well.
    fn value(&mut self, path: &mut String, ctx: Ctx<'_>) -> Option<()> {
        if path.len() > 64 * 1024 {
            return None;
        }
        match self.peek()? {
            b'{' => self.object(path, ctx),
            b'[' => self.array(path, ctx),
            b'"' => self.string().map(drop),
            _ => {
                while self.pos < self.data.len()
                    && !matches!(self.data[self.pos], b',' | b'}' | b']')
                    && !is_space(self.data[self.pos])
                {
                    self.pos += 1;
                }
                Some(())
            }
        }
    }

    fn object(&mut self, path: &mut String, ctx: Ctx<'_>) -> Option<()> {
        let report = !matches!(ctx, Ctx::Skip);
        self.pos += 1;
        let mut seen: Vec<String> = Vec::new();
        if self.peek()? == b'}' {
            self.pos += 1;
            return Some(());
        }
        loop {
            self.peek()?;
            let key = self.string()?;
            let len = path.len();
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(&key);
            let (known, member) = ctx.member(&key);
            if seen.contains(&key) {
                if known && report {
                    self.out.push(StrictField::Duplicate(path.clone()));
                }
            } else {
                if !known {
                    self.out.push(StrictField::Unknown(path.clone()));
                }
                seen.push(key);
            }
            if self.peek()? != b':' {
                return None;
            }
            self.pos += 1;
            self.value(path, member)?;
            path.truncate(len);
            match self.peek()? {
                b',' => self.pos += 1,
                b'}' => {
                    self.pos += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    fn array(&mut self, path: &mut String, ctx: Ctx<'_>) -> Option<()> {
        let element = ctx.element();
        self.pos += 1;
        if self.peek()? == b']' {
            self.pos += 1;
            return Some(());
        }
        let mut i = 0usize;
        loop {
            let len = path.len();
            path.push_str(&format!("[{i}]"));
            self.value(path, element)?;
            path.truncate(len);
            i += 1;
            match self.peek()? {
                b',' => self.pos += 1,
                b']' => {
                    self.pos += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A string token at `pos`, decoded (invalid escapes and bytes become U+FFFD).
    fn string(&mut self) -> Option<String> {
        if self.data.get(self.pos) != Some(&b'"') {
            return None;
        }
        let start = self.pos;
        self.pos += 1;
        while self.pos < self.data.len() {
            match self.data[self.pos] {
                b'\\' => self.pos += 2,
                b'"' => {
                    self.pos += 1;
                    let raw = String::from_utf8_lossy(&self.data[start..self.pos]);
                    return Some(
                        serde_json::from_str::<String>(&raw)
                            .unwrap_or_else(|_| raw[1..raw.len() - 1].to_owned()),
                    );
                }
                _ => self.pos += 1,
            }
        }
        None
    }
}

/// Go's float text in `encoding/json`: shortest round-trip digits, exponent form below
/// 1e-6 and from 1e21 (`1e+21`, `1e-7`), plain decimal otherwise (`1`, not `1.0`).
pub fn format_float(f: f64) -> String {
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let s = format!("{f:e}");
        match s.split_once('e') {
            Some((m, e)) if !e.starts_with('-') => format!("{m}e+{e}"),
            _ => s,
        }
    } else {
        format!("{f}")
    }
}

/// serde_json's compact or pretty formatter with Go's string escaping and floats.
pub struct GoFormatter {
    pretty: Option<serde_json::ser::PrettyFormatter<'static>>,
}

impl GoFormatter {
    pub fn new(pretty: bool) -> GoFormatter {
        GoFormatter {
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

impl serde_json::ser::Formatter for GoFormatter {
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
        w.write_all(format_float(v).as_bytes())
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, w: &mut W, v: f32) -> io::Result<()> {
        // Go formats float32 with 32-bit shortest digits.
        let s = format_float(f64::from(v));
        let short = format!("{v}");
        if s.contains('e') {
            w.write_all(s.as_bytes())
        } else {
            w.write_all(short.as_bytes())
        }
    }

    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        crate::json::write_string_fragment(w, fragment)
    }
}

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
