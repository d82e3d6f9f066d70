//! A span per request whose parent is the incoming W3C `traceparent`, so that one trace
//! shows every role a request crossed. Outermost after panic recovery.

use std::convert::Infallible;
use std::task::{Context, Poll};

use futures_util::future::BoxFuture;
use http::{Request, Response};
use kas_endpoints::Body;
use tower::{Layer, Service};
use tracing::Instrument;

#[derive(Clone)]
pub struct TraceLayer {
    component: &'static str,
}

impl TraceLayer {
    pub fn new(component: &'static str) -> Self {
        TraceLayer { component }
    }
}

impl<S> Layer<S> for TraceLayer {
    type Service = Trace<S>;
    fn layer(&self, inner: S) -> Trace<S> {
        Trace {
            inner,
            component: self.component,
        }
    }
}

#[derive(Clone)]
pub struct Trace<S> {
    inner: S,
    component: &'static str,
}

impl<S> Service<Request<Body>> for Trace<S>
where
    S: Service<Request<Body>, Response = Response<Body>, Error = Infallible> + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response<Body>, Infallible>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<Body>) -> Self::Future {
        let span = tracing::debug_span!(
            "HTTP",
            component = self.component,
            method = %req.method(),
            path = req.uri().path(),
        );
        crate::telemetry::set_parent_from_headers(&span, req.headers());
        let fut = self.inner.call(req);
        Box::pin(fut.instrument(span))
    }
}
