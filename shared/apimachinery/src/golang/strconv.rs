//! Go's `strconv`: `Quote` (what `%q` prints, which upstream uses for names inside `Status`
//! messages), `FormatFloat` with the shortest digits, and `ParseBool`, `ParseInt`,
//! `ParseUint` and `Atoi` with the `NumError` texts upstream passes on
//! (`strconv.ParseBool: parsing "x": invalid syntax`).

use std::fmt::{self, Write as _};

/// Go's `strconv.Quote(s)`: double quotes around `s`, with `"` and `\` escaped and
/// non-printable characters written as Go escapes.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if is_print(c) => out.push(c),
            c if (c as u32) < 0x80 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if (c as u32) < 0x10000 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
    out.push('"');
    out
}

/// An approximation of Go's `unicode.IsPrint`: everything but control characters, spaces
/// other than U+0020, format characters, private-use code points and non-characters.
/// (Unassigned code points count as printable here; Go escapes them.)
pub fn is_print(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    let u = c as u32;
    let format = matches!(
        u,
        0xAD | 0x600..=0x605
            | 0x61C
            | 0x6DD
            | 0x70F
            | 0x890..=0x891
            | 0x8E2
            | 0x180E
            | 0x200B..=0x200F
            | 0x202A..=0x202E
            | 0x2060..=0x2064
            | 0x2066..=0x206F
            | 0xFEFF
            | 0xFFF9..=0xFFFB
            | 0x110BD
            | 0x110CD
            | 0x13430..=0x1343F
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0001
            | 0xE0020..=0xE007F
    );
    let private_use = matches!(u, 0xE000..=0xF8FF | 0xF0000..=0x10FFFF);
    let nonchar = matches!(u, 0xFDD0..=0xFDEF) || (u & 0xFFFE) == 0xFFFE;
    // U+00A0 and the other no-break spaces are not `is_whitespace` in every case; Go treats
    // every Zs other than U+0020 as non-printable.
    let space = matches!(
        u,
        0xA0 | 0x1680 | 0x2000..=0x200A | 0x202F | 0x205F | 0x3000
    );
    !(format || private_use || nonchar || space)
}

/// Go's `strconv.FormatFloat(f, fmt, -1, bit_size)`: the shortest digits that read back
/// as `f` (as a `float32` when `bit_size` is 32), laid out as `fmt` says: `b'e'`
/// (`1.5e+06`, at least two exponent digits), `b'f'` (`1500000`, never an exponent) or
/// `b'g'` (`%v`'s form: `e` when the exponent is below -4 or from 6 on, else `f`).
pub fn format_float(f: f64, fmt: u8, bit_size: u32) -> String {
    if f.is_nan() {
        return "NaN".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.to_owned();
    }
    let (digits, dp) = shortest(f, bit_size);
    let mut out = String::with_capacity(digits.len() + 8);
    if f.is_sign_negative() {
        out.push('-');
    }
    let nd = digits.len() as i32;
    match fmt {
        b'e' => fmt_e(&mut out, &digits, dp, (nd - 1).max(0)),
        b'g' if !(-4..6).contains(&(dp - 1)) => fmt_e(&mut out, &digits, dp, nd - 1),
        _ => fmt_f(&mut out, &digits, dp, (nd - dp).max(0)),
    }
    out
}

/// The shortest decimal digits of `|f|` (none for zero) and the position of the decimal
/// point relative to them (Go's `decimalSlice.nd` and `.dp`).
fn shortest(f: f64, bit_size: u32) -> (Vec<u8>, i32) {
    let sci = if bit_size == 32 {
        format!("{:e}", (f as f32).abs())
    } else {
        format!("{:e}", f.abs())
    };
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let digits: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).collect();
    if digits == b"0" {
        return (Vec::new(), 0);
    }
    (digits, exp.parse::<i32>().unwrap_or(0) + 1)
}

/// Go's `fmtE`: `d.ddde±dd` with `prec` digits after the point.
fn fmt_e(out: &mut String, digits: &[u8], dp: i32, prec: i32) {
    out.push(char::from(digits.first().copied().unwrap_or(b'0')));
    if prec > 0 {
        out.push('.');
        for i in 1..=prec as usize {
            out.push(char::from(digits.get(i).copied().unwrap_or(b'0')));
        }
    }
    let exp = if digits.is_empty() { 0 } else { dp - 1 };
    let sign = if exp < 0 { '-' } else { '+' };
    let _ = write!(out, "e{sign}{:02}", exp.abs());
}

/// Go's `fmtF`: `ddd.ddd` with `prec` digits after the point.
fn fmt_f(out: &mut String, digits: &[u8], dp: i32, prec: i32) {
    if dp > 0 {
        let m = (dp as usize).min(digits.len());
        out.extend(digits[..m].iter().map(|&d| char::from(d)));
        out.extend(std::iter::repeat_n('0', dp as usize - m));
    } else {
        out.push('0');
    }
    if prec > 0 {
        out.push('.');
        for i in 1..=prec {
            let j = dp + i - 1;
            let d = usize::try_from(j).ok().and_then(|j| digits.get(j));
            out.push(char::from(d.copied().unwrap_or(b'0')));
        }
    }
}

/// Go's `strconv.NumError`: `strconv.<Func>: parsing "<num>": <why>`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("strconv.{func}: parsing {}: {why}", quote(.num))]
pub struct NumError {
    /// The failing function (`ParseBool`, `ParseInt`, `Atoi`, ...).
    pub func: &'static str,
    /// The input.
    pub num: String,
    pub why: NumErrorKind,
}

/// Why a number did not parse (Go's `ErrSyntax`, `ErrRange`, or a bad base).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumErrorKind {
    Syntax,
    Range,
    Base(u32),
}

impl fmt::Display for NumErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NumErrorKind::Syntax => f.write_str("invalid syntax"),
            NumErrorKind::Range => f.write_str("value out of range"),
            NumErrorKind::Base(b) => write!(f, "invalid base {b}"),
        }
    }
}

fn num_error(func: &'static str, num: &str, why: NumErrorKind) -> NumError {
    NumError {
        func,
        num: num.to_owned(),
        why,
    }
}

/// Go's `strconv.ParseBool`: `1`, `t`, `T`, `TRUE`, `true`, `True` and their false forms.
pub fn parse_bool(s: &str) -> Result<bool, NumError> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Ok(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Ok(false),
        _ => Err(num_error("ParseBool", s, NumErrorKind::Syntax)),
    }
}

/// Go's `strconv.ParseUint(s, base, bit_size)`: base 0 reads a `0b`, `0o`, `0x` or `0`
/// prefix and allows `_` between digits; `bit_size` 0 means 64. On overflow the error
/// is a range error.
pub fn parse_uint(s: &str, base: u32, bit_size: u32) -> Result<u64, NumError> {
    parse_uint_as("ParseUint", s, base, bit_size)
}

fn parse_uint_as(func: &'static str, s0: &str, base: u32, bit_size: u32) -> Result<u64, NumError> {
    let err = |why| Err(num_error(func, s0, why));
    if s0.is_empty() {
        return err(NumErrorKind::Syntax);
    }
    let base0 = base == 0;
    let (mut s, mut base) = (s0.as_bytes(), base);
    if base0 {
        base = 10;
        if s[0] == b'0' {
            (base, s) = match s.get(1).map(u8::to_ascii_lowercase) {
                Some(b'b') if s.len() >= 3 => (2, &s[2..]),
                Some(b'o') if s.len() >= 3 => (8, &s[2..]),
                Some(b'x') if s.len() >= 3 => (16, &s[2..]),
                _ => (8, &s[1..]),
            };
        }
    } else if !(2..=36).contains(&base) {
        return err(NumErrorKind::Base(base));
    }
    let bits = if bit_size == 0 { 64 } else { bit_size.min(64) };
    let max = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let mut n: u64 = 0;
    let mut underscores = false;
    for &c in s {
        let d = match c {
            b'_' if base0 => {
                underscores = true;
                continue;
            }
            b'0'..=b'9' => u32::from(c - b'0'),
            b'a'..=b'z' | b'A'..=b'Z' => u32::from(c.to_ascii_lowercase() - b'a') + 10,
            _ => return err(NumErrorKind::Syntax),
        };
        if d >= base {
            return err(NumErrorKind::Syntax);
        }
        match n
            .checked_mul(u64::from(base))
            .and_then(|m| m.checked_add(u64::from(d)))
        {
            Some(v) if v <= max => n = v,
            _ => return err(NumErrorKind::Range),
        }
    }
    if underscores && !underscore_ok(s0) {
        return err(NumErrorKind::Syntax);
    }
    Ok(n)
}

/// Go's `underscoreOK`: underscores only between digits, or between a base prefix and a
/// digit.
fn underscore_ok(s: &str) -> bool {
    let mut s = s.as_bytes();
    // '^' a prefix or digit came last, '0' a digit, '_' an underscore.
    let mut saw = b'^';
    if let [b'+' | b'-', rest @ ..] = s {
        s = rest;
    }
    let mut hex = false;
    if s.len() >= 2 && s[0] == b'0' && matches!(s[1].to_ascii_lowercase(), b'b' | b'o' | b'x') {
        hex = s[1].eq_ignore_ascii_case(&b'x');
        s = &s[2..];
        saw = b'0';
    }
    for &c in s {
        if c.is_ascii_digit() || (hex && c.is_ascii_hexdigit()) {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else {
            if saw == b'_' {
                return false;
            }
            saw = b'!';
        }
    }
    saw != b'_'
}

/// Go's `strconv.ParseInt(s, base, bit_size)`: an optional sign, then as
/// [`parse_uint`]; out of range is a range error.
pub fn parse_int(s: &str, base: u32, bit_size: u32) -> Result<i64, NumError> {
    parse_int_as("ParseInt", s, base, bit_size)
}

fn parse_int_as(func: &'static str, s0: &str, base: u32, bit_size: u32) -> Result<i64, NumError> {
    if s0.is_empty() {
        return Err(num_error(func, s0, NumErrorKind::Syntax));
    }
    let (neg, s) = match s0.as_bytes()[0] {
        b'+' => (false, &s0[1..]),
        b'-' => (true, &s0[1..]),
        _ => (false, s0),
    };
    let un = match parse_uint_as(func, s, base, bit_size) {
        Ok(un) => un,
        Err(e) if e.why == NumErrorKind::Range => u64::MAX,
        Err(e) => return Err(num_error(func, s0, e.why)),
    };
    let bits = if bit_size == 0 { 64 } else { bit_size.min(64) };
    let cutoff = 1u64 << (bits - 1);
    if (!neg && un >= cutoff) || (neg && un > cutoff) {
        return Err(num_error(func, s0, NumErrorKind::Range));
    }
    // `un` fits: below 2^63, or exactly 2^63 when negative.
    Ok(if neg {
        (un as i64).wrapping_neg()
    } else {
        un as i64
    })
}

/// Go's `strconv.Atoi`: `ParseInt(s, 10, 0)` with its errors naming `Atoi`.
pub fn atoi(s: &str) -> Result<i64, NumError> {
    parse_int_as("Atoi", s, 10, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_like_go() {
        assert_eq!(quote("foo"), r#""foo""#);
        assert_eq!(quote(""), r#""""#);
        assert_eq!(quote(r#"a"b\c"#), r#""a\"b\\c""#);
        assert_eq!(
            quote("a\nb\tc\r\u{7}\u{8}\u{c}\u{b}"),
            r#""a\nb\tc\r\a\b\f\v""#
        );
        assert_eq!(quote("\u{0}\u{1f}\u{7f}"), r#""\x00\x1f\x7f""#);
        assert_eq!(quote("héllo 世界"), "\"héllo 世界\"");
        assert_eq!(quote("\u{a0}\u{200b}\u{feff}"), r#""\u00a0\u200b\ufeff""#);
        assert_eq!(quote("\u{f0000}"), r#""\U000f0000""#);
        assert_eq!(quote("<&>"), r#""<&>""#);
        // From kas-filters' request-URI quoting.
        assert_eq!(quote("/api/v1/pods?x=1"), r#""/api/v1/pods?x=1""#);
        assert_eq!(quote("\n\t\x01\x7f"), r#""\n\t\x01\x7f""#);
    }

    #[test]
    fn format_float_g_is_percent_v() {
        let g = |f: f64| format_float(f, b'g', 64);
        assert_eq!(g(1.5), "1.5");
        assert_eq!(g(100000.0), "100000");
        assert_eq!(g(1234567.0), "1.234567e+06");
        assert_eq!(g(0.0001), "0.0001");
        assert_eq!(g(0.00001), "1e-05");
        assert_eq!(g(-2.0), "-2");
        assert_eq!(g(0.0), "0");
        assert_eq!(g(-0.0), "-0");
        assert_eq!(g(1e21), "1e+21");
        assert_eq!(g(1e100), "1e+100");
        assert_eq!(g(123456.7), "123456.7");
        assert_eq!(g(0.1), "0.1");
        assert_eq!(g(f64::NAN), "NaN");
        assert_eq!(g(f64::INFINITY), "+Inf");
        assert_eq!(g(f64::NEG_INFINITY), "-Inf");
        assert_eq!(format_float(0.1, b'g', 32), "0.1");
        assert_eq!(g(f64::from(0.1f32)), "0.10000000149011612");
    }

    #[test]
    fn format_float_e_and_f() {
        assert_eq!(format_float(1e-7, b'e', 64), "1e-07");
        assert_eq!(format_float(1.5e21, b'e', 64), "1.5e+21");
        assert_eq!(format_float(0.0, b'e', 64), "0e+00");
        assert_eq!(format_float(-1e-100, b'e', 64), "-1e-100");
        assert_eq!(format_float(1e21, b'f', 64), "1000000000000000000000");
        assert_eq!(format_float(1e-7, b'f', 64), "0.0000001");
        assert_eq!(format_float(123.456, b'f', 64), "123.456");
        assert_eq!(format_float(0.0, b'f', 64), "0");
    }

    #[test]
    fn parse_bool_like_go() {
        for t in ["1", "t", "T", "TRUE", "true", "True"] {
            assert_eq!(parse_bool(t), Ok(true));
        }
        for f in ["0", "f", "F", "FALSE", "false", "False"] {
            assert_eq!(parse_bool(f), Ok(false));
        }
        assert_eq!(
            parse_bool("yes").unwrap_err().to_string(),
            r#"strconv.ParseBool: parsing "yes": invalid syntax"#
        );
        assert_eq!(
            parse_bool("tRuE\u{1}").unwrap_err().to_string(),
            r#"strconv.ParseBool: parsing "tRuE\x01": invalid syntax"#
        );
    }

    #[test]
    fn parse_int_like_go() {
        let p = |s: &str| parse_int(s, 10, 64);
        assert_eq!(p("42"), Ok(42));
        assert_eq!(p("+42"), Ok(42));
        assert_eq!(p("-42"), Ok(-42));
        assert_eq!(p("-9223372036854775808"), Ok(i64::MIN));
        assert_eq!(p("9223372036854775807"), Ok(i64::MAX));
        let err = |s: &str| p(s).unwrap_err().to_string();
        assert_eq!(err(""), r#"strconv.ParseInt: parsing "": invalid syntax"#);
        assert_eq!(err("-"), r#"strconv.ParseInt: parsing "-": invalid syntax"#);
        assert_eq!(
            err(" 1"),
            r#"strconv.ParseInt: parsing " 1": invalid syntax"#
        );
        assert_eq!(
            err("1_0"),
            r#"strconv.ParseInt: parsing "1_0": invalid syntax"#
        );
        assert_eq!(
            err("9223372036854775808"),
            r#"strconv.ParseInt: parsing "9223372036854775808": value out of range"#
        );
        assert_eq!(
            err("-99999999999999999999x"),
            r#"strconv.ParseInt: parsing "-99999999999999999999x": value out of range"#
        );
        assert_eq!(
            parse_int("128", 10, 8).unwrap_err().why,
            NumErrorKind::Range
        );
        assert_eq!(parse_int("-128", 10, 8), Ok(-128));
        assert_eq!(
            parse_int("1", 1, 64).unwrap_err().to_string(),
            r#"strconv.ParseInt: parsing "1": invalid base 1"#
        );
    }

    #[test]
    fn base_zero_reads_prefixes() {
        assert_eq!(parse_int("0x1F", 0, 64), Ok(31));
        assert_eq!(parse_int("-0o17", 0, 64), Ok(-15));
        assert_eq!(parse_int("0b101", 0, 64), Ok(5));
        assert_eq!(parse_int("017", 0, 64), Ok(15));
        assert_eq!(parse_int("0", 0, 64), Ok(0));
        assert_eq!(parse_int("1_000", 0, 64), Ok(1000));
        assert_eq!(parse_int("0x_1", 0, 64), Ok(1));
        assert!(parse_int("1__0", 0, 64).is_err());
        assert!(parse_int("_1", 0, 64).is_err());
        assert!(parse_int("1_", 0, 64).is_err());
        assert!(parse_int("0x", 0, 64).is_err());
        assert!(parse_int("08", 0, 64).is_err());
        assert!(parse_int("+-1", 0, 64).is_err());
        assert_eq!(parse_uint("18446744073709551615", 0, 64), Ok(u64::MAX));
        assert!(parse_int("18446744073709551615", 0, 64).is_err());
        assert!(parse_uint("-1", 0, 64).is_err());
    }

    #[test]
    fn atoi_names_itself() {
        assert_eq!(atoi("-3"), Ok(-3));
        assert_eq!(
            atoi("x").unwrap_err().to_string(),
            r#"strconv.Atoi: parsing "x": invalid syntax"#
        );
        assert_eq!(
            atoi("99999999999999999999").unwrap_err().to_string(),
            r#"strconv.Atoi: parsing "99999999999999999999": value out of range"#
        );
    }
}
