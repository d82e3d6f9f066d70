//! Upstream's webhook token authenticator (`plugin/pkg/authenticator/token/webhook`): a
//! bearer token is sent as a TokenReview (`authentication.k8s.io/v1` or `v1beta1`) to the
//! webhook; its status says who the token belongs to.
//!
//! Audiences: a request asks for its own (a TokenReview's) or else the authenticator's
//! implicit audiences (`--api-audiences`, what upstream's authentication filter puts in
//! every request's context); an answer naming none of them is no user.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use kas_auth::UserInfo;
use kas_auth::authentication::bearer_token;
use kas_auth::authentication::token_cache::CachedTokenAuthenticator;
use kas_auth::authentication::{AuthRequest, Authenticator, DynAuthenticator, Response};
use serde::Serialize;
use serde_json::Value;

use crate::generic::{Backoff, GenericWebhook};
use crate::review::{self, Field};
use crate::{Error, Result};

/// The TokenReview version sent (`--authentication-token-webhook-version`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenReviewVersion {
    V1,
    V1beta1,
}

impl TokenReviewVersion {
    /// Upstream's error for any other version.
    pub fn parse(version: &str) -> Result<TokenReviewVersion> {
        match version {
            "v1" => Ok(TokenReviewVersion::V1),
            "v1beta1" => Ok(TokenReviewVersion::V1beta1),
            other => Err(Error::Config(format!(
                "unsupported authentication webhook version {}, supported versions are \"v1\", \"v1beta1\"",
                kas_apimachinery::golang::strconv::quote(other)
            ))),
        }
    }

    fn api_version(self) -> &'static str {
        match self {
            TokenReviewVersion::V1 => "authentication.k8s.io/v1",
            TokenReviewVersion::V1beta1 => "authentication.k8s.io/v1beta1",
        }
    }
}

pub struct WebhookTokenAuthenticator {
    webhook: GenericWebhook,
    version: TokenReviewVersion,
    implicit_auds: Vec<String>,
}

/// The TokenReview sent, as Go's encoder writes the typed object.
#[derive(Serialize)]
struct TokenReview<'a> {
    kind: &'static str,
    #[serde(rename = "apiVersion")]
    api_version: &'static str,
    metadata: review::EmptyMeta,
    spec: TokenReviewSpec<'a>,
    status: EmptyStatus,
}

#[derive(Serialize)]
struct TokenReviewSpec<'a> {
    #[serde(skip_serializing_if = "str::is_empty")]
    token: &'a str,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    audiences: &'a [String],
}

/// A zero `TokenReviewStatus`: only its `user` struct is written.
#[derive(Serialize)]
struct EmptyStatus {
    user: BTreeMap<String, Value>,
}

/// The status of the answer (`TokenReviewStatus`).
#[derive(Debug, Default, PartialEq)]
pub struct TokenReviewStatus {
    pub authenticated: bool,
    pub user: UserInfo,
    pub audiences: Vec<String>,
    pub error: String,
}

impl WebhookTokenAuthenticator {
    /// Upstream's `webhook.New(config, version, implicitAuds, retryBackoff)`.
    pub fn new(
        webhook: GenericWebhook,
        version: TokenReviewVersion,
        implicit_auds: Vec<String>,
    ) -> WebhookTokenAuthenticator {
        WebhookTokenAuthenticator {
            webhook,
            version,
            implicit_auds,
        }
    }

    /// The body posted for `token`.
    pub fn review_body(&self, token: &str) -> Vec<u8> {
        self.review_body_for(token, &self.implicit_auds)
    }

    /// The body posted for `token` asked for `audiences`.
    fn review_body_for(&self, token: &str, audiences: &[String]) -> Vec<u8> {
        let review = TokenReview {
            kind: "TokenReview",
            api_version: self.version.api_version(),
            metadata: review::EmptyMeta::default(),
            spec: TokenReviewSpec { token, audiences },
            status: EmptyStatus {
                user: BTreeMap::new(),
            },
        };
        review::encode(&review)
    }

    /// Upstream's `AuthenticateToken` for the server's own audiences: the user, none, or
    /// the webhook's `error` (or the failed call's).
    pub async fn authenticate_token(&self, token: &str) -> kas_auth::Result<Option<UserInfo>> {
        let user = self
            .authenticate_token_for(token, &self.implicit_auds)
            .await?;
        Ok(user.map(|(user, _)| user))
    }

    /// Upstream's `AuthenticateToken` for a request asking for `wanted` audiences: the
    /// user and the audiences granted (those the answer names, else the implicit ones,
    /// among the wanted).
    pub async fn authenticate_token_for(
        &self,
        token: &str,
        wanted: &[String],
    ) -> kas_auth::Result<Option<(UserInfo, Vec<String>)>> {
        let body = self.review_body_for(token, wanted);
        let answer = match self.webhook.post(&body).await {
            Ok(answer) => answer,
            Err(err) => {
                tracing::error!(error = %err, "Failed to make webhook authenticator request");
                return Err(kas_auth::Error::InvalidCredentials(err.to_string()));
            }
        };
        let status = decode_status(&answer).map_err(kas_auth::Error::InvalidCredentials)?;
        let mut granted = Vec::new();
        if !wanted.is_empty() {
            let got = match status.audiences.is_empty() {
                true => &self.implicit_auds,
                false => &status.audiences,
            };
            granted = wanted.iter().filter(|a| got.contains(a)).cloned().collect();
            if granted.is_empty() {
                return Ok(None);
            }
        }
        if !status.authenticated {
            return match status.error.is_empty() {
                true => Ok(None),
                false => Err(kas_auth::Error::InvalidCredentials(status.error)),
            };
        }
        Ok(Some((status.user, granted)))
    }
}

/// The answer's `status`, with Go's decoding errors for fields of the wrong type.
pub fn decode_status(answer: &Value) -> Result<TokenReviewStatus, String> {
    let Some(status) = review::field(answer, &Field::root("TokenReview", "status"))? else {
        return Ok(TokenReviewStatus::default());
    };
    let at = |name: &'static str| Field::nested("TokenReviewStatus", "status", name);
    let user_at = |name: &'static str| Field::nested("UserInfo", "status.user", name);
    let mut out = TokenReviewStatus {
        authenticated: review::boolean(status, &at("authenticated"))?,
        audiences: review::strings(status, &at("audiences"))?,
        error: review::string(status, &at("error"))?,
        ..TokenReviewStatus::default()
    };
    if let Some(user) = review::field(status, &at("user"))? {
        out.user = UserInfo {
            name: review::string(user, &user_at("username"))?,
            uid: review::string(user, &user_at("uid"))?,
            groups: review::strings(user, &user_at("groups"))?,
            extra: review::extra(user, &user_at("extra"))?,
        };
    }
    Ok(out)
}

impl Authenticator for WebhookTokenAuthenticator {
    fn authenticate<'a>(
        &'a self,
        req: &'a AuthRequest<'a>,
    ) -> BoxFuture<'a, kas_auth::Result<Option<Response>>> {
        Box::pin(async move {
            let Some(token) = bearer_token(req) else {
                return Ok(None);
            };
            let wanted = req.audiences.unwrap_or(&self.implicit_auds);
            let answer = self.authenticate_token_for(&token, wanted).await?;
            Ok(answer.map(|(user, audiences)| Response {
                audiences,
                ..Response::bearer(user)
            }))
        })
    }
}

/// kube-apiserver's `newWebhookTokenAuthenticator`: the kubeconfig at `config_file`, the
/// TokenReview `version`, behind upstream's token cache that remembers answers (users and
/// "not authenticated", not errors) for `cache_ttl`.
pub fn new_cached(
    config_file: &Path,
    version: &str,
    cache_ttl: Duration,
    implicit_auds: Vec<String>,
    retry_backoff: Backoff,
) -> Result<DynAuthenticator> {
    let config = crate::kubeconfig::load(config_file)?;
    let version = TokenReviewVersion::parse(version)?;
    let webhook = GenericWebhook::new(config, retry_backoff)?;
    let authenticator = Arc::new(WebhookTokenAuthenticator::new(
        webhook,
        version,
        implicit_auds,
    ));
    Ok(Arc::new(CachedTokenAuthenticator::with_ttls(
        authenticator,
        cache_ttl,
        cache_ttl,
    )))
}

#[cfg(test)]
mod tests;
