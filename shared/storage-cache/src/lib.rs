//! kas-storage-cache: the watch cache, upstream's `Cacher` (k8s.io/apiserver
//! pkg/storage/cacher).
//!
//! [`Cacher`] implements kas-storage's `Storage` by wrapping another `Storage` for one
//! resource prefix. It lists the prefix and watches it from that revision (one watch per
//! resource per process), keeps every object (its serialized bytes included, so that
//! they are encoded once) and a bounded buffer of recent events, and serves LIST, WATCH
//! and GET at resourceVersion "0" from memory. Consistent reads and streaming lists
//! (`sendInitialEvents`) are served once the cache has caught up to the storage's current
//! revision, asking the storage's watch for progress while they wait, where the storage
//! answers such requests reliably. Writes, exact and paged reads go to the wrapped storage.
//! Watchers that allow bookmarks get one a minute after the last and 2 s before their
//! deadline (upstream's `nextBookmarkTime`), on a schedule apart from event dispatch.
//!
//! It depends only on the `Storage` trait: it must not depend on etcd, the registry or
//! any HTTP type.

mod bookmarks;
mod cache_watcher;
mod cacher;
mod field_index;
mod indexed_watchers;
mod progress;
mod watch_cache;

pub use cacher::{Cacher, CacherConfig};
