//! The built-in resources core-apiserver serves.

pub mod configmaps;
pub mod events;
pub mod leases;
pub mod namespaces;
pub mod secrets;
pub mod serviceaccounts;

use std::sync::Arc;

use kas_registry::store::{Store, get_attrs};
use kas_registry::{ResourceDescriptor, Strategy};
use kas_storage::{AttrsFunc, Storage};

/// How a store gets its storage: from the resource and its attributes (a watch cache keeps
/// them per object).
pub type StorageFor<'a> =
    dyn FnMut(&'static ResourceDescriptor, AttrsFunc) -> Arc<dyn Storage> + 'a;

/// One store per resource; `storage_for` gives each its storage (a watch cache per resource
/// over one etcd store).
pub fn stores(storage_for: &mut StorageFor<'_>) -> Vec<Store> {
    let resources: [(&'static ResourceDescriptor, Arc<dyn Strategy>); 6] = [
        (&configmaps::DESCRIPTOR, Arc::new(configmaps::Strategy)),
        (&secrets::DESCRIPTOR, Arc::new(secrets::Strategy)),
        (
            &serviceaccounts::DESCRIPTOR,
            Arc::new(serviceaccounts::Strategy),
        ),
        (&namespaces::DESCRIPTOR, Arc::new(namespaces::Strategy)),
        (&leases::DESCRIPTOR, Arc::new(leases::Strategy)),
        (&events::DESCRIPTOR, Arc::new(events::Strategy)),
    ];
    resources
        .into_iter()
        .map(|(d, strategy)| {
            let storage = storage_for(d, get_attrs(&strategy));
            Store::new(d, strategy, storage)
        })
        .collect()
}
