//! Go's `encoding/json` scanner (`scanner.go`) as `json.Unmarshal` runs it before decoding
//! (`checkValid`): the first syntax error with Go's exact text (`invalid character 'x'
//! looking for beginning of value`, `unexpected end of JSON input`), nesting limited to
//! 10000 levels as Go's is.

use crate::golang::strconv::quote;

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

/// Go's `quoteChar`: how a byte appears in a syntax error (`'x'`, `'\''`, `'"'`,
/// `'\n'`, `'\x01'`).
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

pub(crate) fn is_space(c: u8) -> bool {
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
