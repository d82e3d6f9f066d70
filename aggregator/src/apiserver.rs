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

/// The post-start hooks of upstream's aggregator whose work this role does, in upstream's
/// order, with kube-apiserver's that belong here (the cluster-authentication-trust
/// controller's, first, as upstream registers kube-apiserver's before the aggregator's;
/// the autoregistration's) and upstream's `autoregister-completion` check among them.
pub const POST_START_HOOKS: &[&str] = &[
    "start-cluster-authentication-info-controller",
    "start-kube-aggregator-informers",
    "apiservice-status-local-available-controller",
    "apiservice-status-remote-available-controller",
    "apiservice-registration-controller",
    WAIT_FOR_FIRST_SYNC,
    "apiservice-discovery-controller",
    "kube-apiserver-autoregistration",
    AUTOREGISTER_COMPLETION,
    "apiservice-openapi-controller",
    "apiservice-openapiv3-controller",
];

/// Upstream's boot-sequence check of the autoregistered APIServices, named without the
/// `poststarthook/` prefix.
pub const AUTOREGISTER_COMPLETION: &str = "autoregister-completion";

/// Upstream's hook that waits until the proxy handles every Available APIService.
pub const WAIT_FOR_FIRST_SYNC: &str = "apiservice-wait-for-first-sync";

/// Marks [`WAIT_FOR_FIRST_SYNC`] once the APIService informer (`api_services`, not
/// borrowed from yet) has its first list and `proxy` handles every APIService in it that
/// is Available, checked every 100 ms as upstream's hook polls.
pub fn mark_when_proxied(
    mut api_services: watch::Receiver<Objects>,
    proxy: crate::proxy::AggregatedProxy,
    hooks: Vec<PostStartHook>,
) {
    tokio::spawn(async move {
        if crate::controllers::informer_synced(&mut api_services)
            .await
            .is_err()
        {
            return;
        }
        loop {
            let objects = api_services.borrow().clone();
            if proxy.handles_every_available(&objects) {
                mark_done(&hooks, WAIT_FOR_FIRST_SYNC);
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    });
}

/// [`POST_START_HOOKS`] as the checks main registers; with the front-proxy client
/// certificate's files given (`reload_proxy_cert`), upstream's hook that reloads them too,
/// where upstream registers it.
pub fn post_start_hooks(reload_proxy_cert: bool) -> Vec<PostStartHook> {
    let reload = reload_proxy_cert.then_some(crate::proxy_cert::RELOAD_HOOK);
    POST_START_HOOKS
        .iter()
        .flat_map(|name| match *name {
            "start-kube-aggregator-informers" => vec![reload, Some(*name)],
            _ => vec![Some(*name)],
        })
        .flatten()
        .map(|name| match name {
            AUTOREGISTER_COMPLETION => PostStartHook::boot_sequence_check(name),
            _ => PostStartHook::new(name),
        })
        .collect()
}

/// Marks `apiservice-discovery-controller` done once the delegate's discovery and OpenAPI
/// documents are merged into this role's (`openapi`, and `synced` for discovery: until then
/// `/apis` and `/openapi` would miss the built-in groups, so the role is not ready) and
/// every APIService's discovery was synced once (`synced` too, as upstream's hook waits for
/// its discovery manager); the OpenAPI
/// controllers' hooks at once, as upstream's only start them.
pub fn mark_when_discovered(
    mut delegated: watch::Receiver<Arc<Delegated>>,
    mut synced: watch::Receiver<bool>,
    mut openapi: watch::Receiver<bool>,
    hooks: Vec<PostStartHook>,
) {
    mark_done(&hooks, "apiservice-openapi-controller");
    mark_done(&hooks, "apiservice-openapiv3-controller");
    tokio::spawn(async move {
        let fetched = delegated
            .wait_for(|d| !d.items.is_empty() && d.openapi.is_some())
            .await
            .is_ok();
        let merged = fetched && openapi.wait_for(|s| *s).await.is_ok();
        if merged && synced.wait_for(|s| *s).await.is_ok() {
            mark_done(&hooks, "apiservice-discovery-controller");
        }
    });
}

/// What the aggregator writes: APIServices as upstream's aggregator writes them (JSON, its
/// `LegacyCodec`, whatever `--storage-media-type` says), read defaulted; and the
/// `kubernetes` Service's master leases as core/v1 Endpoints in `media_type`, as
/// kube-apiserver's storage does.
pub fn stored_kinds(
    media_type: kas_storage_etcd::MediaType,
) -> Vec<kas_storage_etcd::Registration> {
    use kas_registry::Strategy as _;
    use kas_storage_etcd::{MediaType, Registration, StoredKind};
    let (group, version, kind) = apiservice::DESCRIPTOR.storage_version();
    vec![
        Registration {
            storage_resource: apiservice::DESCRIPTOR.storage_resource,
            kind: StoredKind {
                group,
                version,
                kind,
                resource: apiservice::DESCRIPTOR.plural,
                media_type: MediaType::Json,
            },
            defaults: Some(Arc::new(|obj: &mut serde_json::Value| {
                apiservice::Strategy.default(obj)
            })),
        },
        Registration {
            storage_resource: crate::kubernetes_service::LEASES_RESOURCE,
            kind: StoredKind {
                group: "",
                version: "v1",
                kind: "Endpoints",
                // Upstream's leases use the endpoints' storage configuration.
                resource: "endpoints",
                media_type,
            },
            defaults: None,
        },
    ]
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

/// Marks the hooks of what [`start_controllers`] started: the informers and the
/// availability controllers at once, as upstream's hooks return once they started them;
/// `apiservice-registration-controller` once the APIService informer (`api_services`, not
/// borrowed from yet) has its first list, when the proxy knows every APIService.
pub fn mark_controllers_started(
    mut api_services: watch::Receiver<Objects>,
    hooks: Vec<PostStartHook>,
) {
    for name in [
        "start-kube-aggregator-informers",
        "apiservice-status-local-available-controller",
        "apiservice-status-remote-available-controller",
    ] {
        mark_done(&hooks, name);
    }
    tokio::spawn(async move {
        if crate::controllers::informer_synced(&mut api_services)
            .await
            .is_ok()
        {
            mark_done(&hooks, "apiservice-registration-controller");
        }
    });
}

/// Starts upstream's autoregistration (`kube-apiserver-autoregistration`): the CRD
/// registration controller following the CRDs in `etcd`, the built-ins of core's discovery
/// (`delegated`), and the autoregister controller writing through `store` once both made
/// their first registrations; `autoregister-completion` follows. `api_services` is the
/// store's informer, not borrowed from yet.
pub fn start_registration(
    store: &Store,
    api_services: watch::Receiver<Objects>,
    etcd: Arc<dyn Storage>,
    delegated: watch::Receiver<Arc<Delegated>>,
    hooks: &[PostStartHook],
) {
    use crate::controllers::{autoregister, crd_registration};
    let confirm = crd_registration::confirm(etcd.clone());
    let (registration, names) = autoregister::AutoRegistration::new(Some(confirm));
    let mut crds_synced = crd_registration::start(etcd, registration.clone());
    let completion = hooks
        .iter()
        .find(|h| h.name() == AUTOREGISTER_COMPLETION)
        .cloned()
        .unwrap_or_else(|| PostStartHook::boot_sequence_check(AUTOREGISTER_COMPLETION));
    let mut builtins = autoregister::follow_builtins(
        delegated,
        registration.clone(),
        api_services.clone(),
        completion,
    );
    // Upstream waits for the CRDs' first registrations so that the start does not delete
    // the APIServices of CRDs that still exist.
    let ready = Box::pin(async move {
        let _ = crds_synced.wait_for(|synced| *synced).await;
        let _ = builtins.wait_for(|registered| *registered).await;
    });
    autoregister::start(store.clone(), api_services, registration, names, ready);
    mark_done(hooks, "kube-apiserver-autoregistration");
}

/// Starts upstream's cluster-authentication-trust controller with this role's
/// authentication flags (`start-cluster-authentication-info-controller`).
pub fn start_authentication_trust(
    options: &kas_server::options::AuthenticationOptions,
    etcd: Arc<dyn Storage>,
    delegate: kas_delegate::Delegate,
    hooks: &[PostStartHook],
) {
    use crate::controllers::authentication_trust::{self, Required};
    authentication_trust::start(Required::from_options(options), etcd, delegate);
    mark_done(hooks, "start-cluster-authentication-info-controller");
}

/// Starts what keeps the APIServices' state: the Services and EndpointSlices they point
/// at, followed from `etcd`, and the availability controller.
pub fn start_controllers(
    store: &Store,
    api_services: watch::Receiver<Objects>,
    etcd: Arc<dyn Storage>,
    routing: Routing,
    proxy_client_cert: Option<crate::backend::CertKey>,
    metrics: crate::controllers::status_metrics::Metrics,
) -> Backends {
    let backends = Backends::new(ServiceIndex::follow(etcd), routing, proxy_client_cert);
    let available = crate::controllers::available::start;
    available(store.clone(), api_services, backends.clone(), metrics);
    backends
}
