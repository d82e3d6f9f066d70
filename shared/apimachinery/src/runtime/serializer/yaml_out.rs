use std::cmp::Ordering;

use crate::golang::strconv::{format_float, parse_int, parse_uint, quote};
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
        "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", "n", "N", "no",
        "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF", "", "~", "null", "Null",
        "NULL", ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf",
        "-.Inf", "-.INF", "<<",
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
            !(is_int(&plain) || is_yaml_float(&plain) || is_binary(&plain))
        }
        _ => true,
    }
}

/// goyaml.v2's `resolve` reads a scalar as an int when Go's `strconv.ParseInt` or
/// `ParseUint` with base 0 (sign, `0x`, `0o`, `0b`, leading-0 octal) takes it in 64 bits.
fn is_int(s: &str) -> bool {
    parse_int(s, 0, 64).is_ok() || parse_uint(s, 0, 64).is_ok()
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
    let zone_ok =
        zone.is_empty() || zone == "Z" || zone[1..].split(':').all(|p| num(p, 2)) && zone.len() > 1;
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
    let go = crate::golang::json::format_float(f, 64);
    if !go.contains(['.', 'e']) && is_int(&go) {
        return go;
    }
    format_float(f, b'g', 64)
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
        seen: super::strict::Seen,
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
                if let Some(key) = map.seen.repeated(key) {
                    out.push(format!(
                        "line {}: key {} already set in map",
                        map.value_line,
                        quote(&key)
                    ));
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
                    seen: Default::default(),
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
