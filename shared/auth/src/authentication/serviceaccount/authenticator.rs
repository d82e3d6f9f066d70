//! The service-account token authenticator, after upstream's `jwtTokenAuthenticator`
//! (bound tokens of `--service-account-issuer`, and legacy tokens of
//! `kubernetes/serviceaccount`) behind `request/bearertoken`.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

use futures_util::future::BoxFuture;

use super::claims::{self, PrivateClaims, PublicClaims};
use super::jwt;
use super::keys::{PublicKey, public_keys_from_file};
use super::legacy::{self, LEGACY_ISSUER, LegacyPrivateClaims};
use super::lookup::ServiceAccountLookup;
use crate::authentication::{AuthRequest, Authenticator, Notes, Response};
use crate::{Error, Result, UserInfo};

/// Validates service-account JWTs: the signature against the configured public keys, the
/// issuer, the audiences, then the claims and the objects they name.
pub struct JwtTokenAuthenticator {
    issuers: HashSet<String>,
    keys: Vec<PublicKey>,
    implicit_auds: Vec<String>,
    lookup: Arc<dyn ServiceAccountLookup>,
    /// `--service-account-lookup`: whether a legacy token's secret and service account
    /// are looked up (bound tokens' objects always are).
    legacy_lookup: bool,
}

/// A token the authenticator accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenResponse {
    pub user: UserInfo,
    /// The audiences of the token the request is for (upstream's `Response.Audiences`).
    pub audiences: Vec<String>,
    /// The audit annotations and warnings validation made.
    pub notes: Notes,
}

impl JwtTokenAuthenticator {
    /// `issuers` (`--service-account-issuer`) and the legacy issuer are accepted;
    /// `api_audiences` are `--api-audiences` (the issuers when unset, as the options
    /// default them).
    pub fn new(
        issuers: Vec<String>,
        keys: Vec<PublicKey>,
        api_audiences: Vec<String>,
        lookup: Arc<dyn ServiceAccountLookup>,
    ) -> Self {
        JwtTokenAuthenticator {
            issuers: issuers.into_iter().collect(),
            keys,
            implicit_auds: api_audiences,
            lookup,
            legacy_lookup: true,
        }
    }

    /// Upstream's `--service-account-lookup=false`: legacy tokens are accepted on their
    /// signature and claims alone, without reading their secret and service account.
    pub fn with_legacy_lookup(mut self, lookup: bool) -> Self {
        self.legacy_lookup = lookup;
        self
    }

    /// [`new`](Self::new) with the public keys of `--service-account-key-file` (each file
    /// may hold several keys, private keys standing for their public halves).
    pub fn from_key_files(
        key_files: &[impl AsRef<Path>],
        issuers: Vec<String>,
        api_audiences: Vec<String>,
        lookup: Arc<dyn ServiceAccountLookup>,
    ) -> Result<Self> {
        let mut keys = Vec::new();
        for file in key_files {
            keys.extend(public_keys_from_file(file)?);
        }
        Ok(Self::new(issuers, keys, api_audiences, lookup))
    }

    /// Upstream's `AuthenticateToken`. `Ok(None)` when the token is not one of ours (not a
    /// JWT, or another issuer's); `requested` are the audiences the request names (a
    /// TokenReview's), else the API audiences.
    pub async fn authenticate_token(
        &self,
        token: &str,
        requested: Option<&[String]>,
    ) -> Result<Option<TokenResponse>> {
        let fail = |m: String| Error::InvalidCredentials(m);
        let Some(issuer) = jwt::unverified_issuer(token) else {
            return Ok(None);
        };
        let is_legacy = issuer == LEGACY_ISSUER && !self.issuers.contains(&issuer);
        if !is_legacy && !self.issuers.contains(&issuer) {
            return Ok(None);
        }
        let Some(jws) = jwt::parse(token) else {
            return Ok(None);
        };
        let keys: Vec<&PublicKey> = self
            .keys
            .iter()
            .filter(|k| jws.kid.is_empty() || k.key_id == jws.kid)
            .collect();
        if keys.is_empty() {
            return Err(fail("invalid signature, no keys found".to_owned()));
        }
        let mut errs = Vec::new();
        if !keys.iter().any(|k| match jws.verify(k) {
            Ok(()) => true,
            Err(e) => {
                errs.push(Error::InvalidCredentials(e));
                false
            }
        }) {
            return Err(Error::aggregate(errs).unwrap_or_else(|| fail(String::new())));
        }
        let public: PublicClaims =
            serde_json::from_slice(&jws.payload).map_err(|e| fail(e.to_string()))?;
        let accepted = if is_legacy {
            public.issuer == LEGACY_ISSUER
        } else {
            self.issuers.contains(&public.issuer)
        };
        if !accepted {
            return Err(fail(format!(
                "token issuer {} is invalid",
                kas_apimachinery::golang::strconv::quote(&public.issuer)
            )));
        }
        let mut notes = Notes::default();
        let token_auds = if public.audience.is_empty() {
            // Only the API's audiences are allowed for tokens without any (legacy ones).
            notes.annotate("authentication.k8s.io/legacy-token", public.subject.clone());
            self.implicit_auds.clone()
        } else {
            public.audience.clone()
        };
        let requested = requested.unwrap_or(&self.implicit_auds);
        let auds: Vec<String> = token_auds
            .iter()
            .filter(|a| requested.contains(a))
            .cloned()
            .collect();
        if auds.is_empty() && !self.implicit_auds.is_empty() {
            return Err(fail(format!(
                "token audiences {} is invalid for the target audiences {}",
                quote_list(&token_auds),
                quote_list(requested)
            ))
            .noted(notes));
        }
        let validated = if is_legacy {
            match serde_json::from_slice::<LegacyPrivateClaims>(&jws.payload) {
                Ok(private) => {
                    let lookup = self.legacy_lookup.then_some(self.lookup.as_ref());
                    legacy::validate(lookup, token, &public, &private, &mut notes).await
                }
                Err(e) => Err(e.to_string()),
            }
        } else {
            match serde_json::from_slice::<PrivateClaims>(&jws.payload) {
                Ok(private) => {
                    let now = SystemTime::now();
                    claims::validate(self.lookup.as_ref(), &public, &private, now, &mut notes).await
                }
                Err(e) => Err(e.to_string()),
            }
        };
        let info = match validated {
            Ok(info) => info,
            Err(message) => return Err(fail(message).noted(notes)),
        };
        Ok(Some(TokenResponse {
            user: info.user_info(),
            audiences: auds,
            notes,
        }))
    }
}

/// Go's `%q` of a `[]string`: `["a" "b"]`.
fn quote_list(items: &[String]) -> String {
    let quoted: Vec<String> = items
        .iter()
        .map(|s| kas_apimachinery::golang::strconv::quote(s))
        .collect();
    format!("[{}]", quoted.join(" "))
}

/// As a request authenticator, for a bearer token. A token that is not a service-account
/// token is no opinion here; upstream's bearer wrapper turns "no authenticator knew the
/// token" into `invalid bearer token` once for all token authenticators, which the caller's
/// union does.
impl Authenticator for JwtTokenAuthenticator {
    fn authenticate<'a>(
        &'a self,
        req: &'a AuthRequest<'a>,
    ) -> BoxFuture<'a, Result<Option<Response>>> {
        Box::pin(async move {
            let Some(token) = crate::authentication::bearer_token(req) else {
                return Ok(None);
            };
            Ok(self
                .authenticate_token(&token, req.audiences)
                .await?
                .map(|r| Response {
                    audiences: r.audiences,
                    notes: r.notes,
                    ..Response::bearer(r.user)
                }))
        })
    }
}
