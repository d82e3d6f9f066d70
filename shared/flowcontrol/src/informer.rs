//! Keeps a [`Controller`] in step with the stored FlowSchemas and
//! PriorityLevelConfigurations, as upstream's controller follows its informers: kas-storage's
//! reflector per kind (a list, then a watch), and a new digest whenever a level's spec or
//! a schema's spec or status changes. Every 10 s the levels' current limits are adjusted
//! to their seat demand (upstream's `borrowingAdjustmentPeriod`).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use kas_storage::reflector::Reflect;
use kas_storage::{ObjectRef, Storage, WatchEvent};
use serde::de::DeserializeOwned;
use tokio::sync::watch;

use crate::config::{FlowSchema, PriorityLevelConfiguration};
use crate::controller::Controller;

/// Upstream's `borrowingAdjustmentPeriod`.
const BORROWING_ADJUSTMENT_PERIOD: Duration = Duration::from_secs(10);

/// The stored objects, by name, and whether each kind had its first list.
#[derive(Default)]
struct Objects {
    levels: BTreeMap<String, PriorityLevelConfiguration>,
    schemas: BTreeMap<String, FlowSchema>,
    synced: (bool, bool),
}

/// What the informers keep; dropping it stops them.
pub struct Informer {
    controller: Arc<Controller>,
    objects: Mutex<Objects>,
    /// Bumped on every digest (the Dangling writer waits on it).
    digested: watch::Sender<u64>,
    tasks: Mutex<Vec<tokio::task::AbortHandle>>,
}

impl Drop for Informer {
    fn drop(&mut self) {
        for task in self
            .tasks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
        {
            task.abort();
        }
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Levels,
    Schemas,
}

impl Informer {
    /// Starts following the core role's keys (`/flowschemas`,
    /// `/prioritylevelconfigurations`) in `storage` on the current runtime.
    pub fn follow(controller: Arc<Controller>, storage: Arc<dyn Storage>) -> Arc<Informer> {
        let informer = Arc::new(Informer {
            controller,
            objects: Mutex::default(),
            digested: watch::channel(0).0,
            tasks: Mutex::default(),
        });
        let mut tasks = Vec::new();
        for (kind, key) in [
            (Kind::Levels, "/prioritylevelconfigurations"),
            (Kind::Schemas, "/flowschemas"),
        ] {
            let weak = Arc::downgrade(&informer);
            let storage = storage.clone();
            let task = tokio::spawn(async move { run(weak, storage, key, kind).await });
            tasks.push(task.abort_handle());
        }
        let weak = Arc::downgrade(&informer);
        let borrowing = tokio::spawn(async move {
            loop {
                tokio::time::sleep(BORROWING_ADJUSTMENT_PERIOD).await;
                let Some(informer) = weak.upgrade() else {
                    return;
                };
                informer.controller.adjust_borrowing();
            }
        });
        tasks.push(borrowing.abort_handle());
        informer
            .tasks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(tasks);
        informer
    }

    pub fn controller(&self) -> &Arc<Controller> {
        &self.controller
    }

    /// Whether both kinds had their first list.
    pub fn has_synced(&self) -> bool {
        let objects = self.objects.lock().unwrap_or_else(PoisonError::into_inner);
        objects.synced.0 && objects.synced.1
    }

    /// Waits up to `timeout` for [`Informer::has_synced`].
    pub async fn wait_synced(&self, timeout: Duration) -> bool {
        let mut digested = self.digested.subscribe();
        let wait = async {
            while !self.has_synced() {
                if digested.changed().await.is_err() {
                    return;
                }
            }
        };
        tokio::time::timeout(timeout, wait).await.is_ok()
    }

    /// The stored flow schemas and whether each one's level exists, after each digest.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.digested.subscribe()
    }

    /// The stored schemas, with whether their level is stored.
    pub fn schemas_and_levels(&self) -> Vec<(FlowSchema, bool)> {
        let objects = self.objects.lock().unwrap_or_else(PoisonError::into_inner);
        objects
            .schemas
            .values()
            .map(|fs| {
                let exists = objects
                    .levels
                    .contains_key(&fs.spec.priority_level_configuration.name);
                (fs.clone(), exists)
            })
            .collect()
    }

    fn replace(&self, kind: Kind, items: &[ObjectRef]) {
        let mut objects = self.objects.lock().unwrap_or_else(PoisonError::into_inner);
        match kind {
            Kind::Levels => {
                objects.levels = decode_all(items);
                objects.synced.0 = true;
            }
            Kind::Schemas => {
                objects.schemas = decode_all(items);
                objects.synced.1 = true;
            }
        }
        self.redigest(&objects);
    }

    fn apply(&self, kind: Kind, event: &WatchEvent) -> Result<(), String> {
        let (object, deleted) = match event {
            WatchEvent::Added(o) | WatchEvent::Modified(o) => (o, false),
            WatchEvent::Deleted(o) => (o, true),
            _ => return Ok(()),
        };
        let mut objects = self.objects.lock().unwrap_or_else(PoisonError::into_inner);
        let changed = match kind {
            Kind::Levels => {
                let level: PriorityLevelConfiguration = decode(object)?;
                let name = level.metadata.name.clone();
                if deleted {
                    objects.levels.remove(&name).is_some()
                } else {
                    let old = objects.levels.insert(name, level.clone());
                    old.is_none_or(|old| old.spec != level.spec)
                }
            }
            Kind::Schemas => {
                let schema: FlowSchema = decode(object)?;
                let name = schema.metadata.name.clone();
                if deleted {
                    objects.schemas.remove(&name).is_some()
                } else {
                    let old = objects.schemas.insert(name, schema.clone());
                    old.is_none_or(|old| old.spec != schema.spec || old.status != schema.status)
                }
            }
        };
        if changed {
            self.redigest(&objects);
        }
        Ok(())
    }

    fn redigest(&self, objects: &Objects) {
        self.controller.digest(
            objects.levels.values().cloned().collect(),
            objects.schemas.values().cloned().collect(),
        );
        self.digested.send_modify(|n| *n += 1);
    }
}

fn decode<T: DeserializeOwned>(object: &ObjectRef) -> Result<T, String> {
    serde_json::from_slice(&object.json).map_err(|e| format!("decoding {}: {e}", object.key))
}

fn decode_all<T: DeserializeOwned + Named>(items: &[ObjectRef]) -> BTreeMap<String, T> {
    items
        .iter()
        .filter_map(|o| match decode::<T>(o) {
            Ok(v) => Some((v.name().to_owned(), v)),
            Err(err) => {
                tracing::warn!("{err}");
                None
            }
        })
        .collect()
}

trait Named {
    fn name(&self) -> &str;
}

impl Named for FlowSchema {
    fn name(&self) -> &str {
        &self.metadata.name
    }
}

impl Named for PriorityLevelConfiguration {
    fn name(&self) -> &str {
        &self.metadata.name
    }
}

async fn run(informer: Weak<Informer>, storage: Arc<dyn Storage>, key: &str, kind: Kind) {
    let replace = move |informer: &Informer, items: &[ObjectRef]| informer.replace(kind, items);
    let apply = move |informer: &Informer, event: &WatchEvent| informer.apply(kind, event);
    let reflect = Reflect {
        what: "API Priority and Fairness configuration",
        replace: &replace,
        apply: &apply,
    };
    kas_storage::reflector::run(informer, &*storage, key, reflect).await;
}
