//! The service-account flags of kube-apiserver (`ServiceAccountAuthenticationOptions`,
//! the signing key, `--api-audiences`): the keys the aggregator verifies tokens with, and
//! what core's `serviceaccounts/token` signs with and its OIDC discovery documents publish.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use kas_auth::authentication::DynAuthenticator;
use kas_auth::authentication::audiences::AudienceAgnostic;
use kas_auth::authentication::bootstrap_token::BootstrapTokenAuthenticator;
use kas_auth::authentication::serviceaccount::{
    JwtTokenAuthenticator, OpenIdMetadata, StorageLookup, TokenGenerator,
};

use super::GoDuration;

/// Upstream's service-account flags (`ServiceAccountAuthenticationOptions`, the signing key
/// of kube-apiserver's options, `--api-audiences`): what the `serviceaccounts/token`
/// subresource signs with and the OIDC discovery documents publish.
#[derive(Args, Clone, Debug, Default)]
pub struct ServiceAccountOptions {
    /// Identifier of the service account token issuer, asserted in the "iss" claim of issued
    /// tokens. When this flag is specified multiple times, the first is used to generate
    /// tokens and all are used to determine which issuers are accepted.
    #[arg(long = "service-account-issuer")]
    pub issuers: Vec<String>,
    /// Path to the file that contains the current private key of the service account token
    /// issuer. The issuer will sign issued ID tokens with this private key.
    #[arg(long = "service-account-signing-key-file")]
    pub signing_key_file: Option<PathBuf>,
    /// File containing PEM-encoded x509 RSA or ECDSA private or public keys, used to verify
    /// ServiceAccount tokens. The specified file can contain multiple keys, and the flag can
    /// be specified multiple times with different files.
    #[arg(long = "service-account-key-file")]
    pub key_files: Vec<PathBuf>,
    /// Overrides the URI for the JSON Web Key Set in the discovery doc served at
    /// /.well-known/openid-configuration.
    #[arg(long = "service-account-jwks-uri", default_value = "")]
    pub jwks_uri: String,
    /// The maximum validity duration of a token created by the service account token issuer.
    /// If an otherwise valid TokenRequest with a validity duration larger than this value is
    /// requested, a token will be issued with a validity duration of this value.
    #[arg(long = "service-account-max-token-expiration", default_value = "0s")]
    pub max_token_expiration: GoDurationFlag,
    /// Turns on projected service account expiration extension during token generation.
    #[arg(
        long = "service-account-extend-token-expiration",
        num_args = 0..=1,
        default_value = "true",
        default_missing_value = "true",
        value_parser = kas_apimachinery::golang::strconv::parse_bool
    )]
    pub extend_token_expiration: bool,
    /// Identifiers of the API. Defaults to the issuers when unset.
    #[arg(long = "api-audiences", value_delimiter = ',')]
    pub api_audiences: Vec<String>,
    /// If true, validate ServiceAccount tokens exist in etcd as part of authentication.
    #[arg(
        long = "service-account-lookup",
        num_args = 0..=1,
        default_value = "true",
        default_missing_value = "true",
        value_parser = kas_apimachinery::golang::strconv::parse_bool
    )]
    pub lookup: bool,
}

/// A `GoDuration` that is also `Default` (zero), for the options' `Default`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GoDurationFlag(pub std::time::Duration);

impl std::str::FromStr for GoDurationFlag {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.parse::<GoDuration>().map(|d| GoDurationFlag(d.0))
    }
}

/// The errors of Go's `url.Parse` that an issuer can hit: control characters, a missing
/// scheme before the first colon, a port that is not a number.
fn url_parse_error(raw: &str) -> Option<String> {
    let failed = |why: String| {
        Some(format!(
            "parse {}: {why}",
            kas_apimachinery::golang::strconv::quote(raw)
        ))
    };
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return failed("net/url: invalid control character in URL".to_owned());
    }
    if raw.starts_with(':') {
        return failed("missing protocol scheme".to_owned());
    }
    let rest = raw.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let port = match host.rfind(']') {
        Some(end) => host[end + 1..].strip_prefix(':'),
        None => host.rsplit_once(':').map(|(_, p)| p),
    }?;
    if port.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    failed(format!(
        "invalid port {} after host",
        kas_apimachinery::golang::strconv::quote(&format!(":{port}"))
    ))
}

/// Upstream's bounds of `--service-account-max-token-expiration`.
const MAX_EXPIRATION_LOW: std::time::Duration = std::time::Duration::from_secs(3600);
const MAX_EXPIRATION_HIGH: std::time::Duration = std::time::Duration::from_secs(1 << 32);

impl ServiceAccountOptions {
    /// Whether any service-account flag was given. Upstream requires the issuer and the keys
    /// always; here a core without them serves no tokens and no discovery, so that roles
    /// started without service accounts keep working.
    fn configured(&self) -> bool {
        !self.issuers.is_empty()
            || self.signing_key_file.is_some()
            || !self.key_files.is_empty()
            || !self.jwks_uri.is_empty()
    }

    /// Upstream's `ServiceAccountAuthenticationOptions` validation and the checks of
    /// kube-apiserver's completion (the signing key parses, the maximum expiration).
    pub fn validate(&self) -> Vec<String> {
        let mut errors = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for issuer in &self.issuers {
            if let Some(err) = issuer
                .contains(':')
                .then(|| url_parse_error(issuer))
                .flatten()
            {
                errors.push(format!(
                    "service-account-issuer {} contained a ':' but was not a valid URL: {err}",
                    kas_apimachinery::golang::strconv::quote(issuer)
                ));
                continue;
            }
            if issuer.is_empty() {
                errors.push("service-account-issuer should not be an empty string".to_owned());
            } else if !seen.insert(issuer) {
                errors.push(format!(
                    "service-account-issuer {} is already specified",
                    kas_apimachinery::golang::strconv::quote(issuer)
                ));
            }
        }
        if !self.configured() {
            return errors;
        }
        if self.issuers.is_empty() {
            errors.push("service-account-issuer is a required flag".to_owned());
        }
        if self.key_files.is_empty() {
            errors.push(
                "either `--service-account-key-file` or `--service-account-signing-endpoint` must be set"
                    .to_owned(),
            );
        }
        if let Some(err) = url_parse_error(&self.jwks_uri) {
            errors.push(format!(
                "service-account-jwks-uri must be a valid URL: {err}"
            ));
        } else if !self.jwks_uri.is_empty() && !self.jwks_uri.starts_with("https:") {
            errors.push(format!(
                "service-account-jwks-uri requires https scheme, parsed as: {}",
                self.jwks_uri
            ));
        }
        for file in &self.key_files {
            if let Err(e) = kas_auth::authentication::serviceaccount::public_keys_from_file(file) {
                errors.push(e.to_string());
            }
        }
        if let Some(err) = self.generator().err() {
            errors.push(err);
        }
        errors
    }

    /// The signer of TokenRequests: with a signing key and an issuer only, as upstream.
    pub fn generator(&self) -> Result<Option<TokenGenerator>, String> {
        let (Some(file), Some(issuer)) = (&self.signing_key_file, self.issuers.first()) else {
            return Ok(None);
        };
        if issuer.is_empty() {
            return Ok(None);
        }
        let generator = TokenGenerator::from_file(issuer, file).map_err(|e| e.to_string())?;
        let max = self.max_token_expiration.0;
        if !max.is_zero() && !(MAX_EXPIRATION_LOW..=MAX_EXPIRATION_HIGH).contains(&max) {
            return Err(
                "the service-account-max-token-expiration must be between 1 hour and 2^32 seconds"
                    .to_owned(),
            );
        }
        Ok(Some(generator))
    }

    /// The bearer-token authenticators, in upstream's order: service-account tokens (with
    /// `--service-account-key-file`), verified for the issuers and API audiences, their
    /// service accounts and bound objects read from `storage`; bootstrap tokens with
    /// `bootstrap_tokens` (`--enable-bootstrap-token-auth`), from their Secrets in
    /// kube-system; then the JWT authenticators of `--oidc-*` or `--authentication-config`,
    /// and the token webhook (`--authentication-token-webhook-config-file`), which need no
    /// storage. Without storage, only those.
    pub fn token_authenticators(
        &self,
        authentication: &super::AuthenticationOptions,
        storage: Option<Arc<dyn kas_storage::Storage>>,
    ) -> Result<Vec<DynAuthenticator>, String> {
        let mut authenticators: Vec<DynAuthenticator> = Vec::new();
        if let Some(storage) = storage {
            if !self.key_files.is_empty() {
                let jwt = JwtTokenAuthenticator::from_key_files(
                    &self.key_files,
                    self.issuers.clone(),
                    self.api_audiences(),
                    Arc::new(StorageLookup::new(storage.clone())),
                )
                .map_err(|e| e.to_string())?
                .with_legacy_lookup(self.lookup);
                authenticators.push(Arc::new(jwt));
            }
            if authentication.enable_bootstrap_token_auth {
                let bootstrap = Arc::new(BootstrapTokenAuthenticator::new(storage));
                authenticators.push(Arc::new(AudienceAgnostic::new(
                    self.api_audiences(),
                    bootstrap,
                )));
            }
        }
        // Upstream wraps the union of its JWT authenticators as audience agnostic.
        for oidc in authentication.oidc.token_authenticators(&self.issuers)? {
            authenticators.push(Arc::new(AudienceAgnostic::new(self.api_audiences(), oidc)));
        }
        // The webhook goes last, as in upstream's union of token authenticators.
        authenticators.extend(
            authentication
                .webhook
                .token_authenticator(self.api_audiences())?,
        );
        Ok(authenticators)
    }

    /// `--api-audiences`, defaulting to the issuers.
    pub fn api_audiences(&self) -> Vec<String> {
        if self.api_audiences.is_empty() {
            self.issuers.clone()
        } else {
            self.api_audiences.clone()
        }
    }

    /// The OIDC discovery documents of the first issuer over the keys of
    /// `--service-account-key-file`. As upstream, a configuration they cannot be built from
    /// (an issuer that is not an https URL) is logged and serves none. Upstream's default
    /// JWKS URI is on the server's external address; here it is on the issuer's host.
    pub fn openid_metadata(&self) -> Option<Arc<OpenIdMetadata>> {
        let issuer = self.issuers.first()?;
        let mut keys = Vec::new();
        for file in &self.key_files {
            keys.extend(
                kas_auth::authentication::serviceaccount::public_keys_from_file(file).ok()?,
            );
        }
        let external = issuer
            .strip_prefix("https://")
            .map(|rest| rest.split(['/', '?', '#']).next().unwrap_or_default())
            .unwrap_or_default();
        match OpenIdMetadata::new(issuer, &self.jwks_uri, external, &keys) {
            Ok(md) => Some(Arc::new(md)),
            Err(e) => {
                tracing::warn!(error = %e, "not serving service account issuer discovery");
                None
            }
        }
    }
}
