//! Upstream's limit on a request's head: its secure server sets `MaxHeaderBytes: 1 << 20`,
//! and Go's HTTP/1 and HTTP/2 servers apply it as below, answering 431 before any handler
//! runs. The accept loop checks every request here, exactly; hyper's and h2's own limits
//! are set higher (`backstop`) and only catch heads far over it, with their own 431.

use http::{HeaderValue, Request, Response, StatusCode, Version, header};
use kas_endpoints::{Body, body};

/// Upstream's `MaxHeaderBytes`.
const MAX_HEADER_BYTES: usize = 1 << 20;
/// HTTP/2 counts 32 bytes per field beyond its name and value (RFC 7540 §6.5.2).
const H2_FIELD_OVERHEAD: usize = 32;
/// How far above the limits hyper and h2 stop reading (see `backstop`).
const BACKSTOP: usize = 64 * 1024;

const H1_TEXT: &str = "431 Request Header Fields Too Large";
const H2_HTML: &str = "<h1>HTTP Error 431</h1><p>Request Header Field(s) Too Large</p>";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HeaderLimits {
    /// HTTP/1: bytes of request line and headers. Go reads at most `MaxHeaderBytes`
    /// plus 4096 (its bufio slop) of them.
    pub h1_head: usize,
    /// HTTP/2: the header list size, each field (pseudo-headers too) its name, value and
    /// 32. Go advertises and enforces `MaxHeaderBytes` plus ten fields' 32.
    pub h2_list: usize,
}

impl HeaderLimits {
    /// Upstream's, for clients.
    pub const CLIENT: HeaderLimits = HeaderLimits {
        h1_head: MAX_HEADER_BYTES + 4096,
        h2_list: MAX_HEADER_BYTES + 10 * H2_FIELD_OVERHEAD,
    };

    /// Both limits raised by `headroom` bytes.
    pub const fn with_headroom(self, headroom: usize) -> HeaderLimits {
        HeaderLimits {
            h1_head: self.h1_head + headroom,
            h2_list: self.h2_list + headroom,
        }
    }

    /// hyper's HTTP/1 read buffer limit and h2's `SETTINGS_MAX_HEADER_LIST_SIZE`. hyper's
    /// buffer may overshoot its limit by what one read brings, so it cannot be the exact
    /// test; above these, hyper and h2 answer 431 with no body (h2 ends the connection
    /// over four times its limit, Go over its own).
    pub const fn backstop(self) -> HeaderLimits {
        self.with_headroom(BACKSTOP)
    }

    /// Go's answer when `req`'s head is over the limit: for HTTP/1 its plain-text 431,
    /// closing the connection; for HTTP/2 its HTML 431 on the stream.
    pub fn check<B>(&self, req: &Request<B>) -> Option<Response<Body>> {
        if req.version() == Version::HTTP_2 {
            (h2_list_size(req) > self.h2_list)
                .then(|| too_large(H2_HTML, "text/html; charset=utf-8", false))
        } else {
            (h1_head_size(req) > self.h1_head)
                .then(|| too_large(H1_TEXT, "text/plain; charset=utf-8", true))
        }
    }
}

/// Go writes the HTTP/1 answer itself with this content type; its HTTP/2 handler writes
/// the HTML and Go sniffs the type.
fn too_large(text: &'static str, content_type: &'static str, close: bool) -> Response<Body> {
    let mut resp = Response::new(body::full(text));
    *resp.status_mut() = StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE;
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    if close {
        resp.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    resp
}

/// The request line, `METHOD SP target SP HTTP/1.1 CRLF`, each `Name: value CRLF`, and
/// the final CRLF, as a client writes them.
fn h1_head_size<B>(req: &Request<B>) -> usize {
    let request_line = req.method().as_str().len() + 1 + target_len(req.uri()) + 1 + 8 + 2;
    let headers: usize = req
        .headers()
        .iter()
        .map(|(name, value)| name.as_str().len() + 2 + value.len() + 2)
        .sum();
    request_line + headers + 2
}

/// `:method`, `:scheme`, `:authority` and `:path`, then every field.
fn h2_list_size<B>(req: &Request<B>) -> usize {
    let field = |name: &str, value: usize| name.len() + value + H2_FIELD_OVERHEAD;
    let uri = req.uri();
    let mut size = field(":method", req.method().as_str().len());
    if let Some(scheme) = uri.scheme_str() {
        size += field(":scheme", scheme.len());
    }
    if let Some(authority) = uri.authority() {
        size += field(":authority", authority.as_str().len());
    }
    size += field(
        ":path",
        uri.path_and_query().map_or(0, |p| p.as_str().len()),
    );
    size + req
        .headers()
        .iter()
        .map(|(name, value)| field(name.as_str(), value.len()))
        .sum::<usize>()
}

/// The request target as sent: origin form (`/path?query`) or absolute form.
fn target_len(uri: &http::Uri) -> usize {
    let path = uri.path_and_query().map_or(1, |p| p.as_str().len());
    match (uri.scheme_str(), uri.authority()) {
        (Some(scheme), Some(authority)) => scheme.len() + 3 + authority.as_str().len() + path,
        _ => path,
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt;

    use super::*;

    fn request(version: Version, value_len: usize) -> Request<()> {
        Request::get("/api/v1/namespaces?limit=1")
            .version(version)
            .header("host", "127.0.0.1:6443")
            .header("x-big", "x".repeat(value_len))
            .body(())
            .unwrap()
    }

    #[test]
    fn sizes_count_what_goes_on_the_wire() {
        // "GET /api/v1/namespaces?limit=1 HTTP/1.1\r\n" "host: 127.0.0.1:6443\r\n"
        // "x-big: xxx\r\n" "\r\n"
        let req = request(Version::HTTP_11, 3);
        assert_eq!(h1_head_size(&req), 41 + 22 + 12 + 2);
        let req = Request::get("https://127.0.0.1:6443/api")
            .version(Version::HTTP_2)
            .header("x-big", "xxx")
            .body(())
            .unwrap();
        let expected = (7 + 3 + 32) + (7 + 5 + 32) + (10 + 14 + 32) + (5 + 4 + 32) + (5 + 3 + 32);
        assert_eq!(h2_list_size(&req), expected);
    }

    #[tokio::test]
    async fn over_the_limit_gets_gos_431_for_each_protocol() {
        let limits = HeaderLimits::CLIENT;
        // Just at each limit: accepted, as Go accepts it.
        let h1_base = h1_head_size(&request(Version::HTTP_11, 0));
        let at = request(Version::HTTP_11, limits.h1_head - h1_base);
        assert_eq!(h1_head_size(&at), limits.h1_head);
        assert!(limits.check(&at).is_none());
        let h2_base = h2_list_size(&request(Version::HTTP_2, 0));
        let at = request(Version::HTTP_2, limits.h2_list - h2_base);
        assert!(limits.check(&at).is_none());

        let over = limits
            .check(&request(Version::HTTP_11, limits.h1_head - h1_base + 1))
            .unwrap();
        assert_eq!(over.status(), 431);
        assert_eq!(over.headers()["content-type"], "text/plain; charset=utf-8");
        assert_eq!(over.headers()["connection"], "close");
        let text = over.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(text, H1_TEXT);

        let over = limits
            .check(&request(Version::HTTP_2, limits.h2_list - h2_base + 1))
            .unwrap();
        assert_eq!(over.status(), 431);
        assert_eq!(over.headers()["content-type"], "text/html; charset=utf-8");
        assert!(over.headers().get("connection").is_none());
        let html = over.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(html, H2_HTML);

        // A peer's connection has headroom.
        let peer = limits.with_headroom(100);
        assert!(
            peer.check(&request(Version::HTTP_2, limits.h2_list - h2_base + 1))
                .is_none()
        );
    }
}
