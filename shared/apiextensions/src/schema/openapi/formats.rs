//! The string formats a CRD schema may use and their checks: apiextensions'
//! `supportedVersionedFormats` (others are dropped from the schema before validation) and
//! kube-openapi's `strfmt.Default` registry with its validators.

use std::sync::LazyLock;

use kas_apimachinery::golang::time::parse_duration;
use kas_apimachinery::validation::{parse_cidr_sloppy, parse_ip_sloppy};
use regex::{Regex, RegexBuilder};

use super::netaddr;

/// The formats validated at compatibility version 1.33, normalized (no `-`).
const SUPPORTED: &[&str] = &[
    "bsonobjectid",
    "uri",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
    "uuid",
    "uuid3",
    "uuid4",
    "uuid5",
    "isbn",
    "isbn10",
    "isbn13",
    "creditcard",
    "ssn",
    "hexcolor",
    "rgbcolor",
    "byte",
    "password",
    "date",
    "duration",
    "datetime",
];

/// go-openapi's name normalization: `date-time` is `datetime`.
fn normalize(format: &str) -> String {
    format.replace('-', "")
}

/// `StripUnsupportedFormatsPostProcessorForVersion`: the format validation keeps; every
/// other format (`int32`, `int64`, `float`, `double`, anything unknown) becomes `""`.
pub(super) fn strip_unsupported(format: &str) -> String {
    if format.is_empty() || !SUPPORTED.contains(&normalize(format).as_str()) {
        String::new()
    } else {
        format.to_owned()
    }
}

/// `strfmt.Default.ContainsName`.
pub(super) fn contains(format: &str) -> bool {
    !format.is_empty() && SUPPORTED.contains(&normalize(format).as_str())
}

/// A pattern of this file (`None` would match nothing); the size limit fits the hostname
/// pattern's repeats.
fn regex(pattern: &str) -> Option<Regex> {
    RegexBuilder::new(pattern).size_limit(64 << 20).build().ok()
}

type Pattern = LazyLock<Option<Regex>>;

fn matches(re: &Pattern, s: &str) -> bool {
    re.as_ref().is_some_and(|re| re.is_match(s))
}

static HOSTNAME: Pattern = LazyLock::new(|| {
    regex(
        r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$",
    )
});
static UUID: Pattern = LazyLock::new(|| {
    regex(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
});
static UUID3: Pattern = LazyLock::new(|| {
    regex(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
});
static UUID4: Pattern = LazyLock::new(|| {
    regex(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
});
static UUID5: Pattern = LazyLock::new(|| {
    regex(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
});
static CREDIT_CARD: Pattern = LazyLock::new(|| {
    regex(
        r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})$",
    )
});
static HEX_COLOR: Pattern = LazyLock::new(|| regex(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"));
static RGB_COLOR: Pattern = LazyLock::new(|| {
    let n = r"(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])";
    regex(&format!(r"^rgb\(\s*{n}\s*,\s*{n}\s*,\s*{n}\s*\)$").replace(r"\s", r"[\t\n\f\r ]"))
});
static BASE64: Pattern = LazyLock::new(|| {
    regex(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$")
});
static SSN: Pattern = LazyLock::new(|| regex(r"^[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}$"));
static DATE_TIME: Pattern = LazyLock::new(|| {
    regex(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$")
});
static DURATION_PART: Pattern = LazyLock::new(|| regex(r"(([0-9]+)[\t\n\f\r ]*([A-Za-zµ]+))"));

/// `strfmt.Default.Validates(format, data)`.
pub(super) fn validates(format: &str, data: &str) -> bool {
    match normalize(format).as_str() {
        "uri" => netaddr::is_request_uri(data),
        "email" => netaddr::is_email(data),
        "hostname" => is_hostname(data),
        "ipv4" => parse_ip_sloppy(data).is_some() && data.contains('.'),
        "ipv6" => data.parse::<std::net::IpAddr>().is_ok() && data.contains(':'),
        "cidr" => parse_cidr_sloppy(data).is_some(),
        "mac" => netaddr::is_mac(data),
        "uuid" => matches(&UUID, data),
        "uuid3" => matches(&UUID3, data),
        "uuid4" => matches(&UUID4, data),
        "uuid5" => matches(&UUID5, data),
        "isbn" => is_isbn10(data) || is_isbn13(data),
        "isbn10" => is_isbn10(data),
        "isbn13" => is_isbn13(data),
        "creditcard" => is_credit_card(data),
        "ssn" => data.len() == 11 && matches(&SSN, data),
        "hexcolor" => matches(&HEX_COLOR, data),
        "rgbcolor" => matches(&RGB_COLOR, data),
        "byte" => matches(&BASE64, data),
        "password" => true,
        "date" => is_date(data),
        "datetime" => is_date_time(data),
        "duration" => is_duration(data),
        "bsonobjectid" => data.len() == 24 && data.bytes().all(|b| b.is_ascii_hexdigit()),
        _ => false,
    }
}

fn is_hostname(s: &str) -> bool {
    matches(&HOSTNAME, s) && s.len() <= 255 && s.split('.').all(|p| p.len() <= 63)
}

fn sanitized_isbn(s: &str) -> String {
    // govalidator drops runs of white space and `-` (Go's ASCII `\s`).
    s.chars()
        .filter(|c| !matches!(c, '-' | ' ' | '\t' | '\n' | '\r' | '\x0c'))
        .collect()
}

fn is_isbn10(s: &str) -> bool {
    let s = sanitized_isbn(s);
    let b = s.as_bytes();
    let shape = b.len() == 10
        && b[..9].iter().all(u8::is_ascii_digit)
        && (b[9] == b'X' || b[9].is_ascii_digit());
    if !shape {
        return false;
    }
    let mut sum: u32 = (0..9)
        .map(|i| (i as u32 + 1) * u32::from(b[i] - b'0'))
        .sum();
    sum += if b[9] == b'X' {
        100
    } else {
        10 * u32::from(b[9] - b'0')
    };
    sum.is_multiple_of(11)
}

fn is_isbn13(s: &str) -> bool {
    let s = sanitized_isbn(s);
    let b = s.as_bytes();
    if b.len() != 13 || !b.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let sum: u32 = (0..12)
        .map(|i| if i % 2 == 0 { 1 } else { 3 } * u32::from(b[i] - b'0'))
        .sum();
    u32::from(b[12] - b'0') == (10 - sum % 10) % 10
}

fn is_credit_card(s: &str) -> bool {
    let digits: String = s.chars().filter(char::is_ascii_digit).collect();
    if !matches(&CREDIT_CARD, &digits) {
        return false;
    }
    let mut sum = 0;
    for (i, d) in digits.bytes().rev().enumerate() {
        let mut n = u32::from(d - b'0');
        if i % 2 == 1 {
            n *= 2;
            if n >= 10 {
                n = n % 10 + 1;
            }
        }
        sum += n;
    }
    sum % 10 == 0
}

/// Go's `time.Parse("2006-01-02", s)`.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let part = s.get(r)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    let (Some(year), Some(month), Some(day)) = (num(0..4), num(5..7), num(8..10)) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// strfmt's `IsDateTime`: a date, a `t` and a time, compared as strfmt compares them.
fn is_date_time(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_lowercase();
    let parts: Vec<&str> = lower.split('t').collect();
    if parts.len() < 2 || !is_date(parts[0]) {
        return false;
    }
    let Some(m) = DATE_TIME.as_ref().and_then(|re| re.captures(parts[1])) else {
        return false;
    };
    let field = |i| m.get(i).map_or("", |g| g.as_str());
    field(1) <= "23" && field(2) <= "59" && field(3) <= "59"
}

/// strfmt's `ParseDuration`: Go's `time.ParseDuration`, else Scala-like `<n> <unit>`
/// parts anywhere in the text.
fn is_duration(s: &str) -> bool {
    if parse_duration(s).is_ok() {
        return true;
    }
    const UNITS: &[&[&str]] = &[
        &["ns", "nano"],
        &["us", "µs", "micro"],
        &["ms", "milli"],
        &["s", "sec"],
        &["m", "min"],
        &["h", "hr", "hour"],
        &["d", "day"],
        &["w", "wk", "week"],
    ];
    let mut ok = false;
    let Some(part) = DURATION_PART.as_ref() else {
        return false;
    };
    for m in part.captures_iter(s) {
        let digits = m.get(2).map_or("", |g| g.as_str());
        if digits.parse::<i64>().is_err() {
            // strconv.Atoi's error ends the parse.
            return false;
        }
        let unit = m.get(3).map_or("", |g| g.as_str()).trim().to_lowercase();
        for variants in UNITS {
            let last = variants.len() - 1;
            for (i, v) in variants.iter().enumerate() {
                if (i == last && unit.starts_with(v)) || unit.eq_ignore_ascii_case(v) {
                    ok = true;
                }
            }
        }
    }
    ok
}

#[cfg(test)]
mod tests;
