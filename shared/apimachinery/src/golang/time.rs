//! Go's `time` where its text reaches the wire:
//!
//! - `time.Time` as Unix seconds and nanoseconds ([`Time`]), parsed as
//!   `time.Parse(time.RFC3339, s)` (Go's fast path: fixed-width fields, a `.` and any
//!   number of fraction digits, then `Z` or `±hh:mm`), written in UTC as `metav1.Time`
//!   (`2006-01-02T15:04:05Z`) and `metav1.MicroTime` (`2006-01-02T15:04:05.000000Z`) write
//!   it, as `time.RFC3339Nano` writes it, and as `Time.String()` prints it ([`Time`]'s
//!   `Display`);
//! - `time.ParseDuration` ("30s", "1m0s", "1h2m3.5s", "-5s") with its error texts, which
//!   upstream puts into messages (`invalid timeout specified in the request URL - time:
//!   invalid duration "x"`).

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

/// Unix seconds of Go's zero `time.Time`, January 1 of year 1, UTC.
pub const ZERO_UNIX: i64 = -62_135_596_800;

/// Go's `time.Time` in UTC, as `time.Unix` holds it: seconds, and nanoseconds in
/// `0..1e9`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Time {
    pub seconds: i64,
    pub nanos: i32,
}

impl Time {
    /// `time.Unix(seconds, nanos)`: nanos outside `0..1e9` carry into the seconds.
    pub fn from_unix(seconds: i64, nanos: i64) -> Time {
        let seconds = seconds.wrapping_add(nanos.div_euclid(1_000_000_000));
        Time {
            seconds,
            nanos: nanos.rem_euclid(1_000_000_000) as i32,
        }
    }

    /// The instant a `SystemTime` names (one before the epoch counts as the epoch).
    pub fn from_system_time(t: SystemTime) -> Time {
        let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
        let seconds = i64::try_from(d.as_secs()).unwrap_or(i64::MAX);
        Time::from_unix(seconds, i64::from(d.subsec_nanos()))
    }

    /// `Time.IsZero`.
    pub fn is_zero(&self) -> bool {
        self.seconds == ZERO_UNIX && self.nanos == 0
    }

    /// The instant with its fraction cut to microseconds, as MicroTime keeps it.
    pub fn truncate_micros(self) -> Time {
        Time {
            seconds: self.seconds,
            nanos: self.nanos - self.nanos % 1000,
        }
    }
}

/// Parses an RFC 3339 string as Go's `time.Parse(time.RFC3339, s)` fast path does;
/// `None` when it does not parse.
pub fn parse_rfc3339(s: &str) -> Option<Time> {
    let b = s.as_bytes();
    if b.len() < 19 {
        return None;
    }
    let year = number(&b[0..4], 0, 9999)?;
    let month = number(&b[5..7], 1, 12)?;
    let day = number(&b[8..10], 1, days_in_month(year, month))?;
    let hour = number(&b[11..13], 0, 23)?;
    let minute = number(&b[14..16], 0, 59)?;
    let second = number(&b[17..19], 0, 59)?;
    if b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let mut rest = &b[19..];
    let mut nanos = 0i64;
    if rest.len() >= 2 && rest[0] == b'.' && rest[1].is_ascii_digit() {
        let digits = rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
        // Go reads at most nine digits of the fraction and ignores the rest.
        for (i, d) in rest[1..1 + digits].iter().take(9).enumerate() {
            nanos += i64::from(d - b'0') * 10i64.pow(8 - i as u32);
        }
        rest = &rest[1 + digits..];
    }
    let offset = zone_offset(rest)?;
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset;
    Some(Time::from_unix(seconds, nanos))
}

/// Seconds east of UTC of a `Z` or `±hh:mm` suffix.
fn zone_offset(rest: &[u8]) -> Option<i64> {
    if rest == b"Z" {
        return Some(0);
    }
    if rest.len() != 6 || rest[3] != b':' {
        return None;
    }
    let hours = number(&rest[1..3], 0, 23)?;
    let minutes = number(&rest[4..6], 0, 59)?;
    let offset = (hours * 60 + minutes) * 60;
    match rest[0] {
        b'+' => Some(offset),
        b'-' => Some(-offset),
        _ => None,
    }
}

/// A fixed-width decimal field within `min..=max`.
fn number(digits: &[u8], min: i64, max: i64) -> Option<i64> {
    let mut v = 0i64;
    for d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v * 10 + i64::from(d - b'0');
    }
    (min..=max).contains(&v).then_some(v)
}

/// `t.UTC().Format(time.RFC3339)`: seconds precision, as metav1.Time writes it.
pub fn format_rfc3339(t: Time) -> String {
    format_date_time(t.seconds, None)
}

/// `t.UTC().Format("2006-01-02T15:04:05.000000Z07:00")`, as metav1.MicroTime writes it.
pub fn format_rfc3339_micro(t: Time) -> String {
    format_date_time(t.seconds, Some(t.nanos / 1000))
}

/// `t.UTC().Format(time.RFC3339Nano)`: the fraction without trailing zeros and left out
/// when zero (`2024-01-02T03:04:05.12Z`), as upstream's legacy audit line writes it.
pub fn format_rfc3339_nano(t: Time) -> String {
    let mut out = format_date_time(t.seconds, None);
    if t.nanos != 0 {
        out.pop();
        out.push_str(format!(".{:09}", t.nanos).trim_end_matches('0'));
        out.push('Z');
    }
    out
}

fn format_date_time(seconds: i64, micros: Option<i32>) -> String {
    let days = seconds.div_euclid(86_400);
    let secs = seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    // Go's layout pads the year to four digits and puts a minus sign before negative ones.
    let year = if year < 0 {
        format!("-{:04}", -i128::from(year))
    } else {
        format!("{year:04}")
    };
    let mut out = format!(
        "{year}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    );
    if let Some(micros) = micros {
        out.push_str(&format!(".{micros:06}"));
    }
    out.push('Z');
    out
}

/// `Time.String()` in a UTC location: `2024-01-02 03:04:05.123456 +0000 UTC`, the
/// fraction without trailing zeros and left out when zero.
impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let whole = format_date_time(self.seconds, None);
        let date_time = whole.trim_end_matches('Z').replacen('T', " ", 1);
        f.write_str(&date_time)?;
        if self.nanos != 0 {
            f.write_str(format!(".{:09}", self.nanos).trim_end_matches('0'))?;
        }
        f.write_str(" +0000 UTC")
    }
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day count since 1970-01-01; the inverse of [`days_from_civil`], in
/// `i64` throughout because a Timestamp from the wire may hold any `int64` seconds.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// The largest magnitude Go accepts: 1<<63 nanoseconds (only for negative values) and
/// 1<<63 - 1 for positive ones.
const MAX_MAGNITUDE: u64 = 1 << 63;

/// Go's `time.Duration`: signed nanoseconds (`std::time::Duration` is unsigned).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(pub i64);

impl Duration {
    /// The duration as a `std::time::Duration`; `None` when negative.
    pub fn to_std(self) -> Option<std::time::Duration> {
        u64::try_from(self.0)
            .ok()
            .map(std::time::Duration::from_nanos)
    }
}

/// Go's `time.Duration.String()`: `0s`, `1.5s`, `1m0s`, `-30s`, `500ms`, `1µs`.
pub fn duration_string(d: Duration) -> String {
    let negative = d.0 < 0;
    let mut u = d.0.unsigned_abs();
    let sign = if negative { "-" } else { "" };
    if u < 1_000_000_000 {
        let (unit, scale) = match u {
            0 => return "0s".to_owned(),
            1..=999 => ("ns", 1),
            1_000..=999_999 => ("µs", 1_000),
            _ => ("ms", 1_000_000),
        };
        return format!("{sign}{}{unit}", fraction(u, scale));
    }
    let mut out = format!("{}s", fraction(u % 60_000_000_000, 1_000_000_000));
    u /= 60_000_000_000;
    if u > 0 {
        out = format!("{}m{out}", u % 60);
        u /= 60;
        if u > 0 {
            out = format!("{u}h{out}");
        }
    }
    format!("{sign}{out}")
}

/// `v / scale` with the fraction's trailing zeros dropped, as Go's `fmtFrac`.
fn fraction(v: u64, scale: u64) -> String {
    let (whole, frac) = (v / scale, v % scale);
    if frac == 0 {
        return whole.to_string();
    }
    let width = scale.ilog10() as usize;
    let digits = format!("{frac:0width$}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
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
                write!(f, "time: invalid duration {}", quote(orig))
            }
            DurationError::MissingUnit { orig } => {
                write!(f, "time: missing unit in duration {}", quote(orig))
            }
            DurationError::UnknownUnit { unit, orig } => write!(
                f,
                "time: unknown unit {} in duration {}",
                quote(unit),
                quote(orig)
            ),
        }
    }
}

impl std::error::Error for DurationError {}

/// Go's `time.ParseDuration`, with its error texts.
pub fn parse_duration(orig: &str) -> Result<Duration, DurationError> {
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
        return Ok(Duration(0));
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
    // `total` is at most 1<<63, and exactly that only when negative.
    Ok(Duration(if negative {
        (total as i64).wrapping_neg()
    } else {
        total as i64
    }))
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

/// Go's `time.quote`, the time package's own quoting (it cannot import `strconv`): `"` and
/// `\` escaped, each byte of a non-ASCII or control character as `\xNN`.
fn quote(s: &str) -> String {
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

    #[test]
    fn durations_print_as_go_prints_them() {
        for (nanos, text) in [
            (0, "0s"),
            (-30_000_000_000, "-30s"),
            (60_000_000_000, "1m0s"),
            (300_000_000_000, "5m0s"),
            (1_500_000_000, "1.5s"),
            (3_723_000_000_000, "1h2m3s"),
            (500_000_000, "500ms"),
            (1_000, "1µs"),
            (1_500, "1.5µs"),
            (7, "7ns"),
        ] {
            assert_eq!(duration_string(Duration(nanos)), text);
        }
    }

    #[test]
    fn parses_utc_offsets_and_fractions() {
        let t = parse_rfc3339("2008-01-01T01:01:01Z").unwrap();
        assert_eq!(t, Time::from_unix(1_199_149_261, 0));
        let t = parse_rfc3339("2008-01-01T02:31:01+01:30").unwrap();
        assert_eq!(t.seconds, 1_199_149_261);
        let t = parse_rfc3339("1969-12-31T23:59:59.5Z").unwrap();
        assert_eq!((t.seconds, t.nanos), (-1, 500_000_000));
        let t = parse_rfc3339("2020-02-29T00:00:00.1234567891234Z").unwrap();
        assert_eq!(t.nanos, 123_456_789);
        assert!(parse_rfc3339("0001-01-01T00:00:00Z").unwrap().is_zero());
    }

    #[test]
    fn rejects_what_go_rejects() {
        for bad in [
            "",
            "2008-01-01",
            "2008-01-01 01:01:01Z",
            "2008-13-01T01:01:01Z",
            "2019-02-29T01:01:01Z",
            "2008-01-01T24:00:00Z",
            "2008-01-01T01:01:60Z",
            "2008-01-01T01:01:01",
            "2008-01-01T01:01:01+0100",
            "2008-01-01T01:01:01.Z",
            "2008-01-01T01:01:01z",
            "２008-01-01T01:01:01Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn formats_like_go() {
        let t = Time::from_unix(1_199_149_261, 0);
        assert_eq!(format_rfc3339(t), "2008-01-01T01:01:01Z");
        let t = Time::from_unix(1_199_149_261, 123_456_789).truncate_micros();
        assert_eq!(format_rfc3339_micro(t), "2008-01-01T01:01:01.123456Z");
        assert_eq!(
            format_rfc3339(Time::from_unix(ZERO_UNIX - 86_400 * 366, 0)),
            "0000-01-01T00:00:00Z"
        );
        assert_eq!(
            format_rfc3339(Time::from_unix(ZERO_UNIX - 86_400 * 367, 0)),
            "-0001-12-31T00:00:00Z"
        );
        // Any int64 from the wire formats without overflow.
        format_rfc3339(Time::from_unix(i64::MAX, 0));
        format_rfc3339(Time::from_unix(i64::MIN, 0));
    }

    #[test]
    fn formats_rfc3339_nano_like_go() {
        assert_eq!(
            format_rfc3339_nano(Time::from_unix(1_704_164_645, 120_000_000)),
            "2024-01-02T03:04:05.12Z"
        );
        assert_eq!(
            format_rfc3339_nano(Time::from_unix(1_704_164_645, 123_456_789)),
            "2024-01-02T03:04:05.123456789Z"
        );
        assert_eq!(
            format_rfc3339_nano(Time::from_unix(1_704_164_645, 0)),
            "2024-01-02T03:04:05Z"
        );
    }

    #[test]
    fn prints_as_go_time_string() {
        let t = Time::from_unix(1_704_164_645, 123_456_000);
        assert_eq!(t.to_string(), "2024-01-02 03:04:05.123456 +0000 UTC");
        assert_eq!(
            Time::from_unix(1_704_164_645, 0).to_string(),
            "2024-01-02 03:04:05 +0000 UTC"
        );
        assert_eq!(
            Time::from_unix(ZERO_UNIX, 0).to_string(),
            "0001-01-01 00:00:00 +0000 UTC"
        );
    }

    #[test]
    fn reads_system_times_and_epoch_seconds() {
        let t = UNIX_EPOCH + std::time::Duration::new(951_782_400, 5);
        assert_eq!(Time::from_system_time(t), Time::from_unix(951_782_400, 5));
        assert_eq!(
            format_rfc3339(Time::from_system_time(t)),
            "2000-02-29T00:00:00Z"
        );
        let secs = |s: &str| parse_rfc3339(s).map(|t| t.seconds);
        assert_eq!(secs("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(secs("2000-02-29T00:00:00Z"), Some(951_782_400));
        assert_eq!(secs("nope"), None);
    }

    #[test]
    fn civil_dates_round_trip() {
        for days in (-800_000..800_000).step_by(997) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, i64::from(m), i64::from(d)), days);
        }
    }
}

#[cfg(test)]
mod duration_tests {
    use std::time::Duration as Std;

    use super::*;

    fn ok(s: &str) -> Std {
        parse_duration(s)
            .ok()
            .and_then(Duration::to_std)
            .unwrap_or_else(|| panic!("{s} should parse"))
    }

    #[test]
    fn parses_what_go_parses() {
        assert_eq!(ok("0"), Std::ZERO);
        assert_eq!(ok("-0"), Std::ZERO);
        assert_eq!(ok("30s"), Std::from_secs(30));
        assert_eq!(ok("+30s"), Std::from_secs(30));
        assert_eq!(ok("1m0s"), Std::from_secs(60));
        assert_eq!(ok("500ms"), Std::from_millis(500));
        assert_eq!(ok("1h2m3s4ms5us6ns"), Std::new(3723, 4_005_006));
        assert_eq!(ok("1.5h"), Std::from_secs(5400));
        assert_eq!(ok(".5s"), Std::from_millis(500));
        assert_eq!(ok("5.s"), Std::from_secs(5));
        assert_eq!(ok("3µs"), Std::from_micros(3));
        assert_eq!(ok("3μs"), Std::from_micros(3));
        assert_eq!(ok("0s"), Std::ZERO);
        assert_eq!(
            ok("9223372036854775807ns"),
            Std::from_nanos(i64::MAX as u64)
        );
    }

    #[test]
    fn negative_values_are_signed() {
        assert_eq!(parse_duration("-1.5s"), Ok(Duration(-1_500_000_000)));
        assert_eq!(parse_duration("-1s").unwrap().to_std(), None);
        // Go accepts exactly 1<<63 ns only when negative.
        assert!(parse_duration("-9223372036854775808ns").is_ok());
        assert!(parse_duration("9223372036854775808ns").is_err());
    }

    #[test]
    fn rejects_with_go_error_text() {
        let err = |s: &str| parse_duration(s).unwrap_err().to_string();
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
