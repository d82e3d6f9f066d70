//! Recursion depth: cel-go refuses expressions nested deeper than 250
//! (`max recursion depth exceeded`), and cel-rust parses and evaluates by recursion, so
//! a deep enough rule would overflow the stack and abort the server.
//!
//! [`estimate`] bounds the parse depth from the source alone, before parsing: the
//! nesting of brackets, plus the chains of left-recursive binary operators (`==`, `+`,
//! ...) that cel-go's grammar nests, plus runs of `.` and unary operators. `&&`, `||`,
//! `?:` and `,` are flat in cel-go's grammar and end a chain. [`with_stack`] runs
//! parsing and evaluation with stack for that depth.

/// cel-go's parser limit, which upstream keeps.
pub(crate) const MAX_RECURSION_DEPTH: usize = 250;

/// An upper estimate of the depth cel-go's parser reaches for `source`.
pub(crate) fn estimate(source: &str) -> usize {
    let b = source.as_bytes();
    let mut chains: Vec<usize> = vec![0];
    let mut run = 0;
    // Field selections in a row; the first is free, as `self.x` is in cel-go's count.
    let mut dots: usize = 0;
    let mut max = 0;
    let mut after_operand = false;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let two = b.get(i..i + 2).unwrap_or(&[]);
        let mut width = 1;
        match c {
            b'\'' | b'"' => {
                i = skip_string(b, i);
                after_operand = true;
                continue;
            }
            b'(' | b'[' | b'{' => {
                chains.push(0);
                run = 0;
                after_operand = false;
            }
            b')' | b']' | b'}' => {
                if chains.len() > 1 {
                    chains.pop();
                }
                run = 0;
                after_operand = true;
            }
            _ if two == b"&&" || two == b"||" => {
                reset(&mut chains, &mut run);
                width = 2;
                after_operand = false;
            }
            b',' | b'?' | b':' => {
                reset(&mut chains, &mut run);
                after_operand = false;
            }
            _ if two == b"==" || two == b"!=" || two == b"<=" || two == b">=" => {
                binary(&mut chains, &mut run);
                width = 2;
                after_operand = false;
            }
            b'<' | b'>' | b'*' | b'/' | b'%' | b'+' => {
                binary(&mut chains, &mut run);
                after_operand = false;
            }
            b'-' if after_operand => {
                binary(&mut chains, &mut run);
                after_operand = false;
            }
            b'-' | b'!' => run += 1,
            b'.' if !(i > 0 && b[i - 1].is_ascii_digit()) => dots += 1,
            _ if c.is_ascii_alphanumeric() || c == b'_' => {
                let end = (i..b.len())
                    .find(|&j| !(b[j].is_ascii_alphanumeric() || b[j] == b'_'))
                    .unwrap_or(b.len());
                if &b[i..end] == b"in" {
                    binary(&mut chains, &mut run);
                    after_operand = false;
                } else {
                    after_operand = true;
                }
                width = end - i;
            }
            _ => {}
        }
        if !(c == b'.' || c == b' ' || c == b'_' || c.is_ascii_alphanumeric()) {
            dots = 0;
        }
        let total = chains.len() + chains.iter().sum::<usize>() + run + dots.saturating_sub(1);
        max = max.max(total);
        i += width;
    }
    max
}

fn reset(chains: &mut [usize], run: &mut usize) {
    if let Some(last) = chains.last_mut() {
        *last = 0;
    }
    *run = 0;
}

fn binary(chains: &mut [usize], run: &mut usize) {
    if let Some(last) = chains.last_mut() {
        *last += 1;
    }
    *run = 0;
}

/// The index after the string literal starting at `start` (quotes, triple quotes, and
/// backslash escapes; raw strings' backslashes only make the estimate skip less).
fn skip_string(b: &[u8], start: usize) -> usize {
    let q = b[start];
    let triple = b.get(start..start + 3) == Some(&[q, q, q][..]);
    let mut i = start + if triple { 3 } else { 1 };
    while i < b.len() {
        if b[i] == b'\\' {
            i += 2;
            continue;
        }
        if triple {
            if b.get(i..i + 3) == Some(&[q, q, q][..]) {
                return i + 3;
            }
        } else if b[i] == q {
            return i + 1;
        }
        i += 1;
    }
    b.len()
}

/// Stack per level of nesting: twice what the deepest nestings the estimate lets through
/// need (`tests/compile.rs`: 32 KiB a level passes in a release build, 128 in a debug
/// build, where 64 overflows).
const PER_LEVEL_KIB: usize = if cfg!(debug_assertions) { 256 } else { 64 };

/// Runs `f` (parsing or evaluating an expression of estimated `depth`) with stack to
/// spare: on the current stack when enough is left, else on a fresh one.
pub(crate) fn with_stack<R>(depth: usize, f: impl FnOnce() -> R) -> R {
    // Deeper expressions are refused before they are parsed.
    let depth = depth.min(MAX_RECURSION_DEPTH + 8);
    let need = (256 + PER_LEVEL_KIB * depth) * 1024;
    stacker::maybe_grow(need, need * 2, f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_cel_go_depth() {
        // Upstream's TestCELMaxRecursionDepth: 249 `==` fit, 250 do not.
        let chain = |n: usize| "self.val1 == ".repeat(n) + "self.val1";
        assert_eq!(estimate(&chain(249)), 250);
        assert_eq!(estimate(&chain(250)), 251);
        // `&&` chains are flat.
        assert!(estimate(&vec!["self.a == 1"; 400].join(" && ")) < 10);
        assert!(estimate("f(a + b, c + d, [1, 2, 3])") < 6);
        assert_eq!(estimate("'((((((' == \"))))\""), 2);
        assert_eq!(estimate(&("(".repeat(300) + "1" + &")".repeat(300))), 301);
        assert!(estimate("-1 - -2") <= 4);
    }
}
