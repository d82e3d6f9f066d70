//! Whether a `pattern` compiles, with Go's `regexp.Compile` error text
//! (`error parsing regexp: <code>: `<expr>``) for the common mistakes. Validity is decided
//! by the `regex` crate where the scan below finds nothing; its own error then gives a
//! generic text.

const PREFIX: &str = "error parsing regexp: ";

fn go_error(code: &str, expr: &str) -> String {
    format!("{PREFIX}{code}: `{expr}`")
}

fn is_repeat(c: char) -> bool {
    matches!(c, '*' | '+' | '?')
}

/// Go's `parseEscape` accepts these after a backslash (besides punctuation).
fn valid_escape(c: char) -> bool {
    c.is_ascii_punctuation() || "1234567abfnrtvxdDsSwWpPbBAzQE".contains(c) || c == '0'
}

/// Scans for the errors Go reports most often; `None` if it sees none.
fn scan(p: &str) -> Option<String> {
    let chars: Vec<(usize, char)> = p.char_indices().collect();
    let mut depth = 0usize;
    // Whether the previous item can take a repetition operator, and was one.
    let (mut operand, mut repeated) = (false, false);
    let mut i = 0;
    while i < chars.len() {
        let (at, c) = chars[i];
        match c {
            '\\' => {
                let Some(&(_, next)) = chars.get(i + 1) else {
                    return Some(go_error("trailing backslash at end of expression", ""));
                };
                if !valid_escape(next) {
                    let end = chars.get(i + 2).map_or(p.len(), |x| x.0);
                    return Some(go_error("invalid escape sequence", &p[at..end]));
                }
                i += 2;
                (operand, repeated) = (true, false);
                continue;
            }
            '[' => {
                let close = class_end(&chars, i)?;
                i = close + 1;
                (operand, repeated) = (true, false);
                continue;
            }
            '(' => {
                depth += 1;
                (operand, repeated) = (false, false);
            }
            ')' => {
                if depth == 0 {
                    return Some(go_error("unexpected )", p));
                }
                depth -= 1;
                (operand, repeated) = (true, false);
            }
            '|' => (operand, repeated) = (false, false),
            c if is_repeat(c) => {
                let lazy = chars.get(i + 1).is_some_and(|x| x.1 == '?');
                let end = chars
                    .get(i + 1 + usize::from(lazy))
                    .map_or(p.len(), |x| x.0);
                if repeated {
                    let start = chars[i - 1].0;
                    return Some(go_error(
                        "invalid nested repetition operator",
                        &p[start..end],
                    ));
                }
                if !operand {
                    return Some(go_error(
                        "missing argument to repetition operator",
                        &p[at..end],
                    ));
                }
                repeated = true;
                i += 1 + usize::from(lazy);
                continue;
            }
            _ => (operand, repeated) = (true, false),
        }
        i += 1;
    }
    if depth > 0 {
        return Some(go_error("missing closing )", p));
    }
    None
}

/// The index of the `]` closing the class opened at `start`, `None` if it never closes.
fn class_end(chars: &[(usize, char)], start: usize) -> Option<usize> {
    let mut i = start + 1;
    if chars.get(i).is_some_and(|c| c.1 == '^') {
        i += 1;
    }
    // A `]` first in the class is a literal.
    if chars.get(i).is_some_and(|c| c.1 == ']') {
        i += 1;
    }
    while let Some(&(_, c)) = chars.get(i) {
        match c {
            '\\' => i += 2,
            '[' if chars.get(i + 1).is_some_and(|c| c.1 == ':') => {
                i = (i + 2..chars.len())
                    .find(|&j| chars[j].1 == ']')
                    .map_or(i + 1, |j| j + 1);
            }
            ']' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// The compile error of `pattern` as Go would word it, `None` if it compiles.
pub fn compile_error(pattern: &str) -> Option<String> {
    let chars: Vec<(usize, char)> = pattern.char_indices().collect();
    if let Some(at) = first_unclosed_class(&chars) {
        return Some(go_error("missing closing ]", &pattern[at..]));
    }
    if let Some(e) = scan(pattern) {
        return Some(e);
    }
    match regex::Regex::new(pattern) {
        Ok(_) => None,
        Err(_) => Some(go_error("invalid or unsupported Perl syntax", pattern)),
    }
}

/// The byte offset of a `[` whose class never closes (outside escapes).
fn first_unclosed_class(chars: &[(usize, char)]) -> Option<usize> {
    let mut i = 0;
    while i < chars.len() {
        match chars[i].1 {
            '\\' => i += 2,
            '[' => match class_end(chars, i) {
                Some(end) => i = end + 1,
                None => return Some(chars[i].0),
            },
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::compile_error;

    #[test]
    fn go_messages() {
        assert_eq!(compile_error("^[a-z]+$"), None);
        assert_eq!(compile_error("a(b|c)*?d\\.e"), None);
        assert_eq!(
            compile_error("(abc").as_deref(),
            Some("error parsing regexp: missing closing ): `(abc`")
        );
        assert_eq!(
            compile_error("abc)").as_deref(),
            Some("error parsing regexp: unexpected ): `abc)`")
        );
        assert_eq!(
            compile_error("a[bc").as_deref(),
            Some("error parsing regexp: missing closing ]: `[bc`")
        );
        assert_eq!(
            compile_error("*a").as_deref(),
            Some("error parsing regexp: missing argument to repetition operator: `*`")
        );
        assert_eq!(
            compile_error("a**").as_deref(),
            Some("error parsing regexp: invalid nested repetition operator: `**`")
        );
        assert_eq!(
            compile_error("a\\").as_deref(),
            Some("error parsing regexp: trailing backslash at end of expression: ``")
        );
        assert_eq!(
            compile_error("\\q").as_deref(),
            Some("error parsing regexp: invalid escape sequence: `\\q`")
        );
    }
}
