//! Reading a request body with a size limit, after upstream's `limitedReadBody`
//! (handlers/rest.go): read at most `limit + 1` bytes; having got that many means the body
//! is too large (413 `Request entity too large: limit is <limit>`).

use bytes::{Bytes, BytesMut};
use http_body::Body as _;
use http_body_util::BodyExt;
use kas_apimachinery::{Status, StatusReason};

use crate::Body;

/// Upstream's default `MaxRequestBodyBytes` (3 MiB).
pub const DEFAULT_MAX_REQUEST_BODY_BYTES: usize = 3 * 1024 * 1024;

/// Upstream `NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", limit))`.
pub fn too_large(limit: usize) -> Status {
    Status::request_entity_too_large(&format!("limit is {limit}"))
}

/// Reads `body` whole, or fails with 413 once it exceeds `limit` bytes. As upstream, a limit
/// of 0 means no limit. A body whose declared length (`Content-Length`) already exceeds the
/// limit is refused before reading; otherwise at most `limit + 1` bytes are kept (the frame
/// that crosses the limit is dropped as soon as it is seen).
///
/// A failing body becomes what upstream's `ErrorToAPIStatus` makes of a plain error: a 500
/// whose message is the error's text and whose reason is empty.
pub async fn read_body(body: Body, limit: usize) -> Result<Bytes, Status> {
    let mut body = body;
    if limit > 0 && body.size_hint().lower() > limit as u64 {
        return Err(too_large(limit));
    }
    let mut buf = BytesMut::new();
    let mut first: Option<Bytes> = None;
    while let Some(frame) = body.frame().await {
        let frame =
            frame.map_err(|e| Status::failure(500, StatusReason::Unknown, e.to_string()))?;
        let Ok(data) = frame.into_data() else {
            continue; // trailers carry no body bytes
        };
        if data.is_empty() {
            continue;
        }
        let held = first.as_ref().map_or(0, Bytes::len) + buf.len();
        if limit > 0 && held + data.len() > limit {
            return Err(too_large(limit));
        }
        // A body of one frame (the common case) is returned without copying.
        match first.take() {
            None if buf.is_empty() => first = Some(data),
            Some(prev) => {
                buf.extend_from_slice(&prev);
                buf.extend_from_slice(&data);
            }
            None => buf.extend_from_slice(&data),
        }
    }
    Ok(first.unwrap_or_else(|| buf.freeze()))
}

#[cfg(test)]
mod tests {
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use bytes::Bytes;
    use http_body::{Frame, SizeHint};
    use kas_apimachinery::StatusReason;

    use super::*;
    use crate::{BoxError, body};

    /// A body yielding the given frames (an `Err` entry becomes a body error) and counting
    /// how many frames were polled.
    struct Frames {
        frames: std::collections::VecDeque<Result<Frame<Bytes>, String>>,
        polled: std::sync::Arc<std::sync::atomic::AtomicUsize>,
        hint: Option<u64>,
    }

    impl http_body::Body for Frames {
        type Data = Bytes;
        type Error = BoxError;
        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
            self.polled
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Poll::Ready(self.frames.pop_front().map(|f| f.map_err(BoxError::from)))
        }
        fn size_hint(&self) -> SizeHint {
            self.hint.map(SizeHint::with_exact).unwrap_or_default()
        }
    }

    fn frames(
        parts: Vec<Result<Frame<Bytes>, String>>,
        hint: Option<u64>,
    ) -> (Body, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        let polled = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let body = Body::new(Frames {
            frames: parts.into(),
            polled: polled.clone(),
            hint,
        });
        (body, polled)
    }

    fn data(s: &str) -> Result<Frame<Bytes>, String> {
        Ok(Frame::data(Bytes::copy_from_slice(s.as_bytes())))
    }

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        // The bodies here never pend, so polling once with a no-op waker completes them.
        let mut f = std::pin::pin!(f);
        let mut cx = Context::from_waker(std::task::Waker::noop());
        match f.as_mut().poll(&mut cx) {
            Poll::Ready(v) => v,
            Poll::Pending => panic!("test body pended"),
        }
    }

    #[test]
    fn reads_whole_body_under_limit() {
        let (b, _) = frames(vec![data("ab"), data(""), data("cd"), data("e")], None);
        assert_eq!(
            block_on(read_body(b, 10)).unwrap(),
            Bytes::from_static(b"abcde")
        );
    }

    #[test]
    fn single_frame_and_empty_bodies() {
        let got = block_on(read_body(body::full("hello"), 5)).unwrap();
        assert_eq!(got, Bytes::from_static(b"hello"));
        assert!(block_on(read_body(body::empty(), 5)).unwrap().is_empty());
    }

    #[test]
    fn exactly_the_limit_is_allowed() {
        let (b, _) = frames(vec![data("abc"), data("de")], None);
        assert_eq!(block_on(read_body(b, 5)).unwrap().len(), 5);
    }

    #[test]
    fn one_byte_over_is_413_with_upstream_message() {
        let (b, polled) = frames(vec![data("abc"), data("def"), data("never")], None);
        let err = block_on(read_body(b, 5)).unwrap_err();
        assert_eq!(err.code, 413);
        assert_eq!(err.reason, Some(StatusReason::RequestEntityTooLarge));
        assert_eq!(
            err.message.as_deref(),
            Some("Request entity too large: limit is 5")
        );
        // It stopped at the frame that crossed the limit.
        assert_eq!(polled.load(std::sync::atomic::Ordering::SeqCst), 2);
    }

    #[test]
    fn default_limit_message() {
        let err = too_large(DEFAULT_MAX_REQUEST_BODY_BYTES);
        assert_eq!(
            err.message.as_deref(),
            Some("Request entity too large: limit is 3145728")
        );
        let big = vec![b'x'; DEFAULT_MAX_REQUEST_BODY_BYTES + 1];
        let err = block_on(read_body(body::full(big), DEFAULT_MAX_REQUEST_BODY_BYTES)).unwrap_err();
        assert_eq!(err.code, 413);
    }

    #[test]
    fn declared_length_over_limit_is_refused_before_reading() {
        let (b, polled) = frames(vec![data("x")], Some(100));
        assert_eq!(block_on(read_body(b, 10)).unwrap_err().code, 413);
        assert_eq!(polled.load(std::sync::atomic::Ordering::SeqCst), 0);
    }

    #[test]
    fn zero_limit_means_unlimited() {
        let (b, _) = frames(vec![data("abc"), data("def")], Some(6));
        assert_eq!(
            block_on(read_body(b, 0)).unwrap(),
            Bytes::from_static(b"abcdef")
        );
    }

    #[test]
    fn body_error_is_500_without_reason() {
        let (b, _) = frames(vec![data("ab"), Err("unexpected EOF".to_owned())], None);
        let err = block_on(read_body(b, 10)).unwrap_err();
        assert_eq!(err.code, 500);
        assert_eq!(err.message.as_deref(), Some("unexpected EOF"));
        let json = String::from_utf8(err.to_json()).unwrap();
        assert!(!json.contains("reason"), "{json}");
    }

    #[test]
    fn trailers_are_skipped() {
        let trailers = Ok(Frame::trailers(http::HeaderMap::new()));
        let (b, _) = frames(vec![data("ab"), trailers], None);
        assert_eq!(
            block_on(read_body(b, 10)).unwrap(),
            Bytes::from_static(b"ab")
        );
    }
}
