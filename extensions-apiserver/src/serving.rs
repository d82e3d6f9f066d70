//! What extensions-apiserver serves, after upstream's `crdHandler`: the CRD resource, and
//! for every CRD whose names are accepted (or that is Established) a store per served
//! version over one watch cache. When a CRD changes, its stores are rebuilt if what they
//! were built from changed, and the role's routes and discovery are replaced at once
//! (`ApiService::live`).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use kas_apimachinery::Status;
use kas_endpoints::installer::ApiGroups;
use kas_registry::admission::{Admit, Attributes, Chain, Operation};
use kas_registry::store::Store;
use kas_storage::Storage;
use kas_storage::transform::ReadTransform;

use crate::customresource::conversion::storage::ConvertingStorage;
use crate::customresource::conversion::{self, WebhookConverter};
use kas_storage_cache::{Cacher, CacherConfig};
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::crd::conditions;
use crate::customresource;
use kas_registry::store::informer::Objects as Crds;

/// One CRD's serving state.
struct Served {
    /// What the stores were built from: uid, spec and accepted names.
    built_from: Value,
    stores: Vec<Store>,
    /// The store of the storage version, through which the finalizer deletes.
    storage_store: Store,
    terminating: Arc<AtomicBool>,
    cache: Arc<Cacher>,
    /// What the cache's objects were read and indexed with ([`read_with`]).
    read_with: Value,
    /// `apiserver_storage_objects` of the custom resources, polled while served.
    counted: Option<Arc<kas_storage_etcd::metrics::CountObserver>>,
}

/// The storage-version store of each served CRD, by CRD name (the finalizer's view).
pub type ServedStores = Arc<Mutex<HashMap<String, Store>>>;

/// Every watch cache alive, told of etcd's compactions.
pub type Caches = Arc<Mutex<Vec<std::sync::Weak<Cacher>>>>;

/// What admits writes of every CRD's objects besides the CRD's own checks: upstream's
/// NamespaceLifecycle and the admission webhooks.
#[derive(Clone)]
pub struct Admission {
    pub lifecycle: Arc<dyn Admit>,
    pub webhooks: crate::webhooks::Sources,
}

/// Starts serving: the receiver holds the routes of `crd_store` and of every served CRD.
/// The role's etcd storage and its codec, with which each CRD registers the kind its
/// custom resources are written as.
pub struct Etcd {
    pub storage: Arc<dyn Storage>,
    pub codec: Arc<kas_storage_etcd::Codec>,
    /// `--etcd-count-metric-poll-period`.
    pub count_period: std::time::Duration,
}

pub fn start(
    crd_store: Store,
    etcd: Etcd,
    mut crds: watch::Receiver<Crds>,
    caches: Caches,
    admission: Admission,
) -> (watch::Receiver<Arc<ApiGroups>>, ServedStores) {
    let (tx, rx) = watch::channel(Arc::new(ApiGroups::new(vec![crd_store.clone()])));
    let served_stores = ServedStores::default();
    let shared = served_stores.clone();
    tokio::spawn(async move {
        let mut served: BTreeMap<String, Served> = BTreeMap::new();
        let mut first = true;
        loop {
            let current = crds.borrow_and_update().clone();
            // Most CRD changes are status writes that change nothing served: the routes,
            // discovery and the digest stay (the first round publishes them all).
            let changed = sync(&mut served, &current, (&etcd, &admission), &caches).await;
            let first_round = std::mem::take(&mut first);
            if !changed && !first_round {
                if crds.changed().await.is_err() {
                    return;
                }
                continue;
            }
            let mut stores = vec![crd_store.clone()];
            for s in served.values() {
                stores.extend(s.stores.iter().cloned());
            }
            *shared
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = served
                .iter()
                .map(|(name, s)| (name.clone(), s.storage_store.clone()))
                .collect();
            let groups = ApiGroups::new(stores);
            // Discovery, and what the OpenAPI documents are built from.
            let mut digest = groups.discovery_digest();
            for s in served.values() {
                digest.push_str(&s.built_from.to_string());
            }
            tx.send_replace(Arc::new(groups));
            kas_server::peer::set_discovery_digest(
                kas_endpoints::discovery::delegated::Delegated::digest(digest.as_bytes()),
            );
            if crds.changed().await.is_err() {
                return;
            }
        }
    });
    (rx, served_stores)
}

/// Whether `crd` is served: upstream's handler serves a CRD whose names are accepted or
/// that is Established.
fn serves(crd: &Value) -> bool {
    conditions::is_true(crd, conditions::NAMES_ACCEPTED)
        || conditions::is_true(crd, conditions::ESTABLISHED)
}

/// What a CRD's stores are built from: the object (its uid), its spec (the generation
/// counts every change of it) and its accepted names.
fn built_from(crd: &Value) -> Value {
    json!({
        "uid": crd.pointer("/metadata/uid"),
        "generation": crd.pointer("/metadata/generation"),
        "acceptedNames": crd.pointer("/status/acceptedNames"),
    })
}

/// Brings `served` in line with `crds`; whether what is served changed.
async fn sync(
    served: &mut BTreeMap<String, Served>,
    crds: &Crds,
    (etcd, admission): (&Etcd, &Admission),
    caches: &Caches,
) -> bool {
    let before = served.len();
    served.retain(|name, _| crds.get(name).is_some_and(serves));
    let mut changed = served.len() != before;
    for (name, crd) in crds.iter() {
        if !serves(crd) {
            continue;
        }
        let terminating = conditions::is_true(crd, conditions::TERMINATING);
        let from = built_from(crd);
        if let Some(s) = served.get(name)
            && s.built_from == from
        {
            s.terminating.store(terminating, Ordering::Relaxed);
            continue;
        }
        changed = true;
        match build(crd, (etcd, admission), served.remove(name), caches).await {
            Some(s) => {
                s.terminating.store(terminating, Ordering::Relaxed);
                served.insert(name.clone(), s);
            }
            None => tracing::warn!(crd = %name, "the custom resource's cache did not become ready"),
        }
    }
    changed
}

/// The descriptor and strategy of one version of `crd`.
fn version_parts(
    crd: &Value,
    version: &str,
) -> Option<(
    &'static kas_registry::ResourceDescriptor,
    Arc<customresource::strategy::Strategy>,
)> {
    let spec = customresource::version(crd, version)?;
    let descriptor = customresource::descriptor(crd, version);
    let deprecation = customresource::deprecation_warning(crd, version);
    let preserve = crd.pointer("/spec/preserveUnknownFields") == Some(&Value::Bool(true));
    let strategy = customresource::strategy::Strategy::new(descriptor, spec, deprecation)
        .preserving_unknown_fields(preserve);
    Some((descriptor, Arc::new(strategy)))
}

/// The stores of `crd`'s served versions, over the previous watch cache when the storage
/// (its key prefix) and the storage version's schema are the same; a new cache joins
/// `caches`. The cache reads etcd through the storage version's schema (upstream's
/// storage decoder: [`customresource::schema::VersionSchema::on_read`]); upstream also
/// builds a new storage for a CRD whose spec changed. Stored objects carry no
/// `apiVersion`, so every object is read with the storage version's schema.
async fn build(
    crd: &Value,
    (etcd, admission): (&Etcd, &Admission),
    previous: Option<Served>,
    caches: &Caches,
) -> Option<Served> {
    let storage_version = crate::crd::storage_version(crd)?;
    let webhook = match WebhookConverter::for_crd(crd) {
        Some(Ok(w)) => Some(w),
        Some(Err(e)) => {
            let name = crd.pointer("/metadata/name").and_then(Value::as_str);
            tracing::warn!(crd = name.unwrap_or_default(), error = %e, "conversion webhook");
            return None;
        }
        None => None,
    };
    let (storage_descriptor, storage_strategy) = version_parts(crd, storage_version)?;
    let mut versions = Vec::new();
    for version in customresource::served_versions(crd) {
        if version == storage_version {
            versions.push((storage_descriptor, storage_strategy.clone()));
        } else {
            versions.push(version_parts(crd, version)?);
        }
    }
    let prefix = format!("/{}", storage_descriptor.storage_resource);
    let read_with = read_with(crd, storage_version);
    let counted = match &previous {
        Some(p) if p.cache_prefix() == prefix => p.counted.clone(),
        _ => kas_storage_etcd::metrics::observe_count(
            kas_storage_etcd::metrics::qualified_resource(
                storage_descriptor.group,
                storage_descriptor.plural,
            ),
            etcd.storage.clone(),
            prefix.clone(),
            etcd.count_period,
        )
        .map(Arc::new),
    };
    let cache = match previous {
        Some(p) if p.cache_prefix() == prefix && p.read_with == read_with => p.cache,
        _ => {
            let mut config = CacherConfig::new(prefix);
            config.get_attrs = selectable_in_any_version(&versions);
            let stored = storage_descriptor.api_version();
            // What is written from now on goes through this schema's strategy.
            // Written as upstream writes custom resources: JSON with `apiVersion` and `kind`.
            let stored_kind = kas_storage_etcd::StoredKind {
                group: storage_descriptor.group,
                version: storage_descriptor.version,
                kind: storage_descriptor.kind,
                resource: storage_descriptor.plural,
                media_type: kas_storage_etcd::MediaType::Json,
            };
            if let Err(e) = etcd
                .codec
                .replace(storage_descriptor.storage_resource, stored_kind)
            {
                tracing::warn!(error = %e, "registering {}", storage_descriptor.storage_resource);
                return None;
            }
            let settled = etcd.storage.current_revision().await.ok();
            let source = codec(
                &etcd.storage,
                (&storage_strategy, settled),
                webhook.clone(),
                (stored, storage_descriptor.kind),
            );
            let cache = Arc::new(Cacher::new(source, config));
            if !cache.wait_ready(Duration::from_secs(10)).await {
                return None;
            }
            caches
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(Arc::downgrade(&cache));
            cache
        }
    };
    let terminating = Arc::new(AtomicBool::new(false));
    let mut checks: Vec<Arc<dyn Admit>> = vec![
        Arc::new(RefuseWhileTerminating {
            terminating: terminating.clone(),
            group: storage_descriptor.group,
            plural: storage_descriptor.plural,
        }),
        admission.lifecycle.clone(),
    ];
    let storage: Arc<dyn Storage> = cache.clone();
    let stored_elsewhere = crd
        .pointer("/status/storedVersions")
        .and_then(Value::as_array)
        .is_some_and(|versions| versions.iter().any(|v| v.as_str() != Some(storage_version)));
    let store = |(descriptor, strategy): (
        &'static kas_registry::ResourceDescriptor,
        Arc<customresource::strategy::Strategy>,
    )| {
        // With a conversion webhook, every other version reads and writes through it
        // (upstream's storage codec of that version); the storage version's own too when
        // objects may be stored in another version, for those the cache could not convert.
        let storage = match &webhook {
            Some(converter)
                if descriptor.version != storage_descriptor.version || stored_elsewhere =>
            {
                Arc::new(ConvertingStorage {
                    inner: storage.clone(),
                    converter: converter.clone(),
                    served: descriptor.api_version(),
                    stored: storage_descriptor.api_version(),
                    kind: descriptor.kind,
                })
            }
            _ => storage.clone(),
        };
        Store::new(descriptor, strategy, storage)
    };
    let stores: Vec<Store> = versions.into_iter().map(store).collect();
    // Admission webhooks read and default through the stores the chain then joins.
    let webhooks = admission.webhooks.plugins(&stores);
    checks.extend(webhooks.checks);
    let chain = Chain::new(checks)
        .with_mutators(vec![webhooks.mutator])
        .with_validators(vec![webhooks.validator]);
    let stores = stores
        .into_iter()
        .map(|s| s.with_admission(chain.clone()))
        .collect();
    let storage_store = store((storage_descriptor, storage_strategy)).with_admission(chain);
    Some(Served {
        built_from: built_from(crd),
        stores,
        storage_store,
        terminating,
        cache,
        read_with,
        counted,
    })
}

/// The storage of a CRD's objects as upstream's storage codec reads and writes them:
/// etcd's codec writes each as JSON with `apiVersion` and `kind` (the storage version's,
/// registered by [`build`]) and reads one in that version without them; this reads it
/// through the storage version's schema ([`customresource::schema::VersionSchema::on_read`];
/// only objects written before `settled`, the revision when this schema took over here,
/// are decoded for it: later ones were written through its strategy, so reads of them
/// cost nothing more. A write racing the CRD change on a replica that has not yet seen
/// it can land after `settled` without the new defaults; upstream would default it on
/// every read, here its next write does). An object stored in another version keeps its
/// type from etcd's codec: with a conversion webhook it is converted to the current one
/// when read (one the webhook fails to convert keeps its version, and is converted when
/// it is served, or the request fails as upstream's read through its codec); without one
/// every version's objects are the same but for `apiVersion`, which is dropped.
fn codec(
    etcd: &Arc<dyn Storage>,
    (storage_strategy, settled): (&customresource::strategy::Strategy, Option<u64>),
    webhook: Option<Arc<WebhookConverter>>,
    (stored, kind): (String, &'static str),
) -> Arc<dyn Storage> {
    let schema = storage_strategy.schema().cloned();
    let on_read = move |obj: &mut Value| {
        if let Some(map) = obj.as_object_mut() {
            map.remove("apiVersion");
            map.remove("kind");
        }
        if let Some(schema) = &schema {
            schema.on_read(obj);
        }
    };
    let Some(webhook) = webhook else {
        let transform = ReadTransform::new(etcd.clone(), Arc::new(on_read));
        return Arc::new(match settled {
            Some(revision) => transform.settled_after(revision),
            None => transform,
        });
    };
    let (read_as, write_as) = (stored.clone(), stored);
    let read = move |obj: &mut Value| {
        let version = obj
            .get("apiVersion")
            .and_then(Value::as_str)
            .map(str::to_owned);
        if let Some(version) = version.filter(|v| *v != read_as) {
            let typed = conversion::with_type(obj.clone(), &version, kind);
            match webhook.convert(vec![typed], &read_as, false) {
                Ok(mut converted) => *obj = converted.pop().unwrap_or_default(),
                Err(e) => {
                    // Kept in its version, to be converted when served.
                    tracing::warn!(error = %e, "reading a custom resource stored in {version}");
                    return;
                }
            }
        }
        *obj = conversion::without_type(std::mem::take(obj));
        on_read(obj);
    };
    let write = move |obj: &mut Value| {
        *obj = conversion::with_type(std::mem::take(obj), &write_as, kind);
    };
    Arc::new(ReadTransform::with_writes(
        etcd.clone(),
        Arc::new(read),
        Arc::new(write),
    ))
}

/// What a CRD's cache depends on beyond its key prefix: the storage version's schema
/// and whether unknown fields are preserved (objects are read through them) and every served version's `selectableFields` (the
/// cache indexes them all).
fn read_with(crd: &Value, storage_version: &str) -> Value {
    let selectable: Vec<&Value> = customresource::served_versions(crd)
        .into_iter()
        .filter_map(|v| customresource::version(crd, v)?.get("selectableFields"))
        .collect();
    json!({
        "schema": customresource::version(crd, storage_version)
            .and_then(|v| v.pointer("/schema/openAPIV3Schema")),
        "selectableFields": selectable,
        "conversion": crd.pointer("/spec/conversion"),
        "preserveUnknownFields": crd.pointer("/spec/preserveUnknownFields"),
    })
}

/// The cache's attributes: the fields any served version may select on. With one stored
/// form for every version (conversion `None`), a field selectable in `v2` only is still
/// indexed for the `v2` requests that name it; each version's strategy refuses the labels
/// it does not offer before a request reaches the cache.
fn selectable_in_any_version(
    versions: &[(
        &'static kas_registry::ResourceDescriptor,
        Arc<customresource::strategy::Strategy>,
    )],
) -> kas_storage::AttrsFunc {
    let strategies: Vec<Arc<dyn kas_registry::Strategy>> = versions
        .iter()
        .map(|(_, s)| -> Arc<dyn kas_registry::Strategy> { s.clone() })
        .collect();
    if strategies.len() == 1 {
        return kas_registry::store::get_attrs(&strategies[0]);
    }
    Arc::new(move |obj: &Value| {
        let mut fields = BTreeMap::new();
        for strategy in &strategies {
            fields.extend(strategy.field_set(obj));
        }
        kas_storage::Attrs {
            labels: kas_storage::attrs::object_labels(obj),
            fields: fields.into(),
        }
    })
}

impl Served {
    fn cache_prefix(&self) -> String {
        format!("/{}", self.storage_store.descriptor.storage_resource)
    }
}

/// Upstream's handler refuses creates while the CRD is terminating: a check on creates
/// (not a write hook, which would move updates off their single compare-and-swap).
struct RefuseWhileTerminating {
    terminating: Arc<AtomicBool>,
    group: &'static str,
    plural: &'static str,
}

impl Admit for RefuseWhileTerminating {
    fn admit<'a>(
        &'a self,
        attributes: &'a Attributes<'a>,
    ) -> BoxFuture<'a, kas_registry::Result<()>> {
        let refused =
            attributes.operation == Operation::Create && self.terminating.load(Ordering::Relaxed);
        Box::pin(async move {
            if refused {
                let mut status = Status::method_not_supported(self.group, self.plural, "create");
                status.message = Some(
                    "create not allowed while custom resource definition is terminating".into(),
                );
                return Err(status.into());
            }
            Ok(())
        })
    }
}
