//! Authenticators: each looks at one kind of credential and answers with a user, with no
//! opinion (`Ok(None)`), or with an error (credentials presented but invalid).

pub mod anonymous;
pub mod audiences;
pub mod bootstrap_token;
pub mod group_adder;
pub mod oidc;
mod peer;
pub mod request_header;
pub mod serviceaccount;
#[cfg(test)]
mod testing;
pub mod token_cache;
pub mod token_file;
pub mod union;
pub mod x509;

use std::path::PathBuf;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use http::HeaderMap;

use crate::{Result, UserInfo};

pub use anonymous::Anonymous;
pub use group_adder::AuthenticatedGroupAdder;
pub use peer::PeerCertificates;
pub use request_header::{RequestHeaderAuthenticator, RequestHeaderConfig};
pub use serviceaccount::{JwtTokenAuthenticator, ServiceAccountLookup, TokenGenerator};
pub use token_file::TokenFileAuthenticator;
pub use union::Union;
pub use x509::X509Authenticator;

/// What an authenticator may look at.
pub struct AuthRequest<'a> {
    pub path: &'a str,
    pub headers: &'a HeaderMap,
    pub peer_certificates: Option<&'a PeerCertificates>,
    /// The audiences the credential must be for (upstream's `WithAudiences`: a
    /// TokenReview's); `None` means the server's own (`--api-audiences`).
    pub audiences: Option<&'a [String]>,
}

/// A successful authentication.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Response {
    pub user: UserInfo,
    /// Headers the authentication filter must strip before passing the request on
    /// (the `Authorization` header for tokens, the request headers for the front proxy).
    pub consumed_headers: Vec<http::HeaderName>,
    /// Whether an authenticating front proxy vouched for the request (the request-header
    /// authenticator): what else such a proxy hands on with the request (kas's audit
    /// hand-off) is trusted only then.
    pub proxied: bool,
    /// The audiences the credential was accepted for (upstream's `Response.Audiences`),
    /// which a TokenReview reports.
    pub audiences: Vec<String>,
    /// What the authenticator noted for the request's audit event and answer.
    pub notes: Notes,
}

/// What authenticators note about a request besides its user: upstream's
/// `audit.AddAuditAnnotation` and `warning.AddWarning` calls made while authenticating
/// (a stale or legacy service-account token). The authentication filter puts the
/// annotations on the request's audit event and the warnings on its answer; the token
/// cache keeps them with the user it remembers and gives them again on every hit, as
/// upstream's cache replays what it recorded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Notes {
    pub audit_annotations: Vec<(&'static str, String)>,
    pub warnings: Vec<String>,
}

impl Notes {
    pub fn is_empty(&self) -> bool {
        self.audit_annotations.is_empty() && self.warnings.is_empty()
    }

    pub fn annotate(&mut self, key: &'static str, value: impl Into<String>) {
        self.audit_annotations.push((key, value.into()));
    }

    pub fn warn(&mut self, text: impl Into<String>) {
        self.warnings.push(text.into());
    }
}

impl Response {
    /// A bearer token's user: the `Authorization` header is consumed.
    pub fn bearer(user: UserInfo) -> Response {
        Response {
            user,
            consumed_headers: vec![http::header::AUTHORIZATION],
            proxied: false,
            audiences: Vec::new(),
            notes: Notes::default(),
        }
    }
}

/// Upstream's `bearertoken` parsing, shared by every token authenticator: the scheme is
/// case-insensitive, the header is split on single spaces, and an empty token (`Bearer`
/// followed by two spaces) is no opinion.
pub fn bearer_token(req: &AuthRequest<'_>) -> Option<String> {
    let raw = req.headers.get(http::header::AUTHORIZATION)?;
    let auth = String::from_utf8_lossy(raw.as_bytes());
    let mut parts = auth.trim().splitn(3, ' ');
    let scheme = parts.next()?;
    let token = parts.next()?;
    if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() {
        return None;
    }
    Some(token.to_owned())
}

/// Upstream's `authenticator.Request`.
pub trait Authenticator: Send + Sync {
    fn authenticate<'a>(
        &'a self,
        req: &'a AuthRequest<'a>,
    ) -> BoxFuture<'a, Result<Option<Response>>>;
}

pub type DynAuthenticator = Arc<dyn Authenticator>;

/// Whether requests no authenticator claims are let through as `system:anonymous`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum AnonymousConfig {
    #[default]
    Disabled,
    Enabled,
    /// Anonymous only for these exact paths (upstream's anonymous conditions).
    Paths(Vec<String>),
}

/// Everything [`build`] needs: the authentication flags of kube-apiserver.
#[derive(Clone, Default)]
pub struct AuthenticationConfig {
    pub client_ca_file: Option<PathBuf>,
    pub token_auth_file: Option<PathBuf>,
    pub request_header: Option<RequestHeaderConfig>,
    pub anonymous: AnonymousConfig,
    /// Bearer-token authenticators the role built itself (service-account tokens, whose
    /// lookups read its storage), tried after the token file.
    pub token_authenticators: Vec<DynAuthenticator>,
}

/// Builds the request authenticator as upstream's `authenticator.Config.New` does: front
/// proxy, then client certificates, then bearer tokens, all behind the authenticated-group
/// adder; anonymous last, and only when the others had no opinion and no error (a bad
/// credential is a 401, never anonymous).
///
/// With no authenticator at all and anonymous disabled, upstream disables authentication;
/// here every request then has no user (401).
pub fn build(cfg: &AuthenticationConfig) -> Result<DynAuthenticator> {
    let mut authenticators: Vec<DynAuthenticator> = Vec::new();
    if let Some(rh) = &cfg.request_header {
        authenticators.push(Arc::new(RequestHeaderAuthenticator::new(rh)?));
    }
    if let Some(ca) = &cfg.client_ca_file {
        authenticators.push(Arc::new(X509Authenticator::from_ca_file(ca)?));
    }
    // The static token file is a map lookup: it stays out of the cache, which would only
    // add a hash and a lock to every admin request. The token authenticators that read
    // storage go behind upstream's 10 s cache of successes.
    if let Some(file) = &cfg.token_auth_file {
        authenticators.push(Arc::new(TokenFileAuthenticator::from_file(file)?));
    }
    match cfg.token_authenticators.as_slice() {
        [] => {}
        tokens => authenticators.push(Arc::new(token_cache::CachedTokenAuthenticator::new(
            Arc::new(Union::new(tokens.to_vec())),
        ))),
    }
    let anonymous: Option<DynAuthenticator> = match &cfg.anonymous {
        AnonymousConfig::Disabled => None,
        AnonymousConfig::Enabled => Some(Arc::new(Anonymous::new())),
        AnonymousConfig::Paths(paths) => Some(Arc::new(Anonymous::for_paths(paths.clone()))),
    };
    if authenticators.is_empty() {
        // Upstream returns the bare anonymous authenticator here, without the group adder.
        return Ok(anonymous.unwrap_or_else(|| Arc::new(Union::new(Vec::new()))));
    }
    let authenticated: DynAuthenticator = Arc::new(AuthenticatedGroupAdder::new(Arc::new(
        Union::new(authenticators),
    )));
    Ok(match anonymous {
        Some(anonymous) => Arc::new(Union::fail_on_error(vec![authenticated, anonymous])),
        None => authenticated,
    })
}

#[cfg(test)]
mod tests;
