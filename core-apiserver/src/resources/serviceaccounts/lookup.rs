//! kas-auth's `ServiceAccountLookup` over this role's stores (upstream's getter from
//! storage): what validating a service-account token reads of the service account and of
//! the pod, secret or node the token is bound to.

use futures_util::future::BoxFuture;
use kas_auth::authentication::serviceaccount::{LookupObject, LookupResult, ServiceAccountLookup};
use kas_registry::store::Store;

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

async fn get(store: &Store, namespace: &str, name: &str) -> LookupResult {
    match store.get_if_exists(namespace, name, None).await {
        Ok(Some(obj)) => obj
            .value()
            .map(|v| Some(LookupObject::from_object(&v)))
            .map_err(|e| e.to_string()),
        Ok(None) => Ok(None),
        Err(e) => Err(e.to_status().message.unwrap_or_default()),
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
