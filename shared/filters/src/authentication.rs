//! `AuthenticationLayer`: upstream's `WithAuthentication` with the `Unauthorized` failure
//! handler (endpoints/filters/authentication.go).
//!
//! On success the user travels on as a `UserInfo` extension and the credentials leave the
//! request: `Authorization`, the standard front-proxy headers (`X-Remote-User`,
//! `X-Remote-Uid`, `X-Remote-Group`, `X-Remote-Extra-*`) and whatever else the authenticator
//! consumed. No user, or an error, is upstream's 401 Status with message "Unauthorized".

use std::convert::Infallible;
use std::task::{Context, Poll};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use http::header::AUTHORIZATION;
use http::{HeaderMap, Request, Response};
use kas_apimachinery::Status;
use kas_auth::authentication::{AuthRequest, DynAuthenticator, PeerCertificates};
use kas_endpoints::{Body, write_status};
use tower::{Layer, Service};

/// Front-proxy headers upstream strips from every authenticated request.
const FRONT_PROXY_HEADERS: [&str; 3] = ["x-remote-user", "x-remote-uid", "x-remote-group"];
const FRONT_PROXY_EXTRA_PREFIX: &str = "x-remote-extra-";

#[derive(Clone)]
pub struct AuthenticationLayer {
    authenticator: DynAuthenticator,
}

impl AuthenticationLayer {
    pub fn new(authenticator: DynAuthenticator) -> Self {
        AuthenticationLayer { authenticator }
    }
}

impl<S> Layer<S> for AuthenticationLayer {
    type Service = Authentication<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Authentication {
            inner,
            authenticator: self.authenticator.clone(),
        }
    }
}

#[derive(Clone)]
pub struct Authentication<S> {
    inner: S,
    authenticator: DynAuthenticator,
}

impl<S> Service<Request<Body>> for Authentication<S>
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

    fn call(&mut self, mut req: Request<Body>) -> Self::Future {
        // Call the instance that was polled ready; leave a fresh clone in its place.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let authenticator = self.authenticator.clone();
        async move {
            let result = {
                let auth_req = AuthRequest {
                    path: req.uri().path(),
                    headers: req.headers(),
                    peer_certificates: req.extensions().get::<PeerCertificates>(),
                };
                authenticator.authenticate(&auth_req).await
            };
            let resp = match result {
                Ok(Some(resp)) => resp,
                Ok(None) => return Ok(unauthorized()),
                Err(err) => {
                    tracing::debug!(error = %err, "Unable to authenticate the request");
                    return Ok(unauthorized());
                }
            };
            let headers = req.headers_mut();
            strip_credentials(headers);
            for name in &resp.consumed_headers {
                headers.remove(name);
            }
            req.extensions_mut().insert(resp.user);
            // Boxed before awaiting: an async block holding `S::Future` trips rustc's
            // higher-ranked `Send` check (a known rustc limitation).
            let fut: BoxFuture<'static, _> = Box::pin(inner.call(req));
            fut.await
        }
        .boxed()
    }
}

fn strip_credentials(headers: &mut HeaderMap) {
    headers.remove(AUTHORIZATION);
    for name in FRONT_PROXY_HEADERS {
        headers.remove(name);
    }
    let extras: Vec<_> = headers
        .keys()
        .filter(|k| k.as_str().starts_with(FRONT_PROXY_EXTRA_PREFIX))
        .cloned()
        .collect();
    for name in extras {
        headers.remove(name);
    }
}

fn unauthorized() -> Response<Body> {
    write_status(&Status::unauthorized("Unauthorized"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::test_util::body_string;
    use kas_auth::UserInfo;
    use kas_auth::authentication::{Authenticator, Response as AuthResponse};
    use kas_endpoints::body;
    use std::sync::{Arc, Mutex};
    use tower::ServiceExt;

    /// Accepts "Bearer good" as alice; "Bearer broken" is an error; anything else no opinion.
    struct TokenAuth {
        seen_path: Mutex<Option<String>>,
    }

    impl Authenticator for TokenAuth {
        fn authenticate<'a>(
            &'a self,
            req: &'a AuthRequest<'a>,
        ) -> BoxFuture<'a, kas_auth::Result<Option<AuthResponse>>> {
            *self.seen_path.lock().unwrap() = Some(req.path.to_string());
            let token = req
                .headers
                .get(AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let has_cert = req.peer_certificates.is_some();
            async move {
                match token.as_deref() {
                    Some("Bearer good") => Ok(Some(AuthResponse {
                        user: UserInfo {
                            name: "alice".into(),
                            groups: vec!["system:authenticated".into()],
                            ..Default::default()
                        },
                        consumed_headers: vec![http::HeaderName::from_static("x-custom-user")],
                    })),
                    Some("Bearer broken") => {
                        Err(kas_auth::Error::InvalidCredentials("token expired".into()))
                    }
                    _ if has_cert => Ok(Some(AuthResponse {
                        user: UserInfo {
                            name: "cert-user".into(),
                            ..Default::default()
                        },
                        consumed_headers: vec![],
                    })),
                    _ => Ok(None),
                }
            }
            .boxed()
        }
    }

    fn layer() -> (AuthenticationLayer, Arc<TokenAuth>) {
        let auth = Arc::new(TokenAuth {
            seen_path: Mutex::new(None),
        });
        (AuthenticationLayer::new(auth.clone()), auth)
    }

    /// Echoes the user and the headers that reached it.
    fn echo()
    -> impl Service<Request<Body>, Response = Response<Body>, Error = Infallible, Future = impl Send>
    + Clone
    + Send
    + 'static {
        tower::service_fn(|req: Request<Body>| async move {
            let user = req
                .extensions()
                .get::<UserInfo>()
                .map(|u| u.name.clone())
                .unwrap_or_default();
            let mut names: Vec<&str> = req.headers().keys().map(|k| k.as_str()).collect();
            names.sort();
            Ok::<_, Infallible>(Response::new(body::full(format!(
                "{user}|{}",
                names.join(",")
            ))))
        })
    }

    async fn assert_401(resp: Response<Body>) {
        let status = Status::unauthorized("Unauthorized");
        assert_eq!(status.message.as_deref(), Some("Unauthorized"));
        let expected = write_status(&status);
        assert_eq!(resp.status(), 401);
        assert_eq!(resp.headers(), expected.headers());
        assert_eq!(body_string(resp).await, body_string(expected).await);
    }

    #[tokio::test]
    async fn authenticated_user_passes_without_credentials() {
        let (layer, auth) = layer();
        let req = Request::get("/api/v1/pods?limit=1")
            .header(AUTHORIZATION, "Bearer good")
            .header("x-remote-user", "mallory")
            .header("x-remote-uid", "1")
            .header("x-remote-group", "system:masters")
            .header("x-remote-extra-scopes", "all")
            .header("x-custom-user", "mallory")
            .header("accept", "application/json")
            .body(body::empty())
            .unwrap();
        let resp = layer.layer(echo()).oneshot(req).await.unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(body_string(resp).await, "alice|accept");
        assert_eq!(
            auth.seen_path.lock().unwrap().as_deref(),
            Some("/api/v1/pods")
        );
    }

    #[tokio::test]
    async fn peer_certificates_reach_the_authenticator() {
        let (layer, _) = layer();
        let mut req = Request::get("/version").body(body::empty()).unwrap();
        req.extensions_mut().insert(PeerCertificates::new(vec![]));
        let resp = layer.layer(echo()).oneshot(req).await.unwrap();
        assert_eq!(body_string(resp).await, "cert-user|");
    }

    #[tokio::test]
    async fn no_user_is_401() {
        let (layer, _) = layer();
        let req = Request::get("/api/v1/pods").body(body::empty()).unwrap();
        assert_401(layer.layer(echo()).oneshot(req).await.unwrap()).await;
    }

    #[tokio::test]
    async fn authenticator_error_is_401() {
        let (layer, _) = layer();
        let req = Request::get("/api/v1/pods")
            .header(AUTHORIZATION, "Bearer broken")
            .body(body::empty())
            .unwrap();
        assert_401(layer.layer(echo()).oneshot(req).await.unwrap()).await;
    }
}
