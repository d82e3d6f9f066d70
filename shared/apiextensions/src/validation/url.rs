//! The parts of Go's `url.Parse` that `webhook.ValidateWebhookURL` looks at, with its
//! error texts for the common failures (`parse "<url>": <reason>`).

use kas_apimachinery::golang::strconv::quote;

/// A parsed URL: only what the webhook rules read.
#[derive(Debug, PartialEq, Eq)]
pub struct Url<'a> {
    /// Lower-cased, as Go stores it.
    pub scheme: String,
    pub user: Option<&'a str>,
    pub host: &'a str,
    pub query: &'a str,
    pub fragment: &'a str,
}

fn is_scheme_char(c: u8, first: bool) -> bool {
    c.is_ascii_alphabetic() || (!first && (c.is_ascii_digit() || b"+-.".contains(&c)))
}

/// Go's `unescape`: every `%` must start a two-digit hex escape.
fn check_escapes(s: &str) -> Result<(), String> {
    let b = s.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c != b'%' {
            continue;
        }
        let ok = b.len() > i + 2 && b[i + 1].is_ascii_hexdigit() && b[i + 2].is_ascii_hexdigit();
        if !ok {
            let end = (i + 3).min(b.len());
            let bad = s.get(i..end).unwrap_or("%");
            return Err(format!("invalid URL escape {}", quote(bad)));
        }
    }
    Ok(())
}

/// Go's host character rule (`shouldEscape(c, encodeHost)` for unescaped bytes).
fn valid_host_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-_.~!$&'()*+,;=:[]<>\"%".contains(c) || !c.is_ascii()
}

fn check_host(host: &str) -> Result<(), String> {
    let (name, port) = if let Some(rest) = host.strip_prefix('[') {
        let Some(end) = rest.find(']') else {
            return Err("missing ']' in host".to_owned());
        };
        (&host[..end + 2], &rest[end + 1..])
    } else {
        match host.rfind(':') {
            Some(i) => (&host[..i], &host[i..]),
            None => (host, ""),
        }
    };
    let port_ok = port
        .strip_prefix(':')
        .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()));
    if !port.is_empty() && !port_ok {
        return Err(format!("invalid port {} after host", quote(port)));
    }
    if let Some(c) = name.chars().find(|c| !valid_host_char(*c)) {
        return Err(format!(
            "invalid character {} in host name",
            quote(&c.to_string())
        ));
    }
    check_escapes(name)
}

fn parse_inner(raw: &str) -> Result<Url<'_>, String> {
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err("net/url: invalid control character in URL".to_owned());
    }
    let (rest, fragment) = raw.split_once('#').unwrap_or((raw, ""));
    check_escapes(fragment)?;
    let b = rest.as_bytes();
    let mut scheme = "";
    let mut rest = rest;
    for (i, &c) in b.iter().enumerate() {
        if c == b':' {
            if i == 0 {
                return Err("missing protocol scheme".to_owned());
            }
            scheme = &rest[..i];
            rest = &rest[i + 1..];
            break;
        }
        if !is_scheme_char(c, i == 0) {
            break;
        }
    }
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let mut url = Url {
        scheme: scheme.to_ascii_lowercase(),
        user: None,
        host: "",
        query,
        fragment,
    };
    let Some(after) = rest.strip_prefix("//") else {
        // Opaque (`https:host`) or a plain path: no host.
        if scheme.is_empty() && rest.split('/').next().is_some_and(|s| s.contains(':')) {
            return Err("first path segment in URL cannot contain colon".to_owned());
        }
        return Ok(url);
    };
    let (authority, path) = after.split_at(after.find('/').unwrap_or(after.len()));
    let (user, host) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    if user.is_some_and(|u| u.contains(['/', '?', '#', '[', ']', '@'])) {
        return Err("net/url: invalid userinfo".to_owned());
    }
    check_host(host)?;
    check_escapes(path)?;
    url.user = user;
    url.host = host;
    Ok(url)
}

/// Go's `url.Parse`: the URL, or the error text (`parse "<url>": <reason>`).
pub fn parse(raw: &str) -> Result<Url<'_>, String> {
    parse_inner(raw).map_err(|e| format!("parse {}: {e}", quote(raw)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_like_go() {
        let u = parse("HTTPS://user@host:8443/p?q=1#f").unwrap();
        assert_eq!(u.scheme, "https");
        assert_eq!(
            (u.user, u.host, u.query, u.fragment),
            (Some("user"), "host:8443", "q=1", "f")
        );
        assert_eq!(parse("https:host").unwrap().host, "");
        assert_eq!(parse("/path").unwrap().scheme, "");
        assert_eq!(
            parse("https://a b").unwrap_err(),
            r#"parse "https://a b": invalid character " " in host name"#
        );
        assert_eq!(
            parse("https://h:x").unwrap_err(),
            r#"parse "https://h:x": invalid port ":x" after host"#
        );
        assert_eq!(
            parse(":x").unwrap_err(),
            r#"parse ":x": missing protocol scheme"#
        );
        assert_eq!(
            parse("https://h/%zz").unwrap_err(),
            r#"parse "https://h/%zz": invalid URL escape "%zz""#
        );
        assert_eq!(
            parse("https://h\n").unwrap_err(),
            r#"parse "https://h\n": net/url: invalid control character in URL"#
        );
    }
}
