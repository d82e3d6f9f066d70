//! `with_authentication`: upstream's `WithAuthentication` with the `Unauthorized` failure
//! handler (endpoints/filters/authentication.go).
//!
//! On success the user travels on as a `UserInfo` extension and the credentials leave the
//! request: `Authorization`, the standard front-proxy headers (`X-Remote-User`,
//! `X-Remote-Uid`, `X-Remote-Group`, `X-Remote-Extra-*`) and whatever else the authenticator
//! consumed. No user, or an error, is upstream's 401 Status with message "Unauthorized".

use http::header::AUTHORIZATION;
use http::{HeaderMap, Request, Response};
use kas_apimachinery::Status;
use kas_audit::handoff::HANDOFF_HEADER;
use kas_auth::authentication::{
    AuthRequest, DynAuthenticator, Notes, PeerCertificates, Response as AuthResponse,
};
use kas_endpoints::{Body, write_status};
use std::sync::Arc;

use crate::audit::Auditor;

use crate::filter::{Inner, Next};

/// Front-proxy headers upstream strips from every authenticated request.
const FRONT_PROXY_HEADERS: [&str; 3] = ["x-remote-user", "x-remote-uid", "x-remote-group"];
const FRONT_PROXY_EXTRA_PREFIX: &str = "x-remote-extra-";

pub async fn with_authentication<S: Inner>(
    (authenticator, auditor): (DynAuthenticator, Option<Arc<Auditor>>),
    mut req: Request<Body>,
    next: Next<S>,
) -> Response<Body> {
    let auth_req = AuthRequest {
        path: req.uri().path(),
        headers: req.headers(),
        peer_certificates: req.extensions().get::<PeerCertificates>(),
        audiences: None,
    };
    let resp = match authenticate(&authenticator, auth_req).await {
        Ok(resp) => resp,
        Err(notes) => {
            let status = Status::unauthorized("Unauthorized");
            if let Some(auditor) = &auditor
                && let Ok(json) = serde_json::from_slice(&status.to_json())
            {
                crate::audit::failed_authentication(auditor, &mut req, &json, &notes);
            }
            return write_status(&status);
        }
    };
    if resp.notes.warnings.is_empty() {
        return next.run(authenticated(req, resp)).await;
    }
    let warnings = resp.notes.warnings.clone();
    let mut answer = next.run(authenticated(req, resp)).await;
    kas_endpoints::responsewriters::response::add_warnings(&mut answer, &warnings);
    answer
}

/// The authenticator's answer; no user, or an error, is a 401 with what the
/// authenticators noted before they failed.
async fn authenticate(
    authenticator: &DynAuthenticator,
    auth_req: AuthRequest<'_>,
) -> Result<AuthResponse, Notes> {
    match authenticator.authenticate(&auth_req).await {
        Ok(Some(resp)) => Ok(resp),
        Ok(None) => Err(Notes::default()),
        Err(err) => {
            tracing::debug!(error = %err, "Unable to authenticate the request");
            let mut notes = Notes::default();
            for n in err.notes() {
                notes
                    .audit_annotations
                    .extend(n.audit_annotations.iter().cloned());
            }
            Err(notes)
        }
    }
}

/// The request as it travels on: the user in, the credentials out.
fn authenticated(mut req: Request<Body>, resp: AuthResponse) -> Request<Body> {
    let headers = req.headers_mut();
    strip_credentials(headers);
    for name in &resp.consumed_headers {
        headers.remove(name);
    }
    // Only a front proxy hands on an audit event or an APF admission (see
    // kas_audit::handoff, kas_flowcontrol::handoff).
    if !resp.proxied {
        headers.remove(HANDOFF_HEADER);
        headers.remove(kas_flowcontrol::handoff::HANDOFF_HEADER);
    }
    req.extensions_mut().insert(resp.user);
    if !resp.notes.audit_annotations.is_empty() {
        req.extensions_mut().insert(resp.notes);
    }
    req
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::from_fn_with_state;
    use crate::support::test_util::body_string;
    use futures_util::FutureExt;
    use futures_util::future::BoxFuture;
    use kas_auth::UserInfo;
    use kas_auth::authentication::Authenticator;
    use kas_endpoints::body;
    use std::convert::Infallible;
    use std::sync::{Arc, Mutex};
    use tower::{Layer, ServiceExt};

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
                        proxied: false,
                        audiences: vec![],
                        notes: Default::default(),
                    })),
                    Some("Bearer legacy") => Ok(Some(AuthResponse {
                        notes: Notes {
                            audit_annotations: vec![("k", "v".into())],
                            warnings: vec!["use \"bound\" tokens".into()],
                        },
                        ..AuthResponse::bearer(UserInfo {
                            name: "bob".into(),
                            ..Default::default()
                        })
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
                        proxied: false,
                        audiences: vec![],
                        notes: Default::default(),
                    })),
                    _ => Ok(None),
                }
            }
            .boxed()
        }
    }

    /// The filter in front of `echo`, and its authenticator.
    fn svc() -> (impl Inner, Arc<TokenAuth>) {
        let auth = Arc::new(TokenAuth {
            seen_path: Mutex::new(None),
        });
        let filter = from_fn_with_state(
            (auth.clone() as DynAuthenticator, None),
            with_authentication,
        );
        (filter.layer(echo()), auth)
    }

    /// Echoes the user and the headers that reached it.
    fn echo() -> impl Inner {
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
        let (svc, auth) = svc();
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
        let resp = svc.oneshot(req).await.unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(body_string(resp).await, "alice|accept");
        assert_eq!(
            auth.seen_path.lock().unwrap().as_deref(),
            Some("/api/v1/pods")
        );
    }

    #[tokio::test]
    async fn peer_certificates_reach_the_authenticator() {
        let (svc, _) = svc();
        let mut req = Request::get("/version").body(body::empty()).unwrap();
        req.extensions_mut().insert(PeerCertificates::new(vec![]));
        let resp = svc.oneshot(req).await.unwrap();
        assert_eq!(body_string(resp).await, "cert-user|");
    }

    #[tokio::test]
    async fn authentication_warnings_reach_the_answer() {
        let (svc, _) = svc();
        let req = Request::get("/api/v1/pods")
            .header(AUTHORIZATION, "Bearer legacy")
            .body(body::empty())
            .unwrap();
        let resp = svc.oneshot(req).await.unwrap();
        assert_eq!(
            resp.headers()
                .get_all(http::header::WARNING)
                .iter()
                .collect::<Vec<_>>(),
            ["299 - \"use \\\"bound\\\" tokens\""]
        );
        assert_eq!(body_string(resp).await, "bob|");
    }

    #[tokio::test]
    async fn no_user_is_401() {
        let (svc, _) = svc();
        let req = Request::get("/api/v1/pods").body(body::empty()).unwrap();
        assert_401(svc.oneshot(req).await.unwrap()).await;
    }

    #[tokio::test]
    async fn authenticator_error_is_401() {
        let (svc, _) = svc();
        let req = Request::get("/api/v1/pods")
            .header(AUTHORIZATION, "Bearer broken")
            .body(body::empty())
            .unwrap();
        assert_401(svc.oneshot(req).await.unwrap()).await;
    }
}
