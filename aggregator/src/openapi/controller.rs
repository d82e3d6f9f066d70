//! The loop that keeps the aggregator's OpenAPI documents, after upstream's OpenAPI v2
//! and v3 aggregation controllers (`controllers/openapi`, `controllers/openapiv3`): each
//! service-backed APIService's `/openapi/v2` (filtered to its group version's paths) and
//! `/openapi/v3` index are downloaded a second after it appears, again a minute after
//! each success, after a delay doubling from a minute to an hour after failures, and at
//! once when the APIService changes (its availability included). A failed download keeps
//! the last good documents (upstream's `LastSuccess`). The documents are republished
//! after every change, theirs or the local servers'.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use kas_endpoints::discovery::delegated::Delegated;
use kas_registry::store::informer::Objects;
use serde_json::Value;
use tokio::sync::{mpsc, watch};

use super::download;
use super::v2::{self, Merged, Remote, Source, Spec};
use super::v3::V3;
use crate::apiservice;
use crate::backend::Backends;
use crate::controllers::queue::{Queue, sleep_until};

/// Upstream's `AddAfter(apiService.Name, time.Second)` for a new APIService.
const FIRST_DELAY: Duration = Duration::from_secs(1);
/// Upstream's `successfulUpdateDelay`, and its failure backoff up to `failedUpdateMaxExpDelay`.
const SUCCESS_DELAY: Duration = Duration::from_secs(60);
const FAILURE_FIRST: Duration = Duration::from_secs(60);
const FAILURE_MAX: Duration = Duration::from_secs(3600);
/// Upstream runs one worker per controller (v2 and v3).
const WORKERS: usize = 2;

/// What the documents are served from.
pub struct Published {
    pub v2: Merged,
    pub v3: V3,
}

/// A service-backed APIService's last good documents.
struct Tracked {
    api_service: Value,
    v2_etag: String,
    v2: Option<Arc<Value>>,
    v3_root: Option<Value>,
}

struct Downloaded {
    name: String,
    v2: Result<download::V2, String>,
    v3: Result<Option<Value>, String>,
}

pub struct Controller {
    pub backends: Backends,
    pub api_services: watch::Receiver<Objects>,
    pub local: watch::Receiver<Arc<Delegated>>,
    /// The aggregator's own documents: `/openapi/v2` and the v3 index.
    pub own_v2: Arc<Value>,
    pub own_v3_root: Value,
    pub published: watch::Sender<Arc<Published>>,
    /// Set once the documents include core's.
    pub synced: watch::Sender<bool>,
}

impl Controller {
    pub async fn run(mut self) {
        let mut tracked: BTreeMap<String, Tracked> = BTreeMap::new();
        let mut queue: Queue<String> = Queue::with_backoff(FAILURE_FIRST, FAILURE_MAX);
        let mut running: BTreeSet<String> = BTreeSet::new();
        let mut objects = Objects::default();
        let (done_tx, mut done) = mpsc::unbounded_channel::<Downloaded>();
        let mut changed = true;
        loop {
            if std::mem::take(&mut changed) {
                self.publish(&tracked);
            }
            for name in queue.take_ready() {
                if running.contains(&name) || running.len() >= WORKERS {
                    // Again once a download ends.
                    queue.add(name);
                    continue;
                }
                let Some(t) = tracked.get(&name) else {
                    continue;
                };
                running.insert(name.clone());
                let (backends, api_service) = (self.backends.clone(), t.api_service.clone());
                let (etag, done) = (t.v2_etag.clone(), done_tx.clone());
                tokio::spawn(async move {
                    let v2 = download::v2(&backends, &api_service, &etag).await;
                    let v3 = download::v3_root(&backends, &api_service).await;
                    let _ = done.send(Downloaded { name, v2, v3 });
                });
            }
            tokio::select! {
                result = self.api_services.changed() => {
                    if result.is_err() {
                        return;
                    }
                    let now = self.api_services.borrow_and_update().clone();
                    changed = apply(&objects, &now, &mut tracked, &mut queue);
                    objects = now;
                }
                result = self.local.changed() => {
                    if result.is_err() {
                        return;
                    }
                    changed = true;
                }
                Some(d) = done.recv() => {
                    running.remove(&d.name);
                    let Some(t) = tracked.get_mut(&d.name) else { continue };
                    match record(t, d.v2, d.v3) {
                        Ok(news) => {
                            changed = news;
                            queue.done(d.name.clone(), true);
                            queue.add_after(d.name, SUCCESS_DELAY);
                        }
                        Err(e) => {
                            tracing::info!(apiservice = %d.name, error = %e, "loading OpenAPI spec failed");
                            queue.done(d.name, false);
                        }
                    }
                }
                () = sleep_until(queue.next_retry()) => {}
            }
        }
    }

    fn publish(&self, tracked: &BTreeMap<String, Tracked>) {
        let local = self.local.borrow().clone();
        let mut specs = vec![Spec {
            name: v2::local_name(0),
            remote: None,
            spec: Source::Value(self.own_v2.clone()),
        }];
        if local.openapi.is_some() {
            specs.push(Spec {
                name: v2::local_name(1),
                remote: None,
                spec: Source::Core(local.clone()),
            });
        }
        let mut roots = BTreeMap::new();
        for (name, t) in tracked {
            let (group, _) = apiservice::group_version(&t.api_service);
            let (group_priority, _) = apiservice::priorities(&t.api_service);
            if let Some(spec) = &t.v2 {
                let remote = Remote {
                    group: group.to_owned(),
                    group_priority,
                };
                let (name, spec) = (name.clone(), spec.clone());
                specs.push(Spec {
                    name,
                    remote: Some(remote),
                    spec: Source::Value(spec),
                });
            }
            if let Some(root) = &t.v3_root {
                roots.insert(name.clone(), (t.api_service.clone(), root.clone()));
            }
        }
        let mut local_roots = vec![&self.own_v3_root];
        local_roots.extend(local.openapi.as_ref().map(|(_, root)| root));
        let published = Published {
            v2: Merged::new(specs),
            v3: V3::build(&local_roots, &roots),
        };
        self.published.send_replace(Arc::new(published));
        if local.openapi.is_some() {
            self.synced.send_replace(true);
        }
    }
}

/// Upstream's `AddAPIService` (a new one is downloaded after a second),
/// `UpdateAPIService` (a changed one at once, its failures forgotten) and
/// `RemoveAPIService`.
/// Whether the documents change (an APIService with documents went or changed).
fn apply(
    before: &Objects,
    now: &Objects,
    tracked: &mut BTreeMap<String, Tracked>,
    queue: &mut Queue<String>,
) -> bool {
    let count = tracked.len();
    let mut changed = false;
    for (name, obj) in now.iter() {
        if before.get(name) == Some(obj) {
            continue;
        }
        if apiservice::service(obj).is_none() {
            changed |= tracked.remove(name).is_some();
            continue;
        }
        match tracked.get_mut(name) {
            Some(t) => {
                // Its group, version or priority may have changed.
                changed |= t.v2.is_some() || t.v3_root.is_some();
                t.api_service = obj.clone();
                queue.forget(name);
                queue.add(name.clone());
            }
            None => {
                tracked.insert(
                    name.clone(),
                    Tracked {
                        api_service: obj.clone(),
                        v2_etag: String::new(),
                        v2: None,
                        v3_root: None,
                    },
                );
                queue.add_after(name.clone(), FIRST_DELAY);
            }
        }
    }
    tracked.retain(|name, _| now.contains_key(name));
    changed || tracked.len() != count
}

/// Keeps what downloaded: the v2 spec filtered to the APIService's group version's paths
/// (upstream's `FilterSpecByPathsWithoutSideEffects` on `/apis/<group>/<version>/`);
/// whether anything changed.
fn record(
    t: &mut Tracked,
    v2: Result<download::V2, String>,
    v3: Result<Option<Value>, String>,
) -> Result<bool, String> {
    let mut changed = false;
    match v2 {
        Ok(download::V2::Spec { spec, etag }) => {
            let (group, version) = apiservice::group_version(&t.api_service);
            let prefix = format!("/apis/{group}/{version}/");
            let filtered = super::merge::filter_by_paths(&spec, &[prefix]);
            changed = t.v2.as_deref() != Some(&filtered);
            t.v2 = Some(Arc::new(filtered));
            t.v2_etag = etag;
        }
        Ok(download::V2::NotModified) => {}
        Err(e) => {
            let name = kas_registry::meta::name(&t.api_service);
            return Err(format!("failed to download {name}: {e}"));
        }
    }
    // A server without a v3 index has no v3 documents here (upstream converts its v2
    // document; not done).
    let root = v3?;
    changed |= t.v3_root != root;
    t.v3_root = root;
    Ok(changed)
}
