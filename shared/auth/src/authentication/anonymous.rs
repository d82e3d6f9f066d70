//! The anonymous authenticator, after upstream's `request/anonymous`.

use futures_util::future::BoxFuture;

use super::{AuthRequest, Authenticator, Response};
use crate::user::{ALL_UNAUTHENTICATED, ANONYMOUS_USER};
use crate::{Result, UserInfo};

/// Answers `system:anonymous` in `system:unauthenticated`. Placed last, behind the others.
#[derive(Clone, Debug, Default)]
pub struct Anonymous {
    /// Upstream's anonymous conditions: exact request paths. Empty answers every path.
    paths: Vec<String>,
}

impl Anonymous {
    /// Answers for every path.
    pub fn new() -> Self {
        Anonymous::default()
    }

    /// Answers only for requests whose path is exactly one of `paths` (upstream's
    /// `anonymous.conditions` of the structured authentication configuration). As upstream,
    /// an empty list sets no condition and so answers every path.
    pub fn for_paths(paths: Vec<String>) -> Self {
        Anonymous { paths }
    }
}

impl Authenticator for Anonymous {
    fn authenticate<'a>(
        &'a self,
        req: &'a AuthRequest<'a>,
    ) -> BoxFuture<'a, Result<Option<Response>>> {
        let allowed = self.paths.is_empty() || self.paths.iter().any(|p| p == req.path);
        let resp = allowed.then(|| Response {
            user: UserInfo {
                name: ANONYMOUS_USER.to_owned(),
                groups: vec![ALL_UNAUTHENTICATED.to_owned()],
                ..UserInfo::default()
            },
            consumed_headers: Vec::new(),
            proxied: false,
            audiences: Vec::new(),
            notes: Default::default(),
        });
        Box::pin(std::future::ready(Ok(resp)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authentication::testing::request;

    #[tokio::test]
    async fn answers_every_path_by_default() {
        let h = http::HeaderMap::new();
        let resp = Anonymous::new()
            .authenticate(&request("/api/v1/pods", &h, None))
            .await;
        let user = resp.unwrap().unwrap().user;
        assert_eq!(user.name, "system:anonymous");
        assert_eq!(user.groups, vec!["system:unauthenticated".to_owned()]);
        assert_eq!(user.uid, "");
    }

    #[tokio::test]
    async fn paths_restrict_to_exact_matches() {
        let h = http::HeaderMap::new();
        let a = Anonymous::for_paths(vec!["/healthz".into(), "/readyz".into()]);
        assert!(
            a.authenticate(&request("/healthz", &h, None))
                .await
                .unwrap()
                .is_some()
        );
        assert!(
            a.authenticate(&request("/readyz", &h, None))
                .await
                .unwrap()
                .is_some()
        );
        assert!(
            a.authenticate(&request("/healthz/etcd", &h, None))
                .await
                .unwrap()
                .is_none()
        );
        assert!(
            a.authenticate(&request("/api", &h, None))
                .await
                .unwrap()
                .is_none()
        );
    }

    #[tokio::test]
    async fn empty_path_list_answers_everything_like_upstream() {
        let h = http::HeaderMap::new();
        let a = Anonymous::for_paths(Vec::new());
        assert!(
            a.authenticate(&request("/api", &h, None))
                .await
                .unwrap()
                .is_some()
        );
    }
}
