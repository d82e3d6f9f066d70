//! The loop that keeps the discovery documents, after upstream's `discoveryManager`
//! (`handler_discovery.go`) and the registration controller that feeds it: every
//! service-backed APIService is synced (its server's discovery fetched unless the
//! Service's last fetch is newer than the APIService's last change) when it is added or
//! changes (its availability included), every minute, and once for all at start, which
//! `synced` then tells. Local APIServices need no fetch: their groups come from core's
//! discovery, which the aggregator follows. Two syncs run at a time, as upstream's two
//! workers; the documents are rebuilt after every change.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use kas_endpoints::discovery::delegated::Delegated;
use kas_registry::store::informer::Objects;
use serde_json::Value;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use super::aggregated::Entry;
use super::aggregated::Priority;
use super::documents::{Documents, Inputs};
use super::fetch::{self, Cached, Fetched};
use super::legacy::Registered;
use crate::apiservice::{self, ServiceReference};
use crate::backend::Backends;
use crate::controllers::queue::Queue;

/// Upstream's `wait.PollUntil(1*time.Minute, ...)` marking every APIService dirty.
const RESYNC: Duration = Duration::from_secs(60);
const WORKERS: usize = 2;

/// A service-backed APIService as the manager tracks it (upstream's `groupVersionInfo`).
struct Info {
    api_service: Value,
    service: ServiceReference,
    /// After the APIService's last change: a cached fetch older than this is refetched.
    marked_dirty: Instant,
}

/// What one sync found.
struct Synced {
    name: String,
    service: ServiceReference,
    fetched: Fetched,
}

pub struct Manager {
    pub backends: Backends,
    pub api_services: watch::Receiver<Objects>,
    pub local: watch::Receiver<Arc<Delegated>>,
    /// The aggregator's own groups, as `APIGroupDiscovery` items.
    pub own: Vec<Value>,
    pub documents: watch::Sender<Arc<Documents>>,
    pub synced: watch::Sender<bool>,
}

struct State {
    objects: Objects,
    infos: BTreeMap<String, Info>,
    cache: HashMap<ServiceReference, Arc<Cached>>,
    /// Each synced APIService's `APIVersionDiscovery`.
    entries: BTreeMap<String, Value>,
    /// The discovery manager's queue never retries: a failed fetch is a stale entry.
    queue: Queue<String>,
    running: BTreeSet<String>,
    /// The first round's names still to sync.
    initial: Option<BTreeSet<String>>,
}

impl Manager {
    pub async fn run(mut self) {
        if crate::controllers::informer_synced(&mut self.api_services)
            .await
            .is_err()
        {
            return;
        }
        let mut state = State {
            objects: Objects::default(),
            infos: BTreeMap::new(),
            cache: HashMap::new(),
            entries: BTreeMap::new(),
            queue: Queue::default(),
            running: BTreeSet::new(),
            initial: None,
        };
        state.apply(self.api_services.borrow_and_update().clone());
        state.initial = Some(state.infos.keys().cloned().collect());
        self.publish(&mut state);
        let (done_tx, mut done) = mpsc::unbounded_channel::<Synced>();
        let mut resync = tokio::time::interval_at(Instant::now() + RESYNC, RESYNC);
        loop {
            self.start_ready(&mut state, &done_tx);
            tokio::select! {
                changed = self.api_services.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    state.apply(self.api_services.borrow_and_update().clone());
                }
                changed = self.local.changed() => {
                    if changed.is_err() {
                        return;
                    }
                }
                _ = resync.tick() => {
                    let now = Instant::now();
                    for (name, info) in state.infos.iter_mut() {
                        info.marked_dirty = now;
                        state.queue.add(name.clone());
                    }
                    continue;
                }
                Some(synced) = done.recv() => state.record(synced),
            }
            self.publish(&mut state);
        }
    }

    /// Starts the syncs the queue allows: every one of the first round at once (upstream
    /// syncs them all before it reports), then two at a time.
    fn start_ready(&self, state: &mut State, done: &mpsc::UnboundedSender<Synced>) {
        let limit = match state.initial {
            Some(_) => usize::MAX,
            None => WORKERS,
        };
        for name in state.queue.take_ready() {
            if state.running.contains(&name) || state.running.len() >= limit {
                // Again once a sync ends.
                state.queue.add(name);
                continue;
            }
            let Some(info) = state.infos.get(&name) else {
                if let Some(pending) = state.initial.as_mut() {
                    pending.remove(&name);
                }
                continue;
            };
            state.running.insert(name.clone());
            let cached = state.cache.get(&info.service).cloned();
            let (backends, done) = (self.backends.clone(), done.clone());
            let (api_service, service) = (info.api_service.clone(), info.service.clone());
            let marked_dirty = info.marked_dirty;
            tokio::spawn(async move {
                let fetched =
                    fetch::fresh(&backends, &api_service, &service, cached, marked_dirty).await;
                let _ = done.send(Synced {
                    name,
                    service,
                    fetched,
                });
            });
        }
    }

    fn publish(&self, state: &mut State) {
        if state.initial.as_ref().is_some_and(BTreeSet::is_empty) {
            state.initial = None;
        }
        let local = self.local.borrow().clone();
        let documents = Documents::build(Inputs {
            api_services: state
                .objects
                .values()
                .map(Registered::from_object)
                .collect(),
            own: &self.own,
            local: &local.items,
            remote: state.remote_entries(),
        });
        self.documents.send_replace(Arc::new(documents));
        // Synced: every APIService fetched once, and the local groups in.
        if state.initial.is_none() && !local.items.is_empty() && !*self.synced.borrow() {
            self.synced.send_replace(true);
        }
    }
}

impl State {
    /// Upstream's `AddAPIService` for every APIService that is new or changed (its status
    /// too), `RemoveAPIService` for every one that went.
    fn apply(&mut self, objects: Objects) {
        let now = Instant::now();
        for (name, obj) in objects.iter() {
            if self.objects.get(name) == Some(obj) {
                continue;
            }
            match apiservice::service(obj) {
                Some(service) => {
                    self.infos.insert(
                        name.clone(),
                        Info {
                            api_service: obj.clone(),
                            service,
                            marked_dirty: now,
                        },
                    );
                    self.queue.add(name.clone());
                }
                None => {
                    self.infos.remove(name);
                    self.entries.remove(name);
                }
            }
        }
        let gone: Vec<String> = self
            .infos
            .keys()
            .filter(|name| !objects.contains_key(*name))
            .cloned()
            .collect();
        for name in gone {
            self.infos.remove(&name);
            self.entries.remove(&name);
        }
        // Upstream's `removeUnusedServices`.
        let used: HashSet<&ServiceReference> = self.infos.values().map(|i| &i.service).collect();
        self.cache.retain(|svc, _| used.contains(svc));
        self.objects = objects;
    }

    /// Upstream's `syncAPIService` with a fetch's result.
    fn record(&mut self, synced: Synced) {
        self.running.remove(&synced.name);
        self.queue.done(synced.name.clone(), true);
        if let Some(pending) = self.initial.as_mut() {
            pending.remove(&synced.name);
        }
        let Some(info) = self.infos.get(&synced.name) else {
            return;
        };
        if info.service != synced.service {
            return;
        }
        if let Some(e) = &synced.fetched.error {
            tracing::debug!(apiservice = %synced.name, error = %e, "discovery fetch failed");
        }
        if let (true, Some(result)) = (synced.fetched.save, &synced.fetched.result) {
            let newer = self
                .cache
                .get(&synced.service)
                .is_none_or(|c| c.last_updated <= result.last_updated);
            if newer {
                self.cache.insert(synced.service.clone(), result.clone());
            }
        }
        let (group, version) = apiservice::group_version(&info.api_service);
        let entry = fetch::entry(group, version, &synced.fetched);
        self.entries.insert(synced.name, entry);
    }

    /// The synced group versions with their APIServices' priorities.
    fn remote_entries(&self) -> Vec<Entry> {
        self.entries
            .iter()
            .filter_map(|(name, version)| {
                let info = self.infos.get(name)?;
                let (group, _) = apiservice::group_version(&info.api_service);
                let (group_priority, version_priority) = apiservice::priorities(&info.api_service);
                Some(Entry {
                    group: group.to_owned(),
                    version: version.clone(),
                    priority: Priority {
                        group: group_priority,
                        version: version_priority,
                    },
                })
            })
            .collect()
    }
}
