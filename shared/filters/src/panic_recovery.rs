//! `PanicRecoveryLayer`: upstream's `WithPanicRecovery` (server/filters/wrap.go).
//!
//! A panic before the response exists (in `call` or in its future) becomes upstream's 500,
//! written with Go's `http.Error`: plain text "This request caused apiserver to panic. Look
//! in the logs for details.". A panic while a response body streams (a watch, a long list)
//! cannot change a status already sent; it ends the body with an error so the server aborts
//! the stream, as Go's server does when a handler panics after writing headers.

use std::any::Any;
use std::convert::Infallible;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use http::{Method, Request, Response, StatusCode};
use http_body::{Body as HttpBody, Frame, SizeHint};
use kas_endpoints::{Body, BoxError, body};
use tower::{Layer, Service};

use crate::support::{http_error, request_uri};

const PANIC_MESSAGE: &str = "This request caused apiserver to panic. Look in the logs for details.";

#[derive(Clone, Copy, Debug, Default)]
pub struct PanicRecoveryLayer;

impl PanicRecoveryLayer {
    pub fn new() -> Self {
        PanicRecoveryLayer
    }
}

impl<S> Layer<S> for PanicRecoveryLayer {
    type Service = PanicRecovery<S>;

    fn layer(&self, inner: S) -> Self::Service {
        PanicRecovery { inner }
    }
}

#[derive(Clone, Debug)]
pub struct PanicRecovery<S> {
    inner: S,
}

impl<S> Service<Request<Body>> for PanicRecovery<S>
where
    S: Service<Request<Body>, Response = Response<Body>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response<Body>, Infallible>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<Body>) -> Self::Future {
        let method = req.method().clone();
        let uri = request_uri(&req);
        let fut = match catch_unwind(AssertUnwindSafe(|| self.inner.call(req))) {
            Ok(fut) => fut,
            Err(payload) => {
                log_panic(&method, &uri, payload.as_ref());
                return futures_util::future::ready(Ok(panic_response())).boxed();
            }
        };
        // Combinators rather than an async block: an async block holding `S::Future` trips
        // rustc's higher-ranked `Send` check (a known rustc limitation).
        AssertUnwindSafe(fut)
            .catch_unwind()
            .map(move |result| match result {
                Ok(Ok(resp)) => Ok(resp.map(|b| {
                    body::boxed(PanicSafeBody {
                        inner: b,
                        method,
                        uri,
                        done: false,
                    })
                })),
                Ok(Err(never)) => match never {},
                Err(payload) => {
                    log_panic(&method, &uri, payload.as_ref());
                    Ok(panic_response())
                }
            })
            .boxed()
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

fn log_panic(method: &Method, uri: &str, payload: &(dyn Any + Send)) {
    tracing::error!(%method, uri, panic = panic_text(payload), "apiserver panic'd on {method} {uri}");
}

/// Ends the body with an error, instead of unwinding through the server, when the handler's
/// stream panics.
struct PanicSafeBody {
    inner: Body,
    method: Method,
    uri: String,
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
    use crate::support::test_util::body_string;
    use http_body_util::{BodyExt, StreamBody};
    use tower::ServiceExt;

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
        let svc = PanicRecoveryLayer::new().layer(tower::service_fn(|_req: Request<Body>| async {
            Ok::<_, Infallible>(Response::new(body::full("ok")))
        }));
        let resp = svc.oneshot(req()).await.unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(body_string(resp).await, "ok");
    }

    #[tokio::test]
    async fn panic_in_future_becomes_500() {
        let svc = PanicRecoveryLayer::new().layer(tower::service_fn(|_req: Request<Body>| async {
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
        let svc = PanicRecoveryLayer::new().layer(PanicsInCall);
        assert_panic_500(svc.oneshot(req()).await.unwrap()).await;
    }

    #[tokio::test]
    async fn panic_while_streaming_ends_body_with_error() {
        let svc = PanicRecoveryLayer::new().layer(tower::service_fn(|_req: Request<Body>| async {
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
