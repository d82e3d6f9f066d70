//! The Go standard library parsers behind three strfmt formats: `net/url`'s
//! `ParseRequestURI` (`uri`), `net/mail`'s `ParseAddress` (`email`) and `net`'s
//! `ParseMAC` (`mac`), as far as whether they accept a string.

/// `url.ParseRequestURI(s) == nil`.
pub(super) fn is_request_uri(raw: &str) -> bool {
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) || raw.is_empty() {
        return false;
    }
    if raw == "*" {
        return true;
    }
    let Some((scheme, rest)) = scheme(raw) else {
        return false;
    };
    let rest = if rest.ends_with('?') && rest.matches('?').count() == 1 {
        &rest[..rest.len() - 1]
    } else {
        rest.split_once('?').map_or(rest, |(p, _)| p)
    };
    if !rest.starts_with('/') {
        // A rootless path after a scheme is opaque; without a scheme it is no request URI.
        return !scheme.is_empty();
    }
    let mut path = rest;
    if !scheme.is_empty() && rest.starts_with("//") {
        let after = &rest[2..];
        let (authority, tail) = match after.find('/') {
            Some(i) => (&after[..i], &after[i..]),
            None => (after, ""),
        };
        if !valid_authority(authority) {
            return false;
        }
        path = tail;
    }
    unescapes(path, false)
}

/// Go's `getScheme`: `None` for a leading `:` ("missing protocol scheme").
fn scheme(raw: &str) -> Option<(&str, &str)> {
    for (i, c) in raw.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return None,
            b':' => return Some((&raw[..i], &raw[i + 1..])),
            _ => return Some(("", raw)),
        }
    }
    Some(("", raw))
}

fn valid_authority(authority: &str) -> bool {
    let (userinfo, host) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    if !valid_host(host) {
        return false;
    }
    match userinfo {
        None => true,
        Some(u) => {
            u.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._:~!$&'()*+,;=%@".contains(c))
                && unescapes(u, false)
        }
    }
}

fn valid_optional_port(port: &str) -> bool {
    port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()))
}

fn valid_host(host: &str) -> bool {
    let name = if host.starts_with('[') {
        let Some(i) = host.rfind(']') else {
            return false;
        };
        if !valid_optional_port(&host[i + 1..]) {
            return false;
        }
        &host[..=i]
    } else if let Some(i) = host.rfind(':') {
        if !valid_optional_port(&host[i..]) {
            return false;
        }
        host
    } else {
        host
    };
    unescapes(name, true)
}

/// Go's `unescape(s, mode)` succeeds: every `%` starts two hex digits; in a host, an
/// escape must be of a non-ASCII byte (or `%25`), and ASCII that needs escaping there is
/// refused.
fn unescapes(s: &str, host: bool) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let (Some(h), Some(l)) = (b.get(i + 1), b.get(i + 2)) else {
                    return false;
                };
                if !h.is_ascii_hexdigit() || !l.is_ascii_hexdigit() {
                    return false;
                }
                if host && *h < b'8' && &s[i..i + 3] != "%25" {
                    return false;
                }
                i += 3;
            }
            c if host && c < 0x80 && !host_char(c) => return false,
            _ => i += 1,
        }
    }
    true
}

/// What Go's `shouldEscape(c, encodeHost)` leaves alone.
fn host_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"-_.~!$&'()*+,;=:[]<>\"".contains(&c)
}

/// `net.ParseMAC(s) == nil`: 6, 8 or 20 octets as `xx:xx...`, `xx-xx...` or
/// `xxxx.xxxx...`.
pub(super) fn is_mac(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 14 {
        return false;
    }
    let hex2 = |x: usize| {
        b.get(x..x + 2)
            .is_some_and(|p| p.iter().all(u8::is_ascii_hexdigit))
    };
    if b[2] == b':' || b[2] == b'-' {
        if !(b.len() + 1).is_multiple_of(3) || ![6, 8, 20].contains(&((b.len() + 1) / 3)) {
            return false;
        }
        (0..(b.len() + 1) / 3).all(|i| {
            let x = i * 3;
            hex2(x) && (x + 2 >= b.len() || b[x + 2] == b[2])
        })
    } else if b[4] == b'.' {
        if !(b.len() + 1).is_multiple_of(5) || ![6, 8, 20].contains(&(2 * (b.len() + 1) / 5)) {
            return false;
        }
        (0..(b.len() + 1) / 5).all(|i| {
            let x = i * 5;
            hex2(x) && hex2(x + 2) && (x + 4 >= b.len() || b[x + 4] == b'.')
        })
    } else {
        false
    }
}

/// `mail.ParseAddress(s)` succeeds with an address: an addr-spec, or a display name
/// (words or quoted strings) and `<addr-spec>`. Comments (CFWS) and groups are not
/// handled.
pub(super) fn is_email(s: &str) -> bool {
    let s = s.trim_matches([' ', '\t']);
    if s.is_empty() {
        return false;
    }
    if is_addr_spec(s) {
        return true;
    }
    let Some(open) = s.rfind('<') else {
        return false;
    };
    let Some(inner) = s[open + 1..].strip_suffix('>') else {
        return false;
    };
    let name = s[..open].trim_matches([' ', '\t']);
    is_addr_spec(inner) && (name.is_empty() || is_phrase(name))
}

fn is_atext(c: char, dot: bool) -> bool {
    match c {
        '.' => dot,
        '(' | ')' | '<' | '>' | '[' | ']' | ':' | ';' | '@' | '\\' | ',' | '"' => false,
        _ => ('!'..='~').contains(&c) || !c.is_ascii(),
    }
}

fn is_dot_atom(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('.')
        && !s.ends_with('.')
        && !s.contains("..")
        && s.chars().all(|c| is_atext(c, true))
}

fn is_quoted_string(s: &str) -> bool {
    let Some(inner) = s.strip_prefix('"').and_then(|r| r.strip_suffix('"')) else {
        return false;
    };
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if chars.next().is_none() {
                    return false;
                }
            }
            '"' => return false,
            c if c == ' ' || c == '\t' || ('!'..='~').contains(&c) || !c.is_ascii() => {}
            _ => return false,
        }
    }
    true
}

fn is_addr_spec(s: &str) -> bool {
    let Some(at) = s.rfind('@') else {
        return false;
    };
    let (local, domain) = (&s[..at], &s[at + 1..]);
    let local_ok = is_dot_atom(local) || (is_quoted_string(local) && local.len() > 2);
    let domain_ok = is_dot_atom(domain)
        || (domain.starts_with('[')
            && domain.ends_with(']')
            && domain.len() >= 2
            && domain[1..domain.len() - 1]
                .chars()
                .all(|c| ('!'..='~').contains(&c) && !matches!(c, '[' | ']' | '\\')));
    local_ok && domain_ok
}

/// A display name: words (atoms, dots allowed) and quoted strings.
fn is_phrase(s: &str) -> bool {
    let mut chars = s.chars().peekable();
    let mut words = 0;
    while let Some(&c) = chars.peek() {
        match c {
            ' ' | '\t' => {
                chars.next();
            }
            '"' => {
                chars.next();
                let mut closed = false;
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '"' => {
                            closed = true;
                            break;
                        }
                        _ => {}
                    }
                }
                if !closed {
                    return false;
                }
                words += 1;
            }
            c if is_atext(c, true) => {
                while chars.peek().is_some_and(|&c| is_atext(c, true)) {
                    chars.next();
                }
                words += 1;
            }
            _ => return false,
        }
    }
    words > 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_uris() {
        for ok in [
            "http://example.com/a?b",
            "/abs/path",
            "mailto:x@y",
            "*",
            "https://u:p@h:80/",
            "http://[::1]:8080/x",
        ] {
            assert!(is_request_uri(ok), "{ok}");
        }
        for bad in [
            "",
            "rel/path",
            ":x",
            "http://h:port/",
            "/a%zz",
            "http://a b/",
            "a\nb",
            "http://[::1/",
        ] {
            assert!(!is_request_uri(bad), "{bad}");
        }
    }

    #[test]
    fn macs() {
        for ok in [
            "00:00:5e:00:53:01",
            "02-00-5E-10-00-00-00-01",
            "0000.5e00.5301",
        ] {
            assert!(is_mac(ok), "{ok}");
        }
        for bad in [
            "00:00:5e:00:53",
            "00:00:5e-00:53:01",
            "0000.5e00.530",
            "zz:00:5e:00:53:01",
        ] {
            assert!(!is_mac(bad), "{bad}");
        }
    }

    #[test]
    fn emails() {
        for ok in [
            "a@b.c",
            "a.b+c@example.com",
            "Joe <joe@x.org>",
            "\"a b\"@x",
            "x@[1.2.3.4]",
            "\"Joe Q. Public\" <j@x.org>",
            "<j@x>",
        ] {
            assert!(is_email(ok), "{ok}");
        }
        for bad in [
            "",
            "a",
            "a@",
            "@b",
            "a..b@c",
            "a@b@",
            "<a@b",
            "x y <a@b>>",
            "\"x <a@b>",
            "x: <a@b>",
        ] {
            assert!(!is_email(bad), "{bad}");
        }
    }
}
