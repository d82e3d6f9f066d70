//! authentication.k8s.io/v1 `tokenreviews`, after upstream's `tokenreview.REST`: the
//! server's authenticator is asked about a request that carries only the token as a
//! bearer token. Audiences: the spec's, else the server's API audiences; the authenticators
//! here are all audience-agnostic, so, as upstream's `WrapAudienceAgnosticToken`, a token
//! is good for the audiences the server's API audiences share with those asked for, and
//! none shared is no user.

use async_trait::async_trait;
use http::{HeaderMap, HeaderValue};
use kas_apimachinery::Status;
use kas_auth::authentication::{AuthRequest, DynAuthenticator};
use kas_registry::ResourceDescriptor;
use kas_registry::Scope;
use kas_registry::rest::options::WriteOptions;
use kas_registry::strategy::Creater;
use serde_json::{Value, json};

use super::{GROUP, user_info};
use crate::podspec::validation::json::{str_of, strings};
use crate::resources::authorization::{answer, descriptor, install as review_install};

pub static DESCRIPTOR: ResourceDescriptor = descriptor(
    GROUP,
    "TokenReview",
    "TokenReviewList",
    "tokenreviews",
    "tokenreview",
    Scope::Cluster,
    &kas_api::authentication::v1::TOKEN_REVIEW,
);

pub fn install(opts: &crate::resources::ResourceOptions) -> crate::resources::Install {
    review_install(
        &DESCRIPTOR,
        TokenReviews {
            authenticator: opts.reviewers.authenticator.clone(),
            api_audiences: opts.reviewers.api_audiences.clone(),
        },
    )
}

pub struct TokenReviews {
    /// `None`: every review is answered as it came, as upstream's without an authenticator.
    pub authenticator: Option<DynAuthenticator>,
    /// `--api-audiences`.
    pub api_audiences: Vec<String>,
}

#[async_trait]
impl Creater for TokenReviews {
    async fn create(
        &self,
        namespace: &str,
        review: Value,
        _: &WriteOptions,
    ) -> kas_registry::Result<Value> {
        if !namespace.is_empty() {
            let msg = format!("namespace is not allowed on this type: {namespace}");
            return Err(Status::bad_request(&msg).into());
        }
        let spec = review.get("spec").unwrap_or(&Value::Null);
        let token = str_of(spec, "token");
        if token.is_empty() {
            let msg = "token is required for TokenReview in authentication";
            return Err(Status::bad_request(msg).into());
        }
        let Some(authenticator) = &self.authenticator else {
            return Ok(answer_with(review, json!({})));
        };
        let mut audiences: Vec<String> = strings(spec, "audiences")
            .into_iter()
            .map(str::to_owned)
            .collect();
        if audiences.is_empty() {
            audiences.clone_from(&self.api_audiences);
        }
        let status = self.authenticate(authenticator, token, &audiences).await?;
        Ok(answer_with(review, status))
    }
}

impl TokenReviews {
    /// Upstream's `REST.Create`: the token authenticated for `audiences` (the review's,
    /// else the server's), the answer naming whose it is and the audiences the
    /// authenticator granted, or the authenticator's error.
    async fn authenticate(
        &self,
        authenticator: &DynAuthenticator,
        token: &str,
        audiences: &[String],
    ) -> kas_registry::Result<Value> {
        let mut headers = HeaderMap::new();
        // A token no header can carry authenticates nobody.
        let Ok(value) = HeaderValue::from_str(&format!("Bearer {token}")) else {
            return Ok(json!({}));
        };
        headers.insert(http::header::AUTHORIZATION, value);
        let req = AuthRequest {
            path: "",
            headers: &headers,
            peer_certificates: None,
            audiences: (!audiences.is_empty()).then_some(audiences),
        };
        match authenticator.authenticate(&req).await {
            Ok(Some(resp)) => {
                // Upstream's `badAuthenticatorAuds`: an authenticator that answered for
                // none of the audiences asked is a server error.
                if !audiences.is_empty() && !resp.audiences.iter().any(|a| audiences.contains(a)) {
                    tracing::error!(want = ?audiences, got = ?resp.audiences, "error validating audience");
                    let msg = "error validating audiences";
                    return Err(Status::internal_error(msg).into());
                }
                let mut status = json!({"authenticated": true, "user": user_info(&resp.user)});
                if !resp.audiences.is_empty() {
                    status["audiences"] = json!(resp.audiences);
                }
                Ok(status)
            }
            Ok(None) => Ok(json!({})),
            Err(err) => Ok(json!({"error": err.to_string()})),
        }
    }
}

fn answer_with(review: Value, status: Value) -> Value {
    answer(review, status, &kas_api::authentication::v1::TOKEN_REVIEW)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::authorization::testing::invalid_message;
    use futures_util::FutureExt;
    use futures_util::future::BoxFuture;
    use kas_auth::UserInfo;
    use kas_auth::authentication::audiences::AudienceAgnostic;
    use kas_auth::authentication::{Authenticator, Response};
    use std::sync::Arc;

    /// "good" is alice's token; "bad" is an error; anything else no opinion.
    struct Tokens;

    impl Authenticator for Tokens {
        fn authenticate<'a>(
            &'a self,
            req: &'a AuthRequest<'a>,
        ) -> BoxFuture<'a, kas_auth::Result<Option<Response>>> {
            let header = req.headers.get(http::header::AUTHORIZATION).cloned();
            async move {
                match header.as_ref().and_then(|h| h.to_str().ok()) {
                    Some("Bearer good") => Ok(Some(Response {
                        user: UserInfo {
                            name: "alice".into(),
                            groups: vec!["system:authenticated".into()],
                            ..UserInfo::default()
                        },
                        consumed_headers: vec![],
                        proxied: false,
                        audiences: vec![],
                        notes: Default::default(),
                    })),
                    Some("Bearer bad") => Err(kas_auth::Error::InvalidCredentials(
                        "invalid bearer token".into(),
                    )),
                    _ => Ok(None),
                }
            }
            .boxed()
        }
    }

    /// Reviews by `Tokens` as an audience-agnostic authenticator of the server's
    /// `api_audiences`.
    fn reviews(api_audiences: &[&str]) -> TokenReviews {
        let api_audiences: Vec<String> = api_audiences.iter().map(|a| (*a).to_owned()).collect();
        let agnostic = AudienceAgnostic::new(api_audiences.clone(), Arc::new(Tokens));
        TokenReviews {
            authenticator: Some(Arc::new(agnostic)),
            api_audiences,
        }
    }

    /// An authenticator that answers for audiences the review did not ask for.
    struct Elsewhere;

    impl Authenticator for Elsewhere {
        fn authenticate<'a>(
            &'a self,
            _: &'a AuthRequest<'a>,
        ) -> BoxFuture<'a, kas_auth::Result<Option<Response>>> {
            let resp = Response {
                audiences: vec!["elsewhere".into()],
                ..Response::bearer(UserInfo::default())
            };
            async move { Ok(Some(resp)) }.boxed()
        }
    }

    #[tokio::test]
    async fn audiences_not_asked_for_are_a_server_error() {
        let r = TokenReviews {
            authenticator: Some(Arc::new(Elsewhere)),
            api_audiences: vec!["api".into()],
        };
        let err = r
            .create("", review(json!({"token": "t"})), &WriteOptions::default())
            .await
            .err()
            .unwrap()
            .to_status();
        assert_eq!(err.code, 500);
        assert_eq!(
            err.message.as_deref(),
            Some("Internal error occurred: error validating audiences")
        );
    }

    fn review(spec: Value) -> Value {
        json!({"metadata": {"creationTimestamp": null}, "spec": spec})
    }

    async fn status(reviews: &TokenReviews, spec: Value) -> Value {
        let got = reviews
            .create("", review(spec), &WriteOptions::default())
            .await
            .unwrap();
        got["status"].clone()
    }

    #[tokio::test]
    async fn tokens_are_reviewed_by_the_authenticator() {
        let r = reviews(&[]);
        assert_eq!(
            status(&r, json!({"token": "good"})).await,
            json!({"authenticated": true,
                   "user": {"username": "alice", "groups": ["system:authenticated"]}})
        );
        assert_eq!(
            status(&r, json!({"token": "bad"})).await,
            json!({"user": {}, "error": "invalid bearer token"})
        );
        assert_eq!(
            status(&r, json!({"token": "other"})).await,
            json!({"user": {}})
        );
    }

    #[tokio::test]
    async fn audiences_as_an_audience_agnostic_authenticator() {
        let r = reviews(&["api", "other"]);
        // None asked: the server's own.
        assert_eq!(
            status(&r, json!({"token": "good"})).await["audiences"],
            json!(["api", "other"])
        );
        assert_eq!(
            status(&r, json!({"token": "good", "audiences": ["x", "other"]})).await["audiences"],
            json!(["other"])
        );
        assert_eq!(
            status(&r, json!({"token": "good", "audiences": ["x"]})).await,
            json!({"user": {}})
        );
        // A server without API audiences grants the ones asked for none.
        assert_eq!(
            status(&reviews(&[]), json!({"token": "good", "audiences": ["x"]})).await,
            json!({"user": {}})
        );
    }

    #[tokio::test]
    async fn token_required_and_no_authenticator() {
        let err = reviews(&[])
            .create("", review(json!({})), &WriteOptions::default())
            .await
            .err()
            .unwrap();
        assert_eq!(
            invalid_message(err),
            (
                400,
                "token is required for TokenReview in authentication".to_owned()
            )
        );
        let none = TokenReviews {
            authenticator: None,
            api_audiences: vec![],
        };
        let got = none
            .create(
                "",
                review(json!({"token": "good"})),
                &WriteOptions::default(),
            )
            .await
            .unwrap();
        assert_eq!(got["status"], json!({"user": {}}));
        assert_eq!(got["spec"], json!({"token": "good"}));
    }
}
