//! Upstream's `cacheWatcher`: one per WATCH, fed without blocking. Each watcher has a
//! bounded channel; a watcher whose channel is full is terminated (its stream ends, and
//! the client re-watches), so that one slow reader never delays the others. Watchers that
//! allow bookmarks get them on their own schedule ([`crate::bookmarks`]), not per event.

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::{StreamExt, stream};
use kas_storage::{Predicate, WatchEvent, WatchStream};
use tokio::sync::Notify;
use tokio::sync::mpsc::{self, error::TrySendError};
use tokio::time::{Duration, Instant};

use crate::bookmarks::{BookmarkQueue, next_bookmark_time};
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
    watchers: HashMap<u64, CacheWatcher>,
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
    pub(crate) fn new(
        epoch: Instant,
        frequency: Duration,
        resolution: Duration,
        wake: Arc<Notify>,
    ) -> Self {
        Watchers {
            next_id: 0,
            watchers: HashMap::new(),
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
        self.watchers.insert(
            id,
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

    /// Sends `event` to every watcher it concerns (upstream `dispatchEvent`).
    pub(crate) fn dispatch(&mut self, event: &Arc<CachedEvent>) {
        self.watchers.retain(|id, w| {
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
            let Some(w) = self.watchers.get(&id) else {
                continue; // ended since
            };
            if resource_version > 0 {
                let sent = w.tx.try_send(WatchEvent::Bookmark(resource_version));
                if let Err(TrySendError::Closed(_)) = sent {
                    self.watchers.remove(&id);
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

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::FutureExt;

    const SECOND: Duration = Duration::from_secs(1);
    const MINUTE: Duration = Duration::from_secs(60);

    fn watchers(epoch: Instant) -> Watchers {
        Watchers::new(epoch, MINUTE, SECOND, Arc::new(Notify::new()))
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
        let mut cache = WatchCache::new(Capacity {
            initial: 1,
            max: 1,
            fresh: SECOND,
        });
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
