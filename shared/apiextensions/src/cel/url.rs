//! Upstream's Kubernetes URL library (`k8s.io/apiserver/pkg/cel/library/urls.go`):
//! `url()`, `isURL()` and the getters of a `net.URL`, over the parts of Go's
//! `url.ParseRequestURI` that CRD rules meet (scheme, authority, path, query; no
//! fragment, since a request URI has none).

use std::collections::HashMap;
use std::sync::Arc;

use cel::common::types::{STRING_TYPE, Type};
use cel::objects::{Key, Map, Opaque};
use cel::{DeclarationError, Env, ExecutionError, Value};
use kas_apimachinery::golang::strconv::quote;

use super::library::{no_such_overload, overload};

const URL_TYPE: &str = "net.URL";

/// The parts of a parsed Go `*url.URL` the getters read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Url {
    scheme: String,
    host: String,
    path: String,
    raw_query: String,
}

impl Opaque for Url {
    fn runtime_type_name(&self) -> &str {
        URL_TYPE
    }
}

pub(crate) fn add(env: &mut Env) -> Result<(), DeclarationError> {
    let url = || Type::new_opaque_type(URL_TYPE);
    env.add_type(url())?;
    env.add_overload("url", "string_to_url", vec![STRING_TYPE], to_url)?;
    env.add_overload("isURL", "is_url_string", vec![STRING_TYPE], is_url)?;
    for (name, f) in [
        ("getScheme", get_scheme as cel::common::functions::Function),
        ("getHost", get_host),
        ("getHostname", get_hostname),
        ("getPort", get_port),
        ("getEscapedPath", get_escaped_path),
        ("getQuery", get_query),
    ] {
        env.add_member_overload(name, &format!("url_{name}"), url(), vec![], f)?;
    }
    Ok(())
}

/// Go's `url.ParseRequestURI`, with its error texts (`parse "x": invalid URI for request`).
pub(crate) fn parse_request_uri(raw: &str) -> Result<Url, String> {
    let fail = |msg: &str| format!("parse {}: {msg}", quote(raw));
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err(fail("net/url: invalid control character in URL"));
    }
    if raw.is_empty() {
        return Err(fail("empty url"));
    }
    let (scheme, rest) = split_scheme(raw).map_err(|m| fail(&m))?;
    let (rest, raw_query) = match rest.split_once('?') {
        Some((r, q)) => (r, q.to_owned()),
        None => (rest, String::new()),
    };
    if !rest.starts_with('/') {
        if !scheme.is_empty() {
            // An opaque URL such as `mailto:x`.
            return Ok(Url {
                scheme,
                host: String::new(),
                path: String::new(),
                raw_query,
            });
        }
        return Err(fail("invalid URI for request"));
    }
    let (host, path) = if !scheme.is_empty() && rest.starts_with("//") {
        let authority_end = rest[2..].find('/').map_or(rest.len(), |i| i + 2);
        let authority = &rest[2..authority_end];
        let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        check_host(host).map_err(|m| fail(&m))?;
        (host.to_owned(), &rest[authority_end..])
    } else {
        (String::new(), rest)
    };
    check_escapes(path).map_err(|m| fail(&m))?;
    Ok(Url {
        scheme,
        host,
        path: path.to_owned(),
        raw_query,
    })
}

/// Go's `getScheme`: the scheme (lowercased) and the rest.
fn split_scheme(raw: &str) -> Result<(String, &str), String> {
    for (i, c) in raw.char_indices() {
        match c {
            'a'..='z' | 'A'..='Z' => {}
            '0'..='9' | '+' | '-' | '.' if i > 0 => {}
            ':' if i == 0 => return Err("missing protocol scheme".to_owned()),
            ':' => return Ok((raw[..i].to_ascii_lowercase(), &raw[i + 1..])),
            _ => return Ok((String::new(), raw)),
        }
    }
    Ok((String::new(), raw))
}

/// Go's `validOptionalPort` check of a host.
fn check_host(host: &str) -> Result<(), String> {
    let port = if let Some(rest) = host.strip_prefix('[') {
        match rest.find(']') {
            Some(i) => &rest[i + 1..],
            None => return Err("missing ']' in host".to_owned()),
        }
    } else {
        host.rfind(':').map_or("", |i| &host[i..])
    };
    if port.is_empty() || (port.starts_with(':') && port[1..].bytes().all(|b| b.is_ascii_digit())) {
        Ok(())
    } else {
        Err(format!("invalid port {} after host", quote(port)))
    }
}

fn check_escapes(s: &str) -> Result<(), String> {
    let b = s.as_bytes();
    for (i, _) in s.match_indices('%') {
        let ok = b.len() > i + 2 && b[i + 1].is_ascii_hexdigit() && b[i + 2].is_ascii_hexdigit();
        if !ok {
            let bad: String = s[i..].chars().take(3).collect();
            return Err(format!("invalid URL escape {}", quote(&bad)));
        }
    }
    Ok(())
}

/// Go's `QueryUnescape`, or `None` for a bad escape.
fn query_unescape(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = s.get(i + 1..i + 3)?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

fn url_arg<'a>(name: &str, args: &'a [Value]) -> Result<&'a Url, ExecutionError> {
    super::library::opaque(name, args, 0)
}

fn string(s: &str) -> Value {
    Value::String(Arc::new(s.to_owned()))
}

fn to_url_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    let Some(Value::String(s)) = args.first() else {
        return Err(no_such_overload("url", args));
    };
    let url = parse_request_uri(s).map_err(|e| {
        ExecutionError::function_error(
            "url",
            format!("URL parse error during conversion from string: {e}"),
        )
    })?;
    Ok(Value::Opaque(Arc::new(url)))
}
overload!(to_url => to_url_impl);

fn is_url_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    let Some(Value::String(s)) = args.first() else {
        return Err(no_such_overload("isURL", args));
    };
    Ok(Value::Bool(parse_request_uri(s).is_ok()))
}
overload!(is_url => is_url_impl);

fn get_scheme_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(string(&url_arg("getScheme", args)?.scheme))
}
overload!(get_scheme => get_scheme_impl);

fn get_host_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(string(&url_arg("getHost", args)?.host))
}
overload!(get_host => get_host_impl);

/// Go's `Hostname()` and `Port()`: the host split at its port, brackets removed.
fn split_host_port(host: &str) -> (&str, &str) {
    let colon = host.rfind(':');
    let port = match colon {
        Some(i)
            if host[i + 1..].bytes().all(|b| b.is_ascii_digit()) && !host[i..].contains(']') =>
        {
            &host[i + 1..]
        }
        _ => "",
    };
    let name = match colon {
        Some(i) if !port.is_empty() || host.ends_with(':') => &host[..i],
        _ => host,
    };
    let name = name
        .strip_prefix('[')
        .and_then(|n| n.strip_suffix(']'))
        .unwrap_or(name);
    (name, port)
}

fn get_hostname_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(string(
        split_host_port(&url_arg("getHostname", args)?.host).0,
    ))
}
overload!(get_hostname => get_hostname_impl);

fn get_port_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(string(split_host_port(&url_arg("getPort", args)?.host).1))
}
overload!(get_port => get_port_impl);

fn get_escaped_path_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(string(&url_arg("getEscapedPath", args)?.path))
}
overload!(get_escaped_path => get_escaped_path_impl);

/// Go's `Query()`: each key with its values in order; pairs that do not unescape are
/// dropped, as `ParseQuery` drops them.
fn get_query_impl(args: &[Value]) -> Result<Value, ExecutionError> {
    let url = url_arg("getQuery", args)?;
    let mut out: HashMap<String, Vec<Value>> = HashMap::new();
    for pair in url
        .raw_query
        .split('&')
        .filter(|p| !p.is_empty() && !p.contains(';'))
    {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if let (Some(k), Some(v)) = (query_unescape(k), query_unescape(v)) {
            out.entry(k).or_default().push(string(&v));
        }
    }
    let map: HashMap<Key, Value> = out
        .into_iter()
        .map(|(k, v)| (Key::String(Arc::new(k)), Value::List(Arc::new(v))))
        .collect();
    Ok(Value::Map(Map { map: Arc::new(map) }))
}
overload!(get_query => get_query_impl);

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::cel::tests::check_rules;

    /// Cases from upstream's `urls_test.go` and `library_test.go`.
    #[test]
    fn url_library() {
        let props = json!({ "u": { "type": "string" } });
        let obj = json!({ "u": "https://user:pass@example.com:8080/a%20b/c?x=1&x=2&y=a+b" });
        check_rules(
            props,
            obj,
            &[
                "isURL(self.u) && isURL('/absolute-path') && !isURL('relative') && !isURL('')",
                "url(self.u).getScheme() == 'https'",
                "url(self.u).getHost() == 'example.com:8080'",
                "url(self.u).getHostname() == 'example.com' && url(self.u).getPort() == '8080'",
                "url('https://[::1]:80/').getHostname() == '::1' && url('https://[::1]/').getPort() == ''",
                "url(self.u).getEscapedPath() == '/a%20b/c'",
                "url(self.u).getQuery() == {'x': ['1', '2'], 'y': ['a b']}",
                "url('/path').getScheme() == '' && url('/path').getHost() == ''",
                "!isURL('/a%👑') && !isURL('/a%zz')",
            ],
            &[(
                "url('x') == url('x')",
                "URL parse error during conversion from string: parse \"x\": invalid URI for request",
            )],
        );
    }
}
