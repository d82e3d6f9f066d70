//! The Services and Endpoints the aggregator reaches aggregated API servers through,
//! followed from etcd (upstream 1.33's service and endpoints informers; 1.34 moved the
//! aggregator to EndpointSlices). Each change is told to subscribers as the
//! `namespace/name` it concerns (a Service and its Endpoints share it).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use kas_storage::reflector::Reflect;
use kas_storage::{ObjectRef, Storage, WatchEvent};
use serde_json::Value;
use tokio::sync::broadcast;

/// Objects by `namespace/name`.
type Objects = RwLock<HashMap<String, Arc<Value>>>;

/// Services and Endpoints by `namespace/name`.
pub struct ServiceIndex {
    services: Objects,
    endpoints: Objects,
    changed: broadcast::Sender<String>,
    synced: AtomicU8,
}

fn key(obj: &Value) -> String {
    format!(
        "{}/{}",
        kas_registry::meta::namespace(obj),
        kas_registry::meta::name(obj)
    )
}

impl ServiceIndex {
    /// Empty, following nothing (what `follow` fills; tests use it bare).
    pub(crate) fn new() -> Self {
        ServiceIndex {
            services: RwLock::default(),
            endpoints: RwLock::default(),
            changed: broadcast::channel(1024).0,
            synced: AtomicU8::new(0),
        }
    }

    /// Starts following `/services/specs` and `/services/endpoints` in `storage`; the
    /// tasks end when the index is dropped.
    pub fn follow(storage: Arc<dyn Storage>) -> Arc<ServiceIndex> {
        let index = Arc::new(ServiceIndex::new());
        for kind in [Kind::Services, Kind::Endpoints] {
            let (weak, storage) = (Arc::downgrade(&index), storage.clone());
            tokio::spawn(async move {
                let replace =
                    move |index: &ServiceIndex, items: &[ObjectRef]| index.replace(kind, items);
                let apply =
                    move |index: &ServiceIndex, event: &WatchEvent| index.apply(kind, event);
                let reflect = Reflect {
                    what: kind.what(),
                    replace: &replace,
                    apply: &apply,
                };
                kas_storage::reflector::run(weak, &*storage, kind.key(), reflect).await;
            });
        }
        index
    }

    /// Whether both lists arrived.
    pub fn has_synced(&self) -> bool {
        self.synced.load(Ordering::Acquire) == Kind::Services.bit() | Kind::Endpoints.bit()
    }

    /// The `namespace/name` of each Service whose object or Endpoints change from now on
    /// (empty after a new list: anything may have changed).
    pub fn subscribe(&self) -> broadcast::Receiver<String> {
        self.changed.subscribe()
    }

    pub fn service(&self, namespace: &str, name: &str) -> Option<Arc<Value>> {
        self.get(Kind::Services, namespace, name)
    }

    pub fn endpoints(&self, namespace: &str, name: &str) -> Option<Arc<Value>> {
        self.get(Kind::Endpoints, namespace, name)
    }

    fn objects(&self, kind: Kind) -> &Objects {
        match kind {
            Kind::Services => &self.services,
            Kind::Endpoints => &self.endpoints,
        }
    }

    fn get(&self, kind: Kind, namespace: &str, name: &str) -> Option<Arc<Value>> {
        let objects = self
            .objects(kind)
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        objects.get(&format!("{namespace}/{name}")).cloned()
    }

    fn replace(&self, kind: Kind, items: &[ObjectRef]) {
        let objects = items
            .iter()
            .filter_map(|o| o.value().ok())
            .map(|o| (key(&o), Arc::new(o)))
            .collect();
        *self
            .objects(kind)
            .write()
            .unwrap_or_else(PoisonError::into_inner) = objects;
        self.synced.fetch_or(kind.bit(), Ordering::AcqRel);
        let _ = self.changed.send(String::new());
    }

    fn apply(&self, kind: Kind, event: &WatchEvent) -> Result<(), String> {
        let (obj, deleted) = match event {
            WatchEvent::Added(o) | WatchEvent::Modified(o) => (o, false),
            WatchEvent::Deleted(o) => (o, true),
            _ => return Ok(()),
        };
        let value = obj.value().map_err(|e| e.to_string())?;
        let k = key(&value);
        let mut objects = self
            .objects(kind)
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        if deleted {
            objects.remove(&k);
        } else {
            objects.insert(k.clone(), Arc::new(value));
        }
        drop(objects);
        let _ = self.changed.send(k);
        Ok(())
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Services,
    Endpoints,
}

impl Kind {
    fn key(self) -> &'static str {
        match self {
            Kind::Services => "/services/specs",
            Kind::Endpoints => "/services/endpoints",
        }
    }

    fn what(self) -> &'static str {
        match self {
            Kind::Services => "services",
            Kind::Endpoints => "endpoints",
        }
    }

    fn bit(self) -> u8 {
        match self {
            Kind::Services => 1,
            Kind::Endpoints => 2,
        }
    }
}
