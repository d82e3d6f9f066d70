//! `with_panic_recovery`: upstream's `WithPanicRecovery` (server/filters/wrap.go).
//!
//! A panic before the response exists (in `call` or in its future) becomes upstream's 500,
//! written with Go's `http.Error`: plain text "This request caused apiserver to panic. Look
//! in the logs for details.". A panic while a response body streams (a watch, a long list)
//! cannot change a status already sent; it ends the body with an error so the server aborts
//! the stream, as Go's server does when a handler panics after writing headers.

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::FutureExt;
use http::{Method, Request, Response, StatusCode, Uri};
use http_body::{Body as HttpBody, Frame, SizeHint};
use kas_endpoints::{Body, BoxError, body};

use crate::filter::{Inner, Next};
use crate::support::{http_error, uri_string};

const PANIC_MESSAGE: &str = "This request caused apiserver to panic. Look in the logs for details.";

/// A panic anywhere below, in a filter, a handler or a response body, is caught here.
pub fn with_panic_recovery<S: Inner>(
    req: Request<Body>,
    next: Next<S>,
) -> impl Future<Output = Response<Body>> {
    // For the log line only: a clone of the `Uri` shares its bytes, formatted only on a panic.
    let method = req.method().clone();
    let uri = req.uri().clone();
    // `run` starts the rest of the chain, whose future is polled after: both may panic.
    let answer = catch_unwind(AssertUnwindSafe(|| next.run(req)));
    async move {
        let answer = match answer {
            Ok(answer) => AssertUnwindSafe(answer).catch_unwind().await,
            Err(payload) => Err(payload),
        };
        match answer {
            Ok(resp) => resp.map(|b| {
                body::boxed(PanicSafeBody {
                    inner: b,
                    method,
                    uri,
                    done: false,
                })
            }),
            Err(payload) => {
                log_panic(&method, &uri, payload.as_ref());
                panic_response()
            }
        }
    }
}

fn panic_response() -> Response<Body> {
    http_error(StatusCode::INTERNAL_SERVER_ERROR, PANIC_MESSAGE)
}

fn panic_text(payload: &(dyn Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "<non-string panic payload>"
    }
}

fn log_panic(method: &Method, uri: &Uri, payload: &(dyn Any + Send)) {
    let uri = uri_string(uri);
    tracing::error!(%method, uri, panic = panic_text(payload), "apiserver panic'd on {method} {uri}");
}

/// Ends the body with an error, instead of unwinding through the server, when the handler's
/// stream panics.
struct PanicSafeBody {
    inner: Body,
    method: Method,
    uri: Uri,
    done: bool,
}

impl HttpBody for PanicSafeBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        if self.done {
            return Poll::Ready(None);
        }
        let this = &mut *self;
        match catch_unwind(AssertUnwindSafe(|| {
            Pin::new(&mut this.inner).poll_frame(cx)
        })) {
            Ok(poll) => poll,
            Err(payload) => {
                this.done = true;
                log_panic(&this.method, &this.uri, payload.as_ref());
                Poll::Ready(Some(Err(PANIC_MESSAGE.into())))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.done || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::from_fn;
    use crate::support::test_util::body_string;
    use http_body_util::{BodyExt, StreamBody};
    use std::convert::Infallible;
    use tower::{Layer, Service, ServiceExt};

    fn req() -> Request<Body> {
        Request::get("/api/v1/pods").body(body::empty()).unwrap()
    }

    async fn assert_panic_500(resp: Response<Body>) {
        assert_eq!(resp.status(), 500);
        assert_eq!(resp.headers()["content-type"], "text/plain; charset=utf-8");
        assert_eq!(resp.headers()["x-content-type-options"], "nosniff");
        assert_eq!(
            body_string(resp).await,
            "This request caused apiserver to panic. Look in the logs for details.\n"
        );
    }

    #[tokio::test]
    async fn passes_responses_through() {
        let svc =
            from_fn(with_panic_recovery).layer(tower::service_fn(|_req: Request<Body>| async {
                Ok::<_, Infallible>(Response::new(body::full("ok")))
            }));
        let resp = svc.oneshot(req()).await.unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(body_string(resp).await, "ok");
    }

    #[tokio::test]
    async fn panic_in_future_becomes_500() {
        let svc =
            from_fn(with_panic_recovery).layer(tower::service_fn(|_req: Request<Body>| async {
                if true {
                    panic!("handler exploded");
                }
                Ok::<_, Infallible>(Response::new(body::empty()))
            }));
        assert_panic_500(svc.oneshot(req()).await.unwrap()).await;
    }

    #[derive(Clone)]
    struct PanicsInCall;

    impl Service<Request<Body>> for PanicsInCall {
        type Response = Response<Body>;
        type Error = Infallible;
        type Future = futures_util::future::Ready<Result<Response<Body>, Infallible>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, _: Request<Body>) -> Self::Future {
            std::panic::panic_any(String::from("synchronous panic"))
        }
    }

    #[tokio::test]
    async fn panic_in_call_becomes_500() {
        let svc = from_fn(with_panic_recovery).layer(PanicsInCall);
        assert_panic_500(svc.oneshot(req()).await.unwrap()).await;
    }

    #[tokio::test]
    async fn panic_while_streaming_ends_body_with_error() {
        let svc =
            from_fn(with_panic_recovery).layer(tower::service_fn(|_req: Request<Body>| async {
                let mut sent = false;
                let stream = futures_util::stream::poll_fn(move |_| {
                    if sent {
                        panic!("watch exploded");
                    }
                    sent = true;
                    Poll::Ready(Some(Ok::<_, BoxError>(Frame::data(Bytes::from_static(
                        b"event",
                    )))))
                });
                Ok::<_, Infallible>(Response::new(body::boxed(StreamBody::new(stream))))
            }));
        let resp = svc.oneshot(req()).await.unwrap();
        assert_eq!(resp.status(), 200);
        let mut b = resp.into_body();
        let first = b.frame().await.unwrap().unwrap().into_data().unwrap();
        assert_eq!(first, Bytes::from_static(b"event"));
        let err = b.frame().await.unwrap().unwrap_err();
        assert_eq!(err.to_string(), PANIC_MESSAGE);
        assert!(b.frame().await.is_none());
    }
}
