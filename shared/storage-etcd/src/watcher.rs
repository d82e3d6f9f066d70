//! Upstream's etcd3 watcher: from resourceVersion unset or "0", the current state as ADDED
//! events first; then etcd's events (with their previous values) after the start revision,
//! filtered through the predicate. A compacted start revision is an expired error event.

use etcd_client::{EventType, GetOptions as EtcdGet, WatchOptions as EtcdWatch, WatchResponse};
use futures_util::stream;
use kas_storage::{
    Error, ObjectRef, Predicate, Result, WatchEvent, WatchOptions, WatchStream,
    parse_resource_version,
};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::errors::from_etcd;
use crate::store::{EtcdStore, prefix_range_end};

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
        tx,
    };
    tokio::spawn(async move {
        let tx = watcher.tx.clone();
        tokio::select! {
            () = watcher.run(rev) => {}
            () = tx.closed() => {} // the consumer dropped the stream: cancel
        }
    });
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
    tx: mpsc::Sender<WatchEvent>,
}

impl Watcher {
    async fn run(&self, rev: u64) {
        let start = if rev == 0 {
            match self.sync().await {
                Ok(initial) => initial + 1,
                Err(e) => return self.fail(e).await,
            }
        } else {
            rev + 1
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
            match watch.message().await {
                Ok(Some(resp)) => {
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
