//! extensions-apiserver's resources: CustomResourceDefinitions and the custom resources
//! they define (upstream's APIExtensionsServer), served by the generic store of
//! kas-registry from etcd, with the CRD controllers.

pub mod controllers;
pub mod crd;
pub mod customresource;
pub mod namespaces;
pub mod serving;
pub mod webhooks;

use std::sync::Arc;

use kas_endpoints::installer::ApiService;
use kas_registry::store::Store;
use kas_storage_etcd::EtcdOptions;

/// The role's API on etcd, in front of `next` (the 404 at the end of the chain). Starts
/// the compactor, the CRD informer, the serving table and the controllers, which live as
/// long as the process.
/// The role's API, and its etcd storage (API Priority and Fairness follows its
/// configuration there).
pub async fn api_service<S>(
    etcd: &EtcdOptions,
    next: S,
) -> Result<(ApiService<S>, Arc<dyn kas_storage::Storage>), String> {
    let count_period = etcd.etcd_count_metric_poll_period;
    let (etcd, compactor, codec) = etcd.storage_and_codec(&[crd::stored_kind()]).await?;
    kas_storage_etcd::metrics::observe_count_forever(
        (crd::DESCRIPTOR.group, crd::DESCRIPTOR.plural),
        etcd.clone(),
        crd::DESCRIPTOR.storage_resource,
        count_period,
    );
    let strategy: Arc<dyn kas_registry::Strategy> = Arc::new(crd::Strategy);
    let mut config =
        kas_storage_cache::CacherConfig::new(format!("/{}", crd::DESCRIPTOR.storage_resource));
    config.get_attrs = kas_registry::store::get_attrs(&strategy);
    let crd_cache = Arc::new(kas_storage_cache::Cacher::new(etcd.clone(), config));
    // The namespaces custom resources are admitted into (upstream's NamespaceLifecycle),
    // filled at the same time as the CRDs.
    let mut config = kas_storage_cache::CacherConfig::new("/namespaces".to_owned());
    config.get_attrs = namespaces::attrs();
    let namespaces_cache = Arc::new(kas_storage_cache::Cacher::new(etcd.clone(), config));
    let timeout = std::time::Duration::from_secs(30);
    let (crds_ready, namespaces_ready) = tokio::join!(
        crd_cache.wait_ready(timeout),
        namespaces_cache.wait_ready(timeout)
    );
    if !crds_ready || !namespaces_ready {
        return Err("the watch caches did not become ready within 30s".to_owned());
    }
    let caches = serving::Caches::default();
    caches
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .extend([
            Arc::downgrade(&crd_cache),
            Arc::downgrade(&namespaces_cache),
        ]);
    follow_compactions(compactor, caches.clone());
    let namespaces = namespaces::store(namespaces_cache);
    let admission = serving::Admission {
        lifecycle: Arc::new(kas_registry::admission::NamespaceLifecycle::new(
            namespaces.clone(),
        )),
        webhooks: webhooks::Sources::start(&etcd, namespaces),
    };
    let crd_store = Store::new(&crd::DESCRIPTOR, strategy, crd_cache);
    let crds = crd_store.informer();
    let (groups, served) = serving::start(
        crd_store.clone(),
        serving::Etcd {
            storage: etcd.clone(),
            codec,
            count_period,
        },
        crds.clone(),
        caches,
        admission,
    );
    controllers::start(crd_store, crds, served);
    Ok((ApiService::live(groups, next), etcd))
}

/// Tells every live watch cache what etcd compacted.
fn follow_compactions(compactor: kas_storage_etcd::Compactor, caches: serving::Caches) {
    compactor.follow(move |revision| {
        let mut caches = caches
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        caches.retain(|c| match c.upgrade() {
            Some(cache) => {
                cache.compacted(revision);
                true
            }
            None => false,
        });
    });
}
