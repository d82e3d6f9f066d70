//! Request and response bodies as upstream's JSON/YAML serializer
//! (`k8s.io/apimachinery/pkg/runtime/serializer/json`) reads and writes them.
//!
//! Decoding: JSON is checked by a port of Go's `encoding/json` scanner so that malformed
//! input fails with upstream's exact text (`couldn't get version/kind; json parse error:
//! invalid character ...`), then `apiVersion`/`kind` are read as upstream's
//! `SimpleMetaFactory.Interpret` reads them. YAML becomes JSON as `sigs.k8s.io/yaml` makes
//! it (only the first document counts). Strict field validation finds repeated keys, which
//! serde_json silently collapses, by scanning the raw input.
//!
//! Encoding: compact JSON with Go's escaping and a trailing newline (`json.Encoder`),
//! pretty JSON with two-space indent and no newline (`json.MarshalIndent`), and YAML laid
//! out as `sigs.k8s.io/yaml`'s `JSONToYAML` (goyaml.v2) lays it out.

use bytes::Bytes;
use kas_apimachinery::Status;
use kas_apimachinery::gostr::quote;
use serde::Serialize;
use serde_json::Value;
use thiserror::Error;

use crate::negotiation::GroupVersionKind;

/// Why a body could not be decoded; `Display` is upstream's error text.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum DecodeError {
    /// `SimpleMetaFactory.Interpret` failed on JSON (syntax, or a non-string kind).
    #[error("couldn't get version/kind; json parse error: {0}")]
    JsonParse(String),
    /// `schema.ParseGroupVersion` failed on `apiVersion`.
    #[error("unexpected GroupVersion string: {0}")]
    GroupVersion(String),
    /// `yaml.YAMLToJSON` failed.
    #[error("error converting YAML to JSON: yaml: {0}")]
    Yaml(String),
    /// `runtime.NewMissingKindErr(data)`.
    #[error("Object 'Kind' is missing in '{0}'")]
    MissingKind(String),
    /// `runtime.NewMissingVersionErr(data)`.
    #[error("Object 'apiVersion' is missing in '{0}'")]
    MissingVersion(String),
    /// `runtime.NewStrictDecodingError(errs)`: each entry one error text.
    #[error("strict decoding error: {}", .0.join(", "))]
    Strict(Vec<String>),
}

pub type Result<T, E = DecodeError> = std::result::Result<T, E>;

/// A decoded body: the object and the group, version and kind it declares.
#[derive(Clone, Debug, PartialEq)]
pub struct Decoded {
    pub object: Value,
    pub gvk: GroupVersionKind,
}

/// Decodes a JSON body as upstream's serializer does before conversion: Go-compatible
/// syntax errors first, then `apiVersion`/`kind`.
pub fn decode_json(data: &[u8]) -> Result<Decoded> {
    go_json::check_valid(data).map_err(DecodeError::JsonParse)?;
    let text = String::from_utf8_lossy(data);
    let object: Value =
        serde_json::from_str(&text).map_err(|e| DecodeError::JsonParse(e.to_string()))?;
    let gvk = interpret(&object)?;
    Ok(Decoded { object, gvk })
}

/// Decodes a YAML body: `YAMLToJSON` (first document only), then as JSON.
pub fn decode_yaml(data: &[u8]) -> Result<Decoded> {
    let object = yaml_to_json(data)?;
    let gvk = interpret(&object)?;
    Ok(Decoded { object, gvk })
}

const META_STRUCT: &str = r#"struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string "json:\"kind,omitempty\"" }"#;

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Upstream `SimpleMetaFactory.Interpret` on an already parsed document. Keys match
/// case-insensitively, as Go's decoder matches struct fields.
pub fn interpret(object: &Value) -> Result<GroupVersionKind> {
    let map = match object {
        Value::Null => return Ok(GroupVersionKind::default()),
        Value::Object(map) => map,
        other => {
            return Err(DecodeError::JsonParse(format!(
                "json: cannot unmarshal {} into Go value of type {META_STRUCT}",
                json_kind(other)
            )));
        }
    };
    let mut api_version = String::new();
    let mut kind = String::new();
    for (key, value) in map {
        let (field, slot) = if key.eq_ignore_ascii_case("apiVersion") {
            ("apiVersion", &mut api_version)
        } else if key.eq_ignore_ascii_case("kind") {
            ("kind", &mut kind)
        } else {
            continue;
        };
        match value {
            Value::String(s) => *slot = s.clone(),
            Value::Null => {}
            other => {
                return Err(DecodeError::JsonParse(format!(
                    "json: cannot unmarshal {} into Go struct field .{field} of type string",
                    json_kind(other)
                )));
            }
        }
    }
    let (group, version) = parse_group_version(&api_version)?;
    Ok(GroupVersionKind {
        group,
        version,
        kind,
    })
}

/// Upstream `schema.ParseGroupVersion`.
pub fn parse_group_version(gv: &str) -> Result<(String, String)> {
    match gv.matches('/').count() {
        0 => Ok((String::new(), gv.to_owned())),
        1 => {
            let (g, v) = gv.split_once('/').unwrap_or_default();
            Ok((g.to_owned(), v.to_owned()))
        }
        _ => Err(DecodeError::GroupVersion(gv.to_owned())),
    }
}

/// Upstream's serializer after defaulting: kind, then version, must be known.
pub fn require_kind_and_version(gvk: &GroupVersionKind, original: &[u8]) -> Result<()> {
    let data = || String::from_utf8_lossy(original).into_owned();
    if gvk.kind.is_empty() {
        return Err(DecodeError::MissingKind(data()));
    }
    if gvk.version.is_empty() {
        return Err(DecodeError::MissingVersion(data()));
    }
    Ok(())
}

/// Upstream `summarizeData(data, 30)`.
fn summarize_data(data: &[u8], max: usize) -> String {
    use std::fmt::Write as _;
    let hex = |d: &[u8]| {
        d.iter().fold(String::new(), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
    };
    match data.first() {
        None => "<empty>".to_owned(),
        Some(b'{') if data.len() > max => {
            format!("{} ...", String::from_utf8_lossy(&data[..max]))
        }
        Some(b'{') => String::from_utf8_lossy(data).into_owned(),
        Some(_) if data.len() > max => format!("{} ...", hex(&data[..max])),
        Some(_) => hex(data),
    }
}

/// Upstream `transformDecodeError`: the 400 a create or update answers when decoding fails.
/// `into_kind` is the kind the endpoint expects; `gvk` what the body declared, when known.
pub fn transform_decode_error(
    into_kind: &str,
    gvk: Option<&GroupVersionKind>,
    err: &DecodeError,
    body: &[u8],
) -> Status {
    let message = match gvk.filter(|g| !g.kind.is_empty()) {
        Some(g) => format!(
            "{} in version {} cannot be handled as a {into_kind}: {err}",
            g.kind,
            quote(&g.version)
        ),
        None => format!(
            "the object provided is unrecognized (must be of type {into_kind}): {err} ({})",
            summarize_data(body, 30)
        ),
    };
    Status::bad_request(&message)
}

/// Converts YAML to a JSON value as `yaml.YAMLToJSON` does: YAML 1.1 scalars (`yes`, `on`,
/// `0755` octal), last duplicate key wins, and only the first document is read.
pub fn yaml_to_json(data: &[u8]) -> Result<Value> {
    use serde_saphyr::{DuplicateKeyPolicy, Options};
    let options = || {
        let mut o = Options::default();
        o.duplicate_keys = DuplicateKeyPolicy::LastWins;
        o.legacy_octal_numbers = true;
        o
    };
    if data.iter().all(|b| b.is_ascii_whitespace()) {
        return Ok(Value::Null);
    }
    match serde_saphyr::from_slice_with_options::<Value>(data, options()) {
        Ok(v) => Ok(v),
        Err(first_err) => {
            match serde_saphyr::from_slice_multiple_with_options::<Value>(data, options()) {
                Ok(docs) if docs.len() > 1 => Ok(docs.into_iter().next().unwrap_or_default()),
                _ => Err(DecodeError::Yaml(yaml_message(&first_err))),
            }
        }
    }
}

/// saphyr's message in goyaml.v2's shape (`line 3: <what>`); the wording differs.
fn yaml_message(err: &serde_saphyr::Error) -> String {
    let text = err.to_string();
    let first = text.lines().next().unwrap_or_default().trim();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    if let Some(rest) = first.strip_prefix("line ")
        && let Some((line, tail)) = rest.split_once(" column ")
        && let Some((_, msg)) = tail.split_once(": ")
    {
        return format!("line {line}: {msg}");
    }
    first.to_owned()
}

/// Repeated keys in a JSON document, as `sigs.k8s.io/json` strict decoding reports them:
/// `duplicate field "metadata.name"`, list items as `[i]`, each text once. `data` must be
/// valid JSON (an invalid document yields what was found before the error).
pub fn json_duplicate_fields(data: &[u8]) -> Vec<String> {
    go_json::duplicate_fields(data)
        .into_iter()
        .map(|path| format!("duplicate field {}", quote(&path)))
        .fold(Vec::new(), |mut out, e| {
            if !out.contains(&e) {
                out.push(e);
            }
            out
        })
}

/// Repeated keys in the first YAML document, as goyaml.v2's `UnmarshalStrict` reports them
/// (`line 4: key "name" already set in map`), in its order: for each key, every later equal
/// key of the same mapping.
pub fn yaml_duplicate_fields(data: &[u8]) -> Vec<String> {
    yaml_out::duplicate_keys(&String::from_utf8_lossy(data))
}

/// The strict decoding error of a YAML body: goyaml.v2's `unmarshal errors` wrapped as
/// `YAMLToJSONStrict` wraps them. `None` when there are no duplicates.
pub fn yaml_strict_error(data: &[u8]) -> Option<DecodeError> {
    let errs = yaml_duplicate_fields(data);
    if errs.is_empty() {
        return None;
    }
    Some(DecodeError::Strict(vec![format!(
        "error converting YAML to JSON: yaml: unmarshal errors:\n  {}",
        errs.join("\n  ")
    )]))
}

/// The strict decoding error of a JSON body, `None` when no key repeats.
pub fn json_strict_error(data: &[u8]) -> Option<DecodeError> {
    let errs = json_duplicate_fields(data);
    (!errs.is_empty()).then_some(DecodeError::Strict(errs))
}

/// Why a value could not be encoded.
#[derive(Debug, Error)]
#[error("{0}")]
pub struct EncodeError(#[source] serde_json::Error);

/// JSON as upstream writes it: compact with Go's escaping and a trailing newline
/// (`json.Encoder.Encode`), or, when `pretty`, `json.MarshalIndent(obj, "", "  ")`, which
/// has no trailing newline. Floats are formatted as Go formats them (`1` not `1.0`,
/// `1e+21`).
pub fn encode_json<T: Serialize + ?Sized>(value: &T, pretty: bool) -> Result<Bytes, EncodeError> {
    let mut out = Vec::with_capacity(256);
    let formatter = go_json::GoFormatter::new(pretty);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    value.serialize(&mut ser).map_err(EncodeError)?;
    if !pretty {
        out.push(b'\n');
    }
    Ok(Bytes::from(out))
}

/// YAML as upstream writes it (`json.Marshal` then `yaml.JSONToYAML`): block style, keys in
/// goyaml.v2's order, strings quoted only where goyaml.v2 would quote them, long plain
/// strings folded past column 80.
pub fn encode_yaml<T: Serialize + ?Sized>(value: &T) -> Result<Bytes, EncodeError> {
    let value = serde_json::to_value(value).map_err(EncodeError)?;
    Ok(Bytes::from(yaml_out::to_yaml(&value)))
}

/// A port of the parts of Go's `encoding/json` whose behaviour reaches the wire: the
/// scanner's syntax errors, and float formatting.
mod go_json {
    use std::io;

    use kas_apimachinery::gostr::quote;

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
        let mut walker = Walker {
            data,
            pos: 0,
            out: Vec::new(),
        };
        let _ = walker.value(&mut String::new());
        walker.out
    }

    struct Walker<'a> {
        data: &'a [u8],
        pos: usize,
        out: Vec<String>,
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
        fn value(&mut self, path: &mut String) -> Option<()> {
            if path.len() > 64 * 1024 {
                return None;
            }
            match self.peek()? {
                b'{' => self.object(path),
                b'[' => self.array(path),
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

        fn object(&mut self, path: &mut String) -> Option<()> {
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
                if seen.contains(&key) {
                    self.out.push(path.clone());
                } else {
                    seen.push(key);
                }
                if self.peek()? != b':' {
                    return None;
                }
                self.pos += 1;
                self.value(path)?;
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

        fn array(&mut self, path: &mut String) -> Option<()> {
            self.pos += 1;
            if self.peek()? == b']' {
                self.pos += 1;
                return Some(());
            }
            let mut i = 0usize;
            loop {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                self.value(path)?;
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
                w.write_all(&fragment.as_bytes()[start..i])?;
                w.write_all(escaped.as_bytes())?;
                start = i + c.len_utf8();
            }
            w.write_all(&fragment.as_bytes()[start..])
        }
    }
}

/// YAML output as goyaml.v2 (behind `sigs.k8s.io/yaml`) writes a JSON document, and its
/// strict duplicate-key check.
mod yaml_out {
    use std::cmp::Ordering;

    use kas_apimachinery::gostr::quote;
    use serde_json::Value;

    /// goyaml.v2's `best_indent` and `best_width`.
    const INDENT: usize = 2;
    const WIDTH: usize = 80;

    pub fn to_yaml(value: &Value) -> String {
        let mut e = Emitter::default();
        match value {
            Value::Object(m) if !m.is_empty() => e.mapping(value, 0, false),
            Value::Array(a) if !a.is_empty() => e.sequence(a, 0, false),
            _ => e.node_inline(value, INDENT),
        }
        if e.column > 0 {
            e.put('\n');
        }
        e.out
    }

    #[derive(Default)]
    struct Emitter {
        out: String,
        column: usize,
    }

    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    enum Style {
        Plain,
        Single,
        Double,
        Literal,
    }

    impl Emitter {
        fn put(&mut self, c: char) {
            self.out.push(c);
            if c == '\n' {
                self.column = 0;
            } else {
                self.column += 1;
            }
        }

        fn puts(&mut self, s: &str) {
            s.chars().for_each(|c| self.put(c));
        }

        /// goyaml.v2's `write_indent`: a line break unless already at the start of an
        /// indented line, then spaces up to `indent`.
        fn indent(&mut self, indent: usize) {
            if self.column > indent || (self.column > 0 && self.column == indent) {
                self.put('\n');
            }
            while self.column < indent {
                self.put(' ');
            }
        }

        /// A non-empty mapping whose keys start at `indent`; `positioned` when the cursor
        /// already sits where the first key goes (after `- `).
        fn mapping(&mut self, value: &Value, indent: usize, positioned: bool) {
            let Value::Object(map) = value else { return };
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_by(|a, b| key_order(a, b));
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 || !positioned {
                    self.indent(indent);
                }
                self.scalar(key, true, indent + INDENT);
                self.put(':');
                self.value_after(&map[key.as_str()], indent, true);
            }
        }

        fn sequence(&mut self, items: &[Value], indent: usize, positioned: bool) {
            for (i, item) in items.iter().enumerate() {
                if i > 0 || !positioned {
                    self.indent(indent);
                }
                self.put('-');
                self.value_after(item, indent, false);
            }
        }

        /// The value after `key:` or `-`, where the parent collection sits at `indent`.
        fn value_after(&mut self, v: &Value, indent: usize, in_mapping: bool) {
            match v {
                Value::Object(m) if !m.is_empty() => {
                    if in_mapping {
                        self.mapping(v, indent + INDENT, false);
                    } else {
                        self.put(' ');
                        self.mapping(v, indent + INDENT, true);
                    }
                }
                Value::Array(a) if !a.is_empty() => {
                    if in_mapping {
                        // goyaml.v2 does not indent a sequence inside a mapping.
                        self.sequence(a, indent, false);
                    } else {
                        self.put(' ');
                        self.sequence(a, indent + INDENT, true);
                    }
                }
                _ => {
                    self.put(' ');
                    self.node_inline(v, indent + INDENT);
                }
            }
        }

        /// A scalar (or empty collection) on the current line; `indent` is where folded and
        /// block-scalar lines continue.
        fn node_inline(&mut self, v: &Value, indent: usize) {
            match v {
                Value::Null => self.puts("null"),
                Value::Bool(b) => self.puts(if *b { "true" } else { "false" }),
                Value::Number(n) => self.puts(&number(n)),
                Value::String(s) => self.scalar(s, false, indent),
                Value::Array(_) => self.puts("[]"),
                Value::Object(_) => self.puts("{}"),
            }
        }

        fn scalar(&mut self, s: &str, is_key: bool, indent: usize) {
            match style(s, is_key) {
                Style::Plain => self.plain(s, !is_key, indent),
                Style::Single => self.single(s, !is_key, indent),
                Style::Double => self.double(s, !is_key, indent),
                Style::Literal => self.literal(s, indent),
            }
        }

        fn plain(&mut self, s: &str, allow_breaks: bool, indent: usize) {
            let mut spaces = false;
            let mut chars = s.chars().peekable();
            while let Some(c) = chars.next() {
                if c == ' ' {
                    let next_space = chars.peek() == Some(&' ');
                    if allow_breaks && !spaces && self.column > WIDTH && !next_space {
                        self.indent_break(indent);
                    } else {
                        self.put(c);
                    }
                    spaces = true;
                } else {
                    self.put(c);
                    spaces = false;
                }
            }
        }

        fn indent_break(&mut self, indent: usize) {
            self.put('\n');
            while self.column < indent {
                self.put(' ');
            }
        }

        fn single(&mut self, s: &str, allow_breaks: bool, indent: usize) {
            self.put('\'');
            let mut spaces = false;
            let last = s.len().saturating_sub(1);
            let bytes = s.as_bytes();
            for (i, c) in s.char_indices() {
                if c == ' ' {
                    let next_space = bytes.get(i + 1) == Some(&b' ');
                    if allow_breaks
                        && !spaces
                        && self.column > WIDTH
                        && i != 0
                        && i != last
                        && !next_space
                    {
                        self.indent_break(indent);
                    } else {
                        self.put(c);
                    }
                    spaces = true;
                } else {
                    if c == '\'' {
                        self.put('\'');
                    }
                    self.put(c);
                    spaces = false;
                }
            }
            self.put('\'');
        }

        fn double(&mut self, s: &str, allow_breaks: bool, indent: usize) {
            self.put('"');
            let mut spaces = false;
            let last = s.len().saturating_sub(1);
            let bytes = s.as_bytes();
            for (i, c) in s.char_indices() {
                if !is_printable(c) || c == '\u{feff}' || is_break(c) || c == '"' || c == '\\' {
                    self.put('\\');
                    match c {
                        '\0' => self.put('0'),
                        '\u{7}' => self.put('a'),
                        '\u{8}' => self.put('b'),
                        '\t' => self.put('t'),
                        '\n' => self.put('n'),
                        '\u{b}' => self.put('v'),
                        '\u{c}' => self.put('f'),
                        '\r' => self.put('r'),
                        '\u{1b}' => self.put('e'),
                        '"' => self.put('"'),
                        '\\' => self.put('\\'),
                        '\u{85}' => self.put('N'),
                        '\u{a0}' => self.put('_'),
                        '\u{2028}' => self.put('L'),
                        '\u{2029}' => self.put('P'),
                        c if (c as u32) <= 0xff => self.puts(&format!("x{:02X}", c as u32)),
                        c if (c as u32) <= 0xffff => self.puts(&format!("u{:04X}", c as u32)),
                        c => self.puts(&format!("U{:08X}", c as u32)),
                    }
                    spaces = false;
                } else if c == ' ' {
                    if allow_breaks && !spaces && self.column > WIDTH && i != 0 && i != last {
                        self.indent_break(indent);
                        if bytes.get(i + 1) == Some(&b' ') {
                            self.put('\\');
                        }
                    } else {
                        self.put(c);
                    }
                    spaces = true;
                } else {
                    self.put(c);
                    spaces = false;
                }
            }
            self.put('"');
        }

        fn literal(&mut self, s: &str, indent: usize) {
            self.put('|');
            if s.starts_with([' ', '\n']) {
                self.puts(&INDENT.to_string());
            }
            let chars: Vec<char> = s.chars().collect();
            match chars.as_slice() {
                [.., last] if !is_break(*last) => self.put('-'),
                [_] => self.put('+'),
                [.., before, _] if is_break(*before) => self.put('+'),
                _ => {}
            }
            self.put('\n');
            let mut breaks = true;
            for c in chars {
                if is_break(c) {
                    self.put('\n');
                    breaks = true;
                } else {
                    if breaks {
                        while self.column < indent {
                            self.put(' ');
                        }
                    }
                    self.put(c);
                    breaks = false;
                }
            }
        }
    }

    fn is_break(c: char) -> bool {
        matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
    }

    fn is_blank_or_end(c: Option<char>) -> bool {
        c.is_none_or(|c| c == ' ' || c == '\t' || c == '\0' || is_break(c))
    }

    /// libyaml's `IS_PRINTABLE`.
    fn is_printable(c: char) -> bool {
        let u = c as u32;
        u == 0x0a
            || (0x20..=0x7e).contains(&u)
            || u == 0x85
            || (0xa0..=0xd7ff).contains(&u)
            || ((0xe000..=0xfffd).contains(&u) && u != 0xfeff)
            || (0x10000..=0x10ffff).contains(&u)
    }

    /// goyaml.v2's `stringv` request followed by the emitter's `analyze_scalar` and
    /// `select_scalar_style`, in block context.
    fn style(s: &str, is_key: bool) -> Style {
        let requested = if s.contains('\n') {
            Style::Literal
        } else if resolves_to_string(s) && !is_base60_float(s) {
            Style::Plain
        } else {
            Style::Double
        };
        let a = analyze(s);
        let mut style = requested;
        if style == Style::Plain && (!a.block_plain || (s.is_empty() && is_key)) {
            style = Style::Single;
        }
        if style == Style::Single && !a.single {
            style = Style::Double;
        }
        if style == Style::Literal && (!a.block || is_key) {
            style = Style::Double;
        }
        style
    }

    struct Analysis {
        block_plain: bool,
        single: bool,
        block: bool,
    }

    fn analyze(s: &str) -> Analysis {
        if s.is_empty() {
            return Analysis {
                block_plain: true,
                single: true,
                block: false,
            };
        }
        let chars: Vec<char> = s.chars().collect();
        let mut block_ind = s.starts_with("---") || s.starts_with("...");
        let (mut special, mut line_breaks) = (false, false);
        let (mut leading_space, mut leading_break) = (false, false);
        let (mut trailing_space, mut trailing_break) = (false, false);
        let (mut break_space, mut space_break) = (false, false);
        let (mut prev_space, mut prev_break) = (false, false);
        let mut preceded_by_ws = true;
        let last = chars.len() - 1;
        for (i, &c) in chars.iter().enumerate() {
            let followed_by_ws = is_blank_or_end(chars.get(i + 1).copied());
            if i == 0 {
                if "#,[]{}&*!|>'\"%@`".contains(c)
                    || ((c == '?' || c == ':' || c == '-') && followed_by_ws)
                {
                    block_ind = true;
                }
            } else if (c == ':' && followed_by_ws) || (c == '#' && preceded_by_ws) {
                block_ind = true;
            }
            if !is_printable(c) {
                special = true;
            }
            if is_break(c) {
                line_breaks = true;
            }
            if c == ' ' {
                leading_space |= i == 0;
                trailing_space |= i == last;
                break_space |= prev_break;
                prev_space = true;
                prev_break = false;
            } else if is_break(c) {
                leading_break |= i == 0;
                trailing_break |= i == last;
                space_break |= prev_space;
                prev_break = true;
                prev_space = false;
            } else {
                prev_space = false;
                prev_break = false;
            }
            preceded_by_ws = is_blank_or_end(Some(c));
        }
        let mut a = Analysis {
            block_plain: true,
            single: true,
            block: true,
        };
        if leading_space || leading_break || trailing_space || trailing_break {
            a.block_plain = false;
        }
        if trailing_space {
            a.block = false;
        }
        if break_space {
            a.block_plain = false;
            a.single = false;
        }
        if space_break || special {
            a = Analysis {
                block_plain: false,
                single: false,
                block: false,
            };
        }
        if line_breaks || block_ind {
            a.block_plain = false;
        }
        a
    }

    /// goyaml.v2's `resolve("", s)` yields the string tag: not null, bool, number,
    /// timestamp or merge key as YAML 1.1 reads them.
    fn resolves_to_string(s: &str) -> bool {
        const SPECIAL: &[&str] = &[
            "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", "n", "N",
            "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF", "", "~", "null",
            "Null", "NULL", ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf",
            "+.INF", "-.inf", "-.Inf", "-.INF", "<<",
        ];
        if SPECIAL.contains(&s) {
            return false;
        }
        match s.as_bytes()[0] {
            b'.' => s.parse::<f64>().is_err() || s.contains(['i', 'I', 'n', 'N']),
            b'0'..=b'9' | b'+' | b'-' => {
                if is_timestamp(s) {
                    return false;
                }
                let plain = s.replace('_', "");
                !(go_parse_int(&plain) || is_yaml_float(&plain) || is_binary(&plain))
            }
            _ => true,
        }
    }

    /// Go's `strconv.ParseInt`/`ParseUint` with base 0 (sign, `0x`, `0o`, `0b`, leading-0
    /// octal) succeeding in 64 bits.
    fn go_parse_int(s: &str) -> bool {
        let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
        let (digits, radix) = if let Some(r) = unsigned
            .strip_prefix("0x")
            .or_else(|| unsigned.strip_prefix("0X"))
        {
            (r, 16)
        } else if let Some(r) = unsigned
            .strip_prefix("0o")
            .or_else(|| unsigned.strip_prefix("0O"))
        {
            (r, 8)
        } else if let Some(r) = unsigned
            .strip_prefix("0b")
            .or_else(|| unsigned.strip_prefix("0B"))
        {
            (r, 2)
        } else if unsigned.len() > 1 && unsigned.starts_with('0') {
            (&unsigned[1..], 8)
        } else {
            (unsigned, 10)
        };
        if digits.is_empty() || digits.starts_with(['+', '-']) {
            return false;
        }
        if s.starts_with('-') {
            i64::from_str_radix(&format!("-{digits}"), radix).is_ok()
        } else {
            u64::from_str_radix(digits, radix).is_ok()
        }
    }

    /// goyaml.v2's `yamlStyleFloat`: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
    fn is_yaml_float(s: &str) -> bool {
        let s = s.strip_prefix(['+', '-']).unwrap_or(s);
        let (mantissa, exp) = match s.find(['e', 'E']) {
            Some(i) => (&s[..i], Some(&s[i + 1..])),
            None => (s, None),
        };
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        let mantissa_ok = match mantissa.split_once('.') {
            Some(("", frac)) => digits(frac),
            Some((int, frac)) => digits(int) && (frac.is_empty() || digits(frac)),
            None => digits(mantissa),
        };
        mantissa_ok && exp.is_none_or(|e| digits(e.strip_prefix(['+', '-']).unwrap_or(e)))
    }

    fn is_binary(s: &str) -> bool {
        let b = s.strip_prefix("-0b").or_else(|| s.strip_prefix("0b"));
        b.is_some_and(|b| !b.is_empty() && u64::from_str_radix(b, 2).is_ok())
    }

    /// goyaml.v2's `parseTimestamp` for the forms it tries: `2006-1-2`, optionally with
    /// `T`/`t`/space and a time.
    fn is_timestamp(s: &str) -> bool {
        let b = s.as_bytes();
        let year = b.iter().take_while(|c| c.is_ascii_digit()).count();
        if year != 4 || b.get(4) != Some(&b'-') {
            return false;
        }
        let (date, time) = match s.find(['T', 't', ' ']) {
            Some(i) => (&s[..i], Some(&s[i + 1..])),
            None => (s, None),
        };
        let parts: Vec<&str> = date.split('-').collect();
        let num = |p: &str, max: usize| {
            !p.is_empty() && p.len() <= max && p.bytes().all(|c| c.is_ascii_digit())
        };
        if parts.len() != 3 || !num(parts[1], 2) || !num(parts[2], 2) {
            return false;
        }
        let (Ok(m), Ok(d)) = (parts[1].parse::<u32>(), parts[2].parse::<u32>()) else {
            return false;
        };
        if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
            return false;
        }
        let Some(time) = time else { return true };
        let (clock, zone) = match time.find(['Z', '+', '-']) {
            Some(i) => (&time[..i], &time[i..]),
            None => (time, ""),
        };
        let (hms, frac) = clock.split_once('.').unwrap_or((clock, "0"));
        let hms: Vec<&str> = hms.split(':').collect();
        let zone_ok = zone.is_empty()
            || zone == "Z"
            || zone[1..].split(':').all(|p| num(p, 2)) && zone.len() > 1;
        hms.len() == 3
            && hms.iter().all(|p| num(p, 2))
            && num(frac, 9)
            && zone_ok
            && (time.contains('Z') || time.contains(['+', '-']) || s.contains([' ', 't', 'T']))
    }

    /// goyaml.v2's `isBase60Float`: `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`.
    fn is_base60_float(s: &str) -> bool {
        let s = s.strip_prefix(['+', '-']).unwrap_or(s);
        let (main, frac) = s.split_once('.').unwrap_or((s, ""));
        if !frac.bytes().all(|b| b.is_ascii_digit() || b == b'_') {
            return false;
        }
        let mut parts = main.split(':');
        let head = parts.next().unwrap_or_default();
        let head_ok = head.as_bytes().first().is_some_and(u8::is_ascii_digit)
            && head.bytes().all(|b| b.is_ascii_digit() || b == b'_');
        let rest: Vec<&str> = parts.collect();
        head_ok
            && !rest.is_empty()
            && rest.iter().all(|p| match p.as_bytes() {
                [d] => d.is_ascii_digit(),
                [a, d] => (b'0'..=b'5').contains(a) && d.is_ascii_digit(),
                _ => false,
            })
    }

    /// A JSON number as it comes out of `json.Marshal` and back through goyaml.v2.
    fn number(n: &serde_json::Number) -> String {
        if n.is_i64() || n.is_u64() {
            return n.to_string();
        }
        let f = n.as_f64().unwrap_or_default();
        let go = super::go_json::format_float(f);
        if !go.contains(['.', 'e']) && go_parse_int(&go) {
            return go;
        }
        format_g(f)
    }

    /// Go's `strconv.FormatFloat(f, 'g', -1, 64)`.
    fn format_g(f: f64) -> String {
        if f == 0.0 {
            return "0".to_owned();
        }
        let e = format!("{f:e}");
        let (mantissa, exp) = e.split_once('e').unwrap_or((&e, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        if !(-4..6).contains(&exp) {
            let sign = if exp < 0 { '-' } else { '+' };
            format!("{mantissa}e{sign}{:02}", exp.abs())
        } else {
            format!("{f}")
        }
    }

    /// goyaml.v2's `keyList.Less` for string keys: letters after other characters, runs
    /// of digits compared as numbers.
    fn key_order(a: &str, b: &str) -> Ordering {
        if less(a, b) {
            Ordering::Less
        } else if less(b, a) {
            Ordering::Greater
        } else {
            Ordering::Equal
        }
    }

    fn less(a: &str, b: &str) -> bool {
        let ar: Vec<char> = a.chars().collect();
        let br: Vec<char> = b.chars().collect();
        let mut i = 0;
        while i < ar.len() && i < br.len() {
            if ar[i] == br[i] {
                i += 1;
                continue;
            }
            let al = ar[i].is_alphabetic();
            let bl = br[i].is_alphabetic();
            if al && bl {
                return ar[i] < br[i];
            }
            if al || bl {
                return bl;
            }
            let (mut an, mut bn) = (0i64, 0i64);
            if ar[i] == '0' || br[i] == '0' {
                let mut j = i;
                while j > 0 && ar[j - 1].is_ascii_digit() {
                    j -= 1;
                    if ar[j] != '0' {
                        an = 1;
                        bn = 1;
                        break;
                    }
                }
            }
            let mut ai = i;
            while ai < ar.len() && ar[ai].is_ascii_digit() {
                an = an
                    .wrapping_mul(10)
                    .wrapping_add(i64::from(ar[ai] as u8 - b'0'));
                ai += 1;
            }
            let mut bi = i;
            while bi < br.len() && br[bi].is_ascii_digit() {
                bn = bn
                    .wrapping_mul(10)
                    .wrapping_add(i64::from(br[bi] as u8 - b'0'));
                bi += 1;
            }
            if an != bn {
                return an < bn;
            }
            if ai != bi {
                return ai < bi;
            }
            return ar[i] < br[i];
        }
        ar.len() < br.len()
    }

    /// Duplicate keys of the first document, as goyaml.v2's strict `setMapIndex` reports
    /// them: each repeated key once, with the line where its value starts, nested
    /// errors before those of the enclosing mapping.
    pub fn duplicate_keys(text: &str) -> Vec<String> {
        use serde_saphyr::granit_parser::{Event, Parser};

        /// An open mapping: the keys set so far, the pending key (`None` inside when not a
        /// scalar) and the line of the pending value's start.
        struct Map {
            seen: Vec<String>,
            key: Option<Option<String>>,
            value_line: usize,
        }
        let mut out = Vec::new();
        // `None` stands for an open sequence.
        let mut stack: Vec<Option<Map>> = Vec::new();
        let mut documents = 0;

        // Called when a node starts (`line`) and when it is complete (`scalar` is its key
        // text when it is a scalar).
        fn start(stack: &mut [Option<Map>], line: usize) {
            if let Some(Some(map)) = stack.last_mut()
                && map.key.is_some()
            {
                map.value_line = line;
            }
        }
        fn done(stack: &mut [Option<Map>], scalar: Option<String>, out: &mut Vec<String>) {
            let Some(Some(map)) = stack.last_mut() else {
                return;
            };
            match map.key.take() {
                None => map.key = Some(scalar),
                Some(None) => {}
                Some(Some(key)) => {
                    if map.seen.contains(&key) {
                        out.push(format!(
                            "line {}: key {} already set in map",
                            map.value_line,
                            quote(&key)
                        ));
                    } else {
                        map.seen.push(key);
                    }
                }
            }
        }
        for item in Parser::new_from_str(text) {
            let Ok((event, span)) = item else { break };
            let line = span.start.line();
            match event {
                Event::DocumentStart(..) => {
                    documents += 1;
                    if documents > 1 {
                        break;
                    }
                }
                Event::MappingStart(..) => {
                    start(&mut stack, line);
                    stack.push(Some(Map {
                        seen: Vec::new(),
                        key: None,
                        value_line: 0,
                    }));
                }
                Event::SequenceStart(..) => {
                    start(&mut stack, line);
                    stack.push(None);
                }
                Event::MappingEnd | Event::SequenceEnd => {
                    stack.pop();
                    done(&mut stack, None, &mut out);
                }
                Event::Scalar(value, ..) => {
                    start(&mut stack, line);
                    done(&mut stack, Some(value.into_owned()), &mut out);
                }
                Event::Alias(..) => {
                    start(&mut stack, line);
                    done(&mut stack, None, &mut out);
                }
                _ => {}
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn json_err(input: &str) -> String {
        decode_json(input.as_bytes()).unwrap_err().to_string()
    }

    #[test]
    fn go_syntax_errors() {
        let p = "couldn't get version/kind; json parse error: ";
        let cases = [
            ("", "unexpected end of JSON input"),
            ("{", "unexpected end of JSON input"),
            (
                "imastring!",
                "invalid character 'i' looking for beginning of value",
            ),
            (
                "{]",
                "invalid character ']' looking for beginning of object key string",
            ),
            (r#"{"a" 1}"#, "invalid character '1' after object key"),
            (
                r#"{"a":1 "b":2}"#,
                "invalid character '\"' after object key:value pair",
            ),
            ("[1 2]", "invalid character '2' after array element"),
            ("{} x", "invalid character 'x' after top-level value"),
            ("01", "invalid character '1' after top-level value"),
            ("-x", "invalid character 'x' in numeric literal"),
            (
                "1.x",
                "invalid character 'x' after decimal point in numeric literal",
            ),
            (
                "1.",
                "invalid character ' ' after decimal point in numeric literal",
            ),
            (
                "1ex",
                "invalid character 'x' in exponent of numeric literal",
            ),
            // At the end Go's scanner feeds one space, so a cut literal reports it.
            (
                "tru",
                "invalid character ' ' in literal true (expecting 'e')",
            ),
            ("[", "unexpected end of JSON input"),
            (
                "trux",
                "invalid character 'x' in literal true (expecting 'e')",
            ),
            (
                "nul1",
                "invalid character '1' in literal null (expecting 'l')",
            ),
            ("\"a\u{1}\"", "invalid character '\\x01' in string literal"),
            (r#""\q""#, "invalid character 'q' in string escape code"),
            (
                r#""\u12x4""#,
                "invalid character 'x' in \\u hexadecimal character escape",
            ),
            (
                "{'a':1}",
                "invalid character '\\'' looking for beginning of object key string",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(json_err(input), format!("{p}{want}"), "{input:?}");
        }
    }

    #[test]
    fn max_depth_matches_go() {
        let deep = "[".repeat(10001);
        assert!(json_err(&deep).ends_with("exceeded max depth"));
    }

    #[test]
    fn interpret_errors_and_kinds() {
        assert_eq!(
            json_err("[1]"),
            "couldn't get version/kind; json parse error: json: cannot unmarshal array into Go \
             value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; \
             Kind string \"json:\\\"kind,omitempty\\\"\" }"
        );
        assert_eq!(
            json_err(r#"{"kind":1}"#),
            "couldn't get version/kind; json parse error: json: cannot unmarshal number into \
             Go struct field .kind of type string"
        );
        assert_eq!(
            json_err(r#"{"apiVersion":"a/b/c"}"#),
            "unexpected GroupVersion string: a/b/c"
        );
        let d =
            decode_json(br#"{"APIVERSION":"apps/v1","Kind":"Deployment","kind":null}"#).unwrap();
        assert_eq!(
            d.gvk,
            GroupVersionKind {
                group: "apps".into(),
                version: "v1".into(),
                kind: "Deployment".into()
            }
        );
        assert_eq!(
            decode_json(b"null").unwrap().gvk,
            GroupVersionKind::default()
        );
        let d = decode_json(br#" {"apiVersion":"v1","kind":"Pod","spec":{"x":[1,2.5]}} "#).unwrap();
        assert_eq!(d.object["spec"]["x"], json!([1, 2.5]));
        assert_eq!(d.gvk.version, "v1");
    }

    #[test]
    fn missing_kind_and_version() {
        let gvk = GroupVersionKind::default();
        assert_eq!(
            require_kind_and_version(&gvk, b"{}")
                .unwrap_err()
                .to_string(),
            "Object 'Kind' is missing in '{}'"
        );
        let gvk = GroupVersionKind {
            kind: "Pod".into(),
            ..GroupVersionKind::default()
        };
        assert_eq!(
            require_kind_and_version(&gvk, br#"{"kind":"Pod"}"#)
                .unwrap_err()
                .to_string(),
            r#"Object 'apiVersion' is missing in '{"kind":"Pod"}'"#
        );
    }

    #[test]
    fn transform_decode_error_messages() {
        let body = br#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"}"#;
        let err = decode_json(body).unwrap_err();
        let s = transform_decode_error("Pod", None, &err, body);
        assert_eq!(s.code, 400);
        assert_eq!(
            s.message.as_deref(),
            Some(
                "the object provided is unrecognized (must be of type Pod): couldn't get \
                 version/kind; json parse error: unexpected end of JSON input \
                 ({\"apiVersion\":\"v1\",\"kind\":\"Pod ...)"
            )
        );
        let s = transform_decode_error("Pod", None, &err, b"\x01\x02");
        assert!(s.message.unwrap().ends_with("(0102)"));
        let s = transform_decode_error("Pod", None, &err, b"");
        assert!(s.message.unwrap().ends_with("(<empty>)"));
        let gvk = GroupVersionKind {
            group: String::new(),
            version: "v1".into(),
            kind: "Pod".into(),
        };
        let strict = DecodeError::Strict(vec![r#"duplicate field "metadata.name""#.into()]);
        let s = transform_decode_error("Pod", Some(&gvk), &strict, body);
        assert_eq!(
            s.message.as_deref(),
            Some(
                "Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: \
                 duplicate field \"metadata.name\""
            )
        );
    }

    #[test]
    fn json_duplicates() {
        let body = br#"{"metadata":{"name":"a","name":"b","labels":{"x":"1","x":"2","x":"3"}},
            "spec":{"containers":[{"name":"c","name":"d"},{"name":"e"}]},"metadata":{}}"#;
        assert_eq!(
            json_duplicate_fields(body),
            [
                r#"duplicate field "metadata.name""#,
                r#"duplicate field "metadata.labels.x""#,
                r#"duplicate field "spec.containers[0].name""#,
                r#"duplicate field "metadata""#,
            ]
        );
        assert!(json_duplicate_fields(br#"{"a":{"b":1},"c":{"b":1},"\u0061b":1}"#).is_empty());
        // Escapes are compared decoded.
        assert_eq!(
            json_duplicate_fields(br#"{"a":1,"\u0061":2}"#),
            [r#"duplicate field "a""#]
        );
        let e = json_strict_error(br#"{"a":1,"a":2,"b":1,"b":1}"#).unwrap();
        assert_eq!(
            e.to_string(),
            r#"strict decoding error: duplicate field "a", duplicate field "b""#
        );
        assert!(json_strict_error(b"[]").is_none());
    }

    #[test]
    fn yaml_decoding() {
        let d = decode_yaml(b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n  labels:\n    a: yes\n    b: '1'\n    c: 0755\n").unwrap();
        assert_eq!(d.gvk.kind, "Pod");
        assert_eq!(
            d.object["metadata"]["labels"],
            json!({"a": true, "b": "1", "c": 493})
        );
        // Only the first document counts, as with goyaml.v2.
        let d = decode_yaml(b"kind: A\n---\nkind: B\n").unwrap();
        assert_eq!(d.gvk.kind, "A");
        assert_eq!(decode_yaml(b"").unwrap().object, Value::Null);
        let err = decode_yaml(b"a: [1, 2\n").unwrap_err().to_string();
        assert!(
            err.starts_with("error converting YAML to JSON: yaml: "),
            "{err}"
        );
        assert_eq!(
            err,
            "error converting YAML to JSON: yaml: line 1: unclosed bracket '['"
        );
        // Non-string keys become their text, as sigs.k8s.io/yaml converts them.
        assert_eq!(
            decode_yaml(b"1: a\nx: 2\n").unwrap().object,
            json!({"1": "a", "x": 2})
        );
        // Last duplicate wins when not strict.
        assert_eq!(
            decode_yaml(b"a: 1\na: 2\n").unwrap().object,
            json!({"a": 2})
        );
    }

    #[test]
    fn yaml_duplicates() {
        let y = b"metadata:\n  name: a\n  name: b\nspec:\n  x: 1\n  x: 2\n  x: 3\nmetadata: {}\n";
        assert_eq!(
            yaml_duplicate_fields(y),
            [
                r#"line 3: key "name" already set in map"#,
                r#"line 6: key "x" already set in map"#,
                r#"line 7: key "x" already set in map"#,
                r#"line 8: key "metadata" already set in map"#,
            ]
        );
        let e = yaml_strict_error(b"a: 1\na: 2\n").unwrap();
        assert_eq!(
            e.to_string(),
            "strict decoding error: error converting YAML to JSON: yaml: unmarshal errors:\n  \
             line 2: key \"a\" already set in map"
        );
        assert!(yaml_strict_error(b"a: 1\nb: {a: 1}\n---\na: 1\na: 1\n").is_none());
    }

    #[test]
    fn json_encoding() {
        let v = json!({"b": "<x>&", "a": [1, 1.0, 1.5, 1e21, 1e-7, -0.000001], "c": {}, "d": []});
        let compact = encode_json(&v, false).unwrap();
        assert_eq!(
            std::str::from_utf8(&compact).unwrap(),
            "{\"a\":[1,1,1.5,1e+21,1e-7,-0.000001],\"b\":\"\\u003cx\\u003e\\u0026\",\"c\":{},\"d\":[]}\n"
        );
        let pretty = encode_json(&json!({"a": {"b": [1, 2]}, "c": {}}), true).unwrap();
        assert_eq!(
            std::str::from_utf8(&pretty).unwrap(),
            "{\n  \"a\": {\n    \"b\": [\n      1,\n      2\n    ]\n  },\n  \"c\": {}\n}"
        );
    }

    fn yaml(v: Value) -> String {
        String::from_utf8(encode_yaml(&v).unwrap().to_vec()).unwrap()
    }

    #[test]
    fn yaml_layout() {
        let v = json!({
            "kind": "Pod",
            "apiVersion": "v1",
            "metadata": {"name": "x", "labels": {}, "finalizers": []},
            "spec": {"containers": [{"name": "c", "args": ["a", "b"]}], "n": null},
            "list": [[1, 2], {"a": 1}],
        });
        assert_eq!(
            yaml(v),
            "apiVersion: v1\nkind: Pod\nlist:\n- - 1\n  - 2\n- a: 1\nmetadata:\n  finalizers: []\n  \
             labels: {}\n  name: x\nspec:\n  containers:\n  - args:\n    - a\n    - b\n    name: c\n  \
             \"n\": null\n"
        );
        assert_eq!(yaml(json!({})), "{}\n");
        assert_eq!(yaml(json!("abc")), "abc\n");
        assert_eq!(yaml(json!([1, true])), "- 1\n- true\n");
    }

    #[test]
    fn yaml_key_order_is_goyaml_v2() {
        let v = json!({"a10": 1, "a2": 1, "B": 1, "a": 1, "-x": 1, "_y": 1, "1": 1});
        // Non-letters first, digit runs compared as numbers (no digits counts as 0).
        assert_eq!(
            yaml(v),
            "-x: 1\n_y: 1\n\"1\": 1\nB: 1\na: 1\na2: 1\na10: 1\n"
        );
    }

    #[test]
    fn yaml_scalar_quoting() {
        let cases = [
            ("", "\"\""),
            ("true", "\"true\""),
            ("yes", "\"yes\""),
            ("null", "\"null\""),
            ("~", "\"~\""),
            ("123", "\"123\""),
            ("0x1F", "\"0x1F\""),
            ("1.5", "\"1.5\""),
            ("1e3", "\"1e3\""),
            (".inf", "\".inf\""),
            ("2024-01-02T03:04:05Z", "\"2024-01-02T03:04:05Z\""),
            ("2024-01-02", "\"2024-01-02\""),
            ("1:20", "\"1:20\""),
            ("8080:80", "8080:80"),
            ("1.2.3", "1.2.3"),
            ("*", "'*'"),
            ("- a", "'- a'"),
            ("a: b", "'a: b'"),
            ("a #b", "'a #b'"),
            ("a#b", "a#b"),
            (" lead", "' lead'"),
            ("it's", "it's"),
            ("'q'", "'''q'''"),
            ("tab\there", "\"tab\\there\""),
            ("héllo", "héllo"),
            ("http://x:80/a", "http://x:80/a"),
            ("a\nb", "|-\n  a\n  b"),
            ("a\nb\n", "|\n  a\n  b"),
            ("a\n\nb\n\n", "|+\n  a\n\n  b\n"),
            (" a\nb", "|2-\n   a\n  b"),
            ("a \nb", "\"a \\nb\""),
        ];
        for (s, want) in cases {
            assert_eq!(yaml(json!({ "k": s })), format!("k: {want}\n"), "{s:?}");
        }
        assert_eq!(
            yaml(json!({"a: b": 1, "true": 2})),
            "'a: b': 1\n\"true\": 2\n"
        );
    }

    #[test]
    fn yaml_numbers() {
        let v = json!({"a": 1.0, "b": 1.5, "c": 1e21, "d": 1234567.5, "e": 0.00001, "f": -3});
        assert_eq!(
            yaml(v),
            "a: 1\nb: 1.5\nc: 1e+21\nd: 1.2345675e+06\ne: 1e-05\nf: -3\n"
        );
    }

    #[test]
    fn yaml_folds_long_plain_strings() {
        let words = vec!["word"; 30].join(" ");
        let out = yaml(json!({"m": {"k": words}}));
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "m:");
        assert!(lines[1].starts_with("  k: word"));
        assert!(lines[1].chars().count() > 80 && lines[1].chars().count() <= 85);
        assert!(lines[2].starts_with("    word"));
        assert_eq!(
            out.replace("\n    ", " ").trim_end(),
            format!("m:\n  k: {words}")
        );
    }
}
