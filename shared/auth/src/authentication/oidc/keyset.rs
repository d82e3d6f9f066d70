//! JSON Web Key sets and go-oidc (v2)'s `RemoteKeySet`: keys fetched from the provider's
//! `jwks_uri`, kept until a token names a key they lack; then fetched again (one request
//! at a time, shared by every token waiting on it) unless the last answer's
//! `Cache-Control: max-age` says they are still fresh.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use futures_util::FutureExt as _;
use futures_util::future::{BoxFuture, Shared};
use serde_json::Value;

use super::{Clock, ProviderClient, unmarshal_response};
use crate::authentication::serviceaccount::jwt::Jws;
use crate::authentication::serviceaccount::keys::PublicKey;

/// go-oidc's `keysExpiryDelta`: keys expiring within this are fetched again on an unknown
/// key ID.
const KEYS_EXPIRY_DELTA: Duration = Duration::from_secs(30);

/// Go's `base64.RawURLEncoding`, as go-jose decodes JWK members (padding trimmed first).
fn b64(s: &str) -> Option<Vec<u8>> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s.trim_end_matches('='))
        .ok()
}

/// Parses a JWK set (`{"keys": [...]}`) into verification keys: RSA and NIST-curve EC
/// keys; as go-jose, a key of an unknown type fails the whole set.
pub fn parse_jwks(body: &[u8]) -> Result<Vec<PublicKey>, String> {
    let set: Value = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    let keys = match set.get("keys") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(keys)) => keys,
        Some(_) => {
            return Err(
                "json: cannot unmarshal into Go struct field JSONWebKeySet.keys".to_owned(),
            );
        }
    };
    keys.iter().map(parse_jwk).collect()
}

fn parse_jwk(key: &Value) -> Result<PublicKey, String> {
    let field = |k: &str| key.get(k).and_then(Value::as_str).unwrap_or_default();
    let kty = field("kty");
    let spki = match kty {
        "RSA" => {
            let (Some(n), Some(e)) = (b64(field("n")), b64(field("e"))) else {
                return Err("square/go-jose: invalid RSA key, missing n/e values".to_owned());
            };
            if n.is_empty() || e.is_empty() {
                return Err("square/go-jose: invalid RSA key, missing n/e values".to_owned());
            }
            der::rsa_spki(&n, &e)
        }
        "EC" => {
            let (x, y) = (b64(field("x")), b64(field("y")));
            let (Some(x), Some(y)) = (x, y) else {
                return Err("square/go-jose: invalid EC key, missing x/y values".to_owned());
            };
            let crv = field("crv");
            let Some((oid, size)) = der::curve(crv) else {
                return Err(format!(
                    "square/go-jose: unsupported elliptic curve '{crv}'"
                ));
            };
            if x.len() != size || y.len() != size {
                return Err(
                    "square/go-jose: invalid EC public key, wrong length for x/y".to_owned(),
                );
            }
            der::ec_spki(oid, &x, &y)
        }
        other => {
            return Err(format!(
                "square/go-jose: unknown json web key type '{other}'"
            ));
        }
    };
    let mut public =
        PublicKey::from_spki(&spki).ok_or_else(|| format!("square/go-jose: invalid {kty} key"))?;
    public.key_id = field("kid").to_owned();
    Ok(public)
}

/// Just enough DER to wrap JWK members as a SubjectPublicKeyInfo.
mod der {
    const RSA_ENCRYPTION: &[u8] = &[
        0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00,
    ];
    const EC_PUBLIC_KEY: &[u8] = &[0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
    const P256: &[u8] = &[0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
    const P384: &[u8] = &[0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22];
    const P521: &[u8] = &[0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x23];

    pub fn curve(name: &str) -> Option<(&'static [u8], usize)> {
        match name {
            "P-256" => Some((P256, 32)),
            "P-384" => Some((P384, 48)),
            "P-521" => Some((P521, 66)),
            _ => None,
        }
    }

    fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
        let mut out = vec![tag];
        let len = content.len();
        if len < 0x80 {
            out.push(len as u8);
        } else {
            let bytes: Vec<u8> = len
                .to_be_bytes()
                .into_iter()
                .skip_while(|b| *b == 0)
                .collect();
            out.push(0x80 | bytes.len() as u8);
            out.extend(bytes);
        }
        out.extend_from_slice(content);
        out
    }

    fn integer(v: &[u8]) -> Vec<u8> {
        let start = v
            .iter()
            .position(|b| *b != 0)
            .unwrap_or(v.len().saturating_sub(1));
        let v = &v[start..];
        let mut content = Vec::with_capacity(v.len() + 1);
        if v.first().is_some_and(|b| b & 0x80 != 0) {
            content.push(0);
        }
        content.extend_from_slice(v);
        tlv(0x02, &content)
    }

    fn bit_string(v: &[u8]) -> Vec<u8> {
        let mut content = vec![0];
        content.extend_from_slice(v);
        tlv(0x03, &content)
    }

    pub fn rsa_spki(n: &[u8], e: &[u8]) -> Vec<u8> {
        let key = tlv(0x30, &[integer(n), integer(e)].concat());
        tlv(
            0x30,
            &[tlv(0x30, RSA_ENCRYPTION), bit_string(&key)].concat(),
        )
    }

    pub fn ec_spki(curve: &[u8], x: &[u8], y: &[u8]) -> Vec<u8> {
        let alg = tlv(0x30, &[EC_PUBLIC_KEY, curve].concat());
        let point = [&[4u8][..], x, y].concat();
        tlv(0x30, &[alg, bit_string(&point)].concat())
    }
}

type Fetch = Shared<BoxFuture<'static, Result<Arc<Vec<PublicKey>>, String>>>;

struct Cache {
    keys: Arc<Vec<PublicKey>>,
    expiry: SystemTime,
    inflight: Option<Fetch>,
}

/// go-oidc's `RemoteKeySet`.
pub struct RemoteKeySet {
    client: Arc<dyn ProviderClient>,
    jwks_url: String,
    now: Clock,
    cache: Mutex<Cache>,
}

impl RemoteKeySet {
    pub fn new(client: Arc<dyn ProviderClient>, jwks_url: String, now: Clock) -> Arc<Self> {
        Arc::new(RemoteKeySet {
            client,
            jwks_url,
            now,
            cache: Mutex::new(Cache {
                keys: Arc::new(Vec::new()),
                expiry: SystemTime::UNIX_EPOCH,
                inflight: None,
            }),
        })
    }

    /// Verifies the token's signature with the cached keys, then (when none verified and
    /// the keys may be stale) with freshly fetched ones; the payload on success.
    pub async fn verify(self: &Arc<Self>, jws: &Jws<'_>) -> Result<Vec<u8>, String> {
        let (keys, expiry) = {
            let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            (cache.keys.clone(), cache.expiry)
        };
        if verify_with(jws, &keys) {
            return Ok(jws.payload.clone());
        }
        if (self.now)() + KEYS_EXPIRY_DELTA <= expiry {
            return Err("failed to verify id token signature".to_owned());
        }
        let keys = self
            .keys_from_remote()
            .await
            .map_err(|e| format!("fetching keys {e}"))?;
        if verify_with(jws, &keys) {
            return Ok(jws.payload.clone());
        }
        Err("failed to verify id token signature".to_owned())
    }

    /// The keys as last fetched.
    pub fn cached_keys(&self) -> Arc<Vec<PublicKey>> {
        self.cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .keys
            .clone()
    }

    /// One fetch at a time: a caller arriving while one is under way waits for it.
    pub async fn keys_from_remote(self: &Arc<Self>) -> Result<Arc<Vec<PublicKey>>, String> {
        let fetch = {
            let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            match &cache.inflight {
                Some(f) => f.clone(),
                None => {
                    let this = self.clone();
                    let f = async move {
                        let result = this.update_keys().await;
                        let mut cache = this.cache.lock().unwrap_or_else(|e| e.into_inner());
                        cache.inflight = None;
                        match result {
                            Ok((keys, expiry)) => {
                                let keys = Arc::new(keys);
                                cache.keys = keys.clone();
                                cache.expiry = expiry;
                                Ok(keys)
                            }
                            Err(e) => Err(e),
                        }
                    }
                    .boxed()
                    .shared();
                    cache.inflight = Some(f.clone());
                    f
                }
            }
        };
        fetch.await
    }

    async fn update_keys(&self) -> Result<(Vec<PublicKey>, SystemTime), String> {
        let resp = self
            .client
            .get(&self.jwks_url, None)
            .await
            .map_err(|e| format!("oidc: get keys failed {e}"))?;
        if resp.status != 200 {
            return Err(format!(
                "oidc: get keys failed: {} {}",
                resp.status_text(),
                String::from_utf8_lossy(&resp.body)
            ));
        }
        let keys = unmarshal_response(&resp, parse_jwks).map_err(|e| {
            format!(
                "oidc: failed to decode keys: {e} {}",
                String::from_utf8_lossy(&resp.body)
            )
        })?;
        let now = (self.now)();
        let expiry = resp.max_age().map_or(now, |age| now + age);
        Ok((keys, expiry))
    }
}

fn verify_with(jws: &Jws<'_>, keys: &[PublicKey]) -> bool {
    keys.iter()
        .filter(|k| jws.kid.is_empty() || k.key_id == jws.kid)
        .any(|k| jws.verify(k).is_ok())
}
