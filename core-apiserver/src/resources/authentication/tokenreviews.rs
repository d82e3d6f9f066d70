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
        let status = self.authenticate(authenticator, token, &audiences).await;
        Ok(answer_with(review, status))
    }
}

impl TokenReviews {
    /// The review's status: whether the token authenticates, whose it is, for which
    /// audiences, or the authenticator's error.
    async fn authenticate(
        &self,
        authenticator: &DynAuthenticator,
        token: &str,
        audiences: &[String],
    ) -> Value {
        // The audiences the token may be good for (upstream's audience-agnostic wrapper).
        let granted: Vec<&String> = self
            .api_audiences
            .iter()
            .filter(|a| audiences.contains(a))
            .collect();
        if !audiences.is_empty() && granted.is_empty() {
            return json!({});
        }
        let mut headers = HeaderMap::new();
        // A token no header can carry authenticates nobody.
        let Ok(value) = HeaderValue::from_str(&format!("Bearer {token}")) else {
            return json!({});
        };
        headers.insert(http::header::AUTHORIZATION, value);
        let req = AuthRequest {
            path: "",
            headers: &headers,
            peer_certificates: None,
        };
        match authenticator.authenticate(&req).await {
            Ok(Some(resp)) => {
                let mut status = json!({"authenticated": true, "user": user_info(&resp.user)});
                if !audiences.is_empty() {
                    status["audiences"] = json!(granted);
                }
                status
            }
            Ok(None) => json!({}),
            Err(err) => json!({"error": err.to_string()}),
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

    fn reviews(api_audiences: &[&str]) -> TokenReviews {
        TokenReviews {
            authenticator: Some(Arc::new(Tokens)),
            api_audiences: api_audiences.iter().map(|a| (*a).to_owned()).collect(),
        }
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
