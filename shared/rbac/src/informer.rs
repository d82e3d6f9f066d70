//! Keeps an [`Index`] in step with storage, as upstream's shared informers keep their
//! listers: per kind, a list, then a watch from the list's resourceVersion; a watch that
//! ends is resumed from the last revision seen, and one that fails (410 Gone after a
//! compaction, or any other error) is followed by a fresh list.

use std::sync::{Arc, PoisonError, Weak};
use std::time::Duration;

use futures_util::StreamExt;
use kas_storage::{Error as StorageError, ListOptions, Storage, WatchEvent, WatchOptions};

use crate::error::{Error, Result};
use crate::index::{Index, Kind};

/// How long to wait before listing again after a failure.
const RETRY: Duration = Duration::from_secs(1);

/// Where the RBAC objects are stored: one storage and the key prefix of each kind (the
/// core role's stores key them as `/<resource>/<namespace>/<name>` under its etcd prefix).
#[derive(Clone)]
pub struct Sources {
    pub storage: Arc<dyn Storage>,
    pub roles: String,
    pub role_bindings: String,
    pub cluster_roles: String,
    pub cluster_role_bindings: String,
}

impl Sources {
    /// The core role's keys (`/roles`, `/rolebindings`, `/clusterroles`,
    /// `/clusterrolebindings`) in `storage`.
    pub fn new(storage: Arc<dyn Storage>) -> Self {
        Sources {
            storage,
            roles: "/roles".to_owned(),
            role_bindings: "/rolebindings".to_owned(),
            cluster_roles: "/clusterroles".to_owned(),
            cluster_role_bindings: "/clusterrolebindings".to_owned(),
        }
    }

    fn key(&self, kind: Kind) -> &str {
        match kind {
            Kind::Role => &self.roles,
            Kind::ClusterRole => &self.cluster_roles,
            Kind::RoleBinding => &self.role_bindings,
            Kind::ClusterRoleBinding => &self.cluster_role_bindings,
        }
    }
}

/// Starts following `sources` on the current tokio runtime, one task per kind, and
/// returns the index they keep. The tasks end when the last handle to the index is
/// dropped. Decisions made before [`Index::has_synced`] see a partial policy.
pub fn follow(sources: Sources) -> Arc<Index> {
    let index = Arc::new(Index::new());
    let mut tasks = Vec::with_capacity(Kind::ALL.len());
    for kind in Kind::ALL {
        let storage = sources.storage.clone();
        let key = sources.key(kind).to_owned();
        let weak = Arc::downgrade(&index);
        let task = tokio::spawn(async move { run(weak, storage, key, kind).await });
        tasks.push(task.abort_handle());
    }
    index
        .tasks
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .extend(tasks);
    index
}

async fn run(index: Weak<Index>, storage: Arc<dyn Storage>, key: String, kind: Kind) {
    while index.strong_count() > 0 {
        match list_and_watch(&index, &*storage, &key, kind).await {
            Ok(()) => {}
            Err(Error::Storage(StorageError::Expired { .. })) => {
                tracing::debug!(kind = kind.as_str(), "RBAC watch expired; listing again");
            }
            Err(e) => {
                tracing::warn!(kind = kind.as_str(), error = %e, "following RBAC objects");
                tokio::time::sleep(RETRY).await;
            }
        }
    }
}

/// Lists `key` into the index, then applies its watch until the index is dropped or the
/// watch fails.
async fn list_and_watch(
    index: &Weak<Index>,
    storage: &dyn Storage,
    key: &str,
    kind: Kind,
) -> Result<()> {
    let list = storage
        .list(
            key,
            &ListOptions {
                recursive: true,
                ..ListOptions::default()
            },
        )
        .await?;
    let Some(strong) = index.upgrade() else {
        return Ok(());
    };
    strong.replace(kind, &list.items);
    strong.mark_synced(kind);
    drop(strong);
    let mut revision = list.resource_version;
    loop {
        let opts = WatchOptions {
            resource_version: Some(revision.to_string()),
            recursive: true,
            progress_notify: true,
            ..WatchOptions::default()
        };
        let mut events = storage.watch(key, &opts).await?;
        let mut seen = false;
        while let Some(event) = events.next().await {
            let Some(strong) = index.upgrade() else {
                return Ok(());
            };
            let at = match &event {
                WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o) => {
                    o.resource_version
                }
                WatchEvent::Bookmark(rv) | WatchEvent::InitialEventsEnd(rv) => *rv,
                WatchEvent::Error(_) => 0,
            };
            if let WatchEvent::Error(e) = event {
                return Err(e.into());
            }
            revision = revision.max(at);
            seen = true;
            if let Err(e) = strong.apply(kind, &event) {
                tracing::warn!(error = %e, "skipping RBAC object");
            }
        }
        if index.strong_count() == 0 {
            return Ok(());
        }
        if !seen {
            // A watch that ends at once must not turn into a busy loop.
            tokio::time::sleep(RETRY).await;
        }
    }
}

#[cfg(test)]
#[path = "informer_tests.rs"]
mod tests;

/// Follows `storage` under the core role's keys and waits (up to 30 s) for the first list
/// of every kind, as a role does before it serves.
pub async fn start(storage: Arc<dyn Storage>) -> std::result::Result<Arc<Index>, String> {
    let index = follow(Sources::new(storage));
    if !index.wait_synced(Duration::from_secs(30)).await {
        return Err("the RBAC index did not sync within 30s".to_owned());
    }
    Ok(index)
}
