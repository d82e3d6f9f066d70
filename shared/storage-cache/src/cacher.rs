//! Upstream's `Cacher`: a [`Storage`] decorator for one resource prefix. A reflector task
//! lists the prefix and watches it from that revision (one watch per resource per
//! process), feeding the [`WatchCache`]; LIST, WATCH and GET at "0" are served from
//! memory, everything else goes to the wrapped storage.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use async_trait::async_trait;
use futures_util::{StreamExt, stream};
use kas_storage::{
    AttrsFunc, Error, GetOptions, ListOptions, ListResult, ObjectRef, Preconditions,
    REQUEST_WATCH_PROGRESS_DISABLED, ResourceVersionMatch, Result, Storage, UpdateFn,
    ValidateDeletionFn, WatchEvent, WatchOptions, WatchStream, encode_continue,
    parse_resource_version,
};
use serde_json::Value;
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::cache_watcher::{WatchRequest, Watchers};
use crate::progress::ProgressRequester;
use crate::watch_cache::{Capacity, StoreElement, WatchCache, key_matches};

/// Objects per page of the (re-)list that fills the cache.
const LIST_PAGE_SIZE: i64 = 10_000;

/// Watchers whose bookmarks fall due within this of each other get them together
/// (upstream's one-second `watcherBookmarkTimeBuckets`).
const BOOKMARK_RESOLUTION: Duration = Duration::from_secs(1);

/// How a [`Cacher`] is sized and timed; the defaults are upstream's.
#[derive(Clone)]
pub struct CacherConfig {
    /// The resource's key prefix (`/configmaps`); keys outside it go to the storage.
    pub resource_prefix: String,
    /// The resource's attributes (upstream's `GetAttrsFunc`), kept per object for
    /// selectors; predicates given to this cache must be built on the same function.
    pub get_attrs: AttrsFunc,
    /// The selectable field watchers and lists are narrowed by (upstream's trigger
    /// function, `IndexerFuncs`, and its store `Indexers`; pods declare `spec.nodeName`):
    /// a watch whose field selector pins it is offered only the events of objects that
    /// have or had its value, and a list that pins it reads only those objects. `None`:
    /// every event is offered to every watcher.
    pub index_field: Option<String>,
    /// Events kept at first for watches from an older resourceVersion (upstream's
    /// `defaultLowerBoundCapacity`, 100).
    pub initial_capacity: usize,
    /// The most events kept (upstream's `defaultUpperBoundCapacity`, 100 × 1024).
    pub max_capacity: usize,
    /// The buffer grows while the events it would drop are younger than this (upstream's
    /// `eventFreshDuration`, 75 s).
    pub event_fresh_duration: Duration,
    /// Events queued per watcher; a watcher with a full queue is terminated.
    pub watcher_buffer: usize,
    /// How often watchers that allow bookmarks get one (upstream's `bookmarkFrequency`, a
    /// minute); a watch with a deadline also gets one 2 s before it.
    pub bookmark_interval: Duration,
    /// How long a read waits for the cache to catch up (upstream's 3 s) before it goes to
    /// the storage instead.
    pub freshness_timeout: Duration,
    /// The pause before re-listing after the underlying watch failed.
    pub relist_backoff: Duration,
}

impl CacherConfig {
    /// Upstream's defaults for `resource_prefix`.
    pub fn new(resource_prefix: impl Into<String>) -> Self {
        CacherConfig {
            resource_prefix: resource_prefix.into(),
            get_attrs: Arc::new(kas_storage::attrs::default_attrs),
            index_field: None,
            initial_capacity: 100,
            max_capacity: 100 * 1024,
            event_fresh_duration: Duration::from_secs(75),
            watcher_buffer: 100,
            bookmark_interval: Duration::from_secs(60),
            freshness_timeout: Duration::from_secs(3),
            relist_backoff: Duration::from_secs(1),
        }
    }
}

impl std::fmt::Debug for CacherConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CacherConfig")
            .field("resource_prefix", &self.resource_prefix)
            .field("index_field", &self.index_field)
            .field("initial_capacity", &self.initial_capacity)
            .field("max_capacity", &self.max_capacity)
            .finish_non_exhaustive()
    }
}

struct Shared {
    cache: WatchCache,
    watchers: Watchers,
}

struct Inner {
    storage: Arc<dyn Storage>,
    config: CacherConfig,
    shared: Mutex<Shared>,
    /// The revision the cache has caught up to; `None` while (re-)listing.
    progress: watch::Sender<Option<u64>>,
    /// Asks the storage's watch for progress while reads wait for the cache.
    progress_requester: Arc<ProgressRequester>,
    /// Wakes the bookmark task when a watcher's bookmark is due before the others'.
    bookmark_wake: Arc<Notify>,
}

/// Where a watch served from the cache starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Begin {
    /// The current state as ADDED events, then the changes; with `end_bookmark`, the
    /// initial-events-end bookmark in between (a streaming list).
    State { end_bookmark: bool },
    /// The changes after this revision, from the event buffer.
    After(u64),
    /// The changes after the cache's current revision (`sendInitialEvents=false` from
    /// "now").
    Now,
}

/// The watch cache of one resource, wrapping the storage it caches. Must be created
/// inside a tokio runtime; dropping it stops its tasks and ends its watches.
pub struct Cacher {
    inner: Arc<Inner>,
    tasks: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for Cacher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cacher")
            .field("resource_prefix", &self.inner.config.resource_prefix)
            .field("resource_version", &self.resource_version())
            .finish()
    }
}

impl Cacher {
    /// Starts caching `config.resource_prefix` of `storage`.
    pub fn new(storage: Arc<dyn Storage>, config: CacherConfig) -> Self {
        let limits = Capacity {
            initial: config.initial_capacity,
            max: config.max_capacity.max(config.initial_capacity),
            fresh: config.event_fresh_duration,
        };
        let bookmark_wake = Arc::new(Notify::new());
        let watchers = Watchers::new(
            Instant::now(),
            config.bookmark_interval,
            config.bookmark_interval.min(BOOKMARK_RESOLUTION),
            Arc::clone(&bookmark_wake),
            config.index_field.as_deref(),
        );
        let inner = Arc::new(Inner {
            storage,
            shared: Mutex::new(Shared {
                cache: WatchCache::new(limits, config.index_field.as_deref()),
                watchers,
            }),
            progress: watch::Sender::new(None),
            progress_requester: ProgressRequester::new(),
            bookmark_wake,
            config,
        });
        let reflector = tokio::spawn(Arc::clone(&inner).run_reflector());
        let bookmarks = tokio::spawn(Arc::clone(&inner).run_bookmarks());
        let requests = tokio::spawn(Arc::clone(&inner.progress_requester).run());
        Cacher {
            inner,
            tasks: vec![reflector, bookmarks, requests],
        }
    }

    /// The revision the cache has caught up to, once it has listed.
    pub fn resource_version(&self) -> Option<u64> {
        *self.inner.progress.borrow()
    }

    /// Waits up to `timeout` for the first list; whether the cache is ready.
    pub async fn wait_ready(&self, timeout: Duration) -> bool {
        self.inner.wait_until(0, timeout).await
    }

    /// How many watches the cache is serving.
    pub fn watcher_count(&self) -> usize {
        self.inner.lock().watchers.len()
    }

    /// Tells the cache that the storage compacted up to `revision` (the compactor calls
    /// it), so that a watch from a compacted revision fails as it would against etcd,
    /// instead of being served from the buffer.
    pub fn compacted(&self, revision: u64) {
        self.inner.lock().cache.compacted(revision);
    }
}

impl Drop for Cacher {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
        self.inner.lock().watchers.terminate_all();
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn covers(&self, key: &str) -> bool {
        let prefix = &self.config.resource_prefix;
        key == prefix.trim_end_matches('/') || key_matches(prefix, true, key)
    }

    /// Whether the cache reached `revision` within `timeout`.
    async fn wait_until(&self, revision: u64, timeout: Duration) -> bool {
        let mut rx = self.progress.subscribe();
        let caught_up = rx.wait_for(|p| p.is_some_and(|rv| rv >= revision));
        matches!(tokio::time::timeout(timeout, caught_up).await, Ok(Ok(_)))
    }

    /// Upstream `waitUntilFreshAndBlock` for a minimum resourceVersion: a revision newer
    /// than storage has fails at once; otherwise whether the cache caught up in time.
    async fn wait_fresh(&self, revision: u64) -> Result<bool> {
        if self.progress.borrow().is_some_and(|rv| rv >= revision) {
            return Ok(true);
        }
        let current = self.storage.current_revision().await?;
        if revision > current {
            return Err(Error::TooLargeResourceVersion {
                requested: revision,
                current,
                retry_after_seconds: 1,
            });
        }
        Ok(self.wait_for_revision(revision).await)
    }

    fn reached(&self, revision: u64) -> bool {
        self.progress.borrow().is_some_and(|rv| rv >= revision)
    }

    /// Upstream's `waitUntilFreshAndBlock`: whether the cache reached `revision` within the
    /// freshness timeout, asking the storage for progress meanwhile where its answers can
    /// be trusted (otherwise only the resource's own events move the cache).
    async fn wait_for_revision(&self, revision: u64) -> bool {
        if self.reached(revision) {
            return true;
        }
        let _waiting = self
            .storage
            .request_watch_progress_supported()
            .await
            .then(|| self.progress_requester.wait());
        self.wait_until(revision, self.config.freshness_timeout)
            .await
    }

    /// A consistent read from cache (upstream's ConsistentListFromCache): the cache must
    /// reach the storage's current revision first. Without trusted progress answers
    /// (upstream's `ConsistentReadSupported`) it is served only when the cache already is
    /// there: waiting for the resource's own events could take forever.
    async fn wait_consistent(&self) -> Result<bool> {
        let current = self.storage.current_revision().await?;
        if self.reached(current) {
            return Ok(true);
        }
        if !self.storage.request_watch_progress_supported().await {
            return Ok(false);
        }
        Ok(self.wait_for_revision(current).await)
    }

    /// Whether a list is served from the cache (upstream `shouldDelegateList`), after
    /// waiting for it to be fresh enough.
    async fn serve_list_from_cache(&self, opts: &ListOptions) -> Result<bool> {
        if opts
            .continue_token
            .as_deref()
            .is_some_and(|c| !c.is_empty())
        {
            return Ok(false);
        }
        let rv = match opts.resource_version.as_deref() {
            None | Some("") => None,
            Some(rv) => Some(parse_resource_version(rv)?),
        };
        let limited = opts.limit.is_some_and(|l| l > 0);
        match (rv, opts.resource_version_match) {
            (_, Some(ResourceVersionMatch::Exact)) => Ok(false),
            // Legacy: a limit with a resourceVersion is an exact read.
            (Some(rv), None) if rv > 0 && limited => Ok(false),
            (None, _) => self.wait_consistent().await,
            (Some(0), _) => Ok(self.wait_until(0, self.config.freshness_timeout).await),
            (Some(rv), _) => self.wait_fresh(rv).await,
        }
    }

    fn list_from_cache(&self, key: &str, opts: &ListOptions) -> Result<ListResult> {
        let shared = self.lock();
        let revision = shared.cache.resource_version();
        let limit = opts
            .limit
            .filter(|&l| l > 0 && opts.recursive)
            .map(|l| l as usize);
        let mut matching = shared.cache.list(key, opts.recursive, &opts.predicate);
        let items: Vec<ObjectRef> = match limit {
            None => matching.by_ref().cloned().collect(),
            Some(limit) => matching.by_ref().take(limit).cloned().collect(),
        };
        let mut result = ListResult {
            resource_version: revision,
            ..Default::default()
        };
        let remaining = if limit.is_some() { matching.count() } else { 0 };
        if let (true, Some(last)) = (remaining > 0, items.last()) {
            let key_prefix = format!("{}/", key.trim_end_matches('/'));
            let next = format!("{}\0", last.key);
            result.continue_token = Some(encode_continue(&next, &key_prefix, revision as i64)?);
            if opts.predicate.is_empty() {
                result.remaining_item_count = Some(remaining as i64);
            }
        }
        result.items = items;
        Ok(result)
    }

    fn watch_from_cache(&self, key: &str, opts: &WatchOptions, begin: Begin) -> WatchStream {
        let request = WatchRequest {
            key: key.to_string(),
            recursive: opts.recursive,
            predicate: opts.predicate.clone(),
            bookmarks: opts.progress_notify,
            deadline: opts.deadline,
        };
        // Under the lock, so that nothing is dispatched between the start and the watcher.
        let mut shared = self.lock();
        let initial: Vec<WatchEvent> = match begin {
            Begin::State { end_bookmark } => {
                let mut state: Vec<WatchEvent> = shared
                    .cache
                    .list(key, opts.recursive, &opts.predicate)
                    .map(|o| WatchEvent::Added(o.clone()))
                    .collect();
                if end_bookmark {
                    let revision = shared.cache.resource_version();
                    state.push(WatchEvent::InitialEventsEnd(revision));
                }
                state
            }
            Begin::After(revision) => match shared.cache.events_since(revision) {
                Ok(events) => events.iter().filter_map(|e| request.convert(e)).collect(),
                Err(e) => return error_stream(e),
            },
            Begin::Now => Vec::new(),
        };
        let buffer = self.config.watcher_buffer;
        shared
            .watchers
            .add(request, initial, buffer, Instant::now())
    }

    /// Upstream's cacher `Watch` with `sendInitialEvents` set (KEP 3157, streaming lists).
    /// The state it starts from is at least as new as the resourceVersion, or, unset, as
    /// the storage's current revision: a consistent read, which needs the storage's
    /// progress answers. Failures are error events, as upstream's error watcher sends them.
    async fn watch_with_initial_events(
        &self,
        key: &str,
        opts: &WatchOptions,
        rv: u64,
    ) -> Result<WatchStream> {
        let send = opts.send_initial_events == Some(true);
        let streaming_list = send && opts.progress_notify;
        if streaming_list && !self.storage.request_watch_progress_supported().await {
            return Ok(error_stream(Error::internal(
                REQUEST_WATCH_PROGRESS_DISABLED,
            )));
        }
        let consistent = opts.resource_version.as_deref().unwrap_or("").is_empty();
        let required = if consistent {
            match self.storage.current_revision().await {
                Ok(current) => current,
                Err(e) => return Ok(error_stream(e)),
            }
        } else {
            rv
        };
        // Upstream waits only before initial events; this waits before any start, since
        // the cache's watchers get every later event and cannot skip older ones.
        if !self.wait_for_revision(required).await {
            let current = self.progress.borrow().unwrap_or(0);
            return Ok(error_stream(Error::TooLargeResourceVersion {
                requested: required,
                current,
                retry_after_seconds: 1,
            }));
        }
        let begin = match (send, rv) {
            (true, _) => Begin::State {
                end_bookmark: streaming_list,
            },
            (false, 0) => Begin::Now,
            (false, rv) => Begin::After(rv),
        };
        Ok(self.watch_from_cache(key, opts, begin))
    }

    fn cached(&self, key: &str, given: Option<ObjectRef>) -> Option<ObjectRef> {
        given.or_else(|| {
            self.covers(key)
                .then(|| self.lock().cache.get(key))
                .flatten()
        })
    }

    async fn run_reflector(self: Arc<Self>) {
        loop {
            let error = self.list_and_watch().await;
            tracing::warn!(
                prefix = %self.config.resource_prefix,
                %error,
                "watch cache: re-listing after the underlying watch failed"
            );
            self.progress.send_replace(None);
            self.lock().watchers.terminate_all();
            tokio::time::sleep(self.config.relist_backoff).await;
        }
    }

    /// The whole prefix at one revision, in pages (upstream's reflector pages its lists
    /// too): one response for every object would hold all of them twice at once, as etcd's
    /// bytes and as decoded objects, and the allocator keeps such a peak.
    async fn list_all(&self, prefix: &str) -> Result<(Vec<StoreElement>, u64)> {
        let mut opts = ListOptions {
            recursive: true,
            limit: Some(LIST_PAGE_SIZE),
            ..Default::default()
        };
        let mut elements = Vec::new();
        loop {
            let page = self.storage.list(prefix, &opts).await?;
            elements.extend(page.items.into_iter().map(|o| self.element(o)));
            match page.continue_token {
                Some(token) => opts.continue_token = Some(token),
                None => return Ok((elements, page.resource_version)),
            }
        }
    }

    /// Upstream's reflector `ListAndWatch`; returns why it stopped.
    async fn list_and_watch(&self) -> Error {
        let prefix = self.config.resource_prefix.as_str();
        let (elements, revision) = match self.list_all(prefix).await {
            Ok(listed) => listed,
            Err(e) => return e,
        };
        {
            let mut shared = self.lock();
            shared.watchers.terminate_all();
            shared.cache.replace(elements, revision);
        }
        let watch_opts = WatchOptions {
            resource_version: Some(revision.to_string()),
            recursive: true,
            progress_notify: true,
            progress_requests: Some(self.progress_requester.requests()),
            ..Default::default()
        };
        let mut events = match self.storage.watch(prefix, &watch_opts).await {
            Ok(events) => events,
            Err(e) => return e,
        };
        // Ready once the watch is there: nothing after the list can be missed now.
        self.progress.send_replace(Some(revision));
        while let Some(event) = events.next().await {
            if let WatchEvent::Error(e) = event {
                return e;
            }
            // Decoded here, outside the lock, and only to take the attributes.
            let attrs = match &event {
                WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o) => {
                    self.element(o.clone()).attrs
                }
                _ => Default::default(),
            };
            let revision = {
                let mut shared = self.lock();
                if let Some(cached) = shared.cache.apply(event, attrs) {
                    shared.watchers.dispatch(&cached);
                }
                shared.cache.resource_version()
            };
            self.progress.send_replace(Some(revision));
        }
        Error::internal("the underlying watch ended")
    }

    fn element(&self, object: ObjectRef) -> StoreElement {
        let attrs = match object.selectable_value() {
            Ok(value) => (self.config.get_attrs)(&value),
            Err(e) => {
                // Cannot happen for bytes the storage encoded; such an object matches only
                // selectors that ask for nothing.
                tracing::warn!(key = %object.key, error = %e, "watch cache: undecodable object");
                Default::default()
            }
        };
        StoreElement { object, attrs }
    }

    /// Sleeps until the earliest bookmark is due (or one is scheduled before it), then
    /// sends every due one: one wake-up per bucket of due watchers, none while no watcher
    /// waits, and nothing per event.
    async fn run_bookmarks(self: Arc<Self>) {
        loop {
            let due = self.lock().watchers.next_bookmark_due();
            let Some(due) = due else {
                self.bookmark_wake.notified().await;
                continue;
            };
            tokio::select! {
                () = tokio::time::sleep_until(due) => {}
                () = self.bookmark_wake.notified() => continue,
            }
            // At the cache's revision, read under the lock: every watcher has been given
            // every event up to it, and none after.
            let mut shared = self.lock();
            let revision = shared.cache.resource_version();
            shared.watchers.send_due_bookmarks(Instant::now(), revision);
        }
    }
}

#[async_trait]
impl Storage for Cacher {
    async fn create(&self, key: &str, value: Value, ttl_seconds: Option<i64>) -> Result<ObjectRef> {
        self.inner.storage.create(key, value, ttl_seconds).await
    }

    async fn get(&self, key: &str, opts: &GetOptions) -> Result<Option<ObjectRef>> {
        let inner = &self.inner;
        let rv = match opts.resource_version.as_deref() {
            Some(rv) if !rv.is_empty() && inner.covers(key) => parse_resource_version(rv)?,
            _ => return inner.storage.get(key, opts).await,
        };
        let fresh = if rv == 0 {
            inner.wait_until(0, inner.config.freshness_timeout).await
        } else {
            inner.wait_fresh(rv).await?
        };
        if !fresh {
            return inner.storage.get(key, opts).await;
        }
        match inner.lock().cache.get(key) {
            Some(obj) => Ok(Some(obj)),
            None if opts.ignore_not_found => Ok(None),
            None => Err(Error::NotFound {
                key: key.to_string(),
            }),
        }
    }

    async fn list(&self, key: &str, opts: &ListOptions) -> Result<ListResult> {
        if self.inner.covers(key) && self.inner.serve_list_from_cache(opts).await? {
            return self.inner.list_from_cache(key, opts);
        }
        self.inner.storage.list(key, opts).await
    }

    async fn guaranteed_update(
        &self,
        key: &str,
        preconditions: &Preconditions,
        ignore_not_found: bool,
        try_update: &UpdateFn<'_>,
        cached_existing: Option<ObjectRef>,
        ttl_seconds: Option<i64>,
    ) -> Result<ObjectRef> {
        let cached = self.inner.cached(key, cached_existing);
        self.inner
            .storage
            .guaranteed_update(
                key,
                preconditions,
                ignore_not_found,
                try_update,
                cached,
                ttl_seconds,
            )
            .await
    }

    async fn delete(
        &self,
        key: &str,
        preconditions: &Preconditions,
        validate_deletion: &ValidateDeletionFn<'_>,
        cached_existing: Option<ObjectRef>,
    ) -> Result<ObjectRef> {
        let cached = self.inner.cached(key, cached_existing);
        self.inner
            .storage
            .delete(key, preconditions, validate_deletion, cached)
            .await
    }

    async fn watch(&self, key: &str, opts: &WatchOptions) -> Result<WatchStream> {
        let inner = &self.inner;
        if !inner.covers(key) {
            return inner.storage.watch(key, opts).await;
        }
        let rv = parse_resource_version(opts.resource_version.as_deref().unwrap_or(""))?;
        if opts.send_initial_events.is_some() {
            return inner.watch_with_initial_events(key, opts, rv).await;
        }
        let ready = if rv == 0 {
            inner.wait_until(0, inner.config.freshness_timeout).await
        } else {
            inner.wait_fresh(rv).await?
        };
        if !ready {
            return inner.storage.watch(key, opts).await;
        }
        let begin = match rv {
            0 => Begin::State {
                end_bookmark: false,
            },
            rv => Begin::After(rv),
        };
        Ok(inner.watch_from_cache(key, opts, begin))
    }

    async fn count(&self, key: &str) -> Result<i64> {
        self.inner.storage.count(key).await
    }

    async fn current_revision(&self) -> Result<u64> {
        self.inner.storage.current_revision().await
    }

    async fn request_watch_progress_supported(&self) -> bool {
        self.inner.storage.request_watch_progress_supported().await
    }
}

fn error_stream(error: Error) -> WatchStream {
    Box::pin(stream::iter([WatchEvent::Error(error)]))
}
