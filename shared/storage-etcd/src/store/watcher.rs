//! Upstream's etcd3 watcher: from resourceVersion unset or "0" (or with
//! `send_initial_events`), the current state as ADDED events first, then, for a streaming
//! list, the initial-events-end bookmark; then etcd's events (with their previous values)
//! after the start revision, filtered through the predicate. A compacted start revision is
//! an expired error event. Progress requests from the caller go to etcd on the watch's own
//! stream, and etcd's progress answers come back as bookmarks.

use etcd_client::{EventType, GetOptions as EtcdGet, WatchOptions as EtcdWatch, WatchResponse};
use futures_util::stream;
use kas_storage::{
    Error, ObjectRef, Predicate, Result, Storage, WatchEvent, WatchOptions, WatchProgressRequester,
    WatchStream, parse_resource_version,
};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::{EtcdStore, prefix_range_end};
use crate::errors::from_etcd;

/// Events buffered per watcher before etcd's stream is back-pressured.
const BUFFER: usize = 100;

pub(crate) async fn watch(
    store: &EtcdStore,
    key: &str,
    opts: &WatchOptions,
) -> Result<WatchStream> {
    let mut prepared = store.prepare_key(key)?;
    let rev = parse_resource_version(opts.resource_version.as_deref().unwrap_or(""))?;
    if opts.recursive && !prepared.ends_with('/') {
        prepared.push('/');
    }
    let (tx, rx) = mpsc::channel(BUFFER);
    let watcher = Watcher {
        store: store.clone(),
        key: prepared,
        recursive: opts.recursive,
        predicate: opts.predicate.clone(),
        progress_notify: opts.progress_notify,
        progress_requests: opts.progress_requests.clone(),
        tx,
    };
    let start = Start::new(rev, opts);
    let (created, registered) = oneshot::channel();
    tokio::spawn(async move {
        let tx = watcher.tx.clone();
        tokio::select! {
            () = watcher.run(start, created) => {}
            () = tx.closed() => {} // the consumer dropped the stream: cancel
        }
    });
    // Without initial events to hand over first, return once etcd registered the watch: a
    // caller's next writes (the watch cache's readers', once it is ready) then come after
    // it, and a watch that starts caught up is one whose progress answers are right even
    // from an etcd that answers too early for watches still catching up (etcd#15220).
    if !start.initial_events {
        let _ = registered.await;
    }
    Ok(Box::pin(stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|event| (event, rx))
    })))
}

struct Watcher {
    store: EtcdStore,
    key: String,
    recursive: bool,
    predicate: Predicate,
    progress_notify: bool,
    progress_requests: Option<WatchProgressRequester>,
    tx: mpsc::Sender<WatchEvent>,
}

/// Where a watch starts (upstream's `getStartWatchResourceVersion`,
/// `areInitialEventsRequired` and `isInitialEventsEndBookmarkRequired`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Start {
    /// The requested resourceVersion; 0 when unset.
    rev: u64,
    /// Send the current state as ADDED events first.
    initial_events: bool,
    /// Then the initial-events-end bookmark (a streaming list that allows bookmarks).
    end_bookmark: bool,
}

impl Start {
    fn new(rev: u64, opts: &WatchOptions) -> Self {
        let send = opts.send_initial_events;
        Start {
            rev,
            initial_events: (send.is_none() && rev == 0) || send == Some(true),
            end_bookmark: send == Some(true) && opts.progress_notify,
        }
    }
}

impl Watcher {
    /// The revision after which etcd's events are wanted, once the initial events (if any)
    /// were sent.
    async fn begin(&self, start: Start) -> Result<u64> {
        if !start.initial_events {
            return match start.rev {
                // sendInitialEvents=false from "now".
                0 => self.store.current_revision().await,
                rev => Ok(rev),
            };
        }
        if start.rev > 0 {
            let current = self.store.current_revision().await?;
            if start.rev > current {
                return Err(Error::TooLargeResourceVersion {
                    requested: start.rev,
                    current,
                    retry_after_seconds: 1,
                });
            }
        }
        let synced = self.sync().await?;
        if start.end_bookmark {
            self.send(WatchEvent::InitialEventsEnd(synced)).await;
        }
        Ok(synced)
    }

    async fn run(&self, start: Start, created: oneshot::Sender<()>) {
        let mut created = Some(created);
        let rev = start.rev;
        let start = match self.begin(start).await {
            Ok(after) => after + 1,
            Err(e) => return self.fail(e).await,
        };
        let mut options = EtcdWatch::new()
            .with_start_revision(start as i64)
            .with_prev_key();
        if self.recursive {
            options = options.with_range(prefix_range_end(&self.key));
        }
        if self.progress_notify {
            options = options.with_progress_notify();
        }
        let mut watch = match self
            .store
            .watch_client()
            .watch(self.key.as_str(), Some(options))
            .await
        {
            Ok(w) => w,
            Err(e) => return self.fail(from_etcd(&self.key, e)).await,
        };
        loop {
            let message = tokio::select! {
                message = watch.message() => message,
                () = requested(self.progress_requests.as_ref()) => {
                    // An etcd whose progress answers cannot be trusted is never asked.
                    if !self.store.watch_progress.supported(&self.store).await {
                        continue;
                    }
                    if let Err(e) = watch.request_progress().await {
                        return self.fail(from_etcd(&self.key, e)).await;
                    }
                    continue;
                }
            };
            match message {
                Ok(Some(resp)) => {
                    if let Some(c) = created.take_if(|_| resp.created()) {
                        let _ = c.send(());
                    }
                    if let Err(e) = self.handle(resp, rev).await {
                        return self.fail(e).await;
                    }
                }
                Ok(None) => {
                    return self
                        .fail(Error::internal("etcd closed the watch stream"))
                        .await;
                }
                Err(e) => return self.fail(from_etcd(&self.key, e)).await,
            }
        }
    }

    /// The current state as ADDED events; returns the revision it was read at.
    async fn sync(&self) -> Result<u64> {
        let options = self
            .recursive
            .then(|| EtcdGet::new().with_range(prefix_range_end(&self.key)));
        let resp = self
            .store
            .kv()
            .get(self.key.as_str(), options)
            .await
            .map_err(|e| from_etcd(&self.key, e))?;
        for kv in resp.kvs() {
            let (obj, value) = self.store.decode(kv, kv.mod_revision())?;
            if self.predicate.matches(&value) {
                self.send(WatchEvent::Added(obj)).await;
            }
        }
        Ok(resp.header().map_or(0, |h| h.revision().max(0) as u64))
    }

    async fn handle(&self, resp: WatchResponse, requested: u64) -> Result<()> {
        if resp.compact_revision() != 0 {
            return Err(Error::watch_expired(
                Some(requested),
                Some(resp.compact_revision() as u64),
            ));
        }
        if resp.canceled() {
            return Err(Error::internal(format!(
                "etcd canceled the watch: {}",
                resp.cancel_reason()
            )));
        }
        let revision = resp.header().map_or(0, |h| h.revision());
        if resp.events().is_empty() && !resp.created() && revision != 0 {
            if self.progress_notify {
                self.send(WatchEvent::Bookmark(revision as u64)).await;
            }
            return Ok(());
        }
        for event in resp.events() {
            let Some(kv) = event.kv() else { continue };
            let rev = kv.mod_revision();
            // The previous state, stamped with this event's revision, as upstream does.
            let prev = event
                .prev_kv()
                .map(|p| self.store.decode(p, rev))
                .transpose()?;
            let out = match event.event_type() {
                EventType::Delete => {
                    let Some(prev) = prev else {
                        return Err(Error::internal(
                            "etcd delete event without its previous value",
                        ));
                    };
                    let (prev, prev_value) = prev;
                    self.predicate
                        .matches(&prev_value)
                        .then(|| WatchEvent::Deleted(prev))
                }
                EventType::Put => {
                    let cur = self.store.decode(kv, rev)?;
                    self.transform_put(cur, prev, kv.create_revision() == rev)
                }
            };
            if let Some(out) = out {
                self.send(out).await;
            }
        }
        Ok(())
    }

    fn transform_put(
        &self,
        (cur, cur_value): (ObjectRef, Value),
        prev: Option<(ObjectRef, Value)>,
        created: bool,
    ) -> Option<WatchEvent> {
        let cur_passes = self.predicate.matches(&cur_value);
        if created {
            return cur_passes.then(|| WatchEvent::Added(cur));
        }
        // Without the previous value (etcd dropped it), it is a change of what was there.
        let Some((prev, prev_value)) = prev else {
            return cur_passes.then(|| WatchEvent::Modified(cur));
        };
        match (self.predicate.matches(&prev_value), cur_passes) {
            (true, true) => Some(WatchEvent::Modified(cur)),
            (false, true) => Some(WatchEvent::Added(cur)),
            (true, false) => Some(WatchEvent::Deleted(prev)),
            (false, false) => None,
        }
    }

    async fn send(&self, event: WatchEvent) {
        // A closed channel means the consumer left; the select in `watch` ends the task.
        let _ = self.tx.send(event).await;
    }

    async fn fail(&self, error: Error) {
        self.send(WatchEvent::Error(error)).await;
    }
}

/// The next progress request, or never without a requester.
async fn requested(requests: Option<&WatchProgressRequester>) {
    match requests {
        Some(r) => r.requested().await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(rev: u64, send: Option<bool>, bookmarks: bool) -> Start {
        let opts = WatchOptions {
            send_initial_events: send,
            progress_notify: bookmarks,
            ..Default::default()
        };
        Start::new(rev, &opts)
    }

    #[test]
    fn initial_events_as_upstream() {
        // Legacy: only from "0"/unset.
        assert!(start(0, None, true).initial_events);
        assert!(!start(0, None, true).end_bookmark);
        assert!(!start(5, None, true).initial_events);
        // Streaming lists, from any revision; the end bookmark only with bookmarks.
        assert!(start(5, Some(true), false).initial_events);
        assert!(!start(5, Some(true), false).end_bookmark);
        assert!(start(0, Some(true), true).end_bookmark);
        // sendInitialEvents=false: never.
        assert!(!start(0, Some(false), true).initial_events);
        assert!(!start(7, Some(false), true).initial_events);
    }
}
