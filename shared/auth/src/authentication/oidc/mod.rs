//! Upstream's OIDC / JWT authenticator (`plugin/pkg/authenticator/token/oidc`) over the
//! structured authentication configuration (`apiserver.config.k8s.io`
//! `AuthenticationConfiguration`): tokens whose `iss` names a configured issuer are
//! verified against the keys its provider publishes (discovery, then `jwks_uri`), then
//! mapped to a user by claims or CEL expressions.
//!
//! - [`config`]: the configuration types; [`validation`]: upstream's validation and the
//!   compilation of its expressions ([`cel`]).
//! - [`keyset`]: JWK sets and go-oidc's remote key set (rotation on an unknown key ID).
//! - [`verify`]: go-oidc's ID-token verification with upstream's audience check.
//! - [`authenticator`]: the token authenticator, initialized in the background.
//!
//! No HTTP here: a provider is reached through a [`ProviderClient`] (kas-webhook has the
//! HTTPS one).

pub mod authenticator;
pub mod cel;
mod claims;
pub mod config;
pub mod discovery;
mod distributed;
pub mod keyset;
pub mod validation;
pub mod verify;

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures_util::future::BoxFuture;

pub use authenticator::{OidcAuthenticator, OidcOptions};
pub use config::{AuthenticationConfiguration, JwtAuthenticator};
pub use validation::{
    CelMapper, compile_and_validate_jwt_authenticator, validate_authentication_configuration,
};

/// The clock tokens are checked against.
pub type Clock = Arc<dyn Fn() -> SystemTime + Send + Sync>;

/// The system clock.
pub fn system_clock() -> Clock {
    Arc::new(SystemTime::now)
}

/// Every algorithm upstream accepts (`AllValidSigningAlgorithms`, sorted).
pub const ALL_VALID_SIGNING_ALGORITHMS: &[&str] = &[
    "ES256", "ES384", "ES512", "PS256", "PS384", "PS512", "RS256", "RS384", "RS512",
];

/// An answer from a provider.
#[derive(Clone, Debug, Default)]
pub struct HttpResponse {
    pub status: u16,
    /// The `Content-Type` header, empty when absent.
    pub content_type: String,
    /// The `Cache-Control` header, empty when absent.
    pub cache_control: String,
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// Go's `Response.Status`: `200 OK`.
    pub fn status_text(&self) -> String {
        let reason = http::StatusCode::from_u16(self.status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("");
        format!("{} {reason}", self.status)
    }

    /// How long the answer may be cached (`Cache-Control: max-age`), as go-oidc reads it;
    /// `None` when it must not be.
    pub fn max_age(&self) -> Option<Duration> {
        let mut max_age = None;
        for directive in self.cache_control.split(',') {
            let directive = directive.trim().to_ascii_lowercase();
            if directive == "no-store" || directive == "no-cache" {
                return None;
            }
            if let Some(secs) = directive.strip_prefix("max-age=") {
                max_age = secs
                    .trim_matches('"')
                    .parse::<u64>()
                    .ok()
                    .map(Duration::from_secs);
            }
        }
        max_age
    }
}

/// How a provider's discovery document, keys and distributed claims are fetched:
/// `GET url`, with `Authorization: Bearer <bearer>` when given. The error is Go's
/// `url.Error` text (`Get "https://...": dial tcp ...`).
pub trait ProviderClient: Send + Sync {
    fn get<'a>(
        &'a self,
        url: &'a str,
        bearer: Option<&'a str>,
    ) -> BoxFuture<'a, Result<HttpResponse, String>>;
}

/// go-oidc's `unmarshalResp`: the body as JSON, with the content type in the error.
pub(crate) fn unmarshal_response<T>(
    resp: &HttpResponse,
    parse: impl FnOnce(&[u8]) -> Result<T, String>,
) -> Result<T, String> {
    match parse(&resp.body) {
        Ok(v) => Ok(v),
        Err(err) => {
            let media = resp
                .content_type
                .split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase();
            if media == "application/json" {
                Err(format!(
                    "got Content-Type = application/json, but could not unmarshal as JSON: {err}"
                ))
            } else {
                Err(format!(
                    "expected Content-Type = application/json, got {}: {err}",
                    kas_apimachinery::golang::strconv::quote(&resp.content_type)
                ))
            }
        }
    }
}

/// client-go's `cert.NewPoolFromBytes`: the PEM certificates of a bundle, or its error.
pub fn certificate_pool(pem: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    let mut certs = Vec::new();
    for block in x509_parser::pem::Pem::iter_from_buffer(pem) {
        let Ok(block) = block else { break };
        if block.label != "CERTIFICATE" {
            continue;
        }
        if let Err(e) = x509_parser::parse_x509_certificate(&block.contents) {
            return Err(format!("x509: malformed certificate: {e}"));
        }
        certs.push(block.contents);
    }
    if certs.is_empty() {
        return Err("data does not contain any valid RSA or ECDSA certificates".to_owned());
    }
    Ok(certs)
}

#[cfg(test)]
mod tests;
