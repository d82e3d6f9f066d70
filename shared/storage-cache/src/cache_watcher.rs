//! Upstream's `cacheWatcher`: one per WATCH, fed without blocking. Each watcher has a
//! bounded channel; a watcher whose channel is full is terminated (its stream ends, and
//! the client re-watches), so that one slow reader never delays the others.

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::{StreamExt, stream};
use kas_storage::{Predicate, WatchEvent, WatchStream};
use tokio::sync::mpsc::{self, error::TrySendError};

use crate::watch_cache::{CachedEvent, key_matches};

struct CacheWatcher {
    key: String,
    recursive: bool,
    predicate: Predicate,
    bookmarks: bool,
    tx: mpsc::Sender<WatchEvent>,
}

/// What a watcher's stream is built from.
pub(crate) struct WatchRequest {
    pub(crate) key: String,
    pub(crate) recursive: bool,
    pub(crate) predicate: Predicate,
    pub(crate) bookmarks: bool,
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

/// Every live watcher of one cacher.
#[derive(Default)]
pub(crate) struct Watchers {
    next_id: u64,
    watchers: HashMap<u64, CacheWatcher>,
}

impl Watchers {
    /// Registers a watcher; its stream yields `initial` first, then what is dispatched.
    pub(crate) fn add(
        &mut self,
        request: WatchRequest,
        initial: Vec<WatchEvent>,
        buffer: usize,
    ) -> WatchStream {
        let (tx, rx) = mpsc::channel(buffer.max(1));
        self.next_id += 1;
        self.watchers.insert(
            self.next_id,
            CacheWatcher {
                key: request.key,
                recursive: request.recursive,
                predicate: request.predicate,
                bookmarks: request.bookmarks,
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

    /// A bookmark at `resource_version` to every watcher that asked for them; a watcher
    /// with a full buffer just misses this one.
    pub(crate) fn bookmark(&mut self, resource_version: u64) {
        self.watchers.retain(|_, w| {
            if w.bookmarks {
                let sent = w.tx.try_send(WatchEvent::Bookmark(resource_version));
                return !matches!(sent, Err(TrySendError::Closed(_)));
            }
            !w.tx.is_closed()
        });
    }

    /// Ends every watch (upstream `terminateAllWatchers`, on a re-list).
    pub(crate) fn terminate_all(&mut self) {
        self.watchers.clear();
    }
}
