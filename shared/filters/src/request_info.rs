//! `RequestInfoLayer`: upstream's `WithRequestInfo` (endpoints/filters/requestinfo.go).
//!
//! Parses what the request is about once and hands the `RequestInfo` to every later filter
//! and handler as a request extension. Our factory cannot fail, so the upstream 500 for a
//! factory error has no counterpart here.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::{Request, Response};
use kas_endpoints::{Body, RequestInfoFactory};
use tower::{Layer, Service};

#[derive(Clone, Debug)]
pub struct RequestInfoLayer {
    factory: Arc<RequestInfoFactory>,
}

impl RequestInfoLayer {
    pub fn new(factory: RequestInfoFactory) -> Self {
        RequestInfoLayer {
            factory: Arc::new(factory),
        }
    }
}

impl<S> Layer<S> for RequestInfoLayer {
    type Service = RequestInfoFilter<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RequestInfoFilter {
            inner,
            factory: self.factory.clone(),
        }
    }
}

/// Named `RequestInfoFilter` rather than `RequestInfo` so it does not clash with the
/// `RequestInfo` it produces.
#[derive(Clone, Debug)]
pub struct RequestInfoFilter<S> {
    inner: S,
    factory: Arc<RequestInfoFactory>,
}

impl<S> Service<Request<Body>> for RequestInfoFilter<S>
where
    S: Service<Request<Body>, Response = Response<Body>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<Body>) -> Self::Future {
        let info = self.factory.new_request_info(req.method(), req.uri());
        req.extensions_mut().insert(info);
        self.inner.call(req)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kas_endpoints::{RequestInfo, body};
    use tower::ServiceExt;

    #[tokio::test]
    async fn inserts_request_info() {
        let svc = RequestInfoLayer::new(RequestInfoFactory::default()).layer(tower::service_fn(
            |req: Request<Body>| async move {
                let info = req
                    .extensions()
                    .get::<RequestInfo>()
                    .cloned()
                    .expect("RequestInfo");
                let text = format!(
                    "{}|{}|{}|{}|{}|{}",
                    info.verb,
                    info.api_group,
                    info.api_version,
                    info.namespace,
                    info.resource,
                    info.name
                );
                Ok::<_, Infallible>(Response::new(body::full(text)))
            },
        ));
        let req = Request::get("/apis/apps/v1/namespaces/ns1/deployments/d1")
            .body(body::empty())
            .unwrap();
        let resp = svc.oneshot(req).await.unwrap();
        assert_eq!(
            crate::support::test_util::body_string(resp).await,
            "get|apps|v1|ns1|deployments|d1"
        );
    }

    #[tokio::test]
    async fn matches_the_factory() {
        let factory = RequestInfoFactory::default();
        let uri: http::Uri = "/api/v1/namespaces/default/pods?watch=true"
            .parse()
            .unwrap();
        let expected = factory.new_request_info(&http::Method::GET, &uri);
        let svc =
            RequestInfoLayer::new(factory).layer(tower::service_fn(move |req: Request<Body>| {
                let expected = expected.clone();
                async move {
                    assert_eq!(req.extensions().get::<RequestInfo>(), Some(&expected));
                    Ok::<_, Infallible>(Response::new(body::empty()))
                }
            }));
        let req = Request::get(uri).body(body::empty()).unwrap();
        assert_eq!(svc.oneshot(req).await.unwrap().status(), 200);
    }
}
