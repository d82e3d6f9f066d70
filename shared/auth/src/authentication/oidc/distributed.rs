//! Upstream's `claimResolver`: a groups claim the token names in `_claim_names` instead of
//! carrying is fetched from its `_claim_sources` endpoint as a JWT, verified by a verifier
//! for that JWT's own issuer (discovered in the background on first use, as upstream's
//! `asyncIDTokenVerifier`), and its value put in the token's claims.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use kas_apimachinery::golang::strconv::quote;
use serde_json::Value;

use super::claims::Claims;
use super::discovery::{INIT_RETRY, discover};
use super::keyset::RemoteKeySet;
use super::verify::Verifier;
use super::{Clock, ProviderClient};
use crate::authentication::serviceaccount::jwt::unverified_issuer;

type Slot = Arc<RwLock<Option<Arc<Verifier>>>>;

/// What a verifier of another issuer shares with the authenticator's own.
#[derive(Clone)]
pub(crate) struct VerifierConfig {
    pub client: Arc<dyn ProviderClient>,
    pub audiences: Vec<String>,
    pub algs: Vec<String>,
    pub now: Clock,
}

impl VerifierConfig {
    pub fn verifier(&self, issuer: &str, jwks_uri: String) -> Verifier {
        Verifier {
            issuer: issuer.to_owned(),
            audiences: self.audiences.clone(),
            supported_signing_algs: self.algs.clone(),
            key_set: RemoteKeySet::new(self.client.clone(), jwks_uri, self.now.clone()),
            now: self.now.clone(),
        }
    }
}

pub(crate) struct ClaimResolver {
    config: VerifierConfig,
    verifiers: Mutex<HashMap<String, Slot>>,
}

impl ClaimResolver {
    pub fn new(config: VerifierConfig) -> ClaimResolver {
        ClaimResolver {
            config,
            verifiers: Mutex::default(),
        }
    }

    pub fn config(&self) -> &VerifierConfig {
        &self.config
    }

    /// The verifier of `iss`, whose discovery starts on the first call.
    fn verifier(&self, iss: &str) -> Result<Arc<Verifier>, String> {
        let slot = {
            let mut verifiers = self.verifiers.lock().unwrap_or_else(|e| e.into_inner());
            match verifiers.get(iss) {
                Some(slot) => slot.clone(),
                None => {
                    let slot: Slot = Arc::default();
                    verifiers.insert(iss.to_owned(), slot.clone());
                    let (config, iss, target) = (self.config.clone(), iss.to_owned(), slot.clone());
                    tokio::spawn(async move {
                        loop {
                            match discover(&*config.client, &iss, "").await {
                                Ok(jwks_uri) => {
                                    let v = config.verifier(&iss, jwks_uri);
                                    *target.write().unwrap_or_else(|e| e.into_inner()) =
                                        Some(Arc::new(v));
                                    return;
                                }
                                Err(e) => tracing::error!(
                                    issuer = %iss, error = %e,
                                    "oidc authenticator: async token verifier for issuer"
                                ),
                            }
                            tokio::time::sleep(INIT_RETRY).await;
                        }
                    });
                    slot
                }
            }
        };
        let verifier = slot.read().unwrap_or_else(|e| e.into_inner()).clone();
        verifier.ok_or_else(|| format!("verifier not initialized for issuer: {}", quote(iss)))
    }

    /// Upstream's `expand` of `claim`.
    pub async fn expand(&self, claim: &str, claims: &mut Claims) -> Result<(), String> {
        if claims.contains_key(claim) {
            return Ok(());
        }
        let Some(names) = claims.get("_claim_names") else {
            return Ok(());
        };
        let names: HashMap<String, String> = serde_json::from_value(names.clone())
            .map_err(|e| format!("oidc: error parsing distributed claim names: {e}"))?;
        let Some(sources) = claims.get("_claim_sources") else {
            return Err("oidc: no claim sources".to_owned());
        };
        let sources: HashMap<String, Value> = serde_json::from_value(sources.clone())
            .map_err(|e| format!("oidc: could not parse claim sources: {e}"))?;
        let Some(src) = names.get(claim) else {
            return Ok(());
        };
        let Some(endpoint) = sources.get(src) else {
            return Err(format!(
                "id token _claim_names contained a source {src} missing in _claims_sources"
            ));
        };
        let field = |k: &str| endpoint.get(k).and_then(Value::as_str).unwrap_or_default();
        let (url, access_token) = (field("endpoint"), field("access_token"));
        if url.is_empty() {
            return Ok(());
        }
        let jwt = get_claim_jwt(&*self.config.client, url, access_token)
            .await
            .map_err(|e| format!("while getting distributed claim {}: {e}", quote(claim)))?;
        let Some(iss) = unverified_issuer(&jwt) else {
            return Err(format!(
                "getting untrusted issuer from endpoint {url} failed for claim {}: malformed token",
                quote(claim)
            ));
        };
        let verifier = self
            .verifier(&iss)
            .map_err(|e| format!("verifying untrusted issuer {iss} failed: {e}"))?;
        let distributed = verifier
            .verify(&jwt)
            .await
            .map_err(|e| format!("verify distributed claim token: {e}"))?;
        let Some(value) = distributed.get(claim) else {
            return Err(format!(
                "jwt returned by distributed claim endpoint {} did not contain claim: {claim}",
                quote(url)
            ));
        };
        claims.insert(claim.to_owned(), value.clone());
        Ok(())
    }
}

/// Upstream's `getClaimJWT`.
async fn get_claim_jwt(
    client: &dyn ProviderClient,
    url: &str,
    access_token: &str,
) -> Result<String, String> {
    let bearer = (!access_token.is_empty()).then_some(access_token);
    let resp = client.get(url, bearer).await?;
    if !(200..=226).contains(&resp.status) {
        return Err(format!(
            "error while getting distributed claim JWT: {}",
            resp.status_text()
        ));
    }
    Ok(String::from_utf8_lossy(&resp.body).into_owned())
}
