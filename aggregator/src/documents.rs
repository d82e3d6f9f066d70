//! The aggregator's discovery and OpenAPI documents in its request path: a tower service
//! in front of the aggregator's handler (`handler::Aggregation`) that answers `/apis`, `/apis/<group>` of a group
//! with APIServices (`discovery`) and `/openapi/...` (`openapi`), for any method as
//! upstream's handlers, and passes everything else on.

use std::convert::Infallible;
use std::task::{Context, Poll};

use futures_util::future::BoxFuture;
use http::{Request, Response};
use kas_endpoints::Body;
use tower::{Service, ServiceExt};

use crate::discovery::Discovery;
use crate::openapi::OpenApi;

#[derive(Clone)]
pub struct Documents<S> {
    pub discovery: Discovery,
    pub openapi: OpenApi,
    pub next: S,
}

impl<S> Service<Request<Body>> for Documents<S>
where
    S: Service<Request<Body>, Response = Response<Body>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response<Body>, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<Body>) -> Self::Future {
        if let Some(resp) = self.discovery.serve(&req) {
            return Box::pin(std::future::ready(Ok(resp)));
        }
        match self.openapi.serve(&req) {
            Some(answer) => Box::pin(async move { Ok(answer.await) }),
            None => Box::pin(self.next.clone().oneshot(req)),
        }
    }
}
