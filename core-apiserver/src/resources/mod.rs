//! The built-in resources core-apiserver serves.

pub mod configmaps;
pub mod events;
pub mod leases;
pub mod namespaces;
pub mod secrets;
pub mod serviceaccounts;

use std::sync::Arc;

use kas_registry::store::Store;
use kas_storage::Storage;

/// One store per resource, all on `storage`.
pub fn stores(storage: Arc<dyn Storage>) -> Vec<Store> {
    vec![
        Store::new(
            &configmaps::DESCRIPTOR,
            Arc::new(configmaps::Strategy),
            storage.clone(),
        ),
        Store::new(
            &secrets::DESCRIPTOR,
            Arc::new(secrets::Strategy),
            storage.clone(),
        ),
        Store::new(
            &serviceaccounts::DESCRIPTOR,
            Arc::new(serviceaccounts::Strategy),
            storage.clone(),
        ),
        Store::new(
            &namespaces::DESCRIPTOR,
            Arc::new(namespaces::Strategy),
            storage.clone(),
        ),
        Store::new(
            &leases::DESCRIPTOR,
            Arc::new(leases::Strategy),
            storage.clone(),
        ),
        Store::new(&events::DESCRIPTOR, Arc::new(events::Strategy), storage),
    ]
}
