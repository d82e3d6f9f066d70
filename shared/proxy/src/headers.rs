//! Headers a proxy passes on or not, after Go's `httputil.ReverseProxy` and upstream's
//! `httpstream.IsUpgradeRequest` and `removeCORSHeaders`.

use http::header::{self, HeaderMap, HeaderName, HeaderValue};

/// Go's `hopHeaders`: meaningful for one connection only.
fn is_hop_by_hop(name: &HeaderName) -> bool {
    *name == header::CONNECTION
        || *name == header::TE
        || *name == header::TRAILER
        || *name == header::TRANSFER_ENCODING
        || *name == header::UPGRADE
        || *name == header::PROXY_AUTHENTICATE
        || *name == header::PROXY_AUTHORIZATION
        || matches!(name.as_str(), "keep-alive" | "proxy-connection")
}

/// The CORS headers upstream's `corsRemovingTransport` drops from a backend's answer.
fn is_cors(name: &HeaderName) -> bool {
    *name == header::ACCESS_CONTROL_ALLOW_CREDENTIALS
        || *name == header::ACCESS_CONTROL_ALLOW_HEADERS
        || *name == header::ACCESS_CONTROL_ALLOW_METHODS
        || *name == header::ACCESS_CONTROL_ALLOW_ORIGIN
}

/// Removes the headers `doomed` picks, the map walked once (a proxied request or answer
/// usually has none to remove, so nothing is hashed or allocated then).
fn remove_where(headers: &mut HeaderMap, doomed: impl Fn(&HeaderName) -> bool) {
    let found: Vec<HeaderName> = headers.keys().filter(|n| doomed(n)).cloned().collect();
    for name in found {
        headers.remove(name);
    }
}

/// Whether `value` (a comma-separated header value) holds `token`, case-insensitively.
fn has_token(headers: &HeaderMap, name: header::HeaderName, token: &str) -> bool {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| t.trim().eq_ignore_ascii_case(token))
}

/// Upstream's `httpstream.IsUpgradeRequest`: a `Connection` header with the `upgrade`
/// token.
pub fn is_upgrade_request(headers: &HeaderMap) -> bool {
    has_token(headers, header::CONNECTION, "upgrade")
}

/// Go's `removeHopByHopHeaders`: the headers the `Connection` header names, then the
/// hop-by-hop ones.
pub fn remove_hop_by_hop(headers: &mut HeaderMap) {
    let named: Vec<String> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty())
        .collect();
    for name in named {
        headers.remove(name.as_str());
    }
    remove_where(headers, is_hop_by_hop);
}

/// What Go's reverse proxy sends on: the hop-by-hop headers dropped, `Te: trailers` kept
/// when the client said it.
pub(crate) fn outgoing(headers: &mut HeaderMap) {
    let trailers = has_token(headers, header::TE, "trailers");
    match headers.contains_key(header::CONNECTION) {
        true => remove_hop_by_hop(headers),
        false => remove_where(headers, is_hop_by_hop),
    }
    if trailers {
        headers.insert(header::TE, HeaderValue::from_static("trailers"));
    }
}

/// The hop-by-hop headers and, with `cors`, the CORS ones, in one walk: a backend's
/// answer on its way back.
pub(crate) fn incoming(headers: &mut HeaderMap, cors: bool) {
    if headers.contains_key(header::CONNECTION) {
        remove_hop_by_hop(headers);
    }
    remove_where(headers, |n| is_hop_by_hop(n) || (cors && is_cors(n)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hop_by_hop_headers_are_dropped_as_go_drops_them() {
        let mut h = HeaderMap::new();
        h.insert(
            "connection",
            HeaderValue::from_static("keep-alive, X-Custom"),
        );
        h.insert("x-custom", HeaderValue::from_static("hop"));
        h.insert("te", HeaderValue::from_static("gzip, trailers"));
        h.insert("upgrade", HeaderValue::from_static("websocket"));
        h.insert("proxy-authorization", HeaderValue::from_static("x"));
        h.insert("accept", HeaderValue::from_static("*/*"));
        assert!(!is_upgrade_request(&h));
        outgoing(&mut h);
        let mut names: Vec<&str> = h.keys().map(|k| k.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, ["accept", "te"]);
        assert_eq!(h["te"], "trailers");
    }

    #[test]
    fn upgrade_requests_name_upgrade_in_connection() {
        let mut h = HeaderMap::new();
        h.insert(
            "connection",
            HeaderValue::from_static("keep-alive, Upgrade"),
        );
        assert!(is_upgrade_request(&h));
        h.insert("connection", HeaderValue::from_static("upgraded"));
        assert!(!is_upgrade_request(&h));
    }
}
