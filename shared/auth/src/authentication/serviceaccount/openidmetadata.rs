//! The OIDC discovery documents of the service-account issuer, after upstream's
//! `openidmetadata.go`: `/.well-known/openid-configuration` and the JWKS at
//! `/openid/v1/jwks`, rendered once.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;

use super::keys::{KeyMaterial, PublicKey};

pub const OPENID_CONFIG_PATH: &str = "/.well-known/openid-configuration";
pub const JWKS_PATH: &str = "/openid/v1/jwks";
/// What upstream serves as `Cache-Control` (the static key getter's one hour).
pub const CACHE_CONTROL: &str = "public, max-age=3600";
pub const MIME_JWKS: &str = "application/jwk-set+json";

/// The rendered documents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenIdMetadata {
    pub config_json: Vec<u8>,
    pub keyset_json: Vec<u8>,
}

/// Scheme, and whether a query or fragment is present, of an absolute URL.
fn url_parts(u: &str) -> (Option<&str>, bool, bool) {
    let scheme = u.split_once(':').map(|(s, _)| s).filter(|s| {
        s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    });
    let (before_fragment, fragment) = match u.split_once('#') {
        Some((b, f)) => (b, !f.is_empty()),
        None => (u, false),
    };
    let query = before_fragment
        .split_once('?')
        .is_some_and(|(_, q)| !q.is_empty());
    (scheme, query, fragment)
}

impl OpenIdMetadata {
    /// Upstream's `NewOpenIDMetadataProvider`: `issuer_url` must be an https URL without
    /// query or fragment; the JWKS URI is `jwks_uri`, else `https://<external address>`
    /// plus the JWKS path. Upstream logs the error and serves no discovery.
    pub fn new(
        issuer_url: &str,
        jwks_uri: &str,
        default_external_address: &str,
        keys: &[PublicKey],
    ) -> Result<OpenIdMetadata, String> {
        if issuer_url.is_empty() {
            return Err("empty issuer URL".to_owned());
        }
        if jwks_uri.is_empty() && default_external_address.is_empty() {
            return Err(
                "either the JWKS URI or the default external address, or both, must be set"
                    .to_owned(),
            );
        }
        let (scheme, query, fragment) = url_parts(issuer_url);
        if scheme != Some("https") {
            return Err(format!(
                "issuer URL must use https scheme, got: {issuer_url}"
            ));
        }
        if query {
            return Err(format!(
                "issuer URL may not include a query, got: {issuer_url}"
            ));
        }
        if fragment {
            return Err(format!(
                "issuer URL may not include a fragment, got: {issuer_url}"
            ));
        }
        let jwks_uri = if jwks_uri.is_empty() {
            format!("https://{default_external_address}{JWKS_PATH}")
        } else {
            if url_parts(jwks_uri).0 != Some("https") {
                return Err(format!(
                    "jwksURI requires https scheme, parsed as: {jwks_uri}"
                ));
            }
            jwks_uri.to_owned()
        };
        if keys.is_empty() {
            return Err("no keys provided for validating keyset".to_owned());
        }
        Ok(OpenIdMetadata {
            config_json: config_json(issuer_url, &jwks_uri, keys).into_bytes(),
            keyset_json: keyset_json(keys).into_bytes(),
        })
    }
}

fn s(v: &str) -> String {
    Value::from(v).to_string()
}

/// The discovery document, fields in upstream's order; the algorithms sorted, once each.
pub fn config_json(issuer: &str, jwks_uri: &str, keys: &[PublicKey]) -> String {
    let mut algs: Vec<&str> = keys.iter().map(PublicKey::algorithm).collect();
    algs.sort_unstable();
    algs.dedup();
    let algs: Vec<String> = algs.into_iter().map(s).collect();
    format!(
        "{{\"issuer\":{},\"jwks_uri\":{},\"response_types_supported\":[\"id_token\"],\"subject_types_supported\":[\"public\"],\"id_token_signing_alg_values_supported\":[{}]}}",
        s(issuer),
        s(jwks_uri),
        algs.join(",")
    )
}

/// One JWK as go-jose writes it: use, kty, kid, crv, alg, then x and y or n and e.
pub fn jwk_json(key: &PublicKey) -> String {
    let b64 = |b: &[u8]| s(&URL_SAFE_NO_PAD.encode(b));
    let head = |kty: &str| {
        format!(
            "\"use\":\"sig\",\"kty\":\"{kty}\",\"kid\":{}",
            s(&key.key_id)
        )
    };
    match &key.material {
        KeyMaterial::Rsa { n, e } => format!(
            "{{{},\"alg\":\"RS256\",\"n\":{},\"e\":{}}}",
            head("RSA"),
            b64(n),
            b64(e)
        ),
        KeyMaterial::Ec { curve, x, y } => format!(
            "{{{},\"crv\":\"{}\",\"alg\":\"{}\",\"x\":{},\"y\":{}}}",
            head("EC"),
            curve.jwk_name(),
            curve.algorithm(),
            b64(x),
            b64(y)
        ),
    }
}

/// The JWKS: `{"keys":[...]}`.
pub fn keyset_json(keys: &[PublicKey]) -> String {
    let keys: Vec<String> = keys.iter().map(jwk_json).collect();
    format!("{{\"keys\":[{}]}}", keys.join(","))
}
