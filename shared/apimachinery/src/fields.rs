//! Field selectors (`fieldSelector=metadata.name=foo,status.phase!=Running`), parsed as
//! upstream's `k8s.io/apimachinery/pkg/fields` parses them. The field set an object is
//! matched against (`metadata.name`, `metadata.namespace`, ...) is computed by each
//! resource's strategy; a field missing from the set reads as `""`, as upstream's
//! `Fields.Get` does.

use std::collections::BTreeMap;
use std::fmt;

use thiserror::Error;

pub use crate::labels::Labels;
pub use crate::selection::Operator;

/// Upstream `fields.Set`: field name to value.
pub type Fields = BTreeMap<String, String>;

/// Why a field selector does not parse; the messages are upstream's.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum Error {
    #[error("invalid selector: '{selector}'; can't understand '{term}'")]
    InvalidSelector { selector: String, term: String },
    #[error("invalid field selector: invalid escape sequence: {0}")]
    InvalidEscapeSequence(String),
    #[error("invalid field selector: unescaped character '{0}'")]
    UnescapedRune(char),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// One `field=value`, `field==value` or `field!=value` term.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Term {
    Equals { field: String, value: String },
    NotEquals { field: String, value: String },
}

/// A parsed selector: the conjunction of its terms, in upstream's (sorted) order. No terms
/// means "everything".
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selector {
    pub terms: Vec<Term>,
}

/// Upstream `fields.Requirement`: one term, operator `Equals` or `NotEquals`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    pub operator: Operator,
    pub field: String,
    pub value: String,
}

impl Term {
    pub fn field(&self) -> &str {
        match self {
            Term::Equals { field, .. } | Term::NotEquals { field, .. } => field,
        }
    }

    pub fn value(&self) -> &str {
        match self {
            Term::Equals { value, .. } | Term::NotEquals { value, .. } => value,
        }
    }

    /// Upstream `hasTerm.Matches` / `notHasTerm.Matches`.
    pub fn matches(&self, fields: &(impl Labels + ?Sized)) -> bool {
        let have = fields.get(self.field()).unwrap_or("");
        match self {
            Term::Equals { value, .. } => have == value,
            Term::NotEquals { value, .. } => have != value,
        }
    }

    pub fn requirement(&self) -> Requirement {
        let operator = match self {
            Term::Equals { .. } => Operator::Equals,
            Term::NotEquals { .. } => Operator::NotEquals,
        };
        Requirement {
            operator,
            field: self.field().to_owned(),
            value: self.value().to_owned(),
        }
    }
}

/// Upstream's term `String()`: `field=value` or `field!=value` with the value escaped
/// (`==` prints as `=`).
impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = match self {
            Term::Equals { .. } => "=",
            Term::NotEquals { .. } => "!=",
        };
        write!(f, "{}{op}{}", self.field(), escape_value(self.value()))
    }
}

impl Selector {
    /// Upstream `Everything()`.
    pub fn everything() -> Selector {
        Selector::default()
    }

    /// Upstream `OneTermEqualSelector(field, value)`.
    pub fn one_term_equal(field: &str, value: &str) -> Selector {
        Selector {
            terms: vec![Term::Equals {
                field: field.to_owned(),
                value: value.to_owned(),
            }],
        }
    }

    /// Upstream `SelectorFromSet`: `field=value` for each entry (in key order).
    pub fn from_set(set: &Fields) -> Selector {
        let terms = set
            .iter()
            .map(|(field, value)| Term::Equals {
                field: field.clone(),
                value: value.clone(),
            })
            .collect();
        Selector { terms }
    }

    /// Upstream `Matches(fields)`: every term holds.
    pub fn matches(&self, fields: &(impl Labels + ?Sized)) -> bool {
        self.terms.iter().all(|t| t.matches(fields))
    }

    /// Upstream `Requirements()`.
    pub fn requirements(&self) -> Vec<Requirement> {
        self.terms.iter().map(Term::requirement).collect()
    }

    /// Upstream `Transform(fn)`: `fn` maps each `(field, value)`, e.g. to rename a
    /// version-specific field label or reject an unsupported one. A term mapped to
    /// `("", "")` is dropped, as upstream drops it.
    pub fn transform<E>(
        &self,
        mut f: impl FnMut(&str, &str) -> Result<(String, String), E>,
    ) -> Result<Selector, E> {
        let mut terms = Vec::with_capacity(self.terms.len());
        for term in &self.terms {
            let (field, value) = f(term.field(), term.value())?;
            if field.is_empty() && value.is_empty() {
                continue;
            }
            terms.push(match term {
                Term::Equals { .. } => Term::Equals { field, value },
                Term::NotEquals { .. } => Term::NotEquals { field, value },
            });
        }
        Ok(Selector { terms })
    }

    /// True if the selector does not restrict anything.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// Upstream `RequiresExactMatch(field)`: the value of the first `field=value` term.
    pub fn requires_exact_match(&self, field: &str) -> Option<&str> {
        self.terms.iter().find_map(|t| match t {
            Term::Equals { field: f, value } if f == field => Some(value.as_str()),
            _ => None,
        })
    }
}

/// Upstream `String()`: the terms joined by `,`, values escaped; parsing it again gives
/// the same selector.
impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, term) in self.terms.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{term}")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for Selector {
    type Err = Error;

    fn from_str(s: &str) -> Result<Selector> {
        parse_selector(s)
    }
}

/// Why `parse_and_transform_selector` failed: the selector, or the transform.
#[derive(Debug, Error)]
pub enum TransformError<E: std::error::Error + 'static> {
    #[error(transparent)]
    Parse(#[from] Error),
    #[error(transparent)]
    Transform(E),
}

/// Upstream `ParseAndTransformSelector`.
pub fn parse_and_transform_selector<E: std::error::Error + 'static>(
    selector: &str,
    f: impl FnMut(&str, &str) -> Result<(String, String), E>,
) -> Result<Selector, TransformError<E>> {
    parse_selector(selector)?
        .transform(f)
        .map_err(TransformError::Transform)
}

/// Upstream `fields.EscapeValue`: `\`, `,` and `=` get a backslash.
pub fn escape_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | ',' | '=') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Upstream `fields.ParseSelector`.
pub fn parse_selector(selector: &str) -> Result<Selector> {
    let mut parts = split_terms(selector);
    // Upstream sorts the raw terms before parsing; that order decides which of several
    // `metadata.name=` terms `requires_exact_match` returns.
    parts.sort_unstable();
    let mut terms = Vec::with_capacity(parts.len());
    for part in parts.into_iter().filter(|p| !p.is_empty()) {
        let Some((lhs, op, rhs)) = split_term(part) else {
            return Err(Error::InvalidSelector {
                selector: selector.to_owned(),
                term: part.to_owned(),
            });
        };
        let field = lhs.to_owned();
        let value = unescape_value(rhs)?;
        terms.push(match op {
            "!=" => Term::NotEquals { field, value },
            _ => Term::Equals { field, value },
        });
    }
    Ok(Selector { terms })
}

/// Splits on commas that are not escaped by a backslash; escapes stay in the terms.
fn split_terms(s: &str) -> Vec<&str> {
    if s.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::new();
    let mut start = 0;
    let mut in_slash = false;
    for (i, c) in s.char_indices() {
        if in_slash {
            in_slash = false;
        } else if c == '\\' {
            in_slash = true;
        } else if c == ',' {
            terms.push(&s[start..i]);
            start = i + 1;
        }
    }
    terms.push(&s[start..]);
    terms
}

/// The first operator in the term splits it; `!=` and `==` win over `=` at the same place.
fn split_term(term: &str) -> Option<(&str, &'static str, &str)> {
    for (i, _) in term.char_indices() {
        let rest = &term[i..];
        for op in ["!=", "==", "="] {
            if let Some(rhs) = rest.strip_prefix(op) {
                return Some((&term[..i], op, rhs));
            }
        }
    }
    None
}

/// Upstream `fields.UnescapeValue`: `\\`, `\,` and `\=` are the only escapes, and `,` or
/// `=` must be escaped.
pub fn unescape_value(s: &str) -> Result<String> {
    if !s.contains(['\\', ',', '=']) {
        return Ok(s.to_owned());
    }
    let mut out = String::with_capacity(s.len());
    let mut in_slash = false;
    for c in s.chars() {
        if in_slash {
            match c {
                '\\' | ',' | '=' => out.push(c),
                _ => return Err(Error::InvalidEscapeSequence(format!("\\{c}"))),
            }
            in_slash = false;
            continue;
        }
        match c {
            '\\' => in_slash = true,
            ',' | '=' => return Err(Error::UnescapedRune(c)),
            _ => out.push(c),
        }
    }
    if in_slash {
        return Err(Error::InvalidEscapeSequence("\\".to_owned()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eq(field: &str, value: &str) -> Term {
        Term::Equals {
            field: field.into(),
            value: value.into(),
        }
    }

    #[test]
    fn parses_operators() {
        let s = parse_selector("b!=2,a==1,c=3").unwrap();
        assert_eq!(
            s.terms,
            vec![
                eq("a", "1"),
                Term::NotEquals {
                    field: "b".into(),
                    value: "2".into()
                },
                eq("c", "3"),
            ]
        );
        assert!(parse_selector("").unwrap().is_empty());
        assert!(parse_selector(",,").unwrap().is_empty());
    }

    #[test]
    fn exact_match_follows_sorted_order() {
        let s = parse_selector("metadata.name=b,metadata.name=a").unwrap();
        assert_eq!(s.requires_exact_match("metadata.name"), Some("a"));
        let s = parse_selector("metadata.name!=a").unwrap();
        assert_eq!(s.requires_exact_match("metadata.name"), None);
        let s = parse_selector("metadata.name==x").unwrap();
        assert_eq!(s.requires_exact_match("metadata.name"), Some("x"));
    }

    #[test]
    fn escapes() {
        let s = parse_selector(r"a=x\,y\=z\\,b=1").unwrap();
        assert_eq!(s.terms, vec![eq("a", r"x,y=z\"), eq("b", "1")]);
        assert_eq!(
            parse_selector(r"a=x\y").unwrap_err().to_string(),
            r"invalid field selector: invalid escape sequence: \y"
        );
        assert_eq!(
            parse_selector("a=b=c").unwrap_err().to_string(),
            "invalid field selector: unescaped character '='"
        );
        assert_eq!(
            parse_selector(r"a=b\").unwrap_err(),
            Error::InvalidEscapeSequence("\\".into())
        );
    }

    #[test]
    fn rejects_terms_without_operator() {
        assert_eq!(
            parse_selector("metadata.name=name1,foo")
                .unwrap_err()
                .to_string(),
            "invalid selector: 'metadata.name=name1,foo'; can't understand 'foo'"
        );
    }

    fn fields(pairs: &[(&str, &str)]) -> Fields {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn good_selectors_round_trip() {
        for s in [
            "x=a,y=b,z=c",
            "",
            "x!=a,y=b",
            r"x=a||y\=b",
            r"x=a\=\=b",
            r"x=a\,b",
            r"x=a\\b",
        ] {
            let sel = parse_selector(s).unwrap_or_else(|e| panic!("{s}: {e}"));
            assert_eq!(sel.to_string(), s);
        }
        // "==" prints as "=", and terms print in sorted order.
        assert_eq!(parse_selector("b==1,a=2").unwrap().to_string(), "a=2,b=1");
    }

    #[test]
    fn bad_selectors() {
        for s in [
            "x=a||y=b",
            "x==a==b",
            "x=a,b",
            "x in (a)",
            "x in (a,b,c)",
            "x",
        ] {
            assert!(parse_selector(s).is_err(), "{s}");
        }
    }

    fn expect(sel: &str, set: &Fields, want: bool) {
        let s = parse_selector(sel).unwrap();
        assert_eq!(s.matches(set), want, "{sel} vs {set:?}");
    }

    #[test]
    fn matches() {
        expect("", &fields(&[("x", "y")]), true);
        expect("x=y", &fields(&[("x", "y")]), true);
        expect("x=y,z=w", &fields(&[("x", "y"), ("z", "w")]), true);
        expect("x!=y,z!=w", &fields(&[("x", "z"), ("z", "a")]), true);
        expect("notin=in", &fields(&[("notin", "in")]), true);
        expect("x=y", &fields(&[("x", "z")]), false);
        expect("x=y,z=w", &fields(&[("x", "w"), ("z", "w")]), false);
        expect("x!=y,z!=w", &fields(&[("x", "z"), ("z", "w")]), false);
        // A missing field reads as "".
        expect("x=", &fields(&[]), true);
        expect("x!=", &fields(&[]), false);
        expect("x!=y", &fields(&[]), true);
        expect(r"x=a\,b", &fields(&[("x", "a,b")]), true);

        let set = fields(&[("foo", "bar"), ("baz", "blah")]);
        expect("foo=bar", &set, true);
        expect("baz=blah", &set, true);
        expect("foo=bar,baz=blah", &set, true);
        expect("foo=blah", &set, false);
        expect("baz=bar", &set, false);
        expect("foo=bar,foobar=bar,baz=blah", &set, false);
    }

    #[test]
    fn everything_and_sets() {
        assert!(Selector::everything().matches(&fields(&[("x", "y")])));
        assert!(Selector::everything().is_empty());
        assert_eq!(Selector::everything().to_string(), "");
        let set = fields(&[("foo", "bar"), ("baz", "blah")]);
        assert!(Selector::from_set(&fields(&[])).matches(&set));
        assert!(Selector::from_set(&fields(&[("foo", "bar")])).matches(&set));
        assert!(Selector::from_set(&set).matches(&set));
        assert!(!Selector::from_set(&fields(&[("foo", "x")])).matches(&set));
        let one = Selector::one_term_equal("metadata.name", "a,b");
        assert_eq!(one.to_string(), r"metadata.name=a\,b");
        assert_eq!(one.requires_exact_match("metadata.name"), Some("a,b"));
    }

    #[test]
    fn requirements() {
        let s = parse_selector("b!=2,a==1").unwrap();
        assert_eq!(
            s.requirements(),
            vec![
                Requirement {
                    operator: Operator::Equals,
                    field: "a".into(),
                    value: "1".into()
                },
                Requirement {
                    operator: Operator::NotEquals,
                    field: "b".into(),
                    value: "2".into()
                },
            ]
        );
        assert!(Selector::everything().requirements().is_empty());
    }

    #[derive(Debug, thiserror::Error)]
    #[error("field label not supported: {0}")]
    struct Unsupported(String);

    #[test]
    fn transform() {
        type R = std::result::Result<(String, String), Unsupported>;
        type Case = (
            &'static str,
            Box<dyn Fn(&str, &str) -> R>,
            &'static str,
            bool,
        );
        let identity = |f: &str, v: &str| -> R { Ok((f.into(), v.into())) };
        let cases: Vec<Case> = vec![
            ("", Box::new(identity), "", true),
            ("a=b,c=d", Box::new(identity), "a=b,c=d", false),
            (
                "a=b,c=d",
                Box::new(|f: &str, v: &str| -> R {
                    if f == "a" {
                        Ok(("e".into(), "f".into()))
                    } else {
                        Ok((f.into(), v.into()))
                    }
                }),
                "e=f,c=d",
                false,
            ),
            (
                "a=b",
                Box::new(|_: &str, _: &str| -> R { Ok((String::new(), String::new())) }),
                "",
                true,
            ),
            (
                "a=b,c=d,e=f",
                Box::new(|f: &str, v: &str| -> R {
                    if f == "c" {
                        Ok((String::new(), String::new()))
                    } else {
                        Ok((f.into(), v.into()))
                    }
                }),
                "a=b,e=f",
                false,
            ),
        ];
        for (sel, f, want, empty) in cases {
            let got = parse_selector(sel)
                .unwrap()
                .transform(|a, b| f(a, b))
                .unwrap();
            assert_eq!(got.to_string(), want, "{sel}");
            assert_eq!(got.is_empty(), empty, "{sel}");
        }
        let not_eq = parse_selector("a!=b").unwrap().transform(identity).unwrap();
        assert_eq!(not_eq.to_string(), "a!=b");

        let err = parse_and_transform_selector("spec.foo=x", |f, _| -> R {
            Err(Unsupported(f.to_owned()))
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "field label not supported: spec.foo");
        let err = parse_and_transform_selector("x", identity).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid selector: 'x'; can't understand 'x'"
        );
    }

    #[test]
    fn escaping() {
        assert_eq!(escape_value(r"a\b,c=d"), r"a\\b\,c\=d");
        for v in ["", "plain", r"a\b,c=d", "==", r"\\"] {
            assert_eq!(unescape_value(&escape_value(v)).unwrap(), v);
        }
    }
}
