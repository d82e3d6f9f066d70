//! go-oidc's provider discovery: the `jwks_uri` of an issuer's discovery document, asked
//! again every [`INIT_RETRY`] until the provider answers (the authenticator and the
//! verifiers of distributed claims both discover).

use std::time::Duration;

use kas_apimachinery::golang::strconv::quote;
use serde_json::Value;

use super::{ProviderClient, unmarshal_response};

/// How often an unanswered provider is asked again.
pub const INIT_RETRY: Duration = Duration::from_secs(10);

const WELL_KNOWN: &str = "/.well-known/openid-configuration";

/// go-oidc's `NewProvider`: the `jwks_uri` of `issuer`'s discovery document (at
/// `discovery_url` when set), whose issuer must be `issuer`.
pub(crate) async fn discover(
    client: &dyn ProviderClient,
    issuer: &str,
    discovery_url: &str,
) -> std::result::Result<String, String> {
    let url = if discovery_url.is_empty() {
        format!("{}{WELL_KNOWN}", issuer.trim_end_matches('/'))
    } else {
        discovery_url.to_owned()
    };
    let resp = client.get(&url, None).await?;
    if resp.status != 200 {
        return Err(format!(
            "{}: {}",
            resp.status_text(),
            String::from_utf8_lossy(&resp.body)
        ));
    }
    let (got, jwks_uri) = unmarshal_response(&resp, provider_json)
        .map_err(|e| format!("oidc: failed to decode provider discovery object: {e}"))?;
    if got != issuer {
        return Err(format!(
            "oidc: issuer did not match the issuer returned by provider, expected {} got {}",
            quote(issuer),
            quote(&got)
        ));
    }
    Ok(jwks_uri)
}

/// The `issuer` and `jwks_uri` of a discovery document.
fn provider_json(body: &[u8]) -> std::result::Result<(String, String), String> {
    let v: Value = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    let field = |k: &str| match v.get(k) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(format!(
            "json: cannot unmarshal {} into Go struct field providerJSON.{k} of type string",
            super::verify::json_type(other)
        )),
    };
    if !v.is_object() {
        return Err(format!(
            "json: cannot unmarshal {} into Go value of type oidc.providerJSON",
            super::verify::json_type(&v)
        ));
    }
    Ok((field("issuer")?, field("jwks_uri")?))
}
