//! `with_request_info`: upstream's `WithRequestInfo` (endpoints/filters/requestinfo.go).
//!
//! Parses what the request is about once and hands the `RequestInfo` to every later filter
//! and handler as a request extension. Our factory cannot fail, so the upstream 500 for a
//! factory error has no counterpart here.

use std::sync::Arc;

use http::Request;
use kas_endpoints::{Body, RequestInfoFactory};

use crate::filter::{Inner, Next, NextFuture};

pub fn with_request_info<S: Inner>(
    factory: Arc<RequestInfoFactory>,
    mut req: Request<Body>,
    next: Next<S>,
) -> NextFuture<S> {
    let info = factory.new_request_info(req.method(), req.uri());
    req.extensions_mut().insert(info);
    next.run(req)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::from_fn_with_state;
    use http::Response;
    use kas_endpoints::{RequestInfo, body};
    use std::convert::Infallible;
    use tower::{Layer, ServiceExt};

    #[tokio::test]
    async fn inserts_request_info() {
        let svc = from_fn_with_state(Arc::new(RequestInfoFactory::default()), with_request_info)
            .layer(tower::service_fn(|req: Request<Body>| async move {
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
            }));
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
        let svc = from_fn_with_state(Arc::new(factory), with_request_info).layer(
            tower::service_fn(move |req: Request<Body>| {
                let expected = expected.clone();
                async move {
                    assert_eq!(req.extensions().get::<RequestInfo>(), Some(&expected));
                    Ok::<_, Infallible>(Response::new(body::empty()))
                }
            }),
        );
        let req = Request::get(uri).body(body::empty()).unwrap();
        assert_eq!(svc.oneshot(req).await.unwrap().status(), 200);
    }
}
