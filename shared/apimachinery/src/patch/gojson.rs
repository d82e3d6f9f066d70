//! What Go's `encoding/json` and `fmt` write where their text reaches a client: syntax error
//! messages, the names of Go types, and `%v` of decoded JSON.

use serde_json::Value;

/// Parses `bytes` as Go's `json.Unmarshal` would see them: a syntax error carries Go's text
/// (`invalid character 'x' looking for beginning of value`, `unexpected end of JSON input`).
/// Invalid UTF-8 inside strings becomes U+FFFD, as Go's decoder does.
pub(crate) fn parse(bytes: &[u8]) -> Result<Value, String> {
    if let Some(msg) = syntax_error(bytes) {
        return Err(msg);
    }
    let text = String::from_utf8_lossy(bytes);
    serde_json::from_str(&text).map_err(|e| e.to_string())
}

/// The kind word Go uses in `cannot unmarshal X into ...`.
pub(crate) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Go's dynamic type of a decoded value, with ints preserved (`int64`) as upstream's
/// `UnmarshalCaseSensitivePreserveInts` and `ToUnstructured` leave them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GoKind {
    Nil,
    Bool,
    Int,
    Float,
    String,
    Map,
    Slice,
}

pub(crate) fn go_kind(v: &Value) -> GoKind {
    match v {
        Value::Null => GoKind::Nil,
        Value::Bool(_) => GoKind::Bool,
        Value::Number(n) if n.is_i64() => GoKind::Int,
        Value::Number(_) => GoKind::Float,
        Value::String(_) => GoKind::String,
        Value::Array(_) => GoKind::Slice,
        Value::Object(_) => GoKind::Map,
    }
}

/// `reflect.TypeOf(v)` printed with `%s`.
pub(crate) fn go_type_name(v: &Value) -> &'static str {
    match go_kind(v) {
        GoKind::Nil => "%!s(<nil>)",
        GoKind::Bool => "bool",
        GoKind::Int => "int64",
        GoKind::Float => "float64",
        GoKind::String => "string",
        GoKind::Map => "map[string]interface {}",
        GoKind::Slice => "[]interface {}",
    }
}

/// Go's `==` on two `interface{}` values holding scalars: same dynamic type and value.
/// Maps and slices (where Go would panic) compare unequal.
pub(crate) fn go_eq(a: &Value, b: &Value) -> bool {
    let (ka, kb) = (go_kind(a), go_kind(b));
    if ka != kb {
        return false;
    }
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => match ka {
            GoKind::Int => x.as_i64() == y.as_i64(),
            _ => x.as_f64() == y.as_f64(),
        },
        _ => false,
    }
}

/// `fmt.Sprintf("%v", v)` for a decoded JSON value: `map[k:v ...]` with sorted keys,
/// `[a b]`, `<nil>`, floats as `%g` with the shortest digits.
pub(crate) fn go_v(v: &Value) -> String {
    let mut out = String::new();
    write_v(&mut out, v);
    out
}

fn write_v(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("<nil>"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::String(s) => out.push_str(s),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => out.push_str(&i.to_string()),
            (None, Some(u)) => out.push_str(&go_float(u as f64)),
            _ => out.push_str(&go_float(n.as_f64().unwrap_or_default())),
        },
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_v(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push_str("map[");
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(k);
                out.push(':');
                write_v(out, &map[k.as_str()]);
            }
            out.push(']');
        }
    }
}

/// `fmt.Sprintf("%s", v)`: strings as they are, other scalars as `%!s(T=v)`.
pub(crate) fn go_s(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "%!s(<nil>)".to_owned(),
        Value::Bool(_) | Value::Number(_) => format!("%!s({}={})", go_type_name(v), go_v(v)),
        _ => go_v(v),
    }
}

/// `strconv.FormatFloat(f, 'g', -1, 64)`, which `%v` uses for float64.
pub(crate) fn go_float(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    if !f.is_finite() {
        return if f.is_nan() {
            "NaN".to_owned()
        } else if f > 0.0 {
            "+Inf".to_owned()
        } else {
            "-Inf".to_owned()
        };
    }
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let exp: i32 = exp.parse().unwrap_or(0);
    let sign = if f < 0.0 { "-" } else { "" };
    if !(-4..6).contains(&exp) {
        let mut m = digits[..1].to_owned();
        if digits.len() > 1 {
            m.push('.');
            m.push_str(&digits[1..]);
        }
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{m}e{esign}{:02}", exp.abs());
    }
    let dp = exp + 1;
    let body = if dp <= 0 {
        format!("0.{}{digits}", "0".repeat((-dp) as usize))
    } else if dp as usize >= digits.len() {
        format!("{digits}{}", "0".repeat(dp as usize - digits.len()))
    } else {
        format!("{}.{}", &digits[..dp as usize], &digits[dp as usize..])
    };
    format!("{sign}{body}")
}

/// Go's `quoteChar`: how a byte appears in a syntax error.
fn quote_char(c: u8) -> String {
    match c {
        b'\'' => "'\\''".to_owned(),
        b'"' => "'\"'".to_owned(),
        0x07 => "'\\a'".to_owned(),
        0x08 => "'\\b'".to_owned(),
        0x0c => "'\\f'".to_owned(),
        b'\n' => "'\\n'".to_owned(),
        b'\r' => "'\\r'".to_owned(),
        b'\t' => "'\\t'".to_owned(),
        0x0b => "'\\v'".to_owned(),
        b'\\' => "'\\\\'".to_owned(),
        0x00..=0x1f | 0x7f => format!("'\\x{c:02x}'"),
        0x80..=0xa0 | 0xad => format!("'\\u00{c:02x}'"),
        0x20..=0x7e => format!("'{}'", c as char),
        _ => format!("'{}'", char::from(c)),
    }
}

/// Go's `checkValid`: the first syntax error in `data`, with Go's message.
pub(crate) fn syntax_error(data: &[u8]) -> Option<String> {
    let mut s = Scanner { data, pos: 0 };
    s.value().and_then(|()| s.end_top()).err()
}

struct Scanner<'a> {
    data: &'a [u8],
    pos: usize,
}

const EOF: &str = "unexpected end of JSON input";

impl Scanner<'_> {
    fn err(&self, c: u8, context: &str) -> String {
        format!("invalid character {} {context}", quote_char(c))
    }

    fn skip_space(&mut self) {
        while let Some(b' ' | b'\t' | b'\r' | b'\n') = self.data.get(self.pos) {
            self.pos += 1;
        }
    }

    fn next(&mut self) -> Result<u8, String> {
        let c = *self.data.get(self.pos).ok_or(EOF)?;
        self.pos += 1;
        Ok(c)
    }

    fn peek(&self) -> Option<u8> {
        self.data.get(self.pos).copied()
    }

    fn value(&mut self) -> Result<(), String> {
        self.skip_space();
        let c = self.next()?;
        match c {
            b'{' => self.object(),
            b'[' => self.array(),
            b'"' => self.string(),
            b'-' | b'0'..=b'9' => self.number(c),
            b't' => self.literal(b"rue", "true"),
            b'f' => self.literal(b"alse", "false"),
            b'n' => self.literal(b"ull", "null"),
            _ => Err(self.err(c, "looking for beginning of value")),
        }
    }

    fn object(&mut self) -> Result<(), String> {
        self.skip_space();
        let mut first = true;
        loop {
            let c = self.next()?;
            match c {
                b'}' if first => return Ok(()),
                b'"' => self.string()?,
                _ => return Err(self.err(c, "looking for beginning of object key string")),
            }
            first = false;
            self.skip_space();
            let c = self.next()?;
            if c != b':' {
                return Err(self.err(c, "after object key"));
            }
            self.value()?;
            self.skip_space();
            match self.next()? {
                b',' => self.skip_space(),
                b'}' => return Ok(()),
                c => return Err(self.err(c, "after object key:value pair")),
            }
        }
    }

    fn array(&mut self) -> Result<(), String> {
        self.skip_space();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            self.value()?;
            self.skip_space();
            match self.next()? {
                b',' => {}
                b']' => return Ok(()),
                c => return Err(self.err(c, "after array element")),
            }
        }
    }

    fn string(&mut self) -> Result<(), String> {
        loop {
            let c = self.next()?;
            match c {
                b'"' => return Ok(()),
                b'\\' => {
                    let e = self.next()?;
                    match e {
                        b'b' | b'f' | b'n' | b'r' | b't' | b'\\' | b'/' | b'"' => {}
                        b'u' => {
                            for _ in 0..4 {
                                let h = self.next()?;
                                if !h.is_ascii_hexdigit() {
                                    return Err(self.err(h, "in \\u hexadecimal character escape"));
                                }
                            }
                        }
                        _ => return Err(self.err(e, "in string escape code")),
                    }
                }
                0x00..=0x1f => return Err(self.err(c, "in string literal")),
                _ => {}
            }
        }
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
    }

    fn number(&mut self, first: u8) -> Result<(), String> {
        let lead = if first == b'-' {
            let c = self.next()?;
            if !c.is_ascii_digit() {
                return Err(self.err(c, "in numeric literal"));
            }
            c
        } else {
            first
        };
        if lead != b'0' {
            self.digits();
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            let c = self.next()?;
            if !c.is_ascii_digit() {
                return Err(self.err(c, "after decimal point in numeric literal"));
            }
            self.digits();
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            let mut c = self.next()?;
            if c == b'+' || c == b'-' {
                c = self.next()?;
            }
            if !c.is_ascii_digit() {
                return Err(self.err(c, "in exponent of numeric literal"));
            }
            self.digits();
        }
        Ok(())
    }

    fn literal(&mut self, rest: &[u8], name: &str) -> Result<(), String> {
        for &want in rest {
            let c = self.next()?;
            if c != want {
                let ctx = format!("in literal {name} (expecting {})", quote_char(want));
                return Err(self.err(c, &ctx));
            }
        }
        Ok(())
    }

    fn end_top(&mut self) -> Result<(), String> {
        self.skip_space();
        match self.peek() {
            None => Ok(()),
            Some(c) => Err(self.err(c, "after top-level value")),
        }
    }
}
