//! The built-in resources core-apiserver serves.

pub mod configmaps;
pub mod events;
pub mod leases;
pub mod namespaces;
pub mod secrets;
pub mod serviceaccounts;

use std::sync::Arc;
use std::time::Duration;

use kas_registry::store::{Store, get_attrs};
use kas_registry::{ResourceDescriptor, Strategy};
use kas_storage::{AttrsFunc, Storage};

/// How a store gets a watch cache: from the resource and its attributes (a watch cache
/// keeps them per object).
pub type StorageFor<'a> =
    dyn FnMut(&'static ResourceDescriptor, AttrsFunc) -> Arc<dyn Storage> + 'a;

/// What the resources take from the command line.
#[derive(Clone, Debug)]
pub struct ResourceOptions {
    /// `--event-ttl`: how long an event lives after its last write.
    pub event_ttl: Duration,
    /// `--feature-gates`.
    pub features: kas_registry::features::FeatureGates,
}

impl Default for ResourceOptions {
    fn default() -> Self {
        ResourceOptions {
            event_ttl: events::DEFAULT_EVENT_TTL,
            features: Default::default(),
        }
    }
}

/// Whether a resource is read through a watch cache or straight from etcd.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reads {
    Cached,
    /// Upstream's `DefaultWatchCacheSizes` gives both event resources no watch cache:
    /// events are written far more than watched, and caching them costs memory.
    Etcd,
}

/// One store per resource, in registration order. `etcd` is the store every resource
/// writes to; `cache_for` gives each cached resource its watch cache over it.
pub fn stores(
    opts: &ResourceOptions,
    etcd: &Arc<dyn Storage>,
    cache_for: &mut StorageFor<'_>,
) -> Vec<Store> {
    let resources: [(&'static ResourceDescriptor, Arc<dyn Strategy>, Reads); 7] = [
        (
            &configmaps::DESCRIPTOR,
            Arc::new(configmaps::Strategy),
            Reads::Cached,
        ),
        (
            &secrets::DESCRIPTOR,
            Arc::new(secrets::Strategy),
            Reads::Cached,
        ),
        (
            &serviceaccounts::DESCRIPTOR,
            Arc::new(serviceaccounts::Strategy),
            Reads::Cached,
        ),
        (
            &namespaces::DESCRIPTOR,
            Arc::new(namespaces::Strategy),
            Reads::Cached,
        ),
        (
            &leases::DESCRIPTOR,
            Arc::new(leases::Strategy),
            Reads::Cached,
        ),
        (
            &events::DESCRIPTOR,
            Arc::new(events::Strategy::new(opts.event_ttl)),
            Reads::Etcd,
        ),
        (
            &events::v1::DESCRIPTOR,
            Arc::new(events::v1::Strategy::new(opts.event_ttl)),
            Reads::Etcd,
        ),
    ];
    resources
        .into_iter()
        .map(|(d, strategy, reads)| {
            let storage = match reads {
                Reads::Cached => cache_for(d, get_attrs(&strategy)),
                Reads::Etcd => etcd.clone(),
            };
            Store::new(d, strategy, storage)
        })
        .collect()
}
