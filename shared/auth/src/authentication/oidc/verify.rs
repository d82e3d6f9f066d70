//! go-oidc (v2)'s `IDTokenVerifier.Verify`, with upstream's audience check
//! (`idTokenVerifier.verifyAudience`): cheap claim checks first (issuer, audience,
//! expiry, not-before), then the algorithm and the signature.

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use kas_apimachinery::golang::strconv::quote;
use kas_apimachinery::golang::time::{Time, ZERO_UNIX};
use serde_json::{Map, Value};

use super::Clock;
use super::keyset::RemoteKeySet;
use crate::authentication::serviceaccount::jwt;

/// go-oidc's leeway for `nbf`.
const NBF_LEEWAY: Duration = Duration::from_secs(60);

/// Verifies tokens of one issuer.
pub struct Verifier {
    pub issuer: String,
    /// The configured audiences; with one, go-oidc's client-ID check applies too.
    pub audiences: Vec<String>,
    pub supported_signing_algs: Vec<String>,
    pub key_set: Arc<RemoteKeySet>,
    pub now: Clock,
}

/// Go's `%q` of a string slice: `["a" "b"]`.
fn quote_list<S: AsRef<str>>(v: &[S]) -> String {
    let items: Vec<String> = v.iter().map(|s| quote(s.as_ref())).collect();
    format!("[{}]", items.join(" "))
}

/// Go's JSON type name of a value, for `json: cannot unmarshal X into ...`.
pub(crate) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// go-oidc's `jsonTime`: seconds since the epoch, integral or not.
fn json_time(v: &Value, name: &str) -> Result<Option<Time>, String> {
    let n = match v {
        Value::Null => return Ok(None),
        Value::Number(n) => n.clone(),
        Value::String(s) => match serde_json::from_str::<serde_json::Number>(s) {
            Ok(n) => n,
            Err(_) => {
                return Err(format!(
                    "json: invalid number literal, trying to unmarshal {} into Number",
                    quote(&format!("{v}"))
                ));
            }
        },
        other => {
            return Err(format!(
                "json: cannot unmarshal {} into Go struct field idToken.{name} of type json.Number",
                json_type(other)
            ));
        }
    };
    let secs = match n.as_i64() {
        Some(i) => i,
        None => n.as_f64().map_or(0, |f| f as i64),
    };
    Ok(Some(Time::from_unix(secs, 0)))
}

fn audience(v: Option<&Value>) -> Result<Vec<String>, String> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(vec![s.clone()]),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| match x {
                Value::String(s) => Ok(s.clone()),
                other => Err(format!(
                    "json: cannot unmarshal {} into Go value of type string",
                    json_type(other)
                )),
            })
            .collect(),
        Some(other) => Err(format!(
            "json: cannot unmarshal {} into Go value of type []string",
            json_type(other)
        )),
    }
}

fn string_claim(claims: &Map<String, Value>, name: &str) -> Result<String, String> {
    match claims.get(name) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(format!(
            "json: cannot unmarshal {} into Go struct field idToken.{name} of type string",
            json_type(other)
        )),
    }
}

/// go-oidc's mapping of `_claim_names` to `_claim_sources`: the outer error is a decoding
/// one, the inner go-oidc's own.
fn claim_sources(claims: &Map<String, Value>) -> Result<Result<(), String>, String> {
    let names = match claims.get("_claim_names") {
        None | Some(Value::Null) => return Ok(Ok(())),
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(format!(
                "json: cannot unmarshal {} into Go struct field idToken._claim_names of type map[string]string",
                json_type(other)
            ));
        }
    };
    let sources = match claims.get("_claim_sources") {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) => Some(m),
        Some(other) => {
            return Err(format!(
                "json: cannot unmarshal {} into Go struct field idToken._claim_sources of type map[string]oidc.claimSource",
                json_type(other)
            ));
        }
    };
    for src in names.values() {
        let src = match src {
            Value::String(s) => s.as_str(),
            Value::Null => "",
            other => {
                return Err(format!(
                    "json: cannot unmarshal {} into Go struct field idToken._claim_names of type string",
                    json_type(other)
                ));
            }
        };
        if src.is_empty() {
            return Ok(Err(
                "oidc: failed to obtain source from claim name".to_owned()
            ));
        }
        if !sources.is_some_and(|s| s.contains_key(src)) {
            return Ok(Err("oidc: source does not exist".to_owned()));
        }
    }
    Ok(Ok(()))
}

impl Verifier {
    /// Verifies `raw`; its claims on success, else go-oidc's error.
    pub async fn verify(&self, raw: &str) -> Result<Map<String, Value>, String> {
        let Some(jws) = jwt::parse(raw) else {
            return Err(if raw.split('.').count() != 3 {
                "oidc: malformed jwt: square/go-jose: compact JWS format must have three parts"
                    .to_owned()
            } else {
                "oidc: malformed jwt: square/go-jose: error in unmarshaling".to_owned()
            });
        };
        let claims: Map<String, Value> = match serde_json::from_slice::<Value>(&jws.payload) {
            Ok(Value::Object(m)) => m,
            Ok(other) => {
                return Err(format!(
                    "oidc: failed to unmarshal claims: json: cannot unmarshal {} into Go value of type oidc.idToken",
                    json_type(&other)
                ));
            }
            Err(e) => return Err(format!("oidc: failed to unmarshal claims: {e}")),
        };
        let bad = |e: String| format!("oidc: failed to unmarshal claims: {e}");
        claim_sources(&claims).map_err(bad)??;
        let issuer = string_claim(&claims, "iss").map_err(bad)?;
        string_claim(&claims, "sub").map_err(bad)?;
        let aud = audience(claims.get("aud")).map_err(bad)?;
        let expiry = json_time(claims.get("exp").unwrap_or(&Value::Null), "exp")
            .map_err(bad)?
            .unwrap_or(Time::from_unix(ZERO_UNIX, 0));
        json_time(claims.get("iat").unwrap_or(&Value::Null), "iat").map_err(bad)?;
        let not_before =
            json_time(claims.get("nbf").unwrap_or(&Value::Null), "nbf").map_err(bad)?;

        if issuer != self.issuer
            && !(self.issuer == "https://accounts.google.com" && issuer == "accounts.google.com")
        {
            return Err(format!(
                "oidc: id token issued by a different provider, expected {} got {}",
                quote(&self.issuer),
                quote(&issuer)
            ));
        }
        if let [client_id] = self.audiences.as_slice()
            && !aud.contains(client_id)
        {
            return Err(format!(
                "oidc: expected audience {} got {}",
                quote(client_id),
                quote_list(&aud)
            ));
        }
        let now_system = (self.now)();
        let now = Time::from_system_time(now_system);
        if (expiry.seconds, expiry.nanos) < (now.seconds, now.nanos) {
            return Err(format!("oidc: token is expired (Token Expiry: {expiry})"));
        }
        if let Some(nbf) = not_before {
            let leeway = Time::from_system_time(now_system + NBF_LEEWAY);
            if (leeway.seconds, leeway.nanos) < (nbf.seconds, nbf.nanos) {
                return Err(format!(
                    "oidc: current time {now} before the nbf (not before) time: {nbf}"
                ));
            }
        }
        if !self.supported_signing_algs.contains(&jws.alg) {
            return Err(format!(
                "oidc: id token signed with unsupported algorithm, expected {} got {}",
                quote_list(&self.supported_signing_algs),
                quote(&jws.alg)
            ));
        }
        self.key_set
            .verify(&jws)
            .await
            .map_err(|e| format!("failed to verify signature: {e}"))?;
        self.verify_audience(&aud)?;
        Ok(claims)
    }

    /// Upstream's `verifyAudience`: any configured audience in the token's.
    fn verify_audience(&self, aud: &[String]) -> Result<(), String> {
        if self.audiences.is_empty() {
            return Err("oidc: invalid configuration, audiences cannot be empty".to_owned());
        }
        if aud.iter().any(|a| self.audiences.contains(a)) {
            return Ok(());
        }
        let mut sorted = self.audiences.clone();
        sorted.sort();
        sorted.dedup();
        Err(format!(
            "oidc: expected audience in {} got {}",
            quote_list(&sorted),
            quote_list(aud)
        ))
    }
}

/// Seconds since the epoch of a clock reading, for tests and token minting.
pub fn unix_seconds(t: std::time::SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}
