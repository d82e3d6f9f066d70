//! The syntax `resource.ParseQuantity` accepts (`pkg/api/resource/quantity.go`), checked
//! where Go would parse a Quantity: decoding one from JSON or from protobuf.
//!
//! Only the syntax is checked: the string travels as it is. Go parses and writes the
//! canonical form (`1000m` becomes `1`); Go clients write canonical forms and parse
//! whatever they read, so passing the string through changes no value a client sees.

/// `resource.ErrFormatWrong`.
pub const ERR_FORMAT_WRONG: &str = "quantities must match the regular expression \
     '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
/// `resource.ErrSuffix`.
pub const ERR_SUFFIX: &str = "unable to parse quantity's suffix";
/// `resource.ErrNumeric`.
pub const ERR_NUMERIC: &str = "unable to parse numeric part of quantity";

/// Checks `s` as `ParseQuantity` would, returning upstream's error text.
pub fn check(s: &str) -> Result<(), &'static str> {
    if s.is_empty() {
        return Err(ERR_FORMAT_WRONG);
    }
    let b = s.as_bytes();
    let mut pos = usize::from(matches!(b[0], b'+' | b'-'));
    let digits = |from: usize| b[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    pos += digits(pos);
    if pos < b.len() && b[pos] == b'.' {
        pos += 1;
        pos += digits(pos);
    }
    let suffix_start = pos;
    pos += b[pos..]
        .iter()
        .take_while(|c| b"eEinumkKMGTP".contains(c))
        .count();
    if pos < b.len() && matches!(b[pos], b'+' | b'-') {
        pos += 1;
    }
    pos += digits(pos);
    if pos != b.len() {
        return Err(ERR_FORMAT_WRONG);
    }
    check_suffix(&s[suffix_start..])
}

/// `quantitySuffixer.interpret`: a decimal or binary SI suffix, or an exponent.
fn check_suffix(suffix: &str) -> Result<(), &'static str> {
    const KNOWN: [&str; 16] = [
        "", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei",
    ];
    if KNOWN.contains(&suffix) {
        return Ok(());
    }
    let exponent = suffix
        .strip_prefix('e')
        .or_else(|| suffix.strip_prefix('E'));
    match exponent {
        Some(exp) if !exp.is_empty() => match exp.parse::<i64>() {
            // The parsed exponent must also fit Go's int32 scale arithmetic.
            Ok(e) if i32::try_from(e).is_ok() => Ok(()),
            Ok(_) => Err(ERR_NUMERIC),
            Err(_) => Err(ERR_SUFFIX),
        },
        _ => Err(ERR_SUFFIX),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_what_parse_quantity_accepts() {
        for ok in [
            "0", "1", "100m", "1.5", "+1", "-2Gi", "1Ki", ".5", "1.", "1e3", "1E-3", "5n", "12e+2",
            "0.1u",
        ] {
            assert_eq!(check(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn rejects_with_upstreams_errors() {
        assert_eq!(check(""), Err(ERR_FORMAT_WRONG));
        assert_eq!(check("abc"), Err(ERR_FORMAT_WRONG));
        assert_eq!(check("1 Gi"), Err(ERR_FORMAT_WRONG));
        assert_eq!(check("1Gb"), Err(ERR_FORMAT_WRONG));
        assert_eq!(check("1iK"), Err(ERR_SUFFIX));
        assert_eq!(check("1Mm"), Err(ERR_SUFFIX));
        assert_eq!(check("1e"), Err(ERR_SUFFIX));
    }
}
