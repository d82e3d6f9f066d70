//! Upstream's `jwtAuthenticator`: one per configured issuer. Tokens whose unverified `iss`
//! is another issuer's are no opinion. The provider is discovered in the background, every
//! 10 s until it answers; until then its tokens fail.

use std::sync::{Arc, Mutex, RwLock};

use futures_util::future::BoxFuture;
use kas_apimachinery::golang::strconv::quote;

use super::claims::Mapper;
use super::config::JwtAuthenticator;
use super::discovery::{INIT_RETRY, discover};
use super::distributed::{ClaimResolver, VerifierConfig};
use super::validation::{CelMapper, compile_and_validate_jwt_authenticator};
use super::verify::Verifier;
use super::{ALL_VALID_SIGNING_ALGORITHMS, Clock, ProviderClient};
use crate::authentication::serviceaccount::jwt::unverified_issuer;
use crate::authentication::{AuthRequest, Authenticator, Response};
use crate::{Error, Result, UserInfo};

/// Upstream's `oidc.Options`.
pub struct OidcOptions {
    pub jwt: JwtAuthenticator,
    /// Empty: RS256 only.
    pub supported_signing_algs: Vec<String>,
    /// The service-account issuers, which no JWT authenticator may claim.
    pub disallowed_issuers: Vec<String>,
    /// Reaches the provider (trusting `jwt.issuer.certificateAuthority`).
    pub client: Arc<dyn ProviderClient>,
    pub now: Clock,
}

pub struct OidcAuthenticator {
    jwt: JwtAuthenticator,
    mapper: CelMapper,
    required_claims: Vec<(String, String)>,
    client: Arc<dyn ProviderClient>,
    verifier: RwLock<Option<Arc<Verifier>>>,
    health: Mutex<Option<String>>,
    distributed: ClaimResolver,
}

impl std::fmt::Debug for OidcAuthenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OidcAuthenticator")
            .field("issuer", &self.jwt.issuer.url)
            .finish_non_exhaustive()
    }
}

impl OidcAuthenticator {
    /// Upstream's `New` without starting anything: validates and compiles the
    /// configuration. [`run`](Self::run) then discovers the provider.
    pub fn new(opts: OidcOptions) -> Result<Arc<OidcAuthenticator>, String> {
        let (mapper, errs) =
            compile_and_validate_jwt_authenticator(&opts.jwt, &opts.disallowed_issuers);
        if let Some(msg) = kas_apimachinery::validation::field::aggregate_message(&errs) {
            return Err(msg);
        }
        let mut algs = opts.supported_signing_algs;
        if algs.is_empty() {
            algs = vec!["RS256".to_owned()];
        }
        if let Some(alg) = algs
            .iter()
            .find(|a| !ALL_VALID_SIGNING_ALGORITHMS.contains(&a.as_str()))
        {
            return Err(format!("oidc: unsupported signing alg: {}", quote(alg)));
        }
        let required_claims = opts
            .jwt
            .claim_validation_rules
            .iter()
            .filter(|r| !r.claim.is_empty())
            .map(|r| (r.claim.clone(), r.required_value.clone()))
            .collect();
        let health = format!(
            "oidc: authenticator for issuer {} is not initialized",
            quote(&opts.jwt.issuer.url)
        );
        let distributed = ClaimResolver::new(VerifierConfig {
            client: opts.client.clone(),
            audiences: opts.jwt.issuer.audiences.clone(),
            algs,
            now: opts.now,
        });
        Ok(Arc::new(OidcAuthenticator {
            jwt: opts.jwt,
            mapper,
            required_claims,
            client: opts.client,
            verifier: RwLock::new(None),
            health: Mutex::new(Some(health)),
            distributed,
        }))
    }

    pub fn issuer(&self) -> &str {
        &self.jwt.issuer.url
    }

    /// Upstream's `HealthCheck`.
    pub fn health_check(&self) -> std::result::Result<(), String> {
        match &*self.health.lock().unwrap_or_else(|e| e.into_inner()) {
            None => Ok(()),
            Some(e) if e.starts_with("oidc: authenticator for issuer") => Err(e.clone()),
            Some(e) => Err(format!(
                "oidc: authenticator for issuer {} is not healthy: {e}",
                quote(self.issuer())
            )),
        }
    }

    /// Whether the provider has answered.
    pub fn initialized(&self) -> bool {
        self.verifier
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    /// One attempt at go-oidc's `NewProvider`: the discovery document, whose issuer must be
    /// the configured one, names the key set.
    pub async fn initialize(&self) -> std::result::Result<(), String> {
        let issuer = &self.jwt.issuer.url;
        match discover(&*self.client, issuer, &self.jwt.issuer.discovery_url).await {
            Ok(jwks_uri) => {
                let verifier = self.verifier_for(issuer, jwks_uri);
                *self.verifier.write().unwrap_or_else(|e| e.into_inner()) =
                    Some(Arc::new(verifier));
                *self.health.lock().unwrap_or_else(|e| e.into_inner()) = None;
                Ok(())
            }
            Err(e) => {
                *self.health.lock().unwrap_or_else(|e| e.into_inner()) = Some(e.clone());
                Err(e)
            }
        }
    }

    /// A verifier of `issuer`'s tokens with this authenticator's audiences and algorithms.
    fn verifier_for(&self, issuer: &str, jwks_uri: String) -> Verifier {
        self.distributed.config().verifier(issuer, jwks_uri)
    }

    /// Discovers the provider, every [`INIT_RETRY`] until it answers (upstream's
    /// background poll); spawn it on the runtime.
    pub async fn run(self: Arc<Self>) {
        loop {
            match self.initialize().await {
                Ok(()) => return,
                Err(e) => tracing::error!(error = %e, "oidc authenticator: initializing plugin"),
            }
            tokio::time::sleep(INIT_RETRY).await;
        }
    }

    /// Upstream's `AuthenticateToken`: `Ok(None)` for another issuer's token.
    pub async fn authenticate_token(
        &self,
        token: &str,
    ) -> std::result::Result<Option<UserInfo>, String> {
        if !has_correct_issuer(self.issuer(), token) {
            return Ok(None);
        }
        let verifier = self
            .verifier
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let Some(verifier) = verifier else {
            return Err("oidc: authenticator not initialized".to_owned());
        };
        let mut claims = verifier
            .verify(token)
            .await
            .map_err(|e| format!("oidc: verify token: {e}"))?;
        let groups_claim = &self.jwt.claim_mappings.groups.claim;
        if !groups_claim.is_empty() {
            self.distributed
                .expand(groups_claim, &mut claims)
                .await
                .map_err(|e| format!("oidc: could not expand distributed claims: {e}"))?;
        }
        let mapper = Mapper {
            jwt: &self.jwt,
            cel: &self.mapper,
            required_claims: &self.required_claims,
        };
        mapper.user(&claims).map(Some)
    }
}

/// Upstream's `hasCorrectIssuer`, with go-oidc's Google coalescing.
fn has_correct_issuer(issuer: &str, token: &str) -> bool {
    match unverified_issuer(token) {
        Some(iss) if iss == "accounts.google.com" => issuer == "https://accounts.google.com",
        Some(iss) => iss == issuer,
        None => false,
    }
}

impl Authenticator for OidcAuthenticator {
    fn authenticate<'a>(
        &'a self,
        req: &'a AuthRequest<'a>,
    ) -> BoxFuture<'a, Result<Option<Response>>> {
        Box::pin(async move {
            let Some(token) = crate::authentication::bearer_token(req) else {
                return Ok(None);
            };
            match self.authenticate_token(&token).await {
                Ok(user) => Ok(user.map(Response::bearer)),
                Err(e) => Err(Error::InvalidCredentials(e)),
            }
        })
    }
}
