//! The Services and EndpointSlices the aggregator reaches aggregated API servers through,
//! followed from etcd (upstream's service and EndpointSlice informers, with the
//! `namespace/serviceName` index of `proxy.NewEndpointSliceIndexerGetter`). Each change is
//! told to subscribers as the `namespace/name` of the Service it concerns.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use kas_storage::reflector::Reflect;
use kas_storage::{ObjectRef, Storage, WatchEvent};
use serde_json::Value;
use tokio::sync::broadcast;

/// Upstream's `discoveryv1.LabelServiceName`.
pub const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";

const SERVICES_SYNCED: u8 = 1;
const SLICES_SYNCED: u8 = 2;

/// Services by `namespace/name`, and their EndpointSlices.
pub struct ServiceIndex {
    services: RwLock<HashMap<String, Arc<Value>>>,
    /// Slices by their Service's `namespace/name`, then by the slice's own name.
    slices: RwLock<HashMap<String, BTreeMap<String, Arc<Value>>>>,
    /// The Service each slice (`namespace/name`) was indexed under.
    slice_service: RwLock<HashMap<String, String>>,
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

/// The `namespace/serviceName` a slice belongs to, if it names one.
fn owner(slice: &Value) -> Option<String> {
    let service = slice
        .pointer("/metadata/labels")
        .and_then(|l| l.get(SERVICE_NAME_LABEL))
        .and_then(Value::as_str)?;
    Some(format!(
        "{}/{service}",
        kas_registry::meta::namespace(slice)
    ))
}

impl ServiceIndex {
    fn new() -> Self {
        ServiceIndex {
            services: RwLock::default(),
            slices: RwLock::default(),
            slice_service: RwLock::default(),
            changed: broadcast::channel(1024).0,
            synced: AtomicU8::new(0),
        }
    }

    /// Starts following `/services/specs` and `/endpointslices` in `storage`; the tasks
    /// end when the index is dropped.
    pub fn follow(storage: Arc<dyn Storage>) -> Arc<ServiceIndex> {
        let index = Arc::new(ServiceIndex::new());
        for kind in [Kind::Services, Kind::Slices] {
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
        self.synced.load(Ordering::Acquire) == SERVICES_SYNCED | SLICES_SYNCED
    }

    /// The `namespace/name` of each Service whose object or slices change from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<String> {
        self.changed.subscribe()
    }

    pub fn service(&self, namespace: &str, name: &str) -> Option<Arc<Value>> {
        let services = self.services.read().unwrap_or_else(PoisonError::into_inner);
        services.get(&format!("{namespace}/{name}")).cloned()
    }

    /// Upstream's `GetEndpointSlices`: the slices labelled with the Service's name.
    pub fn endpoint_slices(&self, namespace: &str, name: &str) -> Vec<Arc<Value>> {
        let slices = self.slices.read().unwrap_or_else(PoisonError::into_inner);
        slices
            .get(&format!("{namespace}/{name}"))
            .map(|s| s.values().cloned().collect())
            .unwrap_or_default()
    }

    fn replace(&self, kind: Kind, items: &[ObjectRef]) {
        let objects: Vec<Value> = items.iter().filter_map(|o| o.value().ok()).collect();
        match kind {
            Kind::Services => {
                let mut services = self
                    .services
                    .write()
                    .unwrap_or_else(PoisonError::into_inner);
                *services = objects
                    .into_iter()
                    .map(|o| (key(&o), Arc::new(o)))
                    .collect();
            }
            Kind::Slices => {
                self.slices
                    .write()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clear();
                self.slice_service
                    .write()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clear();
                for slice in objects {
                    self.put_slice(slice);
                }
            }
        }
        self.synced.fetch_or(kind.bit(), Ordering::AcqRel);
        // Everything may have changed: subscribers recheck all.
        let _ = self.changed.send(String::new());
    }

    fn apply(&self, kind: Kind, event: &WatchEvent) -> Result<(), String> {
        let (obj, deleted) = match event {
            WatchEvent::Added(o) | WatchEvent::Modified(o) => (o, false),
            WatchEvent::Deleted(o) => (o, true),
            _ => return Ok(()),
        };
        let value = obj.value().map_err(|e| e.to_string())?;
        let touched = match (kind, deleted) {
            (Kind::Services, false) => {
                let k = key(&value);
                let mut services = self
                    .services
                    .write()
                    .unwrap_or_else(PoisonError::into_inner);
                services.insert(k.clone(), Arc::new(value));
                vec![k]
            }
            (Kind::Services, true) => {
                let k = key(&value);
                self.services
                    .write()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(&k);
                vec![k]
            }
            (Kind::Slices, false) => self.put_slice(value),
            (Kind::Slices, true) => self.remove_slice(&key(&value)).into_iter().collect(),
        };
        for k in touched {
            let _ = self.changed.send(k);
        }
        Ok(())
    }

    /// Indexes a slice under its Service; the Services it left and joined.
    fn put_slice(&self, slice: Value) -> Vec<String> {
        let slice_key = key(&slice);
        let mut touched: Vec<String> = self.remove_slice(&slice_key).into_iter().collect();
        if let Some(service) = owner(&slice) {
            let name = kas_registry::meta::name(&slice).to_owned();
            let mut slices = self.slices.write().unwrap_or_else(PoisonError::into_inner);
            slices
                .entry(service.clone())
                .or_default()
                .insert(name, Arc::new(slice));
            let mut owners = self
                .slice_service
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            owners.insert(slice_key, service.clone());
            if !touched.contains(&service) {
                touched.push(service);
            }
        }
        touched
    }

    /// Drops a slice; the Service it was indexed under.
    fn remove_slice(&self, slice_key: &str) -> Option<String> {
        let service = self
            .slice_service
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(slice_key)?;
        let name = slice_key.split_once('/').map_or(slice_key, |(_, n)| n);
        let mut slices = self.slices.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(of_service) = slices.get_mut(&service) {
            of_service.remove(name);
            if of_service.is_empty() {
                slices.remove(&service);
            }
        }
        Some(service)
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Services,
    Slices,
}

impl Kind {
    fn key(self) -> &'static str {
        match self {
            Kind::Services => "/services/specs",
            Kind::Slices => "/endpointslices",
        }
    }

    fn what(self) -> &'static str {
        match self {
            Kind::Services => "services",
            Kind::Slices => "endpointslices",
        }
    }

    fn bit(self) -> u8 {
        match self {
            Kind::Services => SERVICES_SYNCED,
            Kind::Slices => SLICES_SYNCED,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn slice(name: &str, service: &str) -> Value {
        json!({"metadata": {"name": name, "namespace": "ns",
            "labels": {SERVICE_NAME_LABEL: service}}, "endpoints": []})
    }

    #[test]
    fn slices_follow_their_service_label() {
        let index = ServiceIndex::new();
        assert_eq!(index.put_slice(slice("a-1", "a")), ["ns/a"]);
        assert_eq!(index.endpoint_slices("ns", "a").len(), 1);
        // Relabelled to another Service: both are told.
        assert_eq!(index.put_slice(slice("a-1", "b")), ["ns/a", "ns/b"]);
        assert!(index.endpoint_slices("ns", "a").is_empty());
        assert_eq!(index.endpoint_slices("ns", "b").len(), 1);
        assert_eq!(index.remove_slice("ns/a-1").as_deref(), Some("ns/b"));
        assert!(index.endpoint_slices("ns", "b").is_empty());
    }
}
