//! kas-auth's `ServiceAccountLookup` over this role's stores (upstream's getter from
//! storage): what validating a service-account token reads of the service account and of
//! the pod, secret or node the token is bound to.

use std::time::{Duration, UNIX_EPOCH};

use base64::Engine as _;
use futures_util::future::BoxFuture;
use kas_auth::authentication::serviceaccount::{LookupObject, LookupResult, ServiceAccountLookup};
use kas_registry::store::Store;
use serde_json::Value;

pub struct StoreLookup {
    pub svcaccts: Store,
    pub pods: Store,
    pub secrets: Store,
    pub nodes: Store,
}

impl StoreLookup {
    /// The lookup over `stores`, when they hold the four resources.
    pub fn new(stores: &[Store]) -> Option<StoreLookup> {
        let find = |plural| crate::admission::store(stores, "", plural);
        Some(StoreLookup {
            svcaccts: find("serviceaccounts")?,
            pods: find("pods")?,
            secrets: find("secrets")?,
            nodes: find("nodes")?,
        })
    }
}

/// What validation reads of a stored object.
pub fn lookup_object(obj: &Value) -> LookupObject {
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
    LookupObject {
        uid: meta("uid")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        deletion_timestamp,
        labels,
        token,
    }
}

async fn get(store: &Store, namespace: &str, name: &str) -> LookupResult {
    match store.get(namespace, name, None).await {
        Ok(obj) => obj
            .value()
            .map(|v| Some(lookup_object(&v)))
            .map_err(|e| e.to_string()),
        Err(e) => {
            let status = e.to_status();
            if status.code == 404 {
                Ok(None)
            } else {
                Err(status.message.unwrap_or_default())
            }
        }
    }
}

impl ServiceAccountLookup for StoreLookup {
    fn service_account<'a>(&'a self, ns: &'a str, name: &'a str) -> BoxFuture<'a, LookupResult> {
        Box::pin(get(&self.svcaccts, ns, name))
    }
    fn pod<'a>(&'a self, ns: &'a str, name: &'a str) -> BoxFuture<'a, LookupResult> {
        Box::pin(get(&self.pods, ns, name))
    }
    fn secret<'a>(&'a self, ns: &'a str, name: &'a str) -> BoxFuture<'a, LookupResult> {
        Box::pin(get(&self.secrets, ns, name))
    }
    fn node<'a>(&'a self, name: &'a str) -> BoxFuture<'a, LookupResult> {
        Box::pin(get(&self.nodes, "", name))
    }
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
        let o = lookup_object(&secret);
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
        let bare = lookup_object(&json!({"metadata": {"uid": "x"}}));
        assert_eq!(bare.deletion_timestamp, None);
        assert_eq!(bare.token, None);
    }
}
