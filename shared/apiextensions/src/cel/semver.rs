//! Upstream's Kubernetes semver library (`k8s.io/apiserver/pkg/cel/library/semverlib.go`,
//! in the base environment from 1.33, library version 1): `semver()` and `isSemver()`,
//! with the optional normalization, and the methods of a `kubernetes.Semver`. Parsing and
//! ordering are blang/semver v4's, with its error texts.

use std::cmp::Ordering;
use std::sync::Arc;

use cel::common::types::{BOOL_TYPE, STRING_TYPE, Type};
use cel::objects::Opaque;
use cel::{DeclarationError, Env, ExecutionError, Value};

use super::library::{no_such_overload, opaque, overload};

const TYPE_NAME: &str = "kubernetes.Semver";
const NUMBERS: &str = "0123456789";
const ALPHANUM: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-0123456789";

/// One part of a prerelease: a number, or an alphanumeric identifier.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Pre {
    Num(u64),
    Str(String),
}

#[derive(Clone, Debug)]
pub(crate) struct Semver {
    major: u64,
    minor: u64,
    patch: u64,
    /// Build metadata is checked and dropped: versions compare without it.
    pre: Vec<Pre>,
}

impl Semver {
    /// blang/semver's `Compare`: build metadata is ignored; a prerelease orders before its
    /// release; numeric identifiers before alphanumeric ones.
    fn compare(&self, o: &Semver) -> Ordering {
        let core = (self.major, self.minor, self.patch).cmp(&(o.major, o.minor, o.patch));
        if core != Ordering::Equal {
            return core;
        }
        match (self.pre.is_empty(), o.pre.is_empty()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Greater,
            (false, true) => return Ordering::Less,
            _ => {}
        }
        for (a, b) in self.pre.iter().zip(&o.pre) {
            let ord = match (a, b) {
                (Pre::Num(x), Pre::Num(y)) => x.cmp(y),
                (Pre::Str(x), Pre::Str(y)) => x.cmp(y),
                (Pre::Num(_), Pre::Str(_)) => Ordering::Less,
                (Pre::Str(_), Pre::Num(_)) => Ordering::Greater,
            };
            if ord != Ordering::Equal {
                return ord;
            }
        }
        self.pre.len().cmp(&o.pre.len())
    }
}

impl PartialEq for Semver {
    fn eq(&self, other: &Self) -> bool {
        self.compare(other) == Ordering::Equal
    }
}

impl Eq for Semver {}

impl Opaque for Semver {
    fn runtime_type_name(&self) -> &str {
        TYPE_NAME
    }
}

fn contains_only(s: &str, set: &str) -> bool {
    s.chars().all(|c| set.contains(c))
}

fn has_leading_zeroes(s: &str) -> bool {
    s.len() > 1 && s.starts_with('0')
}

/// Go's `strconv.ParseUint(s, 10, 64)` of a string of digits, with its error text.
fn parse_uint(s: &str) -> Result<u64, String> {
    if s.is_empty() {
        return Err("strconv.ParseUint: parsing \"\": invalid syntax".to_owned());
    }
    s.parse::<u64>()
        .map_err(|_| format!("strconv.ParseUint: parsing {s:?}: value out of range"))
}

fn number(s: &str, what: &str, capital: &str) -> Result<u64, String> {
    if !contains_only(s, NUMBERS) {
        return Err(format!("Invalid character(s) found in {what} number {s:?}"));
    }
    if has_leading_zeroes(s) {
        return Err(format!(
            "{capital} number must not contain leading zeroes {s:?}"
        ));
    }
    parse_uint(s)
}

fn prerelease(s: &str) -> Result<Pre, String> {
    if s.is_empty() {
        return Err("Prerelease is empty".to_owned());
    }
    if contains_only(s, NUMBERS) {
        if has_leading_zeroes(s) {
            return Err(format!(
                "Numeric PreRelease version must not contain leading zeroes {s:?}"
            ));
        }
        return parse_uint(s).map(Pre::Num);
    }
    if contains_only(s, ALPHANUM) {
        return Ok(Pre::Str(s.to_owned()));
    }
    Err(format!("Invalid character(s) found in prerelease {s:?}"))
}

/// blang/semver v4's `Parse`.
fn parse(s: &str) -> Result<Semver, String> {
    if s.is_empty() {
        return Err("Version string empty".to_owned());
    }
    let parts: Vec<&str> = s.splitn(3, '.').collect();
    let [major, minor, rest] = parts[..] else {
        return Err("No Major.Minor.Patch elements found".to_owned());
    };
    let major = number(major, "major", "Major")?;
    let minor = number(minor, "minor", "Minor")?;
    let mut patch = rest;
    let mut build = Vec::new();
    if let Some(i) = patch.find('+') {
        build = patch[i + 1..].split('.').collect();
        patch = &patch[..i];
    }
    let mut pre = Vec::new();
    if let Some(i) = patch.find('-') {
        pre = patch[i + 1..].split('.').collect();
        patch = &patch[..i];
    }
    let patch = number(patch, "patch", "Patch")?;
    let pre = pre.into_iter().map(prerelease).collect::<Result<_, _>>()?;
    for b in build {
        if b.is_empty() {
            return Err("Build meta data is empty".to_owned());
        }
        if !contains_only(b, ALPHANUM) {
            return Err(format!(
                "Invalid character(s) found in build meta data {b:?}"
            ));
        }
    }
    Ok(Semver {
        major,
        minor,
        patch,
        pre,
    })
}

/// Upstream's `normalizeAndParse`: no `v` prefix, no leading zeroes, a missing minor or
/// patch filled with 0.
fn normalize_and_parse(s: &str) -> Result<Semver, String> {
    let s = s.strip_prefix('v').unwrap_or(s);
    let mut parts: Vec<String> = s
        .splitn(3, '.')
        .map(|p| {
            if p.len() <= 1 {
                return p.to_owned();
            }
            let trimmed = p.trim_start_matches('0');
            if trimmed.is_empty() || !trimmed.starts_with(|c: char| c.is_ascii_digit()) {
                format!("0{trimmed}")
            } else {
                trimmed.to_owned()
            }
        })
        .collect();
    if parts.len() < 3 {
        if parts.last().is_some_and(|p| p.contains(['+', '-'])) {
            return Err("short version cannot contain PreRelease/Build meta data".to_owned());
        }
        while parts.len() < 3 {
            parts.push("0".to_owned());
        }
    }
    parse(&parts.join("."))
}

pub(crate) fn add(env: &mut Env) -> Result<(), DeclarationError> {
    let v = || Type::new_opaque_type(TYPE_NAME);
    env.add_type(v())?;
    env.add_overload("semver", "string_to_semver", vec![STRING_TYPE], to_semver)?;
    env.add_overload(
        "semver",
        "string_bool_to_semver",
        vec![STRING_TYPE, BOOL_TYPE],
        to_semver,
    )?;
    env.add_overload("isSemver", "is_semver_string", vec![STRING_TYPE], is_semver)?;
    env.add_overload(
        "isSemver",
        "is_semver_string_bool",
        vec![STRING_TYPE, BOOL_TYPE],
        is_semver,
    )?;
    let member = |env: &mut Env, name: &str, id: &str, args: Vec<Type>, f| {
        env.add_member_overload(name, id, v(), args, f)
    };
    member(
        env,
        "isGreaterThan",
        "semver_is_greater_than",
        vec![v()],
        greater,
    )?;
    member(env, "isLessThan", "semver_is_less_than", vec![v()], less)?;
    member(env, "compareTo", "semver_compare_to", vec![v()], compare_to)?;
    member(env, "major", "semver_major", vec![], major)?;
    member(env, "minor", "semver_minor", vec![], minor)?;
    member(env, "patch", "semver_patch", vec![], patch)?;
    Ok(())
}

/// The string and the normalize flag of `semver()`/`isSemver()`.
fn parsed(name: &str, args: &[Value]) -> Result<Result<Semver, String>, ExecutionError> {
    let Some(Value::String(s)) = args.first() else {
        return Err(no_such_overload(name, args));
    };
    let normalize = match args.get(1) {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(no_such_overload(name, args)),
    };
    Ok(if normalize {
        normalize_and_parse(s)
    } else {
        parse(s)
    })
}

fn to_semver_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    parsed("semver", args)?
        .map(|v| Value::Opaque(Arc::new(v)))
        .map_err(|e| ExecutionError::function_error("semver", e))
}
overload!(to_semver => to_semver_impl);

fn is_semver_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Bool(parsed("isSemver", args)?.is_ok()))
}
overload!(is_semver => is_semver_impl);

fn arg<'a>(name: &str, args: &'a [Value], i: usize) -> Result<&'a Semver, ExecutionError> {
    opaque(name, args, i)
}

fn cmp(name: &str, args: &[Value]) -> Result<Ordering, ExecutionError> {
    Ok(arg(name, args, 0)?.compare(arg(name, args, 1)?))
}

fn greater_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Bool(
        cmp("isGreaterThan", args)? == Ordering::Greater,
    ))
}
overload!(greater => greater_impl);

fn less_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Bool(cmp("isLessThan", args)? == Ordering::Less))
}
overload!(less => less_impl);

fn compare_to_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Int(cmp("compareTo", args)? as i64))
}
overload!(compare_to => compare_to_impl);

fn int(n: u64) -> Value {
    Value::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

fn major_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(int(arg("major", args, 0)?.major))
}
overload!(major => major_impl);

fn minor_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(int(arg("minor", args, 0)?.minor))
}
overload!(minor => minor_impl);

fn patch_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(int(arg("patch", args, 0)?.patch))
}
overload!(patch => patch_impl);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsing_follows_blang_semver() {
        let v = parse("1.2.3-alpha.1+build.5").unwrap();
        assert_eq!((v.major, v.minor, v.patch), (1, 2, 3));
        assert_eq!(v.pre, vec![Pre::Str("alpha".into()), Pre::Num(1)]);
        assert_eq!(
            parse("1.0.0+a.b_c").unwrap_err(),
            "Invalid character(s) found in build meta data \"b_c\""
        );
        let err = |s: &str| parse(s).unwrap_err();
        assert_eq!(err(""), "Version string empty");
        assert_eq!(err("1.0"), "No Major.Minor.Patch elements found");
        assert_eq!(err("200K"), "No Major.Minor.Patch elements found");
        assert_eq!(
            err("v1.0.0"),
            "Invalid character(s) found in major number \"v1\""
        );
        assert_eq!(
            err("01.0.0"),
            "Major number must not contain leading zeroes \"01\""
        );
        assert_eq!(
            err("1.x.0"),
            "Invalid character(s) found in minor number \"x\""
        );
        assert_eq!(
            err("1.0.0-01"),
            "Numeric PreRelease version must not contain leading zeroes \"01\""
        );
        assert_eq!(err("1.0.0-"), "Prerelease is empty");
        assert_eq!(err("1.0.0+"), "Build meta data is empty");
        assert_eq!(
            err("1.0.0-a_b"),
            "Invalid character(s) found in prerelease \"a_b\""
        );
        assert_eq!(
            err("1..0"),
            "strconv.ParseUint: parsing \"\": invalid syntax"
        );
    }

    #[test]
    fn normalization_and_ordering_match_upstream() {
        let n = |s: &str| normalize_and_parse(s).map(|v| (v.major, v.minor, v.patch));
        assert_eq!(n("v1.0.0"), Ok((1, 0, 0)));
        assert_eq!(n("1.0"), Ok((1, 0, 0)));
        assert_eq!(n("01.01.01"), Ok((1, 1, 1)));
        assert_eq!(n("v3"), Ok((3, 0, 0)));
        assert_eq!(
            n("1.0-alpha"),
            Err("short version cannot contain PreRelease/Build meta data".to_owned())
        );
        let ord = |a: &str, b: &str| parse(a).unwrap().compare(&parse(b).unwrap());
        assert_eq!(ord("1.2.3", "1.2.3+meta"), Ordering::Equal);
        assert_eq!(ord("1.2.3", "2.0.0"), Ordering::Less);
        assert_eq!(ord("1.0.0-alpha", "1.0.0"), Ordering::Less);
        assert_eq!(ord("1.0.0-alpha.1", "1.0.0-alpha"), Ordering::Greater);
        assert_eq!(ord("1.0.0-2", "1.0.0-alpha"), Ordering::Less);
        assert_eq!(ord("1.0.0-beta.11", "1.0.0-beta.2"), Ordering::Greater);
    }
}
