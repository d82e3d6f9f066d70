//! The built-in resources core-apiserver serves.

pub mod configmaps;

use std::sync::Arc;

use kas_registry::store::Store;
use kas_storage::Storage;

/// One store per resource, all on `storage`.
pub fn stores(storage: Arc<dyn Storage>) -> Vec<Store> {
    vec![Store::new(
        &configmaps::DESCRIPTOR,
        Arc::new(configmaps::Strategy),
        storage,
    )]
}
