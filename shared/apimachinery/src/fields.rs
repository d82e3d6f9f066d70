//! Field selectors (`fieldSelector=metadata.name=foo,status.phase!=Running`), parsed as
//! upstream's `k8s.io/apimachinery/pkg/fields` parses them.

use thiserror::Error;

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

impl Selector {
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
}
