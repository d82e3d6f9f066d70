//! What the aggregator serves itself, after upstream's `APIAggregator`
//! (`pkg/apiserver/apiserver.go`): the APIService resource on etcd behind a watch cache,
//! in front of the role's delegate.

use std::sync::Arc;

use kas_endpoints::discovery::delegated::Delegated;
use kas_server::healthz::{PostStartHook, mark_done};
use tokio::sync::watch;

use kas_registry::store::Store;
use kas_registry::store::informer::Objects;
use kas_storage::Storage;
use kas_storage_cache::{Cacher, CacherConfig};

use crate::apiservice;
use crate::backend::Backends;
use crate::services::ServiceIndex;
use kas_proxy::resolve::Routing;

/// The post-start hooks of upstream's aggregator whose work this role does.
pub const POST_START_HOOKS: &[&str] = &["apiservice-discovery-controller"];

/// Marks `apiservice-discovery-controller` done once the delegate's discovery and OpenAPI
/// documents are merged into this role's: until then `/apis` and `/openapi` would miss the
/// built-in groups, so the role is not ready.
pub fn mark_when_discovered(
    mut delegated: watch::Receiver<Arc<Delegated>>,
    hooks: Vec<PostStartHook>,
) {
    tokio::spawn(async move {
        let fetched = delegated
            .wait_for(|d| !d.items.is_empty() && d.openapi.is_some())
            .await;
        if fetched.is_ok() {
            mark_done(&hooks, "apiservice-discovery-controller");
        }
    });
}

/// How long the APIService cache may take to fill at start.
const CACHE_READY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// The APIService store over `etcd`, its cache filled; the cache hears of `compactor`'s
/// compactions.
pub async fn api_services(
    etcd: Arc<dyn Storage>,
    compactor: kas_storage_etcd::Compactor,
) -> Result<Store, String> {
    let strategy: Arc<dyn kas_registry::Strategy> = Arc::new(apiservice::Strategy);
    let mut config = CacherConfig::new(format!("/{}", apiservice::DESCRIPTOR.storage_resource));
    config.get_attrs = kas_registry::store::get_attrs(&strategy);
    let cache = Arc::new(Cacher::new(etcd, config));
    if !cache.wait_ready(CACHE_READY_TIMEOUT).await {
        return Err("the APIService cache did not become ready within 30s".to_owned());
    }
    let compacted = cache.clone();
    compactor.follow(move |revision| compacted.compacted(revision));
    Ok(Store::new(&apiservice::DESCRIPTOR, strategy, cache))
}

/// The front-proxy client certificate and key the aggregator presents to aggregated
/// servers (`--proxy-client-cert-file`, `--proxy-client-key-file`), as PEM.
/// A PEM certificate and its key.
pub type CertKey = (Vec<u8>, Vec<u8>);

pub fn proxy_client_cert(
    delegation: &kas_delegate::DelegationOptions,
) -> Result<Option<CertKey>, String> {
    let (Some(cert), Some(key)) = (
        &delegation.proxy_client_cert_file,
        &delegation.proxy_client_key_file,
    ) else {
        return Ok(None);
    };
    let read = |p: &std::path::Path| std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()));
    Ok(Some((read(cert)?, read(key)?)))
}

/// Starts what keeps the APIServices' state: the Services and EndpointSlices they point
/// at, followed from `etcd`, and the availability controller.
pub fn start_controllers(
    store: &Store,
    api_services: watch::Receiver<Objects>,
    etcd: Arc<dyn Storage>,
    routing: Routing,
    proxy_client_cert: Option<CertKey>,
) -> Backends {
    let backends = Backends::new(ServiceIndex::follow(etcd), routing, proxy_client_cert);
    crate::controllers::available::start(store.clone(), api_services, backends.clone());
    backends
}
