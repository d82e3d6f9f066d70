//! The role's own non-resource routes (health, version, metrics, API Priority and Fairness'
//! debug dumps); everything else goes to
//! the delegate, as upstream's NonGoRestfulMux falls through to its NotFoundHandler.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::{Method, Request, Response};
use kas_apimachinery::Status;
use kas_endpoints::{Body, body, write_status};
use prometheus::Encoder;
use tower::{Service, ServiceExt};

use crate::Handler;
use crate::healthz::{Endpoint, Health};

#[derive(Clone)]
pub struct Router {
    inner: Arc<Routes>,
    delegate: Handler,
}

struct Routes {
    health: Health,
    registry: prometheus::Registry,
    version: Bytes,
    flow_control: Option<Arc<kas_flowcontrol::PriorityAndFairness>>,
}

impl Router {
    pub fn new(
        health: Health,
        registry: prometheus::Registry,
        flow_control: Option<Arc<kas_flowcontrol::PriorityAndFairness>>,
        delegate: Handler,
    ) -> Self {
        Router {
            inner: Arc::new(Routes {
                health,
                registry,
                version: Bytes::from(crate::version::Info::get().to_json()),
                flow_control,
            }),
            delegate,
        }
    }
}

fn health_route(path: &str) -> Option<(Endpoint, Option<&str>)> {
    for endpoint in [Endpoint::Healthz, Endpoint::Livez, Endpoint::Readyz] {
        let Some(rest) = path
            .strip_prefix('/')
            .and_then(|p| p.strip_prefix(endpoint.name()))
        else {
            continue;
        };
        match rest {
            "" => return Some((endpoint, None)),
            check if check.starts_with('/') && check.len() > 1 => {
                return Some((endpoint, Some(&check[1..])));
            }
            _ => {}
        }
    }
    None
}

impl Service<Request<Body>> for Router {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response<Body>, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<Body>) -> Self::Future {
        let routes = self.inner.clone();
        let path = req.uri().path();
        let apf_dump =
            routes.flow_control.is_some() && path.starts_with(kas_flowcontrol::debug::PREFIX);
        let local = matches!(*req.method(), Method::GET | Method::HEAD)
            && (health_route(path).is_some()
                || path == "/version"
                || path == "/metrics"
                || apf_dump);
        if !local {
            return Box::pin(self.delegate.clone().oneshot(req));
        }
        Box::pin(async move {
            let path = req.uri().path();
            if let Some((endpoint, check)) = health_route(path) {
                return Ok(routes
                    .health
                    .serve(endpoint, check, req.uri().query())
                    .await);
            }
            if path == "/version" {
                return Ok(json(routes.version.clone()));
            }
            if let Some(apf) = &routes.flow_control
                && path.starts_with(kas_flowcontrol::debug::PREFIX)
            {
                let query = req.uri().query().unwrap_or("");
                return Ok(
                    match kas_flowcontrol::debug::render(apf.controller(), path, query) {
                        // Go sniffs the content type of the plain text.
                        Some(text) => kas_endpoints::responsewriters::write_raw(
                            http::StatusCode::OK,
                            "text/plain; charset=utf-8",
                            text,
                        ),
                        None => kas_endpoints::responsewriters::http_error(
                            http::StatusCode::NOT_FOUND,
                            "404 page not found",
                        ),
                    },
                );
            }
            Ok(metrics(&routes.registry))
        })
    }
}

fn json(bytes: Bytes) -> Response<Body> {
    let mut resp = Response::new(body::full(bytes));
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    resp
}

fn metrics(registry: &prometheus::Registry) -> Response<Body> {
    let encoder = prometheus::TextEncoder::new();
    let mut buf = Vec::with_capacity(16 * 1024);
    if let Err(e) = encoder.encode(&registry.gather(), &mut buf) {
        return write_status(&Status::internal_error(&e.to_string()));
    }
    let mut resp = Response::new(body::full(buf));
    if let Ok(v) = http::HeaderValue::from_str(encoder.format_type()) {
        resp.headers_mut().insert(http::header::CONTENT_TYPE, v);
    }
    resp
}

/// The end of every delegation chain: upstream's not-found handler, Go's `http.NotFound`
/// (plain text `404 page not found`), for a path no role serves. Paths under a group
/// version a role serves get that role's JSON `Status` 404 instead (its router).
pub fn not_found() -> Handler {
    Handler::new(tower::service_fn(|_req: Request<Body>| async {
        Ok::<_, Infallible>(kas_endpoints::responsewriters::http_error(
            http::StatusCode::NOT_FOUND,
            "404 page not found",
        ))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn health_paths() {
        assert_eq!(health_route("/readyz"), Some((Endpoint::Readyz, None)));
        assert_eq!(
            health_route("/livez/ping"),
            Some((Endpoint::Livez, Some("ping")))
        );
        assert_eq!(health_route("/readyzz"), None);
        assert_eq!(health_route("/readyz/"), None);
        assert_eq!(health_route("/api"), None);
    }
}
