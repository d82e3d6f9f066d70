//! `resource.Quantity` (`k8s.io/apimachinery/pkg/api/resource`): parsing with upstream's
//! errors, the canonical form Go writes (`1000m` is written `1`, `1024Ki` `1Mi`, `0.5` `500m`),
//! and comparison. A value is kept exactly as `unscaled × 10^scale`; like upstream, values
//! more precise than nano units are rounded up (away from zero) to the next nano, and a
//! binary-SI value is capped at the largest int64. Values too large for 128 bits (far past
//! anything upstream's int64 fast path holds) are refused as not numeric.

use std::cmp::Ordering;

/// `resource.ErrFormatWrong`.
pub const ERR_FORMAT_WRONG: &str = "quantities must match the regular expression \
     '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
/// `resource.ErrSuffix`.
pub const ERR_SUFFIX: &str = "unable to parse quantity's suffix";
/// `resource.ErrNumeric`.
pub const ERR_NUMERIC: &str = "unable to parse numeric part of quantity";

/// How a quantity is written back (`resource.Format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `1e3`.
    DecimalExponent,
    /// `5Gi`.
    BinarySI,
    /// `5G`, `500m`.
    DecimalSI,
}

/// A parsed quantity: `unscaled × 10^scale`, and the format it was written in.
#[derive(Clone, Debug)]
pub struct Quantity {
    unscaled: i128,
    scale: i32,
    pub format: Format,
    /// Upstream's `int64Amount` when `ParseQuantity` took its int64 fast path.
    int64_amount: Option<(i64, i32)>,
    /// Upstream's cached string `s`: the input, when the fast path found it canonical;
    /// Go writes it back as it is (`+1` stays `+1`, `1E6` stays `1E6`).
    cached: Option<String>,
}

/// The decimal and binary SI suffixes, with their base and exponent.
const SUFFIXES: [(&str, u32, i32); 16] = [
    ("", 10, 0),
    ("n", 10, -9),
    ("u", 10, -6),
    ("m", 10, -3),
    ("k", 10, 3),
    ("M", 10, 6),
    ("G", 10, 9),
    ("T", 10, 12),
    ("P", 10, 15),
    ("E", 10, 18),
    ("Ki", 2, 10),
    ("Mi", 2, 20),
    ("Gi", 2, 30),
    ("Ti", 2, 40),
    ("Pi", 2, 50),
    ("Ei", 2, 60),
];

/// Nano units: the finest scale a quantity keeps.
const NANO: i32 = -9;

/// Checks `s` as `ParseQuantity` would, returning upstream's error text.
pub fn check(s: &str) -> Result<(), &'static str> {
    Quantity::parse(s).map(|_| ())
}

impl Quantity {
    /// `resource.ParseQuantity`.
    pub fn parse(s: &str) -> Result<Quantity, &'static str> {
        if s == "0" {
            return Ok(Quantity {
                cached: Some(s.to_owned()),
                ..Quantity::int(0)
            });
        }
        let (positive, num, denom, suffix) = split(s)?;
        let (base, exponent, format) = interpret(suffix)?;
        let fast = fast_path(s, positive, num, denom, exponent, format)?;
        let digits = format!("{num}{denom}");
        let mut unscaled: i128 = if digits.is_empty() {
            0
        } else {
            digits.parse().map_err(|_| ERR_NUMERIC)?
        };
        let mut scale = -i32::try_from(denom.len()).map_err(|_| ERR_NUMERIC)?;
        if base == 10 {
            scale = scale.checked_add(exponent).ok_or(ERR_NUMERIC)?;
        } else {
            let factor = 1i128.checked_shl(exponent as u32).ok_or(ERR_NUMERIC)?;
            unscaled = unscaled.checked_mul(factor).ok_or(ERR_NUMERIC)?;
        }
        let mut q = Quantity {
            unscaled,
            scale,
            format,
            int64_amount: None,
            cached: None,
        };
        q.round_up_to_nano()?;
        if format == Format::BinarySI {
            if q.cmp_value(&Quantity::int(i64::MAX as i128)) == Ordering::Greater {
                q = Quantity::int(i64::MAX as i128);
            }
            if q.unscaled != 0 && q.cmp_value(&Quantity::int(1)) == Ordering::Less {
                // Below one, binary suffixes would need rounding: upstream switches.
                q.format = Format::DecimalSI;
            }
        }
        if !positive {
            q.unscaled = -q.unscaled;
        }
        if let Some((amount, cached)) = fast {
            q.int64_amount = Some(amount);
            q.cached = cached;
        }
        Ok(q)
    }

    fn int(v: i128) -> Quantity {
        Quantity {
            unscaled: v,
            scale: 0,
            format: Format::DecimalSI,
            int64_amount: None,
            cached: None,
        }
    }

    /// What Go's `%#v` prints for the Quantity `ParseQuantity` returns, as a bad value in
    /// a validation error (Quantity's `String` has a pointer receiver, so upstream's
    /// `field.Error` falls back to `%#v`). A value off the int64 fast path holds an
    /// `*inf.Dec` whose address Go prints; that is written as `0xc000000000`.
    pub fn go_syntax(&self) -> String {
        let (value, scale) = self.int64_amount.unwrap_or((0, 0));
        let dec = if self.int64_amount.is_some() || self.cached.as_deref() == Some("0") {
            "(*inf.Dec)(nil)"
        } else {
            "(*inf.Dec)(0xc000000000)"
        };
        let format = match self.format {
            Format::DecimalExponent => "DecimalExponent",
            Format::BinarySI => "BinarySI",
            Format::DecimalSI => "DecimalSI",
        };
        format!(
            "resource.Quantity{{i:resource.int64Amount{{value:{value}, scale:{scale}}}, \
             d:resource.infDecAmount{{Dec:{dec}}}, s:{}, Format:{}}}",
            crate::golang::strconv::quote(self.cached.as_deref().unwrap_or("")),
            crate::golang::strconv::quote(format),
        )
    }

    /// Rounds a value finer than nano units up, away from zero (`inf.RoundUp`).
    fn round_up_to_nano(&mut self) -> Result<(), &'static str> {
        if self.scale >= NANO || self.unscaled == 0 {
            return Ok(());
        }
        let drop = u32::try_from(NANO - self.scale).map_err(|_| ERR_NUMERIC)?;
        let divisor = 10i128.checked_pow(drop);
        let quotient = match divisor {
            Some(d) => {
                let q = self.unscaled / d;
                if self.unscaled % d == 0 { q } else { q + 1 }
            }
            // More digits dropped than 128 bits hold: the value is below one nano.
            None => 1,
        };
        self.unscaled = quotient;
        self.scale = NANO;
        Ok(())
    }

    pub fn is_zero(&self) -> bool {
        self.unscaled == 0
    }

    /// `Cmp`: the values compared, whatever their formats.
    pub fn cmp_value(&self, other: &Quantity) -> Ordering {
        let scale = self.scale.min(other.scale);
        match (self.rescaled(scale), other.rescaled(scale)) {
            (Some(a), Some(b)) => a.cmp(&b),
            // One side is too large to rescale: compare signs, then magnitudes by scale.
            _ => (self.unscaled.signum(), self.scale).cmp(&(other.unscaled.signum(), other.scale)),
        }
    }

    fn rescaled(&self, scale: i32) -> Option<i128> {
        let up = u32::try_from(self.scale - scale).ok()?;
        self.unscaled.checked_mul(10i128.checked_pow(up)?)
    }

    /// `RoundUp(scale)`: a value finer than `10^scale` is rounded up to it, and Go then
    /// writes it in canonical form. Answers whether it was rounded.
    pub fn round_up(&mut self, scale: i32) -> bool {
        if self.scale >= scale {
            return false;
        }
        self.unscaled = self.scaled_ceil(scale);
        self.scale = scale;
        self.cached = None;
        self.int64_amount = i64::try_from(self.unscaled).ok().map(|v| (v, scale));
        true
    }

    /// `MilliValue`: the value in thousandths, rounded up.
    pub fn milli_value(&self) -> i128 {
        self.scaled_ceil(-3)
    }

    /// `Value`: the value rounded up to an integer.
    pub fn value(&self) -> i128 {
        self.scaled_ceil(0)
    }

    fn scaled_ceil(&self, scale: i32) -> i128 {
        if self.scale >= scale {
            return self.rescaled(scale).unwrap_or(i128::MAX);
        }
        let d = 10i128
            .checked_pow((scale - self.scale) as u32)
            .unwrap_or(i128::MAX);
        let q = self.unscaled / d;
        if self.unscaled % d != 0 && self.unscaled > 0 {
            q + 1
        } else {
            q
        }
    }

    /// `String()`: what Go writes: the cached input, else the canonical form
    /// (`CanonicalizeBytes`).
    pub fn canonical(&self) -> String {
        if let Some(s) = &self.cached {
            return s.clone();
        }
        if self.unscaled == 0 {
            return "0".into();
        }
        let mut format = self.format;
        if format == Format::BinarySI {
            let small = self.cmp_value(&Quantity::int(-1024)) == Ordering::Greater
                && self.cmp_value(&Quantity::int(1024)) == Ordering::Less;
            if small || self.exact_int().is_none() {
                format = Format::DecimalSI;
            }
        }
        match format {
            Format::BinarySI => {
                let (mut v, mut times) = (self.exact_int().unwrap_or_default(), 0);
                while v.abs() >= 1024 && v % 1024 == 0 {
                    v /= 1024;
                    times += 1;
                }
                let suffix = SUFFIXES
                    .iter()
                    .find(|(_, b, e)| *b == 2 && *e == times * 10)
                    .map_or("", |(s, ..)| *s);
                format!("{v}{suffix}")
            }
            _ => {
                let (mut m, mut e) = (self.unscaled, self.scale);
                while m.abs() >= 10 && m % 10 == 0 {
                    m /= 10;
                    e += 1;
                }
                // The exponent goes down to a multiple of three (Go's `%` truncates).
                match e % 3 {
                    1 | -2 => {
                        m *= 10;
                        e -= 1;
                    }
                    2 | -1 => {
                        m *= 100;
                        e -= 2;
                    }
                    _ => {}
                }
                let suffix = if format == Format::DecimalExponent {
                    if e == 0 {
                        String::new()
                    } else {
                        format!("e{e}")
                    }
                } else {
                    SUFFIXES
                        .iter()
                        .find(|(_, b, x)| *b == 10 && *x == e)
                        .map_or("", |(s, ..)| *s)
                        .to_owned()
                };
                format!("{m}{suffix}")
            }
        }
    }

    /// The value as an integer, when it is one and fits (`AsScale(0)` exactly).
    fn exact_int(&self) -> Option<i128> {
        if self.scale >= 0 {
            return self.rescaled(0);
        }
        let d = 10i128.checked_pow(self.scale.unsigned_abs())?;
        (self.unscaled % d == 0).then(|| self.unscaled / d)
    }
}

/// `ParseQuantity`'s int64 fast path: the `int64Amount` (value, scale) and, when the
/// input is already canonical, the string it caches; `None` off the fast path.
#[allow(clippy::type_complexity)]
fn fast_path(
    s: &str,
    positive: bool,
    num: &str,
    denom: &str,
    exponent: i32,
    format: Format,
) -> Result<Option<((i64, i32), Option<String>)>, &'static str> {
    const MAX_INT64_FACTORS: i64 = 18;
    let digits = (num.len() + denom.len()) as i64;
    let (mut scale, precision, mantissa) = match format {
        Format::DecimalExponent | Format::DecimalSI => {
            (i64::from(exponent), MAX_INT64_FACTORS - digits, 1i64)
        }
        Format::BinarySI if exponent >= 0 && denom.is_empty() => {
            // Go: 15 - len(num) - int32(float32(exponent)*3/10) - 1
            let shifted = (exponent as f32 * 3.0 / 10.0) as i64;
            let precision = 15 - num.len() as i64 - shifted - 1;
            (0, precision, 1i64.checked_shl(exponent as u32).unwrap_or(0))
        }
        Format::BinarySI => (0, -1, 1),
    };
    if precision < 0 {
        return Ok(None);
    }
    scale -= denom.len() as i64;
    if scale < i64::from(NANO) {
        return Ok(None);
    }
    let shifted = format!("{num}{denom}");
    let value: i64 = shifted.parse().map_err(|_| ERR_NUMERIC)?;
    let Some(mut result) = value.checked_mul(mantissa) else {
        return Ok(None);
    };
    if !positive {
        result = -result;
    }
    let scale = i32::try_from(scale).map_err(|_| ERR_NUMERIC)?;
    let canonical = match format {
        Format::BinarySI => exponent % 10 == 0 && value & 0x07 != 0,
        _ => scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0'),
    };
    Ok(Some(((result, scale), canonical.then(|| s.to_owned()))))
}

/// The canonical form of a quantity string, as Go writes a decoded Quantity; `None` when it
/// does not parse.
pub fn canonical(s: &str) -> Option<String> {
    Quantity::parse(s.trim()).ok().map(|q| q.canonical())
}

/// `parseQuantityString`: the sign, the digits before and after the point, the suffix.
fn split(s: &str) -> Result<(bool, &str, &str, &str), &'static str> {
    if s.is_empty() {
        return Err(ERR_FORMAT_WRONG);
    }
    let b = s.as_bytes();
    let mut pos = 0;
    let positive = match b[0] {
        b'+' => {
            pos = 1;
            true
        }
        b'-' => {
            pos = 1;
            false
        }
        _ => true,
    };
    let digits = |from: usize| b[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    let num_start = pos;
    pos += digits(pos);
    let num = &s[num_start..pos];
    let mut denom = "";
    if pos < b.len() && b[pos] == b'.' {
        pos += 1;
        let start = pos;
        pos += digits(pos);
        denom = &s[start..pos];
    }
    if num.is_empty() && denom.is_empty() {
        return Err(ERR_FORMAT_WRONG);
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
    Ok((positive, num, denom, &s[suffix_start..]))
}

/// `quantitySuffixer.interpret`: a decimal or binary SI suffix, or an exponent.
fn interpret(suffix: &str) -> Result<(u32, i32, Format), &'static str> {
    if let Some((_, base, exp)) = SUFFIXES.iter().find(|(s, ..)| *s == suffix) {
        let format = if *base == 2 {
            Format::BinarySI
        } else {
            Format::DecimalSI
        };
        return Ok((*base, *exp, format));
    }
    let exponent = suffix
        .strip_prefix('e')
        .or_else(|| suffix.strip_prefix('E'));
    match exponent {
        Some(exp) if !exp.is_empty() => match exp.parse::<i64>() {
            Ok(e) => i32::try_from(e)
                .map(|e| (10, e, Format::DecimalExponent))
                .map_err(|_| ERR_NUMERIC),
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
        assert_eq!(check("."), Err(ERR_FORMAT_WRONG));
    }

    /// Canonical forms from upstream's `quantity_test.go` table (`TestQuantityParse`).
    #[test]
    fn canonical_forms_are_upstreams() {
        for (input, want) in [
            ("0", "0"),
            ("0m", "0"),
            ("0Ki", "0"),
            ("1000m", "1"),
            ("100m", "100m"),
            ("0.5", "500m"),
            (".5", "500m"),
            ("1.5", "1500m"),
            ("1024Ki", "1Mi"),
            ("1Ki", "1Ki"),
            ("0.5Ki", "512"),
            ("1536Ki", "1536Ki"),
            ("1Mi", "1Mi"),
            ("1000Mi", "1000Mi"),
            ("1.5Gi", "1536Mi"),
            ("1e3", "1e3"),
            ("1E6", "1E6"),
            ("1e-3", "1e-3"),
            ("100e-3", "100e-3"),
            ("12e+2", "1200"),
            ("1000k", "1M"),
            ("1001k", "1001k"),
            ("50000", "50k"),
            ("5n", "5n"),
            ("0.1n", "1n"),
            ("1.1n", "2n"),
            ("0.1u", "100n"),
            ("-2Gi", "-2Gi"),
            ("-1.5", "-1500m"),
            ("+1", "+1"),
            ("1.", "1."),
            ("100M", "100M"),
            ("7E", "7E"),
        ] {
            let q = Quantity::parse(input).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(q.canonical(), want, "{input}");
        }
    }

    #[test]
    fn bad_values_print_as_go_prints_a_quantity() {
        let q = Quantity::parse("1500m").expect("parse");
        assert_eq!(
            q.go_syntax(),
            "resource.Quantity{i:resource.int64Amount{value:1500, scale:-3}, \
             d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:\"1500m\", Format:\"DecimalSI\"}"
        );
        let q = Quantity::parse("1000m").expect("parse");
        assert_eq!(
            q.go_syntax(),
            "resource.Quantity{i:resource.int64Amount{value:1000, scale:-3}, \
             d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:\"\", Format:\"DecimalSI\"}"
        );
    }

    #[test]
    fn compares_values_across_formats() {
        let q = |s| Quantity::parse(s).expect("parse");
        assert_eq!(q("1").cmp_value(&q("1000m")), Ordering::Equal);
        assert_eq!(q("1Ki").cmp_value(&q("1k")), Ordering::Greater);
        assert_eq!(q("-1").cmp_value(&q("0")), Ordering::Less);
        assert_eq!(q("1500m").milli_value(), 1500);
        assert_eq!(q("1500m").value(), 2);
        assert_eq!(q("1Gi").value(), 1 << 30);
    }
}

/// Arithmetic, as upstream's `Add`, `Sub` and `NewQuantity` do: the result keeps the
/// receiver's format and is written back in canonical form.
impl Quantity {
    /// `resource.NewQuantity(value, DecimalSI)`.
    pub fn from_int(value: i64) -> Quantity {
        Quantity {
            int64_amount: Some((value, 0)),
            ..Quantity::int(i128::from(value))
        }
    }

    /// `Add`: `self += other`. A sum too large for 128 bits saturates.
    pub fn add(&mut self, other: &Quantity) {
        self.combine(other, 1);
    }

    /// `Sub`: `self -= other`.
    pub fn sub(&mut self, other: &Quantity) {
        self.combine(other, -1);
    }

    /// Whether the value is below zero (`Sign() < 0`).
    pub fn is_negative(&self) -> bool {
        self.unscaled < 0
    }

    fn combine(&mut self, other: &Quantity, sign: i128) {
        let scale = self.scale.min(other.scale);
        let a = self.rescaled(scale).unwrap_or(i128::MAX);
        let b = other.rescaled(scale).unwrap_or(i128::MAX);
        let sum = a.saturating_add(sign * b);
        if self.unscaled == 0 {
            // Upstream: a zero receiver takes the format of what is added or subtracted.
            self.format = other.format;
        }
        self.unscaled = sum;
        self.scale = scale;
        self.cached = None;
        self.int64_amount = i64::try_from(sum).ok().map(|v| (v, scale));
    }
}

#[cfg(test)]
mod arithmetic_tests {
    use super::Quantity;

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).expect("parses")
    }

    #[test]
    fn add_and_sub_keep_the_receivers_format() {
        let mut a = q("1");
        a.add(&q("500m"));
        assert_eq!(a.canonical(), "1500m");
        let mut b = q("1Gi");
        b.add(&q("1Gi"));
        assert_eq!(b.canonical(), "2Gi");
        b.sub(&q("3Gi"));
        assert!(b.is_negative());
        assert_eq!(b.canonical(), "-1Gi");
        let mut c = Quantity::from_int(2);
        c.sub(&q("2"));
        assert!(c.is_zero());
        assert_eq!(c.canonical(), "0");
        assert_eq!(Quantity::from_int(3).canonical(), "3");
    }
}
