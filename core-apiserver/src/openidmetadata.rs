//! The service-account issuer's OIDC discovery routes, after upstream's
//! `pkg/routes/openidmetadata.go`: `GET /.well-known/openid-configuration` and
//! `GET /openid/v1/jwks`, pre-rendered, with a public cache lifetime of an hour. A tower
//! service in front of the rest of the role's routes; other paths pass through.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_util::future::BoxFuture;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use kas_auth::authentication::serviceaccount::OpenIdMetadata;
use kas_auth::authentication::serviceaccount::openidmetadata::{
    CACHE_CONTROL, JWKS_PATH, MIME_JWKS, OPENID_CONFIG_PATH,
};
use kas_endpoints::Body;
use kas_endpoints::responsewriters::write_raw;
use tower::{Service, ServiceExt};

#[derive(Clone)]
pub struct OpenIdRoutes<S> {
    metadata: Option<Arc<OpenIdMetadata>>,
    next: S,
}

impl<S> OpenIdRoutes<S> {
    /// Serves `metadata` when there is one; without, every request goes to `next`.
    pub fn new(metadata: Option<Arc<OpenIdMetadata>>, next: S) -> Self {
        OpenIdRoutes { metadata, next }
    }
}

/// The answer for `path`, when it is one of the discovery routes.
pub fn serve(metadata: &OpenIdMetadata, method: &Method, path: &str) -> Option<Response<Body>> {
    let (bytes, content_type) = match path {
        OPENID_CONFIG_PATH => (&metadata.config_json, "application/json"),
        JWKS_PATH => (&metadata.keyset_json, MIME_JWKS),
        _ => return None,
    };
    if method != Method::GET {
        // go-restful's answer for a route without the method.
        return Some(write_raw(
            StatusCode::METHOD_NOT_ALLOWED,
            "text/plain; charset=utf-8",
            "405: Method Not Allowed",
        ));
    }
    let mut resp = write_raw(StatusCode::OK, content_type, bytes.clone());
    resp.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(CACHE_CONTROL),
    );
    Some(resp)
}

impl<S> Service<Request<Body>> for OpenIdRoutes<S>
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
        if let Some(resp) = self
            .metadata
            .as_deref()
            .and_then(|m| serve(m, req.method(), req.uri().path()))
        {
            return Box::pin(std::future::ready(Ok(resp)));
        }
        Box::pin(self.next.clone().oneshot(req))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata() -> OpenIdMetadata {
        OpenIdMetadata {
            config_json: b"{\"issuer\":\"https://i\"}".to_vec(),
            keyset_json: b"{\"keys\":[]}".to_vec(),
        }
    }

    #[test]
    fn discovery_routes_with_upstreams_headers() {
        let md = metadata();
        let resp = serve(&md, &Method::GET, "/.well-known/openid-configuration").unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        assert_eq!(resp.headers()[header::CONTENT_TYPE], "application/json");
        assert_eq!(
            resp.headers()[header::CACHE_CONTROL],
            "public, max-age=3600"
        );
        let resp = serve(&md, &Method::GET, "/openid/v1/jwks").unwrap();
        assert_eq!(
            resp.headers()[header::CONTENT_TYPE],
            "application/jwk-set+json"
        );
        assert_eq!(
            resp.headers()[header::CACHE_CONTROL],
            "public, max-age=3600"
        );
        let resp = serve(&md, &Method::POST, "/openid/v1/jwks").unwrap();
        assert_eq!(resp.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert!(serve(&md, &Method::GET, "/openid/v1/jwks/").is_none());
        assert!(serve(&md, &Method::GET, "/api").is_none());
    }
}
