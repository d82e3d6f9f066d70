//! Go's RE2 syntax (`regexp.Compile`) on the regex crate: the same syntax but for the
//! Perl classes, which are ASCII in Go (`\d` is `[0-9]`) and Unicode in the regex crate.

use regex::Regex;

/// Compiles a Go regular expression. `Err` is the regex crate's message (Go's differs).
pub(super) fn compile(pattern: &str) -> Result<Regex, String> {
    Regex::new(&translate(pattern)).map_err(|e| e.to_string())
}

/// Rewrites `\d \D \w \W \s \S \b \B` to their ASCII forms; inside a bracket class the
/// positive classes become ranges (the negated ones stay as they are).
fn translate(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut chars = pattern.chars().peekable();
    let mut in_class = false;
    // Right after `[` or `[^` a `]` is a literal.
    let mut class_start = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(n) = chars.next() else {
                    out.push('\\');
                    break;
                };
                class_start = false;
                match (in_class, n) {
                    (false, 'd' | 'D' | 'w' | 'W' | 's' | 'S' | 'b' | 'B') => {
                        out.push_str("(?-u:\\");
                        out.push(n);
                        out.push(')');
                    }
                    (true, 'd') => out.push_str("0-9"),
                    (true, 'w') => out.push_str("0-9A-Za-z_"),
                    (true, 's') => out.push_str("\\t\\n\\f\\r "),
                    _ => {
                        out.push('\\');
                        out.push(n);
                    }
                }
            }
            '[' if !in_class => {
                in_class = true;
                class_start = true;
                out.push('[');
                if chars.peek() == Some(&'^') {
                    chars.next();
                    out.push('^');
                }
            }
            '[' if in_class && chars.peek() == Some(&':') => {
                // `[:alpha:]` inside a class: copy through the closing `:]`.
                out.push('[');
                for d in chars.by_ref() {
                    out.push(d);
                    if d == ']' {
                        break;
                    }
                }
                class_start = false;
            }
            ']' if in_class && !class_start => {
                in_class = false;
                out.push(']');
            }
            _ => {
                class_start = false;
                out.push(c);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perl_classes_are_ascii() {
        let re = compile(r"^\d+$").expect("compiles");
        assert!(re.is_match("123"));
        assert!(!re.is_match("١٢٣"), "Arabic-Indic digits are not \\d in Go");
        let re = compile(r"^[\d\w-]+$").expect("compiles");
        assert!(re.is_match("a-1_"));
        assert!(!re.is_match("é"));
        let re = compile(r"^[]a]+$").expect("compiles");
        assert!(re.is_match("]a"));
        let re = compile(r"^[[:alpha:]\d]+$").expect("compiles");
        assert!(re.is_match("ab12"));
        assert!(compile("(").is_err());
    }
}
