//! Upstream's node authorizer graph (`plugin/pkg/auth/authorizer/node/graph.go`): a vertex
//! per object a kubelet may need, and edges that all lead toward the vertices of nodes:
//!
//! ```text
//! node <- pod <- secret, configmap, pvc, serviceaccount, resourceclaim
//!               pvc <- pv <- secret
//! node <- volumeattachment, resourceslice
//! ```
//!
//! An edge that ends in one node's pod carries that node as its destination, so a walk for
//! another node never enters it. Vertices live in a slab addressed by `u32`; each holds
//! its out-edges (target and destination) and its in-neighbours. One `RwLock` guards it
//! all: decisions read, watch events write, and no I/O happens under the lock.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::AbortHandle;

/// What kind of object a vertex stands for (upstream's `vertexType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VertexType {
    ConfigMap = 0,
    ResourceSlice = 1,
    Node = 2,
    Pod = 3,
    Pvc = 4,
    Pv = 5,
    ResourceClaim = 6,
    Secret = 7,
    VolumeAttachment = 8,
    ServiceAccount = 9,
}

const TYPES: usize = 10;

impl VertexType {
    /// Upstream's `vertexTypes` names, as its log lines print them.
    pub fn as_str(self) -> &'static str {
        match self {
            VertexType::ConfigMap => "configmap",
            VertexType::ResourceSlice => "resourceslice",
            VertexType::Node => "node",
            VertexType::Pod => "pod",
            VertexType::Pvc => "pvc",
            VertexType::Pv => "pv",
            VertexType::ResourceClaim => "resourceclaim",
            VertexType::Secret => "secret",
            VertexType::VolumeAttachment => "volumeattachment",
            VertexType::ServiceAccount => "serviceAccount",
        }
    }
}

/// No destination: the edge may lead to any node (pv -> pvc, secret -> pv).
const ANY: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Edge {
    to: u32,
    destination: u32,
}

/// The out-degree from which a vertex indexes its out-edges (a secret or service account
/// shared by many pods), so that adding, removing and walking stay O(1) per edge; upstream
/// indexes destinations from 200 edges too.
const BIG: usize = 200;

/// The index of a vertex with many out-edges: where each target's edge is, and how many
/// edges lead to each destination (`ANY` included).
#[derive(Debug, Default)]
struct Big {
    position: HashMap<u32, u32>,
    destinations: HashMap<u32, u32>,
}

impl Big {
    fn new(out: &[Edge]) -> Box<Big> {
        let mut big = Box::<Big>::default();
        for (i, e) in out.iter().enumerate() {
            big.position.insert(e.to, i as u32);
            big.count(e.destination, true);
        }
        big
    }

    fn count(&mut self, destination: u32, add: bool) {
        let n = self.destinations.entry(destination).or_default();
        if add {
            *n += 1;
        } else {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.destinations.remove(&destination);
            }
        }
    }

    fn leads_to(&self, destination: u32) -> bool {
        self.destinations.contains_key(&destination)
    }
}

#[derive(Debug)]
struct Vertex {
    ty: VertexType,
    namespace: Box<str>,
    name: Box<str>,
    out: Vec<Edge>,
    into: Vec<u32>,
    big: Option<Box<Big>>,
}

impl Vertex {
    fn degree(&self) -> usize {
        self.out.len() + self.into.len()
    }

    fn find_out(&self, to: u32) -> Option<usize> {
        match &self.big {
            Some(big) => big.position.get(&to).map(|&i| i as usize),
            None => self.out.iter().position(|e| e.to == to),
        }
    }

    /// Sets the edge to `to`; whether it is new.
    fn set_out(&mut self, to: u32, destination: u32) -> bool {
        if let Some(i) = self.find_out(to) {
            let Some(e) = self.out.get_mut(i) else {
                return false;
            };
            let old = std::mem::replace(&mut e.destination, destination);
            if let Some(big) = &mut self.big {
                big.count(old, false);
                big.count(destination, true);
            }
            return false;
        }
        self.out.push(Edge { to, destination });
        match &mut self.big {
            Some(big) => {
                big.position.insert(to, (self.out.len() - 1) as u32);
                big.count(destination, true);
            }
            None if self.out.len() >= BIG => self.big = Some(Big::new(&self.out)),
            None => {}
        }
        true
    }

    fn remove_out(&mut self, to: u32) {
        let Some(i) = self.find_out(to) else {
            return;
        };
        let e = self.out.swap_remove(i);
        if let Some(big) = &mut self.big {
            big.position.remove(&to);
            if let Some(moved) = self.out.get(i) {
                big.position.insert(moved.to, i as u32);
            }
            big.count(e.destination, false);
            if self.out.len() < BIG / 2 {
                self.big = None;
            }
        }
    }
}

/// Namespace -> name -> vertex id.
type Names = HashMap<Box<str>, HashMap<Box<str>, u32>>;

#[derive(Default)]
pub(crate) struct Inner {
    vertices: Vec<Option<Vertex>>,
    free: Vec<u32>,
    by_name: [Names; TYPES],
    edges: usize,
}

impl Inner {
    fn get(&self, ty: VertexType, namespace: &str, name: &str) -> Option<u32> {
        self.by_name[ty as usize]
            .get(namespace)
            .and_then(|n| n.get(name))
            .copied()
    }

    fn vertex(&self, id: u32) -> Option<&Vertex> {
        self.vertices.get(id as usize).and_then(Option::as_ref)
    }

    fn vertex_mut(&mut self, id: u32) -> Option<&mut Vertex> {
        self.vertices.get_mut(id as usize).and_then(Option::as_mut)
    }

    fn degree(&self, id: u32) -> usize {
        self.vertex(id).map_or(0, Vertex::degree)
    }

    pub(crate) fn get_or_create(&mut self, ty: VertexType, namespace: &str, name: &str) -> u32 {
        if let Some(id) = self.get(ty, namespace, name) {
            return id;
        }
        let vertex = Vertex {
            ty,
            namespace: namespace.into(),
            name: name.into(),
            out: Vec::new(),
            into: Vec::new(),
            big: None,
        };
        let id = match self.free.pop() {
            Some(id) => {
                if let Some(slot) = self.vertices.get_mut(id as usize) {
                    *slot = Some(vertex);
                }
                id
            }
            None => {
                self.vertices.push(Some(vertex));
                (self.vertices.len() - 1) as u32
            }
        };
        self.by_name[ty as usize]
            .entry(namespace.into())
            .or_default()
            .insert(name.into(), id);
        id
    }

    /// Sets the edge `from -> to` (replacing one already there, as gonum's `SetEdge`).
    pub(crate) fn add_edge(&mut self, from: u32, to: u32, destination: Option<u32>) {
        let destination = destination.unwrap_or(ANY);
        let Some(f) = self.vertex_mut(from) else {
            return;
        };
        if !f.set_out(to, destination) {
            return;
        }
        if let Some(t) = self.vertex_mut(to) {
            t.into.push(from);
        }
        self.edges += 1;
    }

    /// Removes a vertex and its edges; its neighbours stay.
    fn remove_vertex(&mut self, id: u32) {
        let Some(v) = self.vertices.get_mut(id as usize).and_then(Option::take) else {
            return;
        };
        for e in &v.out {
            if let Some(t) = self.vertex_mut(e.to) {
                t.into.retain(|&f| f != id);
            }
        }
        for &f in &v.into {
            if let Some(from) = self.vertex_mut(f) {
                from.remove_out(id);
            }
        }
        self.edges -= v.out.len() + v.into.len();
        let names = &mut self.by_name[v.ty as usize];
        if let Some(ns) = names.get_mut(&*v.namespace) {
            ns.remove(&*v.name);
            if ns.is_empty() {
                names.remove(&*v.namespace);
            }
        }
        self.free.push(id);
    }

    /// Upstream's `deleteVertexLocked`: removes the vertex, and each neighbour whose only
    /// edge was to or from it.
    pub(crate) fn delete_vertex(&mut self, ty: VertexType, namespace: &str, name: &str) {
        let Some(id) = self.get(ty, namespace, name) else {
            return;
        };
        let Some(v) = self.vertex(id) else {
            return;
        };
        let orphans: Vec<u32> = v
            .out
            .iter()
            .map(|e| e.to)
            .chain(v.into.iter().copied())
            .filter(|&n| self.degree(n) == 1)
            .collect();
        self.remove_vertex(id);
        for n in orphans {
            self.remove_vertex(n);
        }
    }

    /// Whether a walk from `start` reaches `node`, never crossing an edge whose destination
    /// is another node (upstream's `hasPathFrom` traversal).
    fn reaches(&self, start: u32, node: u32) -> bool {
        let mut seen = vec![start];
        let mut stack = vec![start];
        while let Some(id) = stack.pop() {
            if id == node {
                return true;
            }
            let Some(v) = self.vertex(id) else {
                continue;
            };
            if let Some(big) = &v.big {
                if big.leads_to(node) {
                    return true;
                }
                if !big.leads_to(ANY) {
                    continue;
                }
            }
            for e in &v.out {
                if e.destination == node {
                    return true;
                }
                if e.destination != ANY || seen.contains(&e.to) {
                    continue;
                }
                seen.push(e.to);
                stack.push(e.to);
            }
        }
        false
    }
}

/// Kinds the informer feeds, one bit each in the synced mask.
pub(crate) const SYNC_PODS: u8 = 1;
pub(crate) const SYNC_PVS: u8 = 2;
pub(crate) const SYNC_ATTACHMENTS: u8 = 4;
pub(crate) const SYNC_SLICES: u8 = 8;

/// The graph decisions read, kept in step with storage by [`crate::informer::follow`].
pub struct Graph {
    inner: RwLock<Inner>,
    /// (kinds synced, kinds followed).
    synced: watch::Sender<(u8, u8)>,
    pub(crate) tasks: Mutex<Vec<AbortHandle>>,
}

impl Default for Graph {
    fn default() -> Self {
        Graph::new()
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        for task in self
            .tasks
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .drain(..)
        {
            task.abort();
        }
    }
}

/// Why no path was found: upstream's log lines (its reasons stay generic).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("unknown node '{node}' cannot get {ty} {namespace}/{name}")]
    UnknownNode {
        node: String,
        ty: &'static str,
        namespace: String,
        name: String,
    },
    #[error("node '{node}' cannot get unknown {ty} {namespace}/{name}")]
    UnknownObject {
        node: String,
        ty: &'static str,
        namespace: String,
        name: String,
    },
    #[error(
        "node '{node}' cannot get {ty} {namespace}/{name}, no relationship to this object was found in the node authorizer graph"
    )]
    NoPath {
        node: String,
        ty: &'static str,
        namespace: String,
        name: String,
    },
}

impl Graph {
    /// An empty graph that counts as synced once pods, PVs and VolumeAttachments are.
    pub fn new() -> Graph {
        Graph {
            inner: RwLock::default(),
            synced: watch::Sender::new((0, SYNC_PODS | SYNC_PVS | SYNC_ATTACHMENTS)),
            tasks: Mutex::default(),
        }
    }

    pub(crate) fn read(&self) -> RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn write(&self) -> RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Upstream's `hasPathFrom`: whether the object reaches the vertex of `node`.
    pub fn has_path_from(
        &self,
        node: &str,
        ty: VertexType,
        namespace: &str,
        name: &str,
    ) -> Result<(), PathError> {
        let inner = self.read();
        let what = || {
            (
                node.to_owned(),
                ty.as_str(),
                namespace.to_owned(),
                name.to_owned(),
            )
        };
        let Some(node_id) = inner.get(VertexType::Node, "", node) else {
            let (node, ty, namespace, name) = what();
            return Err(PathError::UnknownNode {
                node,
                ty,
                namespace,
                name,
            });
        };
        let Some(start) = inner.get(ty, namespace, name) else {
            let (node, ty, namespace, name) = what();
            return Err(PathError::UnknownObject {
                node,
                ty,
                namespace,
                name,
            });
        };
        if inner.reaches(start, node_id) {
            return Ok(());
        }
        let (node, ty, namespace, name) = what();
        Err(PathError::NoPath {
            node,
            ty,
            namespace,
            name,
        })
    }

    /// Whether the graph has a vertex for the object.
    pub fn contains(&self, ty: VertexType, namespace: &str, name: &str) -> bool {
        self.read().get(ty, namespace, name).is_some()
    }

    /// The number of vertices and of edges.
    pub fn len(&self) -> (usize, usize) {
        let inner = self.read();
        let vertices = inner
            .by_name
            .iter()
            .flat_map(|t| t.values())
            .map(HashMap::len)
            .sum();
        (vertices, inner.edges)
    }

    pub fn is_empty(&self) -> bool {
        self.len().0 == 0
    }

    /// The names of the vertices of one type, as (namespace, name).
    pub(crate) fn names(&self, ty: VertexType) -> Vec<(String, String)> {
        let inner = self.read();
        inner.by_name[ty as usize]
            .iter()
            .flat_map(|(ns, names)| names.keys().map(|n| (ns.to_string(), n.to_string())))
            .collect()
    }

    /// Upstream's `DeletePod`.
    pub fn delete_pod(&self, name: &str, namespace: &str) {
        self.write().delete_vertex(VertexType::Pod, namespace, name);
    }

    /// Upstream's `DeletePV`.
    pub fn delete_pv(&self, name: &str) {
        self.write().delete_vertex(VertexType::Pv, "", name);
    }

    /// Upstream's `AddVolumeAttachment`: `volumeattachment -> node` when it names a node.
    pub fn add_volume_attachment(&self, attachment: &str, node: &str) {
        self.add_to_node(VertexType::VolumeAttachment, attachment, node);
    }

    /// Upstream's `DeleteVolumeAttachment`.
    pub fn delete_volume_attachment(&self, name: &str) {
        self.write()
            .delete_vertex(VertexType::VolumeAttachment, "", name);
    }

    /// Upstream's `AddResourceSlice`: `resourceslice -> node` when it names a node.
    pub fn add_resource_slice(&self, slice: &str, node: &str) {
        self.add_to_node(VertexType::ResourceSlice, slice, node);
    }

    /// Upstream's `DeleteResourceSlice`.
    pub fn delete_resource_slice(&self, name: &str) {
        self.write()
            .delete_vertex(VertexType::ResourceSlice, "", name);
    }

    fn add_to_node(&self, ty: VertexType, name: &str, node: &str) {
        let mut inner = self.write();
        inner.delete_vertex(ty, "", name);
        if !node.is_empty() {
            let v = inner.get_or_create(ty, "", name);
            let n = inner.get_or_create(VertexType::Node, "", node);
            inner.add_edge(v, n, Some(n));
        }
    }

    pub(crate) fn follow_kinds(&self, kinds: u8) {
        self.synced.send_modify(|s| s.1 = kinds);
    }

    pub(crate) fn mark_synced(&self, kind: u8) {
        self.synced.send_modify(|s| s.0 |= kind);
    }

    /// Whether every followed kind has been listed once.
    pub fn has_synced(&self) -> bool {
        let (synced, wanted) = *self.synced.borrow();
        synced & wanted == wanted
    }

    /// Waits until [`Graph::has_synced`], at most `timeout`; whether it did.
    pub async fn wait_synced(&self, timeout: Duration) -> bool {
        let mut rx = self.synced.subscribe();
        let synced = rx.wait_for(|(s, w)| s & w == *w);
        matches!(tokio::time::timeout(timeout, synced).await, Ok(Ok(_)))
    }
}

#[cfg(test)]
#[path = "graph_tests.rs"]
pub(crate) mod tests;
