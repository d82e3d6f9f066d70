//! `metav1.Time` and `metav1.MicroTime` between their JSON strings and the protobuf
//! `Timestamp { int64 seconds = 1; int32 nanos = 2; }` (`time_proto.go`,
//! `micro_time_proto.go`):
//!
//! - JSON is RFC 3339 in UTC: `2006-01-02T15:04:05Z` for Time,
//!   `2006-01-02T15:04:05.000000Z` for MicroTime; the zero time is `null`.
//! - Time keeps seconds only in protobuf (nanos are written as 0 and ignored when read);
//!   MicroTime keeps microseconds.
//! - The zero time (`0001-01-01T00:00:00Z`) is an empty Timestamp message.
//!
//! Parsing follows Go's RFC 3339 fast path (`time.parseRFC3339`): fixed-width fields,
//! a `.` and any number of fraction digits, then `Z` or `±hh:mm`.

/// Unix seconds of Go's zero `time.Time`, January 1 of year 1, UTC.
pub const ZERO_UNIX: i64 = -62_135_596_800;

/// An instant as Go's `time.Unix` holds it: seconds, and nanoseconds in `0..1e9`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Instant {
    pub seconds: i64,
    pub nanos: i32,
}

impl Instant {
    /// `time.Unix(seconds, nanos)`: nanos outside `0..1e9` carry into the seconds.
    pub fn from_unix(seconds: i64, nanos: i64) -> Instant {
        let seconds = seconds.wrapping_add(nanos.div_euclid(1_000_000_000));
        Instant {
            seconds,
            nanos: nanos.rem_euclid(1_000_000_000) as i32,
        }
    }

    /// `Time.IsZero`.
    pub fn is_zero(&self) -> bool {
        self.seconds == ZERO_UNIX && self.nanos == 0
    }

    /// The instant with its fraction cut to microseconds, as MicroTime keeps it.
    pub fn truncate_micros(self) -> Instant {
        Instant {
            seconds: self.seconds,
            nanos: self.nanos - self.nanos % 1000,
        }
    }
}

/// Parses an RFC 3339 string as Go's `time.Parse(time.RFC3339, s)` fast path does;
/// `None` when it does not parse.
pub fn parse_rfc3339(s: &str) -> Option<Instant> {
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
    Some(Instant::from_unix(seconds, nanos))
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
pub fn format_rfc3339(t: Instant) -> String {
    format_date_time(t.seconds, None)
}

/// `t.UTC().Format("2006-01-02T15:04:05.000000Z07:00")`, as metav1.MicroTime writes it.
pub fn format_rfc3339_micro(t: Instant) -> String {
    format_date_time(t.seconds, Some(t.nanos / 1000))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_utc_offsets_and_fractions() {
        let t = parse_rfc3339("2008-01-01T01:01:01Z").unwrap();
        assert_eq!(t, Instant::from_unix(1_199_149_261, 0));
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
        let t = Instant::from_unix(1_199_149_261, 0);
        assert_eq!(format_rfc3339(t), "2008-01-01T01:01:01Z");
        let t = Instant::from_unix(1_199_149_261, 123_456_789).truncate_micros();
        assert_eq!(format_rfc3339_micro(t), "2008-01-01T01:01:01.123456Z");
        assert_eq!(
            format_rfc3339(Instant::from_unix(ZERO_UNIX - 86_400 * 366, 0)),
            "0000-01-01T00:00:00Z"
        );
        assert_eq!(
            format_rfc3339(Instant::from_unix(ZERO_UNIX - 86_400 * 367, 0)),
            "-0001-12-31T00:00:00Z"
        );
        // Any int64 from the wire formats without overflow.
        format_rfc3339(Instant::from_unix(i64::MAX, 0));
        format_rfc3339(Instant::from_unix(i64::MIN, 0));
    }

    #[test]
    fn civil_dates_round_trip() {
        for days in (-800_000..800_000).step_by(997) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, i64::from(m), i64::from(d)), days);
        }
    }
}
