//! Go's `time.ParseDuration`, for the `timeout` query parameter and for flags that take Go
//! durations ("30s", "1m0s", "1h2m3.5s", "500ms", "-5s").
//!
//! Errors carry Go's exact text because upstream puts it into user-visible messages
//! (e.g. `invalid timeout specified in the request URL - time: invalid duration "x"`).

use std::fmt;
use std::time::Duration;

/// The largest magnitude Go accepts: 1<<63 nanoseconds (only for negative values) and
/// 1<<63 - 1 for positive ones.
const MAX_MAGNITUDE: u64 = 1 << 63;

/// A parsed Go duration: Go's are signed, `std::time::Duration` is not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GoDuration {
    pub negative: bool,
    pub magnitude: Duration,
}

/// Why a string is not a Go duration; `Display` is Go's error text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DurationError {
    /// `time: invalid duration "<orig>"`
    Invalid { orig: String },
    /// `time: missing unit in duration "<orig>"`
    MissingUnit { orig: String },
    /// `time: unknown unit "<unit>" in duration "<orig>"`
    UnknownUnit { unit: String, orig: String },
}

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DurationError::Invalid { orig } => {
                write!(f, "time: invalid duration {}", time_quote(orig))
            }
            DurationError::MissingUnit { orig } => {
                write!(f, "time: missing unit in duration {}", time_quote(orig))
            }
            DurationError::UnknownUnit { unit, orig } => write!(
                f,
                "time: unknown unit {} in duration {}",
                time_quote(unit),
                time_quote(orig)
            ),
        }
    }
}

impl std::error::Error for DurationError {}

/// Parses a non-negative Go duration. `None` for anything Go rejects and for negative values
/// (which `Duration` cannot hold); use [`parse_go_duration_signed`] to tell them apart.
pub fn parse_go_duration(s: &str) -> Option<Duration> {
    match parse_go_duration_signed(s) {
        Ok(d) if !d.negative || d.magnitude.is_zero() => Some(d.magnitude),
        _ => None,
    }
}

/// Go's `time.ParseDuration`, with its error texts.
pub fn parse_go_duration_signed(orig: &str) -> Result<GoDuration, DurationError> {
    let invalid = || DurationError::Invalid {
        orig: orig.to_string(),
    };
    let mut s = orig.as_bytes();
    let mut negative = false;
    if let Some(&c) = s.first()
        && (c == b'-' || c == b'+')
    {
        negative = c == b'-';
        s = &s[1..];
    }
    if s == b"0" {
        return Ok(GoDuration {
            negative: false,
            magnitude: Duration::ZERO,
        });
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let mut total: u64 = 0;
    while !s.is_empty() {
        if !(s[0] == b'.' || s[0].is_ascii_digit()) {
            return Err(invalid());
        }
        let before = s.len();
        let (int, rest) = leading_int(s).ok_or_else(invalid)?;
        s = rest;
        let has_int = before != s.len();
        let (mut frac, mut scale, mut has_frac) = (0u64, 1f64, false);
        if s.first() == Some(&b'.') {
            s = &s[1..];
            let before = s.len();
            let (f, sc, rest) = leading_fraction(s);
            (frac, scale, s) = (f, sc, rest);
            has_frac = before != s.len();
        }
        if !has_int && !has_frac {
            return Err(invalid());
        }
        let unit_len = s
            .iter()
            .position(|&c| c == b'.' || c.is_ascii_digit())
            .unwrap_or(s.len());
        if unit_len == 0 {
            return Err(DurationError::MissingUnit {
                orig: orig.to_string(),
            });
        }
        let unit_bytes = &s[..unit_len];
        s = &s[unit_len..];
        let Some(unit) = unit_nanos(unit_bytes) else {
            return Err(DurationError::UnknownUnit {
                unit: String::from_utf8_lossy(unit_bytes).into_owned(),
                orig: orig.to_string(),
            });
        };
        if int > MAX_MAGNITUDE / unit {
            return Err(invalid());
        }
        let mut v = int * unit;
        if frac > 0 {
            // Go computes the fractional part in float64, truncating; do the same.
            v += (frac as f64 * (unit as f64 / scale)) as u64;
            if v > MAX_MAGNITUDE {
                return Err(invalid());
            }
        }
        total += v;
        if total > MAX_MAGNITUDE {
            return Err(invalid());
        }
    }
    if !negative && total > MAX_MAGNITUDE - 1 {
        return Err(invalid());
    }
    Ok(GoDuration {
        negative,
        magnitude: Duration::from_nanos(total),
    })
}

fn unit_nanos(unit: &[u8]) -> Option<u64> {
    Some(match unit {
        b"ns" => 1,
        // "us", micro sign U+00B5 and Greek mu U+03BC.
        b"us" | b"\xc2\xb5s" | b"\xce\xbcs" => 1_000,
        b"ms" => 1_000_000,
        b"s" => 1_000_000_000,
        b"m" => 60 * 1_000_000_000,
        b"h" => 3600 * 1_000_000_000,
        _ => return None,
    })
}

/// Consumes leading digits; `None` on overflow past 1<<63.
fn leading_int(s: &[u8]) -> Option<(u64, &[u8])> {
    let mut x: u64 = 0;
    let mut i = 0;
    while i < s.len() && s[i].is_ascii_digit() {
        if x > MAX_MAGNITUDE / 10 {
            return None;
        }
        x = x * 10 + u64::from(s[i] - b'0');
        if x > MAX_MAGNITUDE {
            return None;
        }
        i += 1;
    }
    Some((x, &s[i..]))
}

/// Consumes leading digits after a decimal point, keeping as many as fit.
fn leading_fraction(s: &[u8]) -> (u64, f64, &[u8]) {
    let (mut x, mut scale, mut overflow) = (0u64, 1f64, false);
    let mut i = 0;
    while i < s.len() && s[i].is_ascii_digit() {
        if !overflow {
            if x > (MAX_MAGNITUDE - 1) / 10 {
                overflow = true;
            } else {
                let y = x * 10 + u64::from(s[i] - b'0');
                if y > MAX_MAGNITUDE {
                    overflow = true;
                } else {
                    x = y;
                    scale *= 10.0;
                }
            }
        }
        i += 1;
    }
    (x, scale, &s[i..])
}

/// The time package's own quoting: `"` and `\` escaped, bytes of non-ASCII or control
/// characters as `\xNN`.
fn time_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if !c.is_ascii() || (c as u32) < 0x20 {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("\\x{b:02x}"));
            }
        } else {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> Duration {
        parse_go_duration(s).unwrap_or_else(|| panic!("{s} should parse"))
    }

    #[test]
    fn parses_what_go_parses() {
        assert_eq!(ok("0"), Duration::ZERO);
        assert_eq!(ok("-0"), Duration::ZERO);
        assert_eq!(ok("30s"), Duration::from_secs(30));
        assert_eq!(ok("+30s"), Duration::from_secs(30));
        assert_eq!(ok("1m0s"), Duration::from_secs(60));
        assert_eq!(ok("500ms"), Duration::from_millis(500));
        assert_eq!(ok("1h2m3s4ms5us6ns"), Duration::new(3723, 4_005_006));
        assert_eq!(ok("1.5h"), Duration::from_secs(5400));
        assert_eq!(ok(".5s"), Duration::from_millis(500));
        assert_eq!(ok("5.s"), Duration::from_secs(5));
        assert_eq!(ok("3µs"), Duration::from_micros(3));
        assert_eq!(ok("3μs"), Duration::from_micros(3));
        assert_eq!(ok("0s"), Duration::ZERO);
        assert_eq!(
            ok("9223372036854775807ns"),
            Duration::from_nanos(i64::MAX as u64)
        );
    }

    #[test]
    fn negative_values_are_signed() {
        let d = parse_go_duration_signed("-1.5s").unwrap();
        assert!(d.negative);
        assert_eq!(d.magnitude, Duration::from_millis(1500));
        assert_eq!(parse_go_duration("-1s"), None);
        // Go accepts exactly 1<<63 ns only when negative.
        assert!(parse_go_duration_signed("-9223372036854775808ns").is_ok());
        assert!(parse_go_duration_signed("9223372036854775808ns").is_err());
    }

    #[test]
    fn rejects_with_go_error_text() {
        let err = |s: &str| parse_go_duration_signed(s).unwrap_err().to_string();
        assert_eq!(err(""), r#"time: invalid duration """#);
        assert_eq!(err("abc"), r#"time: invalid duration "abc""#);
        assert_eq!(err("-"), r#"time: invalid duration "-""#);
        assert_eq!(err("."), r#"time: invalid duration ".""#);
        assert_eq!(err(".s"), r#"time: invalid duration ".s""#);
        assert_eq!(err("5"), r#"time: missing unit in duration "5""#);
        assert_eq!(err("1s5"), r#"time: missing unit in duration "1s5""#);
        assert_eq!(err("5x"), r#"time: unknown unit "x" in duration "5x""#);
        assert_eq!(err("5 s"), r#"time: unknown unit " s" in duration "5 s""#);
        assert_eq!(err("3000000h"), r#"time: invalid duration "3000000h""#);
        assert_eq!(err("\"1\"s"), r#"time: invalid duration "\"1\"s""#);
        assert_eq!(
            err("1é"),
            r#"time: unknown unit "\xc3\xa9" in duration "1\xc3\xa9""#
        );
    }
}
