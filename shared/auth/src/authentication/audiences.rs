//! Upstream's `WrapAudienceAgnosticToken` (`pkg/authentication/authenticator/audagnostic.go`):
//! a token authenticator that knows no audiences (static tokens, bootstrap tokens, the
//! OIDC issuers) accepts only requests for the server's own audiences, and answers the
//! ones the request asked for among them.

use futures_util::future::BoxFuture;

use super::{AuthRequest, Authenticator, DynAuthenticator, Response};
use crate::Result;

pub struct AudienceAgnostic {
    /// The server's audiences (`--api-audiences`).
    implicit: Vec<String>,
    inner: DynAuthenticator,
}

impl AudienceAgnostic {
    pub fn new(implicit: Vec<String>, inner: DynAuthenticator) -> AudienceAgnostic {
        AudienceAgnostic { implicit, inner }
    }
}

impl Authenticator for AudienceAgnostic {
    fn authenticate<'a>(
        &'a self,
        req: &'a AuthRequest<'a>,
    ) -> BoxFuture<'a, Result<Option<Response>>> {
        Box::pin(async move {
            let Some(requested) = req.audiences else {
                return self.inner.authenticate(req).await;
            };
            let granted: Vec<String> = self
                .implicit
                .iter()
                .filter(|a| requested.contains(a))
                .cloned()
                .collect();
            if granted.is_empty() {
                return Ok(None);
            }
            let Some(mut resp) = self.inner.authenticate(req).await? else {
                return Ok(None);
            };
            resp.audiences = granted;
            Ok(Some(resp))
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use http::HeaderMap;

    use super::*;
    use crate::UserInfo;

    struct Anyone;

    impl Authenticator for Anyone {
        fn authenticate<'a>(
            &'a self,
            _: &'a AuthRequest<'a>,
        ) -> BoxFuture<'a, Result<Option<Response>>> {
            let user = UserInfo {
                name: "alice".into(),
                ..UserInfo::default()
            };
            Box::pin(std::future::ready(Ok(Some(Response::bearer(user)))))
        }
    }

    async fn audiences_for(requested: Option<&[String]>) -> Option<Vec<String>> {
        let wrapped = AudienceAgnostic::new(vec!["api".into(), "other".into()], Arc::new(Anyone));
        let headers = HeaderMap::new();
        let req = AuthRequest {
            path: "/",
            headers: &headers,
            peer_certificates: None,
            audiences: requested,
        };
        wrapped
            .authenticate(&req)
            .await
            .unwrap()
            .map(|r| r.audiences)
    }

    #[tokio::test]
    async fn only_the_servers_audiences_are_accepted() {
        assert_eq!(audiences_for(None).await, Some(vec![]));
        let asked = ["other".to_owned(), "x".to_owned()];
        assert_eq!(
            audiences_for(Some(&asked)).await,
            Some(vec!["other".into()])
        );
        assert_eq!(audiences_for(Some(&["x".to_owned()])).await, None);
    }
}
