//! Upstream's `JWTTokenGenerator`: signs the claims of a TokenRequest with the key of
//! `--service-account-signing-key-file`, as the first `--service-account-issuer`.

use std::path::Path;

use super::claims::TokenClaims;
use super::jwt;
use super::keys::{PrivateKey, PublicKey, private_key_from_file};
use crate::{Error, Result};

#[derive(Debug)]
pub struct TokenGenerator {
    issuer: String,
    key: PrivateKey,
    public: PublicKey,
}

impl TokenGenerator {
    pub fn new(issuer: impl Into<String>, key: PrivateKey) -> Result<Self> {
        let public = key.public_key().ok_or_else(|| Error::Config {
            what: "service account signing key",
            path: String::new(),
            message: "failed to derive keyID".to_owned(),
        })?;
        Ok(TokenGenerator {
            issuer: issuer.into(),
            key,
            public,
        })
    }

    /// The key of `--service-account-signing-key-file`, with the error upstream's
    /// completion gives (`failed to parse service-account-issuer-key-file: ...`).
    pub fn from_file(issuer: impl Into<String>, path: impl AsRef<Path>) -> Result<Self> {
        let key = private_key_from_file(path.as_ref()).map_err(|e| Error::Config {
            what: "failed to parse",
            path: "service-account-issuer-key-file".to_owned(),
            message: e.to_string(),
        })?;
        Self::new(issuer, key)
    }

    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The public half of the signing key (its `kid` is in every token's header).
    pub fn public_key(&self) -> &PublicKey {
        &self.public
    }

    /// Upstream's `GenerateToken`: the claims with `iss`, signed.
    pub fn generate_token(&self, claims: &TokenClaims) -> Result<String> {
        jwt::sign(
            &self.key,
            &self.public.key_id,
            &claims.payload(&self.issuer),
        )
        .map_err(Error::InvalidCredentials)
    }
}
