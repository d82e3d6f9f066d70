//! What the validators read of the objects a token names (upstream's
//! `ServiceAccountTokenGetter`), implemented by the role over its storage or its delegate.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use serde_json::Value;

use futures_util::future::BoxFuture;

/// What validation needs of a service account, pod, secret or node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LookupObject {
    pub uid: String,
    pub deletion_timestamp: Option<SystemTime>,
    /// The object's labels (a legacy token's secret may be marked invalid by one).
    pub labels: BTreeMap<String, String>,
    /// A secret's `data["token"]`, decoded (legacy tokens must match it).
    pub token: Option<Vec<u8>>,
    /// A service account's `secrets[].name` (a legacy token's secret listed there was
    /// auto-generated).
    pub secret_names: Vec<String>,
}

impl LookupObject {
    /// What validation reads of a stored object (its JSON).
    pub fn from_object(obj: &Value) -> LookupObject {
        let meta = |k: &str| obj.pointer(&format!("/metadata/{k}"));
        let deletion_timestamp = meta("deletionTimestamp")
            .and_then(Value::as_str)
            .and_then(kas_apimachinery::golang::time::parse_rfc3339)
            .map(|t| {
                let secs = Duration::from_secs(t.seconds.max(0) as u64);
                UNIX_EPOCH + secs + Duration::from_nanos(t.nanos.max(0) as u64)
            });
        let labels = meta("labels")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                    .collect()
            })
            .unwrap_or_default();
        let token = obj
            .pointer("/data/token")
            .and_then(Value::as_str)
            .and_then(|t| base64::engine::general_purpose::STANDARD.decode(t).ok());
        let secret_names = obj
            .get("secrets")
            .and_then(Value::as_array)
            .map(|refs| {
                refs.iter()
                    .filter_map(|r| Some(r.get("name")?.as_str()?.to_owned()))
                    .collect()
            })
            .unwrap_or_default();
        LookupObject {
            uid: meta("uid")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            deletion_timestamp,
            labels,
            token,
            secret_names,
        }
    }
}

/// `Ok(None)`: the object does not exist. `Err`: it could not be read; the message is what
/// the token's holder is told (upstream passes the getter's error on for service accounts).
pub type LookupResult = Result<Option<LookupObject>, String>;

/// Upstream's `ServiceAccountTokenGetter`.
pub trait ServiceAccountLookup: Send + Sync {
    fn service_account<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, LookupResult>;
    fn pod<'a>(&'a self, namespace: &'a str, name: &'a str) -> BoxFuture<'a, LookupResult>;
    fn secret<'a>(&'a self, namespace: &'a str, name: &'a str) -> BoxFuture<'a, LookupResult>;
    fn node<'a>(&'a self, name: &'a str) -> BoxFuture<'a, LookupResult>;
}

/// The error a missing service account gives (the API's NotFound for `serviceaccounts`).
pub(super) fn not_found(resource: &str, name: &str) -> String {
    format!(
        "{resource} {} not found",
        kas_apimachinery::golang::strconv::quote(name)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stored_objects_give_what_validation_reads() {
        let secret = json!({
            "metadata": {
                "uid": "u", "deletionTimestamp": "2024-01-02T03:04:05Z",
                "labels": {"kubernetes.io/legacy-token-invalid-since": "2024-01-01"}
            },
            "data": {"token": "YWJj"}
        });
        let o = LookupObject::from_object(&secret);
        assert_eq!(o.uid, "u");
        assert_eq!(
            o.deletion_timestamp,
            Some(UNIX_EPOCH + Duration::from_secs(1_704_164_645))
        );
        assert_eq!(
            o.labels["kubernetes.io/legacy-token-invalid-since"],
            "2024-01-01"
        );
        assert_eq!(o.token.as_deref(), Some(&b"abc"[..]));
        let bare = LookupObject::from_object(&json!({"metadata": {"uid": "x"}}));
        assert_eq!(bare.deletion_timestamp, None);
        assert_eq!(bare.token, None);
    }
}
