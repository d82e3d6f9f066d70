//! Small pieces the filters share: the request URI as Go sees it, and a body that keeps a
//! guard alive while it streams. Go's quoting and upstream's plain-text error responses
//! (`http.Error`, `responsewriters.InternalError`) have their homes in kas-apimachinery
//! and kas-endpoints; the filters reach them through the names below.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::header::HeaderValue;
use http::{Request, Uri};
use http_body::{Body as HttpBody, Frame, SizeHint};
pub(crate) use kas_apimachinery::golang::strconv::quote as go_quote;
pub(crate) use kas_endpoints::responsewriters::{http_error, internal_error, sanitize};
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

    #[tokio::test]
    async fn guarded_body_drops_guard_with_body() {
        let guard = std::sync::Arc::new(());
        let b = GuardedBody::wrap(body::full("hi"), guard.clone());
        assert_eq!(std::sync::Arc::strong_count(&guard), 2);
        drop(b);
        assert_eq!(std::sync::Arc::strong_count(&guard), 1);
    }
}
