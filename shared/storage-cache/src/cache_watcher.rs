//! Upstream's `cacheWatcher`: one per WATCH, fed without blocking. Each watcher has a
//! bounded channel; a watcher whose channel is full is terminated (its stream ends, and
//! the client re-watches), so that one slow reader never delays the others. Watchers that
//! allow bookmarks get them on their own schedule ([`crate::bookmarks`]), not per event.
//! Where the resource has a trigger field (pods' `spec.nodeName`), an event is offered only
//! to the watchers that pin its object's value of it and those that pin none
//! ([`crate::indexed_watchers`]).

use std::sync::Arc;

use futures_util::{StreamExt, stream};
use kas_storage::{Predicate, WatchEvent, WatchStream};
use tokio::sync::Notify;
use tokio::sync::mpsc::{self, error::TrySendError};
use tokio::time::{Duration, Instant};

use crate::bookmarks::{BookmarkQueue, next_bookmark_time};
use crate::indexed_watchers::IndexedWatchers;
use crate::watch_cache::{CachedEvent, key_matches};

/// The fewest registered watchers at which ended ones are swept.
const MIN_SWEEP: usize = 64;

struct CacheWatcher {
    key: String,
    recursive: bool,
    predicate: Predicate,
    /// When the server ends the watch; its last bookmark comes 2 s before.
    deadline: Option<Instant>,
    tx: mpsc::Sender<WatchEvent>,
}

/// What a watcher's stream is built from.
pub(crate) struct WatchRequest {
    pub(crate) key: String,
    pub(crate) recursive: bool,
    pub(crate) predicate: Predicate,
    pub(crate) bookmarks: bool,
    pub(crate) deadline: Option<Instant>,
}

impl WatchRequest {
    /// The event `event` is for this watcher, if any.
    pub(crate) fn convert(&self, event: &CachedEvent) -> Option<WatchEvent> {
        if !key_matches(&self.key, self.recursive, &event.object.key) {
            return None;
        }
        event.filtered(&self.predicate)
    }
}

/// Every live watcher of one cacher, and when those that allow bookmarks get the next.
pub(crate) struct Watchers {
    next_id: u64,
    /// Upstream's `indexedTrigger`: the selectable field whose value files watchers that
    /// pin it; `None` offers every event to every watcher.
    trigger: Option<Box<str>>,
    watchers: IndexedWatchers<CacheWatcher>,
    /// Ended watches leave when an event or a bookmark finds them closed; a resource
    /// without either sweeps them when this many watchers are registered (doubling, so
    /// sweeping costs O(1) per watch).
    sweep_at: usize,
    /// Ids of watchers that allow bookmarks, by when their next one is due; ids of ended
    /// watches stay until their time comes and are skipped then, as upstream's.
    bookmarks: BookmarkQueue,
    /// Upstream's `bookmarkFrequency`: the most time between two bookmarks of a watcher.
    frequency: Duration,
    /// Wakes the bookmark task when a watcher is due before everything scheduled so far.
    wake: Arc<Notify>,
}

impl Watchers {
    /// Bookmarks every `frequency` (and before each deadline), sent in buckets of
    /// `resolution` starting at `epoch`; `wake` is notified when the earliest one moves.
    /// Watchers that pin `trigger` are offered only the events of their value.
    pub(crate) fn new(
        epoch: Instant,
        frequency: Duration,
        resolution: Duration,
        wake: Arc<Notify>,
        trigger: Option<&str>,
    ) -> Self {
        Watchers {
            next_id: 0,
            trigger: trigger.map(Into::into),
            watchers: IndexedWatchers::default(),
            sweep_at: MIN_SWEEP,
            bookmarks: BookmarkQueue::new(epoch, resolution),
            frequency,
            wake,
        }
    }

    /// Registers a watcher at `now`; its stream yields `initial` first, then what is
    /// dispatched.
    pub(crate) fn add(
        &mut self,
        request: WatchRequest,
        initial: Vec<WatchEvent>,
        buffer: usize,
        now: Instant,
    ) -> WatchStream {
        if self.watchers.len() >= self.sweep_at {
            self.watchers.retain(|_, w| !w.tx.is_closed());
            self.sweep_at = (self.watchers.len() * 2).max(MIN_SWEEP);
        }
        let (tx, rx) = mpsc::channel(buffer.max(1));
        self.next_id += 1;
        let id = self.next_id;
        if request.bookmarks {
            let next = next_bookmark_time(now, self.frequency, request.deadline);
            if next.is_some_and(|at| self.bookmarks.schedule(id, at)) {
                self.wake.notify_one();
            }
        }
        // Upstream's `triggerValue, triggerSupported`.
        let pinned = self
            .trigger
            .as_deref()
            .and_then(|field| request.predicate.requires_exact_match(field));
        let pinned = pinned.map(str::to_owned);
        self.watchers.insert(
            id,
            pinned.as_deref(),
            CacheWatcher {
                key: request.key,
                recursive: request.recursive,
                predicate: request.predicate,
                deadline: request.deadline,
                tx,
            },
        );
        let live = stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|event| (event, rx))
        });
        Box::pin(stream::iter(initial).chain(live))
    }

    pub(crate) fn len(&self) -> usize {
        self.watchers.len()
    }

    /// Sends `event` to every watcher it concerns (upstream `dispatchEvent`), offering it
    /// only to the watchers that may want it (upstream `startDispatching`).
    pub(crate) fn dispatch(&mut self, event: &Arc<CachedEvent>) {
        let (values, n) = match &self.trigger {
            Some(field) => trigger_values(event, field),
            None => (["", ""], 0),
        };
        self.watchers.retain_offered(&values[..n], |id, w| {
            if !key_matches(&w.key, w.recursive, &event.object.key) {
                return !w.tx.is_closed();
            }
            let Some(out) = event.filtered(&w.predicate) else {
                return !w.tx.is_closed();
            };
            match w.tx.try_send(out) {
                Ok(()) => true,
                Err(TrySendError::Full(_)) => {
                    tracing::info!(
                        watcher = id,
                        key = %w.key,
                        "forcing watcher close due to unresponsiveness"
                    );
                    false
                }
                Err(TrySendError::Closed(_)) => false,
            }
        });
    }

    /// When the next bookmark is due, if any watcher waits for one.
    pub(crate) fn next_bookmark_due(&self) -> Option<Instant> {
        self.bookmarks.next_due()
    }

    /// A bookmark at `resource_version` to every watcher whose time came by `now`, each
    /// then scheduled for its next (upstream's `startDispatchingBookmarkEventsLocked` and
    /// the requeue in `finishDispatching`). A watcher with a full buffer just misses this
    /// one; a watcher whose last bookmark before its deadline this was gets no more. At
    /// revision 0 (nothing listed yet) none is sent, but the schedule goes on.
    pub(crate) fn send_due_bookmarks(&mut self, now: Instant, resource_version: u64) {
        for id in self.bookmarks.pop_due(now) {
            let Some(w) = self.watchers.get(id) else {
                continue; // ended since
            };
            if resource_version > 0 {
                let sent = w.tx.try_send(WatchEvent::Bookmark(resource_version));
                if let Err(TrySendError::Closed(_)) = sent {
                    self.watchers.remove(id);
                    continue;
                }
            }
            let next = next_bookmark_time(now, self.frequency, w.deadline);
            if let Some(at) = next.filter(|&at| !self.bookmarks.served(at)) {
                self.bookmarks.schedule(id, at);
            }
        }
    }

    /// Ends every watch (upstream `terminateAllWatchers`, on a re-list).
    pub(crate) fn terminate_all(&mut self) {
        self.watchers.clear();
        self.bookmarks.clear();
    }
}

/// Upstream's `triggerValuesThreadUnsafe`: the value of `field` of the event's object and,
/// when different, of its previous state; as a field selector reads them (a missing
/// field is "").
fn trigger_values<'a>(event: &'a CachedEvent, field: &str) -> ([&'a str; 2], usize) {
    use kas_apimachinery::labels::Labels;
    let value = |attrs: &'a kas_storage::Attrs| attrs.fields.get(field).unwrap_or("");
    let current = value(&event.attrs);
    match event.prev.as_ref().map(|p| value(&p.attrs)) {
        Some(prev) if prev != current => ([current, prev], 2),
        _ => ([current, ""], 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::FutureExt;

    const SECOND: Duration = Duration::from_secs(1);
    const MINUTE: Duration = Duration::from_secs(60);

    fn watchers(epoch: Instant) -> Watchers {
        Watchers::new(epoch, MINUTE, SECOND, Arc::new(Notify::new()), None)
    }

    fn request(bookmarks: bool, deadline: Option<Instant>) -> WatchRequest {
        WatchRequest {
            key: "/p".into(),
            recursive: true,
            predicate: Predicate::everything(),
            bookmarks,
            deadline,
        }
    }

    fn added(key: &str, rv: u64) -> Arc<CachedEvent> {
        use crate::watch_cache::{Capacity, WatchCache};
        let limits = Capacity {
            initial: 1,
            max: 1,
            fresh: SECOND,
        };
        let mut cache = WatchCache::new(limits, None);
        let object = kas_storage::Object::new(key, rv, serde_json::json!({})).unwrap();
        let event = WatchEvent::Added(Arc::new(object));
        cache.apply(event, Default::default()).unwrap()
    }

    /// The bookmarks a stream holds right now.
    fn bookmarks(w: &mut WatchStream) -> Vec<u64> {
        let mut got = Vec::new();
        while let Some(Some(event)) = w.next().now_or_never() {
            match event {
                WatchEvent::Bookmark(rv) => got.push(rv),
                e => panic!("unexpected {e:?}"),
            }
        }
        got
    }

    #[test]
    fn bookmarks_come_every_minute_and_before_the_deadline() {
        let t0 = Instant::now();
        let mut ws = watchers(t0);
        let mut short = ws.add(request(true, Some(t0 + 3 * SECOND)), vec![], 10, t0);
        let mut long = ws.add(request(true, Some(t0 + 1800 * SECOND)), vec![], 10, t0);
        let mut open = ws.add(request(true, None), vec![], 10, t0);
        let mut plain = ws.add(request(false, Some(t0 + 3 * SECOND)), vec![], 10, t0);

        // The 3 s watch is due 2 s before its deadline; nobody else for a minute.
        assert_eq!(ws.next_bookmark_due(), Some(t0 + SECOND));
        ws.send_due_bookmarks(t0 + SECOND, 7);
        assert_eq!(bookmarks(&mut short), [7]);
        assert!(bookmarks(&mut long).is_empty() && bookmarks(&mut open).is_empty());
        // That was its last: the next is the others' periodic one.
        assert_eq!(ws.next_bookmark_due(), Some(t0 + MINUTE));
        ws.send_due_bookmarks(t0 + MINUTE, 9);
        assert!(bookmarks(&mut short).is_empty());
        assert_eq!(bookmarks(&mut long), [9]);
        assert_eq!(bookmarks(&mut open), [9]);
        assert_eq!(ws.next_bookmark_due(), Some(t0 + 2 * MINUTE));
        assert!(bookmarks(&mut plain).is_empty(), "only when allowed");
    }

    #[test]
    fn the_last_bookmark_is_never_after_the_deadline() {
        let t0 = Instant::now();
        let mut ws = watchers(t0);
        // Under 2 s left: none, as upstream's nextBookmarkTime.
        let mut soon = ws.add(request(true, Some(t0 + SECOND)), vec![], 10, t0);
        assert_eq!(ws.next_bookmark_due(), None);
        // An odd deadline: served at the start of its bucket, so early, not late.
        let deadline = t0 + Duration::from_millis(4700);
        let mut odd = ws.add(request(true, Some(deadline)), vec![], 10, t0);
        let due = ws.next_bookmark_due().unwrap();
        assert!(due <= deadline - 2 * SECOND && due + SECOND > deadline - 2 * SECOND);
        ws.send_due_bookmarks(due, 3);
        assert_eq!(bookmarks(&mut odd), [3]);
        assert_eq!(ws.next_bookmark_due(), None);
        assert!(bookmarks(&mut soon).is_empty());
    }

    #[test]
    fn a_late_wake_up_sends_once_and_reschedules_from_then() {
        let t0 = Instant::now();
        let mut ws = watchers(t0);
        let mut w = ws.add(request(true, None), vec![], 10, t0);
        let late = t0 + MINUTE + 5 * SECOND;
        ws.send_due_bookmarks(late, 4);
        assert_eq!(bookmarks(&mut w), [4]);
        assert_eq!(ws.next_bookmark_due(), Some(late + MINUTE));
    }

    #[test]
    fn ended_watchers_are_swept_without_events() {
        let t0 = Instant::now();
        let mut ws = watchers(t0);
        for _ in 0..1000 {
            drop(ws.add(request(false, None), vec![], 10, t0));
        }
        assert!(ws.len() <= MIN_SWEEP, "{} left", ws.len());
        let live: Vec<_> = (0..100)
            .map(|_| ws.add(request(false, None), vec![], 10, t0))
            .collect();
        assert!(ws.len() <= 2 * live.len() + MIN_SWEEP, "{} left", ws.len());
    }

    #[test]
    fn ended_and_full_watchers() {
        let t0 = Instant::now();
        let mut ws = watchers(t0);
        let ended = ws.add(request(true, None), vec![], 10, t0);
        let mut full = ws.add(request(true, None), vec![], 1, t0);
        drop(ended);
        ws.dispatch(&added("/p/a", 2));
        assert_eq!(ws.len(), 1, "the ended one is gone");
        // A full buffer misses the bookmark but keeps its schedule.
        ws.send_due_bookmarks(t0 + MINUTE, 5);
        assert!(matches!(
            full.next().now_or_never(),
            Some(Some(WatchEvent::Added(_)))
        ));
        assert!(full.next().now_or_never().is_none());
        assert_eq!(ws.next_bookmark_due(), Some(t0 + 2 * MINUTE));
        ws.send_due_bookmarks(t0 + 2 * MINUTE, 6);
        assert_eq!(bookmarks(&mut full), [6]);
        ws.terminate_all();
        assert_eq!(ws.next_bookmark_due(), None);
    }
}

/// The trigger index: which watchers an event is offered to, and that what each watcher
/// sees is what it saw when every watcher was offered every event.
#[cfg(test)]
mod index_tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use futures_util::FutureExt;
    use kas_apimachinery::fields;
    use kas_apimachinery::labels::Labels;
    use serde_json::json;

    use crate::watch_cache::{Capacity, WatchCache};

    const NODE: &str = "spec.nodeName";
    const SECOND: Duration = Duration::from_secs(1);
    const MINUTE: Duration = Duration::from_secs(60);

    fn pod_attrs() -> kas_storage::AttrsFunc {
        Arc::new(|v: &serde_json::Value| {
            let s = |p: &str| {
                v.pointer(p)
                    .and_then(|s| s.as_str())
                    .unwrap_or("")
                    .to_owned()
            };
            let fields = std::collections::BTreeMap::from([
                (NODE.to_owned(), s("/spec/nodeName")),
                ("status.phase".to_owned(), s("/status/phase")),
            ]);
            kas_storage::Attrs {
                labels: kas_storage::attrs::object_labels(v),
                fields: fields.into(),
            }
        })
    }

    /// A field selector's predicate, as the handlers build it; `calls` counts the filter's
    /// runs.
    fn selecting(selector: &str, calls: &Arc<AtomicUsize>) -> Predicate {
        let parsed = fields::parse_selector(selector).unwrap();
        let (filter, calls) = (parsed.clone(), calls.clone());
        Predicate::new(pod_attrs(), move |a| {
            calls.fetch_add(1, Ordering::Relaxed);
            filter.matches(&a.fields)
        })
        .with_field_selector(parsed)
    }

    fn watch(ws: &mut Watchers, predicate: Predicate) -> WatchStream {
        let request = WatchRequest {
            key: "/pods".into(),
            recursive: true,
            predicate,
            bookmarks: true,
            deadline: None,
        };
        ws.add(request, vec![], 100, Instant::now())
    }

    fn pod(rv: u64, name: &str, node: &str, phase: &str) -> kas_storage::ObjectRef {
        let value = json!({"metadata": {"name": name}, "spec": {"nodeName": node},
            "status": {"phase": phase}});
        Arc::new(kas_storage::Object::new(format!("/pods/ns/{name}"), rv, value).unwrap())
    }

    /// A pod created on node-a, running, moved to node-b (the cache does not know that a
    /// pod's node never changes), deleted; another created unscheduled, then bound to
    /// node-a.
    fn history() -> Vec<Arc<CachedEvent>> {
        let limits = Capacity {
            initial: 10,
            max: 10,
            fresh: Duration::from_secs(60),
        };
        let mut cache = WatchCache::new(limits, Some(NODE));
        let attrs = pod_attrs();
        [
            WatchEvent::Added(pod(2, "p", "node-a", "Pending")),
            WatchEvent::Modified(pod(3, "p", "node-a", "Running")),
            WatchEvent::Modified(pod(4, "p", "node-b", "Running")),
            WatchEvent::Deleted(pod(5, "p", "node-b", "Running")),
            WatchEvent::Added(pod(6, "q", "", "Pending")),
            WatchEvent::Modified(pod(7, "q", "node-a", "Pending")),
        ]
        .into_iter()
        .map(|e| {
            let a = match &e {
                WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o) => {
                    attrs(&o.value().unwrap())
                }
                _ => unreachable!(),
            };
            cache.apply(e, a).unwrap()
        })
        .collect()
    }

    /// What a stream holds: `TYPE name@rv node`, bookmarks as `BOOKMARK rv`.
    fn seen(w: &mut WatchStream) -> Vec<String> {
        let mut got = Vec::new();
        while let Some(Some(event)) = w.next().now_or_never() {
            let (kind, o) = match event {
                WatchEvent::Added(o) => ("ADDED", o),
                WatchEvent::Modified(o) => ("MODIFIED", o),
                WatchEvent::Deleted(o) => ("DELETED", o),
                WatchEvent::Bookmark(rv) => {
                    got.push(format!("BOOKMARK {rv}"));
                    continue;
                }
                e => panic!("unexpected {e:?}"),
            };
            let v = o.value().unwrap();
            got.push(format!(
                "{kind} {}@{} {}",
                v["metadata"]["name"].as_str().unwrap(),
                o.resource_version,
                v["spec"]["nodeName"].as_str().unwrap()
            ));
        }
        got
    }

    const SELECTORS: &[&str] = &[
        "spec.nodeName=node-a",
        "spec.nodeName=node-b",
        "spec.nodeName=node-c",
        "spec.nodeName=",
        "spec.nodeName=node-a,status.phase=Running",
        "spec.nodeName!=node-b",
        "status.phase=Running",
        "",
    ];

    /// Every selector's watcher through `trigger`: what each saw, and how often its
    /// filter ran.
    fn run(trigger: Option<&str>) -> Vec<(Vec<String>, usize)> {
        let t0 = Instant::now();
        let mut ws = Watchers::new(t0, MINUTE, SECOND, Arc::new(Notify::new()), trigger);
        let mut streams: Vec<_> = SELECTORS
            .iter()
            .map(|s| {
                let calls = Arc::new(AtomicUsize::new(0));
                let predicate = match *s {
                    "" => Predicate::everything(),
                    s => selecting(s, &calls),
                };
                (watch(&mut ws, predicate), calls)
            })
            .collect();
        for event in history() {
            ws.dispatch(&event);
        }
        ws.send_due_bookmarks(t0 + MINUTE, 7);
        streams
            .iter_mut()
            .map(|(w, calls)| (seen(w), calls.load(Ordering::Relaxed)))
            .collect()
    }

    #[test]
    fn events_reach_the_watchers_of_their_values_and_the_others() {
        let got = run(Some(NODE));
        let saw = |i: usize| got[i].0.join("; ");
        assert_eq!(
            saw(0),
            "ADDED p@2 node-a; MODIFIED p@3 node-a; DELETED p@4 node-a; ADDED q@7 node-a; BOOKMARK 7",
            "moving away is the last state before, at the move's revision"
        );
        assert_eq!(saw(1), "ADDED p@4 node-b; DELETED p@5 node-b; BOOKMARK 7");
        assert_eq!(saw(2), "BOOKMARK 7");
        assert_eq!(saw(3), "ADDED q@6 ; DELETED q@7 ; BOOKMARK 7", "bound away");
        assert_eq!(
            saw(4),
            "ADDED p@3 node-a; DELETED p@4 node-a; BOOKMARK 7",
            "a selector that pins the node and more"
        );
        assert_eq!(
            saw(5),
            "ADDED p@2 node-a; MODIFIED p@3 node-a; DELETED p@4 node-a; \
             ADDED q@6 ; MODIFIED q@7 node-a; BOOKMARK 7"
        );
        assert_eq!(
            saw(6),
            "ADDED p@3 node-a; MODIFIED p@4 node-b; DELETED p@5 node-b; BOOKMARK 7"
        );
        assert_eq!(
            got[7].0.len(),
            7,
            "unfiltered: every event and the bookmark"
        );
        // Node c's watcher was offered nothing; the unindexed ones everything (a
        // modification runs the filter on both states).
        assert_eq!(got[2].1, 0);
        assert_eq!(got[5].1, 9);
        assert_eq!(got[6].1, 9);
    }

    #[test]
    fn the_index_changes_whom_an_event_is_offered_to_not_what_is_seen() {
        let (indexed, everyone) = (run(Some(NODE)), run(None));
        for (i, selector) in SELECTORS.iter().enumerate() {
            assert_eq!(indexed[i].0, everyone[i].0, "{selector}");
            assert!(indexed[i].1 <= everyone[i].1, "{selector}");
        }
        assert_eq!(
            everyone[2].1, 9,
            "unindexed, node c's filter runs on every event"
        );
    }

    #[test]
    fn a_slow_indexed_watcher_is_terminated_on_its_values_events() {
        let t0 = Instant::now();
        let mut ws = Watchers::new(t0, MINUTE, SECOND, Arc::new(Notify::new()), Some(NODE));
        let calls = Arc::new(AtomicUsize::new(0));
        let request = |selector: &str| WatchRequest {
            key: "/pods".into(),
            recursive: true,
            predicate: selecting(selector, &calls),
            bookmarks: false,
            deadline: None,
        };
        let mut slow = ws.add(request("spec.nodeName=node-a"), vec![], 1, t0);
        let _other = ws.add(request("spec.nodeName=node-b"), vec![], 1, t0);
        let events = history();
        ws.dispatch(&events[0]);
        assert_eq!(ws.len(), 2);
        ws.dispatch(&events[1]);
        assert_eq!(ws.len(), 1, "node-a's watcher had a full buffer");
        let first = slow.next().now_or_never();
        assert!(
            matches!(first, Some(Some(WatchEvent::Added(_)))),
            "{first:?}"
        );
        assert!(matches!(slow.next().now_or_never(), Some(None)), "ended");
        // Dropped watches leave when their value's next event finds them closed.
        ws.dispatch(&events[2]);
        assert_eq!(ws.len(), 1, "node-b's watcher took the move");
        drop(_other);
        ws.dispatch(&events[3]);
        assert_eq!(ws.len(), 0);
    }

    #[test]
    fn trigger_values_are_the_current_and_the_previous() {
        let events = history();
        let values = |e: &CachedEvent| {
            let (v, n) = trigger_values(e, NODE);
            v[..n].iter().map(|s| s.to_string()).collect::<Vec<_>>()
        };
        assert_eq!(values(&events[0]), ["node-a"]);
        assert_eq!(values(&events[1]), ["node-a"]);
        assert_eq!(values(&events[2]), ["node-b", "node-a"]);
        assert_eq!(values(&events[3]), ["node-b"]);
        assert_eq!(values(&events[5]), ["node-a", ""]);
        assert_eq!(events[4].attrs.fields.get(NODE), Some(""));
    }
}
