//! Upstream `k8s.io/apiserver/pkg/cel/escaping.go`: how a property name becomes a CEL field
//! name (`foo-bar` is `self.foo__dash__bar`, `namespace` is `self.__namespace__`).

/// CEL's reserved words; `namespace` matters most, Kubernetes uses it everywhere.
const RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// Upstream `Escape`: the CEL field name of a property, or `None` when no CEL expression
/// can name it (it is then left out of `self`).
pub fn escape(ident: &str) -> Option<String> {
    let first = ident.chars().next()?;
    if first.is_ascii_digit() {
        return None;
    }
    if RESERVED.contains(&ident) {
        return Some(format!("__{ident}__"));
    }
    let mut out = String::with_capacity(ident.len());
    let mut chars = ident.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '_' if chars.peek() == Some(&'_') => {
                chars.next();
                out.push_str("__underscores__");
            }
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            c if c.is_ascii_alphanumeric() || c == '_' => out.push(c),
            _ => return None,
        }
    }
    Some(out)
}

/// Upstream `Unescape`: the property name a CEL field name stands for.
pub fn unescape(escaped: &str) -> Option<String> {
    let mut out = String::with_capacity(escaped.len());
    let mut rest = escaped;
    while let Some(start) = rest.find("__") {
        let after = &rest[start + 2..];
        // `__x__` with no underscore inside x, as upstream's `_{2}[^_]+_{2}`.
        let inner_len = after.find('_').unwrap_or(after.len());
        if inner_len == 0 || !after[inner_len..].starts_with("__") {
            out.push_str(&rest[..start + 1]);
            rest = &rest[start + 1..];
            continue;
        }
        let contents = &after[..inner_len];
        out.push_str(&rest[..start]);
        match contents {
            "underscores" => out.push_str("__"),
            "dot" => out.push('.'),
            "dash" => out.push('-'),
            "slash" => out.push('/'),
            c if RESERVED.contains(&c) && escaped.len() == c.len() + 4 => out.push_str(c),
            _ => return None,
        }
        rest = &after[inner_len + 2..];
    }
    out.push_str(rest);
    Some(out)
}

/// Upstream's `UnescapeSingleQuote`: the body of a single-quoted JSONPath name (a
/// `fieldPath` or a selectable field's `['a.b']`) with its Go escapes resolved.
pub(crate) fn unescape_single_quote(s: &str) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(d) = chars.next() else {
            out.push('\\');
            break;
        };
        out.push(match d {
            'a' => '\x07',
            'b' => '\x08',
            'f' => '\x0c',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\x0b',
            '\'' => '\'',
            '\\' => '\\',
            _ => return Err(format!("invalid escape char \\{d}")),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_as_upstream() {
        // Cases from upstream's escaping_test.go.
        let cases = [
            ("foo", Some("foo")),
            ("foo-bar", Some("foo__dash__bar")),
            ("foo.bar", Some("foo__dot__bar")),
            ("foo/bar", Some("foo__slash__bar")),
            ("foo__bar", Some("foo__underscores__bar")),
            ("foo___bar", Some("foo__underscores___bar")),
            ("namespace", Some("__namespace__")),
            ("if", Some("__if__")),
            ("_foo", Some("_foo")),
            ("1foo", None),
            ("", None),
            ("foo bar", None),
            ("foo:bar", None),
            ("ä", None),
        ];
        for (input, want) in cases {
            assert_eq!(escape(input).as_deref(), want, "{input}");
            if let Some(w) = want {
                assert_eq!(unescape(w).as_deref(), Some(input), "{w}");
            }
        }
        assert_eq!(unescape("__namespace__x"), None);
        assert_eq!(unescape("__unknown__"), None);
    }
}
