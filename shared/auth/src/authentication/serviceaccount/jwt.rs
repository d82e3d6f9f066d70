//! Compact JWS, as go-jose (v2) signs and verifies the tokens: `base64url(header)`,
//! `base64url(payload)` and `base64url(signature)` joined by dots, no padding.

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{self, UnparsedPublicKey};
use base64::Engine as _;
use base64::alphabet;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use serde_json::Value;

use super::keys::{KeyMaterial, PrivateKey, PublicKey, verification_ec};

/// go-jose's `ErrCryptoFailure`: the signature does not verify.
pub const ERR_CRYPTO_FAILURE: &str = "go-jose/go-jose: error in cryptographic primitive";
/// go-jose's `ErrUnsupportedAlgorithm`: the header's `alg` does not fit the key.
pub const ERR_UNSUPPORTED_ALGORITHM: &str = "go-jose/go-jose: unknown/unsupported algorithm";

/// Go's `base64.RawURLEncoding` when decoding: no padding, and (not being strict) any
/// trailing bits.
const RAW_URL: GeneralPurpose = GeneralPurpose::new(
    &alphabet::URL_SAFE,
    GeneralPurposeConfig::new()
        .with_encode_padding(false)
        .with_decode_padding_mode(DecodePaddingMode::RequireNone)
        .with_decode_allow_trailing_bits(true),
);

/// Signs `payload` (JSON) with `key`; the header names the key's algorithm and `kid`.
pub fn sign(key: &PrivateKey, kid: &str, payload: &[u8]) -> Result<String, String> {
    let alg = match key {
        PrivateKey::Rsa(_) => "RS256",
        PrivateKey::Ec(_, curve) => curve.algorithm(),
    };
    // go-jose writes the protected header with sorted keys.
    let header = format!(
        "{{\"alg\":{},\"kid\":{}}}",
        Value::from(alg),
        Value::from(kid)
    );
    let mut out = URL_SAFE_NO_PAD.encode(header);
    out.push('.');
    out.push_str(&URL_SAFE_NO_PAD.encode(payload));
    let failed = |_| "go-jose/go-jose: error in cryptographic primitive".to_owned();
    let sig = match key {
        PrivateKey::Rsa(kp) => {
            let mut sig = vec![0; kp.public_modulus_len()];
            kp.sign(
                &signature::RSA_PKCS1_SHA256,
                &SystemRandom::new(),
                out.as_bytes(),
                &mut sig,
            )
            .map_err(failed)?;
            sig
        }
        PrivateKey::Ec(kp, _) => kp
            .sign(&SystemRandom::new(), out.as_bytes())
            .map_err(failed)?
            .as_ref()
            .to_vec(),
    };
    out.push('.');
    out.push_str(&URL_SAFE_NO_PAD.encode(sig));
    Ok(out)
}

/// A token split and decoded, not yet verified.
#[derive(Debug)]
pub struct Jws<'a> {
    pub alg: String,
    /// The header's `kid`, empty when it has none.
    pub kid: String,
    signing_input: &'a str,
    pub payload: Vec<u8>,
    signature: Vec<u8>,
}

/// go-jose's `ParseSigned` of the compact form; `None` when it does not parse (upstream
/// then has no opinion on the token).
pub fn parse(token: &str) -> Option<Jws<'_>> {
    let mut parts = token.split('.');
    let (h, p, s) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    // go-jose trims padding before decoding.
    let decode = |s: &str| RAW_URL.decode(s.trim_end_matches('=')).ok();
    let header: Value = serde_json::from_slice(&decode(h)?).ok()?;
    let header = header.as_object()?;
    let field = |k: &str| match header.get(k) {
        None | Some(Value::Null) => Some(String::new()),
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => None,
    };
    Some(Jws {
        alg: field("alg")?,
        kid: field("kid")?,
        signing_input: &token[..h.len() + 1 + p.len()],
        payload: decode(p)?,
        signature: decode(s)?,
    })
}

impl Jws<'_> {
    /// Verifies the signature with `key` as go-jose does, with its error texts.
    pub fn verify(&self, key: &PublicKey) -> Result<(), String> {
        let msg = self.signing_input.as_bytes();
        match &key.material {
            KeyMaterial::Rsa { .. } => {
                let alg: &'static dyn signature::VerificationAlgorithm = match self.alg.as_str() {
                    "RS256" => &signature::RSA_PKCS1_1024_8192_SHA256_FOR_LEGACY_USE_ONLY,
                    "RS384" => &signature::RSA_PKCS1_2048_8192_SHA384,
                    "RS512" => &signature::RSA_PKCS1_1024_8192_SHA512_FOR_LEGACY_USE_ONLY,
                    "PS256" => &signature::RSA_PSS_2048_8192_SHA256,
                    "PS384" => &signature::RSA_PSS_2048_8192_SHA384,
                    "PS512" => &signature::RSA_PSS_2048_8192_SHA512,
                    _ => return Err(ERR_UNSUPPORTED_ALGORITHM.to_owned()),
                };
                UnparsedPublicKey::new(alg, &key.spki)
                    .verify(msg, &self.signature)
                    .map_err(|_| ERR_CRYPTO_FAILURE.to_owned())
            }
            KeyMaterial::Ec { curve, .. } => {
                let size = match self.alg.as_str() {
                    "ES256" => 32,
                    "ES384" => 48,
                    "ES512" => 66,
                    _ => return Err(ERR_UNSUPPORTED_ALGORITHM.to_owned()),
                };
                if self.signature.len() != 2 * size {
                    return Err(format!(
                        "go-jose/go-jose: invalid signature size, have {} bytes, wanted {}",
                        self.signature.len(),
                        2 * size
                    ));
                }
                if curve.algorithm() != self.alg {
                    return Err(ERR_CRYPTO_FAILURE.to_owned());
                }
                UnparsedPublicKey::new(verification_ec(*curve), &key.spki)
                    .verify(msg, &self.signature)
                    .map_err(|_| ERR_CRYPTO_FAILURE.to_owned())
            }
        }
    }
}

/// The `iss` claim of a token without verifying it (upstream's `hasCorrectIssuer`); `None`
/// when the token is not a compact JWT with a JSON payload.
pub fn unverified_issuer(token: &str) -> Option<String> {
    if token.trim_start().starts_with('{') {
        return None;
    }
    let parts: Vec<&str> = token.split('.').collect();
    if parts.len() != 3 {
        return None;
    }
    let payload = RAW_URL.decode(parts[1]).ok()?;
    let claims: Value = serde_json::from_slice(&payload).ok()?;
    match claims.get("iss") {
        Some(Value::String(s)) => Some(s.clone()),
        None | Some(Value::Null) => Some(String::new()),
        // Go's json.Unmarshal into a string fails on other types.
        Some(_) => None,
    }
}
