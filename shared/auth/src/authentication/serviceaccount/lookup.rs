//! What the validators read of the objects a token names (upstream's
//! `ServiceAccountTokenGetter`), implemented by the role over its storage or its delegate.

use std::collections::BTreeMap;
use std::time::SystemTime;

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
