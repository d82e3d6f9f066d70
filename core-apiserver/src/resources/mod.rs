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

/// One store per resource; `storage_for` gives each its storage (a watch cache per resource
/// over one etcd store).
pub fn stores(
    mut storage_for: impl FnMut(&'static kas_registry::ResourceDescriptor) -> Arc<dyn Storage>,
) -> Vec<Store> {
    vec![
        Store::new(
            &configmaps::DESCRIPTOR,
            Arc::new(configmaps::Strategy),
            storage_for(&configmaps::DESCRIPTOR),
        ),
        Store::new(
            &secrets::DESCRIPTOR,
            Arc::new(secrets::Strategy),
            storage_for(&secrets::DESCRIPTOR),
        ),
        Store::new(
            &serviceaccounts::DESCRIPTOR,
            Arc::new(serviceaccounts::Strategy),
            storage_for(&serviceaccounts::DESCRIPTOR),
        ),
        Store::new(
            &namespaces::DESCRIPTOR,
            Arc::new(namespaces::Strategy),
            storage_for(&namespaces::DESCRIPTOR),
        ),
        Store::new(
            &leases::DESCRIPTOR,
            Arc::new(leases::Strategy),
            storage_for(&leases::DESCRIPTOR),
        ),
        Store::new(
            &events::DESCRIPTOR,
            Arc::new(events::Strategy),
            storage_for(&events::DESCRIPTOR),
        ),
    ]
}
