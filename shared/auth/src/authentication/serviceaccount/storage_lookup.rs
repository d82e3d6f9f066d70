//! [`ServiceAccountLookup`] straight from storage: a quorum read of the object under the
//! core role's keys (`/serviceaccounts/<ns>/<name>`, `/pods/...`, `/secrets/...`,
//! `/minions/<name>`), as the aggregator (which keeps no copy of those resources) and
//! core's TokenReview validate tokens. Behind the token cache, a token costs these reads
//! once per 10 s.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use kas_storage::{GetOptions, Storage};

use super::lookup::{LookupObject, LookupResult, ServiceAccountLookup};

pub struct StorageLookup {
    storage: Arc<dyn Storage>,
}

impl StorageLookup {
    pub fn new(storage: Arc<dyn Storage>) -> Self {
        StorageLookup { storage }
    }

    async fn get(&self, resource: &str, namespace: &str, name: &str) -> LookupResult {
        let key = if namespace.is_empty() {
            format!("/{resource}/{name}")
        } else {
            format!("/{resource}/{namespace}/{name}")
        };
        let opts = GetOptions {
            resource_version: None,
            ignore_not_found: true,
        };
        match self.storage.get(&key, &opts).await {
            Ok(None) => Ok(None),
            Ok(Some(object)) => object
                .value()
                .map(|v| Some(LookupObject::from_object(&v)))
                .map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        }
    }
}

impl ServiceAccountLookup for StorageLookup {
    fn service_account<'a>(&'a self, ns: &'a str, name: &'a str) -> BoxFuture<'a, LookupResult> {
        Box::pin(self.get("serviceaccounts", ns, name))
    }
    fn pod<'a>(&'a self, ns: &'a str, name: &'a str) -> BoxFuture<'a, LookupResult> {
        Box::pin(self.get("pods", ns, name))
    }
    fn secret<'a>(&'a self, ns: &'a str, name: &'a str) -> BoxFuture<'a, LookupResult> {
        Box::pin(self.get("secrets", ns, name))
    }
    fn node<'a>(&'a self, name: &'a str) -> BoxFuture<'a, LookupResult> {
        Box::pin(self.get("minions", "", name))
    }
}
