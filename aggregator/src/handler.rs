//! The aggregator's handler behind its filter chain and its discovery and OpenAPI
//! documents (`documents`), after upstream's aggregator mux: what the aggregator serves
//! itself (the apiregistration.k8s.io group) goes to its own API; every other request goes
//! straight to the proxy (service-backed APIServices) and the delegates behind it, without
//! matching it against the aggregator's own routes first: that is the path of nearly every
//! request.

use std::convert::Infallible;
use std::task::{Context, Poll};

use futures_util::future::BoxFuture;
use http::{Request, Response};
use kas_endpoints::Body;
use tower::{Service, ServiceExt};

use crate::apiservice::GROUP;

/// `own` serves the aggregator's own paths; `proxy` everything else.
#[derive(Clone)]
pub struct Aggregation<A, P> {
    pub own: A,
    pub proxy: P,
}

/// Whether the aggregator answers `path` itself (`/apis` and the OpenAPI documents are
/// answered in front of this handler).
pub fn is_own(path: &str) -> bool {
    path.strip_prefix("/apis/")
        .and_then(|rest| rest.strip_prefix(GROUP))
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

impl<A, P> Service<Request<Body>> for Aggregation<A, P>
where
    A: Service<Request<Body>, Response = Response<Body>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    A::Future: Send + 'static,
    P: Service<Request<Body>, Response = Response<Body>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    P::Future: Send + 'static,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response<Body>, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<Body>) -> Self::Future {
        if is_own(req.uri().path()) {
            Box::pin(self.own.clone().oneshot(req))
        } else {
            Box::pin(self.proxy.clone().oneshot(req))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_paths() {
        for own in [
            "/apis/apiregistration.k8s.io",
            "/apis/apiregistration.k8s.io/v1/apiservices",
        ] {
            assert!(is_own(own), "{own}");
        }
        for other in [
            "/api/v1/namespaces",
            "/apis/apps/v1/deployments",
            "/apis/apiregistration.k8s.io.example.com/v1",
            "/apis/apps",
            "/openapi/v3/apis/apps/v1",
            "/healthz",
        ] {
            assert!(!is_own(other), "{other}");
        }
    }
}
