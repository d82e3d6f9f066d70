//! Keeps an [`Index`] in step with storage, as upstream's shared informers keep their
//! listers: per kind, kas-storage's reflector (a list, then a watch from the list's
//! resourceVersion, listed again when it fails).

use std::sync::{Arc, PoisonError, Weak};
use std::time::Duration;

use kas_storage::Storage;
use kas_storage::reflector::Reflect;

use crate::index::{Index, Kind};

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
    let replace = move |index: &Index, items: &[kas_storage::ObjectRef]| {
        index.replace(kind, items);
        index.mark_synced(kind);
    };
    let apply = move |index: &Index, event: &kas_storage::WatchEvent| {
        index.apply(kind, event).map_err(|e| e.to_string())
    };
    let reflect = Reflect {
        what: "RBAC objects",
        replace: &replace,
        apply: &apply,
    };
    kas_storage::reflector::run(index, &*storage, &key, reflect).await;
}

/// Follows `storage` under the core role's keys and waits (up to 30 s) for the first list
/// of every kind, as a role does before it serves.
pub async fn start(storage: Arc<dyn Storage>) -> std::result::Result<Arc<Index>, String> {
    let index = follow(Sources::new(storage));
    if !index.wait_synced(Duration::from_secs(30)).await {
        return Err("the RBAC index did not sync within 30s".to_owned());
    }
    Ok(index)
}

#[cfg(test)]
#[path = "informer_tests.rs"]
mod tests;
