//! Adds `system:authenticated`, after upstream's `group.AuthenticatedGroupAdder`.

use futures_util::future::BoxFuture;

use super::{AuthRequest, Authenticator, DynAuthenticator, Response};
use crate::Result;
use crate::user::{ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, ANONYMOUS_USER};

/// Adds `system:authenticated` to every user the wrapped authenticator returns, unless the
/// user is `system:anonymous` or already in `system:authenticated` or
/// `system:unauthenticated`.
pub struct AuthenticatedGroupAdder {
    inner: DynAuthenticator,
}

impl AuthenticatedGroupAdder {
    pub fn new(inner: DynAuthenticator) -> Self {
        AuthenticatedGroupAdder { inner }
    }
}

impl Authenticator for AuthenticatedGroupAdder {
    fn authenticate<'a>(
        &'a self,
        req: &'a AuthRequest<'a>,
    ) -> BoxFuture<'a, Result<Option<Response>>> {
        Box::pin(async move {
            let Some(mut resp) = self.inner.authenticate(req).await? else {
                return Ok(None);
            };
            let user = &mut resp.user;
            let marked = user
                .groups
                .iter()
                .any(|g| g == ALL_AUTHENTICATED || g == ALL_UNAUTHENTICATED);
            if user.name != ANONYMOUS_USER && !marked {
                user.groups.push(ALL_AUTHENTICATED.to_owned());
            }
            Ok(Some(resp))
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::UserInfo;
    use crate::authentication::testing::request;

    struct Fixed(UserInfo);

    impl Authenticator for Fixed {
        fn authenticate<'a>(
            &'a self,
            _: &'a AuthRequest<'a>,
        ) -> BoxFuture<'a, Result<Option<Response>>> {
            let resp = Response {
                user: self.0.clone(),
                consumed_headers: Vec::new(),
                proxied: false,
                audiences: Vec::new(),
                notes: Default::default(),
            };
            Box::pin(std::future::ready(Ok(Some(resp))))
        }
    }

    async fn groups_after(name: &str, groups: &[&str]) -> Vec<String> {
        let user = UserInfo {
            name: name.to_owned(),
            groups: groups.iter().map(|g| (*g).to_owned()).collect(),
            ..UserInfo::default()
        };
        let adder = AuthenticatedGroupAdder::new(Arc::new(Fixed(user)));
        let h = http::HeaderMap::new();
        let resp = adder.authenticate(&request("/", &h, None)).await.unwrap();
        resp.unwrap().user.groups
    }

    #[tokio::test]
    async fn adds_authenticated_group() {
        assert_eq!(
            groups_after("alice", &["dev"]).await,
            vec!["dev", "system:authenticated"]
        );
        assert_eq!(groups_after("bob", &[]).await, vec!["system:authenticated"]);
    }

    #[tokio::test]
    async fn leaves_anonymous_and_marked_users_alone() {
        assert!(groups_after("system:anonymous", &[]).await.is_empty());
        assert_eq!(
            groups_after("x", &["system:unauthenticated"]).await,
            vec!["system:unauthenticated"]
        );
        assert_eq!(
            groups_after("x", &["system:authenticated", "a"]).await,
            vec!["system:authenticated", "a"]
        );
    }

    #[tokio::test]
    async fn passes_no_opinion_through() {
        let adder = AuthenticatedGroupAdder::new(Arc::new(
            crate::authentication::union::Union::new(Vec::new()),
        ));
        let h = http::HeaderMap::new();
        assert_eq!(
            adder.authenticate(&request("/", &h, None)).await.unwrap(),
            None
        );
    }
}
