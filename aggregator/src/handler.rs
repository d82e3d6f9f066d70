//! The aggregator's handler behind its filter chain, after upstream's aggregator mux, in
//! one dispatch: the discovery documents (`/apis`, `/apis/<group>` of a group with
//! APIServices) and `/openapi/...`, answered for any method as upstream's handlers; the
//! apiregistration.k8s.io group, to the aggregator's own API; the group versions of
//! service-backed APIServices, to the proxy; everything else to the delegates (`next`).
//!
//! Nearly every request takes the last way, so it costs a few prefix checks, one table
//! lookup for `/apis/...` paths, and the delegate's own call: no clone of a service, no
//! future boxed on the way (the server boxes this handler's future once).

use std::convert::Infallible;
use std::task::{Context, Poll};

use futures_util::future::{BoxFuture, Either};
use http::{Request, Response};
use kas_endpoints::Body;
use tower::{Service, ServiceExt};

use crate::apiservice::GROUP;
use crate::discovery::Discovery;
use crate::openapi::OpenApi;
use crate::proxy::AggregatedProxy;

/// `own` serves the aggregator's own group, `next` what no APIService's server takes.
#[derive(Clone)]
pub struct Aggregator<A, N> {
    pub discovery: Discovery,
    pub openapi: OpenApi,
    pub own: A,
    pub proxy: AggregatedProxy,
    pub next: N,
}

/// Whether the aggregator answers `path` itself (`/apis` and the OpenAPI documents are
/// answered before).
pub fn is_own(path: &str) -> bool {
    path.strip_prefix("/apis/")
        .and_then(|rest| rest.strip_prefix(GROUP))
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

type Answer = BoxFuture<'static, Result<Response<Body>, Infallible>>;

impl<A, N> Service<Request<Body>> for Aggregator<A, N>
where
    A: Service<Request<Body>, Response = Response<Body>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    A::Future: Send + 'static,
    N: Service<Request<Body>, Response = Response<Body>, Error = Infallible>,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Either<N::Future, Answer>;

    /// The delegate's readiness: the common way calls it on this very service.
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.next.poll_ready(cx)
    }

    fn call(&mut self, req: Request<Body>) -> Self::Future {
        if let Some(resp) = self.discovery.serve(&req) {
            return Either::Right(Box::pin(std::future::ready(Ok(resp))));
        }
        if let Some(answer) = self.openapi.serve(&req) {
            return Either::Right(Box::pin(async move { Ok(answer.await) }));
        }
        if is_own(req.uri().path()) {
            return Either::Right(Box::pin(self.own.clone().oneshot(req)));
        }
        match self.proxy.find(req.uri().path()) {
            Some(target) => Either::Right(self.proxy.serve(target, req)),
            None => Either::Left(self.next.call(req)),
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
