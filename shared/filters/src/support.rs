//! Small pieces the filters share: Go-compatible quoting, upstream's plain-text error
//! responses (the ones upstream writes with `http.Error` or `responsewriters.InternalError`
//! rather than as a `Status`), and a body that keeps a guard alive while it streams.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::header::{CONTENT_TYPE, HeaderValue};
use http::{Request, Response, StatusCode, Uri};
use http_body::{Body as HttpBody, Frame, SizeHint};
use kas_endpoints::{Body, BoxError, body};

pub(crate) const NOSNIFF: HeaderValue = HeaderValue::from_static("nosniff");
pub(crate) const X_CONTENT_TYPE_OPTIONS: &str = "x-content-type-options";

/// Go's `req.RequestURI` for an origin-form request: the path and query as received.
pub(crate) fn request_uri<B>(req: &Request<B>) -> String {
    uri_string(req.uri())
}

/// [`request_uri`] of a request's `Uri`.
pub(crate) fn uri_string(uri: &Uri) -> String {
    match uri.path_and_query() {
        Some(pq) => pq.as_str().to_string(),
        None => uri.to_string(),
    }
}

/// Go's `strconv.Quote` (what `%q` and `%#v` print for a string).
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0b' => out.push_str("\\v"),
            ' ' => out.push(' '),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() || c.is_whitespace() => {
                if (c as u32) < 0x10000 {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                } else {
                    out.push_str(&format!("\\U{:08x}", c as u32));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Upstream's `sanitizer`: keeps error text from looking like HTML.
pub(crate) fn sanitize(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Go's `http.Error(w, msg, code)`: plain text, `nosniff`, the message plus a newline.
pub(crate) fn http_error(code: StatusCode, msg: &str) -> Response<Body> {
    let mut resp = Response::new(body::full(format!("{msg}\n")));
    *resp.status_mut() = code;
    let h = resp.headers_mut();
    h.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    h.insert(X_CONTENT_TYPE_OPTIONS, NOSNIFF);
    resp
}

/// Upstream's `responsewriters.InternalError(w, req, err)`.
pub(crate) fn internal_error(request_uri: &str, err: &str) -> Response<Body> {
    let text = format!(
        "Internal Server Error: {}: {err}",
        go_quote(&sanitize(request_uri))
    );
    let mut resp = Response::new(body::full(text));
    *resp.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
    let h = resp.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    h.insert(X_CONTENT_TYPE_OPTIONS, NOSNIFF);
    resp
}

/// A body that holds `guard` until the body is dropped (hyper drops it once the last frame
/// is sent or the client goes away).
pub(crate) struct GuardedBody<G> {
    inner: Body,
    _guard: G,
}

impl<G: Send + 'static> GuardedBody<G> {
    pub(crate) fn wrap(inner: Body, guard: G) -> Body {
        body::boxed(GuardedBody {
            inner,
            _guard: guard,
        })
    }
}

// `Body` is a boxed, `Unpin` body; `G` is never pinned.
impl<G> Unpin for GuardedBody<G> {}

impl<G> HttpBody for GuardedBody<G> {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
pub(crate) mod test_util {
    use http_body_util::BodyExt;
    use kas_endpoints::Body;

    pub(crate) async fn body_string(resp: http::Response<Body>) -> String {
        let bytes = resp.into_body().collect().await.expect("body").to_bytes();
        String::from_utf8(bytes.to_vec()).expect("utf-8 body")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_quote_matches_strconv_quote() {
        assert_eq!(go_quote("/api/v1/pods?x=1"), r#""/api/v1/pods?x=1""#);
        assert_eq!(go_quote("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(go_quote("\n\t\x01\x7f"), r#""\n\t\x01\x7f""#);
        assert_eq!(go_quote("héllo"), "\"héllo\"");
        assert_eq!(go_quote("\u{a0}"), r#""\u00a0""#);
    }

    #[test]
    fn sanitize_escapes_html() {
        assert_eq!(
            sanitize("<a href='x'>&</a>"),
            "&lt;a href='x'&gt;&amp;&lt;/a&gt;"
        );
    }

    #[tokio::test]
    async fn http_error_is_go_http_error() {
        let resp = http_error(StatusCode::TOO_MANY_REQUESTS, "slow down");
        assert_eq!(resp.status(), 429);
        assert_eq!(resp.headers()[CONTENT_TYPE], "text/plain; charset=utf-8");
        assert_eq!(resp.headers()[X_CONTENT_TYPE_OPTIONS], "nosniff");
        assert_eq!(test_util::body_string(resp).await, "slow down\n");
    }

    #[tokio::test]
    async fn internal_error_quotes_and_sanitizes_the_uri() {
        let resp = internal_error("/x?<y>", "boom");
        assert_eq!(resp.status(), 500);
        assert_eq!(resp.headers()[CONTENT_TYPE], "text/plain");
        assert_eq!(
            test_util::body_string(resp).await,
            r#"Internal Server Error: "/x?&lt;y&gt;": boom"#
        );
    }

    #[tokio::test]
    async fn guarded_body_drops_guard_with_body() {
        let guard = std::sync::Arc::new(());
        let b = GuardedBody::wrap(body::full("hi"), guard.clone());
        assert_eq!(std::sync::Arc::strong_count(&guard), 2);
        drop(b);
        assert_eq!(std::sync::Arc::strong_count(&guard), 1);
    }
}
