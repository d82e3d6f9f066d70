//! The schedule and time zone checks of CronJobs: robfig/cron v3's `ParseStandard` (five
//! fields or an `@` descriptor, an optional `TZ=`/`CRON_TZ=` prefix) with its error
//! messages, Go's `time.ParseDuration` for `@every`, and Go's `time.LoadLocation`.

use kas_apimachinery::golang::strconv::quote;

/// A field's bounds and names (robfig/cron's `bounds`).
struct Bounds {
    min: u64,
    max: u64,
    names: &'static [(&'static str, u64)],
}

const MINUTES: Bounds = Bounds {
    min: 0,
    max: 59,
    names: &[],
};
const HOURS: Bounds = Bounds {
    min: 0,
    max: 23,
    names: &[],
};
const DOM: Bounds = Bounds {
    min: 1,
    max: 31,
    names: &[],
};
const MONTHS: Bounds = Bounds {
    min: 1,
    max: 12,
    names: &[
        ("jan", 1),
        ("feb", 2),
        ("mar", 3),
        ("apr", 4),
        ("may", 5),
        ("jun", 6),
        ("jul", 7),
        ("aug", 8),
        ("sep", 9),
        ("oct", 10),
        ("nov", 11),
        ("dec", 12),
    ],
};
const DOW: Bounds = Bounds {
    min: 0,
    max: 6,
    names: &[
        ("sun", 0),
        ("mon", 1),
        ("tue", 2),
        ("wed", 3),
        ("thu", 4),
        ("fri", 5),
        ("sat", 6),
    ],
};

/// robfig/cron v3 `ParseStandard`: `Err` carries the parser's error text.
pub(crate) fn parse_standard(spec: &str) -> Result<(), String> {
    if spec.is_empty() {
        return Err("empty spec string".to_owned());
    }
    let mut spec = spec.to_owned();
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        // Upstream slices up to the first space; without one it would fail outright, which
        // is reported here as a bad location of everything after `=`.
        let eq = spec.find('=').unwrap_or(0);
        let end = spec.find(' ').filter(|&i| i > eq).unwrap_or(spec.len());
        let name = &spec[eq + 1..end];
        if let Err(e) = load_location(name) {
            return Err(format!("provided bad location {name}: {e}"));
        }
        spec = spec[end..].trim().to_owned();
    }
    if spec.starts_with('@') {
        return parse_descriptor(&spec);
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    for (field, bounds) in fields.iter().zip([&MINUTES, &HOURS, &DOM, &MONTHS, &DOW]) {
        for expr in field.split(',').filter(|e| !e.is_empty()) {
            get_range(expr, bounds)?;
        }
    }
    Ok(())
}

/// robfig/cron's `parseDescriptor`.
fn parse_descriptor(descriptor: &str) -> Result<(), String> {
    match descriptor {
        "@yearly" | "@annually" | "@monthly" | "@weekly" | "@daily" | "@midnight" | "@hourly" => {
            Ok(())
        }
        d => match d.strip_prefix("@every ") {
            Some(duration) => parse_duration(duration)
                .map_err(|e| format!("failed to parse duration {descriptor}: {e}")),
            None => Err(format!("unrecognized descriptor: {descriptor}")),
        },
    }
}

/// robfig/cron's `getRange`.
fn get_range(expr: &str, r: &Bounds) -> Result<(), String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let single = low_and_high.len() == 1;
    let (start, mut end) = if low_and_high[0] == "*" || low_and_high[0] == "?" {
        (r.min, r.max)
    } else {
        let start = parse_int_or_name(low_and_high[0], r.names)?;
        let end = match low_and_high.len() {
            1 => start,
            2 => parse_int_or_name(low_and_high[1], r.names)?,
            _ => return Err(format!("too many hyphens: {expr}")),
        };
        (start, end)
    };
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let step = must_parse_int(range_and_step[1])?;
            if single {
                end = r.max;
            }
            step
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    if start < r.min {
        return Err(format!(
            "beginning of range ({start}) below minimum ({}): {expr}",
            r.min
        ));
    }
    if end > r.max {
        return Err(format!(
            "end of range ({end}) above maximum ({}): {expr}",
            r.max
        ));
    }
    if start > end {
        return Err(format!(
            "beginning of range ({start}) beyond end of range ({end}): {expr}"
        ));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    Ok(())
}

fn parse_int_or_name(expr: &str, names: &[(&str, u64)]) -> Result<u64, String> {
    let lower = expr.to_lowercase();
    if let Some((_, n)) = names.iter().find(|(name, _)| *name == lower) {
        return Ok(*n);
    }
    must_parse_int(expr)
}

/// robfig/cron's `mustParseInt` over Go's `strconv.Atoi`.
fn must_parse_int(expr: &str) -> Result<u64, String> {
    let num = atoi(expr).map_err(|e| format!("failed to parse int from {expr}: {e}"))?;
    if num < 0 {
        return Err(format!("negative number ({num}) not allowed: {expr}"));
    }
    Ok(num.unsigned_abs())
}

/// Go's `strconv.Atoi` (64-bit), with its error text.
fn atoi(s: &str) -> Result<i64, String> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "strconv.Atoi: parsing {}: invalid syntax",
            quote(s)
        ));
    }
    s.parse::<i64>()
        .map_err(|_| format!("strconv.Atoi: parsing {}: value out of range", quote(s)))
}

/// Go's `time.ParseDuration`, only for its verdict and error text.
fn parse_duration(orig: &str) -> Result<(), String> {
    let invalid = || format!("time: invalid duration {}", quote(orig));
    let mut s = orig.strip_prefix(['+', '-']).unwrap_or(orig);
    if s == "0" {
        return Ok(());
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let mut total: f64 = 0.0;
    while !s.is_empty() {
        let first = s.as_bytes()[0];
        if !(first == b'.' || first.is_ascii_digit()) {
            return Err(invalid());
        }
        let int_len = s.bytes().take_while(u8::is_ascii_digit).count();
        let int_part = &s[..int_len];
        s = &s[int_len..];
        let mut frac_part = "";
        if let Some(rest) = s.strip_prefix('.') {
            let frac_len = rest.bytes().take_while(u8::is_ascii_digit).count();
            frac_part = &rest[..frac_len];
            s = &rest[frac_len..];
            if int_len == 0 && frac_len == 0 {
                return Err(invalid());
            }
        } else if int_len == 0 {
            return Err(invalid());
        }
        let unit_len = s
            .char_indices()
            .find(|(_, c)| *c == '.' || c.is_ascii_digit())
            .map_or(s.len(), |(i, _)| i);
        if unit_len == 0 {
            return Err(format!("time: missing unit in duration {}", quote(orig)));
        }
        let unit = &s[..unit_len];
        s = &s[unit_len..];
        let nanos: f64 = match unit {
            "ns" => 1.0,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    quote(unit),
                    quote(orig)
                ));
            }
        };
        let value: f64 = format!(
            "{}.{}0",
            if int_part.is_empty() { "0" } else { int_part },
            frac_part
        )
        .parse()
        .unwrap_or(f64::MAX);
        total += value * nanos;
        if total > i64::MAX as f64 {
            return Err(invalid());
        }
    }
    Ok(())
}

/// Go's `time.LoadLocation` against the system's zone database; `Err` is its error text.
pub(crate) fn load_location(name: &str) -> Result<(), String> {
    if name.is_empty() || name == "UTC" || name == "Local" {
        return Ok(());
    }
    if name.contains("..") || name.starts_with('/') || name.starts_with('\\') {
        return Err("time: invalid location name".to_owned());
    }
    for dir in [
        "/usr/share/zoneinfo/",
        "/usr/share/lib/zoneinfo/",
        "/usr/lib/locale/TZ/",
        "/etc/zoneinfo/",
    ] {
        let path = format!("{dir}{name}");
        if let Ok(bytes) = std::fs::read(&path)
            && bytes.starts_with(b"TZif")
        {
            return Ok(());
        }
    }
    Err(format!("unknown time zone {name}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_schedules_are_accepted() {
        for ok in [
            "*/1 * * * *",
            "0 0 1 jan,Feb *",
            "5-10/2 3 ? * MON-fri",
            "@hourly",
            "@every 1h30m",
            "@every 1.5s",
            "0 0 * * 0,6",
        ] {
            assert_eq!(parse_standard(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn errors_are_robfig_crons() {
        let err = |s: &str| parse_standard(s).unwrap_err();
        assert_eq!(err("x"), "expected exactly 5 fields, found 1: [x]");
        assert_eq!(
            err("* * * *"),
            "expected exactly 5 fields, found 4: [* * * *]"
        );
        assert_eq!(
            err("60 * * * *"),
            "end of range (60) above maximum (59): 60"
        );
        assert_eq!(
            err("* * 0 * *"),
            "beginning of range (0) below minimum (1): 0"
        );
        assert_eq!(
            err("a * * * *"),
            "failed to parse int from a: strconv.Atoi: parsing \"a\": invalid syntax"
        );
        assert_eq!(
            err("5-2 * * * *"),
            "beginning of range (5) beyond end of range (2): 5-2"
        );
        assert_eq!(err("1-2-3 * * * *"), "too many hyphens: 1-2-3");
        assert_eq!(
            err("*/0 * * * *"),
            "step of range should be a positive number: */0"
        );
        assert_eq!(err("1/2/3 * * * *"), "too many slashes: 1/2/3");
        assert_eq!(err("* * * * 7"), "end of range (7) above maximum (6): 7");
        assert_eq!(err("@often"), "unrecognized descriptor: @often");
        assert_eq!(
            err("@every 1x"),
            "failed to parse duration @every 1x: time: unknown unit \"x\" in duration \"1x\""
        );
        assert_eq!(
            err("@every 10"),
            "failed to parse duration @every 10: time: missing unit in duration \"10\""
        );
        assert_eq!(err(""), "empty spec string");
    }

    #[test]
    fn locations() {
        assert_eq!(load_location("UTC"), Ok(()));
        assert_eq!(
            load_location("Mars/Olympus"),
            Err("unknown time zone Mars/Olympus".to_owned())
        );
        assert_eq!(
            load_location("../etc"),
            Err("time: invalid location name".to_owned())
        );
    }
}
