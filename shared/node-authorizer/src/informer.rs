//! Keeps a [`Graph`] in step with storage, as upstream's graph populator follows its
//! shared informers: per kind, kas-storage's reflector (a list, then a watch from the
//! list's resourceVersion, listed again when it fails).

use std::collections::HashSet;
use std::sync::{Arc, PoisonError, Weak};
use std::time::Duration;

use kas_storage::reflector::Reflect;
use kas_storage::{ObjectRef, Storage, WatchEvent};

use crate::error::Result;
use crate::graph::{Graph, SYNC_ATTACHMENTS, SYNC_PODS, SYNC_PVS, SYNC_SLICES, VertexType};
use crate::populator::{NodeBound, PersistentVolume, Pod};

/// Where the objects the graph is built from are stored (the core role's stores key them
/// as `/<resource>/<namespace>/<name>` under its etcd prefix).
#[derive(Clone)]
pub struct Sources {
    pub storage: Arc<dyn Storage>,
    pub pods: String,
    pub persistent_volumes: String,
    pub volume_attachments: String,
    /// `resource.k8s.io` ResourceSlices, followed only when set (upstream follows them
    /// when DynamicResourceAllocation is enabled).
    pub resource_slices: Option<String>,
}

impl Sources {
    /// The core role's keys (`/pods`, `/persistentvolumes`, `/volumeattachments`) in
    /// `storage`; no ResourceSlices.
    pub fn new(storage: Arc<dyn Storage>) -> Self {
        Sources {
            storage,
            pods: "/pods".to_owned(),
            persistent_volumes: "/persistentvolumes".to_owned(),
            volume_attachments: "/volumeattachments".to_owned(),
            resource_slices: None,
        }
    }
}

/// The kinds the graph follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Pod,
    PersistentVolume,
    VolumeAttachment,
    ResourceSlice,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Pod => "Pod",
            Kind::PersistentVolume => "PersistentVolume",
            Kind::VolumeAttachment => "VolumeAttachment",
            Kind::ResourceSlice => "ResourceSlice",
        }
    }

    fn bit(self) -> u8 {
        match self {
            Kind::Pod => SYNC_PODS,
            Kind::PersistentVolume => SYNC_PVS,
            Kind::VolumeAttachment => SYNC_ATTACHMENTS,
            Kind::ResourceSlice => SYNC_SLICES,
        }
    }

    fn vertex(self) -> VertexType {
        match self {
            Kind::Pod => VertexType::Pod,
            Kind::PersistentVolume => VertexType::Pv,
            Kind::VolumeAttachment => VertexType::VolumeAttachment,
            Kind::ResourceSlice => VertexType::ResourceSlice,
        }
    }
}

/// Starts following `sources` on the current tokio runtime, one task per kind, and returns
/// the graph they keep. The tasks end when the last handle to the graph is dropped.
/// Decisions made before [`Graph::has_synced`] see a partial graph.
pub fn follow(sources: Sources) -> Arc<Graph> {
    let graph = Arc::new(Graph::new());
    let mut kinds = vec![
        (Kind::Pod, sources.pods.clone()),
        (Kind::PersistentVolume, sources.persistent_volumes.clone()),
        (Kind::VolumeAttachment, sources.volume_attachments.clone()),
    ];
    if let Some(key) = &sources.resource_slices {
        kinds.push((Kind::ResourceSlice, key.clone()));
    }
    graph.follow_kinds(kinds.iter().fold(0, |m, (k, _)| m | k.bit()));
    let mut tasks = Vec::with_capacity(kinds.len());
    for (kind, key) in kinds {
        let storage = sources.storage.clone();
        let weak = Arc::downgrade(&graph);
        let task = tokio::spawn(async move { run(weak, storage, key, kind).await });
        tasks.push(task.abort_handle());
    }
    graph
        .tasks
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .extend(tasks);
    graph
}

async fn run(graph: Weak<Graph>, storage: Arc<dyn Storage>, key: String, kind: Kind) {
    let replace = move |graph: &Graph, items: &[ObjectRef]| {
        replace(graph, kind, items);
        graph.mark_synced(kind.bit());
    };
    let apply = move |graph: &Graph, event: &WatchEvent| {
        apply(graph, kind, event).map_err(|e| e.to_string())
    };
    let reflect = Reflect {
        what: "objects for the node graph",
        replace: &replace,
        apply: &apply,
    };
    kas_storage::reflector::run(graph, &*storage, &key, reflect).await;
}

/// Applies one watch event, as upstream's populator handlers do. An update re-adds the
/// object: upstream skips pod updates that keep the node, the UID, the ephemeral
/// containers and the claim statuses, whose edges cannot have changed, so re-adding ends
/// in the same graph.
pub(crate) fn apply(graph: &Graph, kind: Kind, event: &WatchEvent) -> Result<()> {
    match event {
        WatchEvent::Added(o) | WatchEvent::Modified(o) => add(graph, kind, o),
        WatchEvent::Deleted(o) => delete(graph, kind, o),
        _ => Ok(()),
    }
}

fn add(graph: &Graph, kind: Kind, o: &ObjectRef) -> Result<()> {
    match kind {
        Kind::Pod => {
            let pod = Pod::from_json(&o.json)?;
            if !pod.node_name().is_empty() {
                graph.add_pod(&pod);
            }
        }
        Kind::PersistentVolume => graph.add_pv(&PersistentVolume::from_json(&o.json)?),
        Kind::VolumeAttachment => {
            let va = NodeBound::from_json(kind.as_str(), &o.json)?;
            graph.add_volume_attachment(va.name(), va.node_name());
        }
        Kind::ResourceSlice => {
            let slice = NodeBound::from_json(kind.as_str(), &o.json)?;
            graph.add_resource_slice(slice.name(), slice.node_name());
        }
    }
    Ok(())
}

fn delete(graph: &Graph, kind: Kind, o: &ObjectRef) -> Result<()> {
    match kind {
        Kind::Pod => {
            let pod = Pod::from_json(&o.json)?;
            if !pod.node_name().is_empty() {
                graph.delete_pod(pod.name(), pod.namespace());
            }
        }
        Kind::PersistentVolume => {
            graph.delete_pv(PersistentVolume::from_json(&o.json)?.name());
        }
        Kind::VolumeAttachment => {
            graph.delete_volume_attachment(NodeBound::from_json(kind.as_str(), &o.json)?.name());
        }
        Kind::ResourceSlice => {
            graph.delete_resource_slice(NodeBound::from_json(kind.as_str(), &o.json)?.name());
        }
    }
    Ok(())
}

/// A fresh list: deletes the objects of `kind` the list no longer has, adds the rest.
pub(crate) fn replace(graph: &Graph, kind: Kind, items: &[ObjectRef]) {
    let mut listed = HashSet::new();
    for item in items {
        match identity(kind, item) {
            Ok(id) => {
                listed.insert(id);
            }
            Err(e) => tracing::warn!(error = %e, "skipping object for the node graph"),
        }
    }
    for (namespace, name) in graph.names(kind.vertex()) {
        if !listed.contains(&(namespace.clone(), name.clone())) {
            match kind {
                Kind::Pod => graph.delete_pod(&name, &namespace),
                Kind::PersistentVolume => graph.delete_pv(&name),
                Kind::VolumeAttachment => graph.delete_volume_attachment(&name),
                Kind::ResourceSlice => graph.delete_resource_slice(&name),
            }
        }
    }
    for item in items {
        if let Err(e) = add(graph, kind, item) {
            tracing::warn!(error = %e, "skipping object for the node graph");
        }
    }
}

/// The (namespace, name) of a listed object, as its vertex would hold them.
fn identity(kind: Kind, o: &ObjectRef) -> Result<(String, String)> {
    Ok(match kind {
        Kind::Pod => {
            let pod = Pod::from_json(&o.json)?;
            (pod.namespace().to_owned(), pod.name().to_owned())
        }
        Kind::PersistentVolume => (
            String::new(),
            PersistentVolume::from_json(&o.json)?.name().to_owned(),
        ),
        Kind::VolumeAttachment | Kind::ResourceSlice => (
            String::new(),
            NodeBound::from_json(kind.as_str(), &o.json)?
                .name()
                .to_owned(),
        ),
    })
}

#[cfg(test)]
#[path = "informer_tests.rs"]
mod tests;

/// The Node authorizer over a graph that follows `storage` under the core role's keys,
/// synced (up to 30 s) before a role serves, with upstream's `NodeRules` as its static
/// rules and 1.33's `AuthorizeNodeWithSelectors` (a kubelet lists and watches only its own
/// pods, by field selector).
pub async fn start(
    storage: Arc<dyn Storage>,
) -> std::result::Result<crate::NodeAuthorizer, String> {
    let graph = follow(Sources::new(storage));
    if !graph.wait_synced(Duration::from_secs(30)).await {
        return Err("the Node authorizer's graph did not sync within 30s".to_owned());
    }
    let rules = kas_rbac::bootstrap::node_rules()
        .iter()
        .map(kas_rbac::PolicyRule::from_value)
        .collect::<kas_rbac::Result<Vec<_>>>()
        .map_err(|e| e.to_string())?;
    Ok(crate::NodeAuthorizer::new(graph, rules))
}
