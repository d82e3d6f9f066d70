//! The [`Storage`] trait (upstream `storage.Interface`) and its watch types.

use std::pin::Pin;

use async_trait::async_trait;
use futures_util::Stream;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::object::ObjectRef;
use crate::options::{GetOptions, ListOptions, ListResult, Preconditions, WatchOptions};

/// The `tryUpdate` of [`Storage::guaranteed_update`]: given the current object (`None` when
/// absent and `ignore_not_found`), the new value, or `None` to leave it as it is. It may run
/// several times, so it must not have side effects beyond its result.
pub type UpdateFn<'a> = dyn Fn(Option<&Value>) -> Result<Option<Value>> + Send + Sync + 'a;

/// The `validateDeletion` of [`Storage::delete`]: refuses the deletion of the current
/// object by returning an error. May run several times.
pub type ValidateDeletionFn<'a> = dyn Fn(&ObjectRef) -> Result<()> + Send + Sync + 'a;

/// One watch event.
#[derive(Debug)]
pub enum WatchEvent {
    /// A new object, or one that started to match the predicate.
    Added(ObjectRef),
    /// A change to an object that matched before and after.
    Modified(ObjectRef),
    /// A deletion, or an object that stopped matching: its last state, stamped with the
    /// revision of the deletion (or change) as upstream does.
    Deleted(ObjectRef),
    /// Progress: every change up to this revision has been sent.
    Bookmark(u64),
    /// The bookmark that ends the initial events of a watch with `send_initial_events`
    /// (upstream's bookmark annotated `k8s.io/initial-events-end`): they were the state at
    /// this revision, and every later change follows.
    InitialEventsEnd(u64),
    /// The watch failed (e.g. [`Error::Expired`]); no event follows.
    Error(Error),
}

impl WatchEvent {
    /// The event with its object (of an added, modified or deleted event) replaced by
    /// `f`'s; a failure of `f` becomes an error event. Other events are left as they are.
    pub fn map_object(self, f: impl FnOnce(ObjectRef) -> Result<ObjectRef>) -> WatchEvent {
        let (obj, make): (ObjectRef, fn(ObjectRef) -> WatchEvent) = match self {
            WatchEvent::Added(o) => (o, WatchEvent::Added),
            WatchEvent::Modified(o) => (o, WatchEvent::Modified),
            WatchEvent::Deleted(o) => (o, WatchEvent::Deleted),
            other => return other,
        };
        match f(obj) {
            Ok(obj) => make(obj),
            Err(e) => WatchEvent::Error(e),
        }
    }
}

/// The events of one watch; dropping it cancels the watch.
pub type WatchStream = Pin<Box<dyn Stream<Item = WatchEvent> + Send>>;

/// Storage of JSON objects by key, with etcd's revision as resourceVersion.
///
/// Keys are the caller's (`/pods/<ns>/<name>`); an implementation may prepend its own
/// prefix (`/registry`). Every returned object carries `metadata.resourceVersion`.
#[async_trait]
pub trait Storage: Send + Sync {
    /// Creates `key` with `value`, which must not carry a resourceVersion. Fails with
    /// [`Error::KeyExists`] if it is there. With `ttl_seconds`, the key expires.
    async fn create(&self, key: &str, value: Value, ttl_seconds: Option<i64>) -> Result<ObjectRef>;

    /// Reads `key` at the latest revision (see [`GetOptions`]).
    async fn get(&self, key: &str, opts: &GetOptions) -> Result<Option<ObjectRef>>;

    /// Lists `key` (or, recursive, everything under `key/`), with upstream's
    /// resourceVersion and paging semantics (see [`ListOptions`]).
    async fn list(&self, key: &str, opts: &ListOptions) -> Result<ListResult>;

    /// Upstream's `GuaranteedUpdate`: read (or take `cached_existing`), check
    /// `preconditions`, call `try_update`, and write with a compare-and-swap on the mod
    /// revision, retrying on conflict. A new value equal to the stored one is not written,
    /// and the stored object (and its resourceVersion) is returned. With `ttl_seconds` the
    /// write expires after that long (upstream's `tryUpdate` returning a TTL); without, the
    /// key is left without one. A storage that cannot expire keys refuses a TTL rather
    /// than drop it.
    async fn guaranteed_update(
        &self,
        key: &str,
        preconditions: &Preconditions,
        ignore_not_found: bool,
        try_update: &UpdateFn<'_>,
        cached_existing: Option<ObjectRef>,
        ttl_seconds: Option<i64>,
    ) -> Result<ObjectRef>;

    /// Deletes `key` if `preconditions` and `validate_deletion` accept its current state,
    /// retrying on a concurrent change. Returns the last state, stamped with the deletion's
    /// revision.
    async fn delete(
        &self,
        key: &str,
        preconditions: &Preconditions,
        validate_deletion: &ValidateDeletionFn<'_>,
        cached_existing: Option<ObjectRef>,
    ) -> Result<ObjectRef>;

    /// Watches `key` (or, recursive, everything under `key/`), see [`WatchOptions`].
    async fn watch(&self, key: &str, opts: &WatchOptions) -> Result<WatchStream>;

    /// How many keys lie under `key/`.
    async fn count(&self, key: &str) -> Result<i64>;

    /// The newest revision of the whole store (for consistent reads).
    async fn current_revision(&self) -> Result<u64>;

    /// Whether a watch's progress can be requested (its `progress_requests`) and its answer
    /// trusted: upstream's `RequestWatchProgress` storage feature, which consistent reads
    /// from a watch cache depend on. A decorator must pass this on.
    async fn request_watch_progress_supported(&self) -> bool {
        false
    }
}
