//! The in-memory index of Roles, ClusterRoles, RoleBindings and ClusterRoleBindings that
//! decisions read (upstream reads its informers' listers).
//!
//! Each kind sits behind its own `RwLock`: every request reads, writers are rare (one
//! watch event, or the swap of a re-list built outside the lock), and a decision does no
//! I/O while it holds the read locks. Readers take the locks in one order (bindings, then
//! roles) and a writer holds one lock at a time, so they cannot deadlock.

mod bindings;
pub(crate) mod objects;

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use kas_storage::{ObjectRef, WatchEvent};
use serde_json::Value;
use tokio::sync::watch;

use crate::error::Result;
use crate::rules::PolicyRule;

pub(crate) use bindings::{Bindings, SERVICE_ACCOUNT_USERNAME_PREFIX};
pub use objects::{Doc, RoleRef};
use objects::{decode_binding, decode_key, decode_role};

/// The four RBAC kinds the index holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Role,
    ClusterRole,
    RoleBinding,
    ClusterRoleBinding,
}

impl Kind {
    pub const ALL: [Kind; 4] = [
        Kind::Role,
        Kind::ClusterRole,
        Kind::RoleBinding,
        Kind::ClusterRoleBinding,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Role => "Role",
            Kind::ClusterRole => "ClusterRole",
            Kind::RoleBinding => "RoleBinding",
            Kind::ClusterRoleBinding => "ClusterRoleBinding",
        }
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

const ALL_SYNCED: u8 = 0b1111;

/// The roles of one namespace, by name.
type Namespace = HashMap<Box<str>, Box<[PolicyRule]>>;

/// Roles by namespace and name.
#[derive(Default)]
struct Roles(HashMap<Box<str>, Namespace>);

impl Roles {
    fn insert(&mut self, namespace: Box<str>, name: Box<str>, rules: Box<[PolicyRule]>) {
        self.0.entry(namespace).or_default().insert(name, rules);
    }

    fn remove(&mut self, namespace: &str, name: &str) {
        if let Some(ns) = self.0.get_mut(namespace) {
            ns.remove(name);
            if ns.is_empty() {
                self.0.remove(namespace);
            }
        }
    }

    fn get(&self, namespace: &str, name: &str) -> Option<&[PolicyRule]> {
        self.0.get(namespace)?.get(name).map(|r| &**r)
    }

    fn len(&self) -> usize {
        self.0.values().map(HashMap::len).sum()
    }
}

/// An object decoded for the index, cluster-scoped kinds with no namespace.
enum Decoded {
    Role(objects::Role),
    Binding(objects::Binding),
}

fn decode(kind: Kind, doc: Doc<'_>) -> Result<Decoded> {
    Ok(match kind {
        Kind::Role => Decoded::Role(decode_role(doc, kind.as_str())?),
        Kind::ClusterRole => {
            let mut role = decode_role(doc, kind.as_str())?;
            role.namespace = "".into();
            Decoded::Role(role)
        }
        Kind::RoleBinding => Decoded::Binding(decode_binding(doc, kind.as_str())?),
        Kind::ClusterRoleBinding => {
            let mut binding = decode_binding(doc, kind.as_str())?;
            binding.namespace = "".into();
            Decoded::Binding(binding)
        }
    })
}

/// The index. Build it with [`crate::informer::follow`] to keep it in step with storage,
/// or with [`Index::new`] and feed it yourself.
pub struct Index {
    role_bindings: RwLock<Bindings>,
    cluster_role_bindings: RwLock<Bindings>,
    // ClusterRoles are Roles in namespace "".
    roles: RwLock<Roles>,
    cluster_roles: RwLock<Roles>,
    synced: watch::Sender<u8>,
    pub(crate) tasks: Mutex<Vec<tokio::task::AbortHandle>>,
}

impl Default for Index {
    fn default() -> Self {
        Index::new()
    }
}

impl Drop for Index {
    fn drop(&mut self) {
        let tasks = self.tasks.get_mut().unwrap_or_else(PoisonError::into_inner);
        for t in tasks.drain(..) {
            t.abort();
        }
    }
}

fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(PoisonError::into_inner)
}

fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(PoisonError::into_inner)
}

/// What a decision reads: the four kinds, read-locked in the index's order.
pub(crate) struct View<'a> {
    pub(crate) cluster_role_bindings: RwLockReadGuard<'a, Bindings>,
    pub(crate) role_bindings: RwLockReadGuard<'a, Bindings>,
    roles: RwLockReadGuard<'a, Roles>,
    cluster_roles: RwLockReadGuard<'a, Roles>,
}

impl View<'_> {
    pub(crate) fn role(&self, namespace: &str, name: &str) -> Option<&[PolicyRule]> {
        self.roles.get(namespace, name)
    }

    pub(crate) fn cluster_role(&self, name: &str) -> Option<&[PolicyRule]> {
        self.cluster_roles.get("", name)
    }
}

impl Index {
    /// An empty index, not synced.
    pub fn new() -> Index {
        Index {
            role_bindings: RwLock::default(),
            cluster_role_bindings: RwLock::default(),
            roles: RwLock::default(),
            cluster_roles: RwLock::default(),
            synced: watch::Sender::new(0),
            tasks: Mutex::default(),
        }
    }

    pub(crate) fn view(&self) -> View<'_> {
        View {
            cluster_role_bindings: read(&self.cluster_role_bindings),
            role_bindings: read(&self.role_bindings),
            roles: read(&self.roles),
            cluster_roles: read(&self.cluster_roles),
        }
    }

    fn roles_of(&self, kind: Kind) -> &RwLock<Roles> {
        if kind == Kind::Role {
            &self.roles
        } else {
            &self.cluster_roles
        }
    }

    fn bindings_of(&self, kind: Kind) -> &RwLock<Bindings> {
        if kind == Kind::RoleBinding {
            &self.role_bindings
        } else {
            &self.cluster_role_bindings
        }
    }

    /// Adds or replaces an object of `kind` (an ADDED or MODIFIED event).
    pub fn upsert(&self, kind: Kind, doc: Doc<'_>) -> Result<()> {
        match decode(kind, doc)? {
            Decoded::Role(r) => write(self.roles_of(kind)).insert(r.namespace, r.name, r.rules),
            Decoded::Binding(b) => write(self.bindings_of(kind)).insert(b),
        }
        Ok(())
    }

    /// [`Index::upsert`] of an object given as a decoded value.
    pub fn upsert_value(&self, kind: Kind, value: &Value) -> Result<()> {
        self.upsert(kind, Doc::Value(value))
    }

    /// Removes the object of `kind` that `doc` names (a DELETED event).
    pub fn remove(&self, kind: Kind, doc: Doc<'_>) -> Result<()> {
        let (namespace, name) = decode_key(doc, kind.as_str())?;
        match kind {
            Kind::Role => write(&self.roles).remove(&namespace, &name),
            Kind::ClusterRole => write(&self.cluster_roles).remove("", &name),
            Kind::RoleBinding => write(&self.role_bindings).remove(&namespace, &name),
            Kind::ClusterRoleBinding => write(&self.cluster_role_bindings).remove("", &name),
        }
        Ok(())
    }

    /// Applies a watch event; bookmarks and errors change nothing.
    pub fn apply(&self, kind: Kind, event: &WatchEvent) -> Result<()> {
        match event {
            WatchEvent::Added(o) | WatchEvent::Modified(o) => {
                self.upsert(kind, Doc::Bytes(&o.json))
            }
            WatchEvent::Deleted(o) => self.remove(kind, Doc::Bytes(&o.json)),
            _ => Ok(()),
        }
    }

    /// Replaces every object of `kind` with `items` (a list). The new set is built before
    /// the lock is taken. An item that does not decode is left out and logged: one bad
    /// object must not take every other permission away.
    pub fn replace(&self, kind: Kind, items: &[ObjectRef]) {
        let (mut roles, mut bindings) = (Roles::default(), Bindings::default());
        for item in items {
            match decode(kind, Doc::Bytes(&item.json)) {
                Ok(Decoded::Role(r)) => roles.insert(r.namespace, r.name, r.rules),
                Ok(Decoded::Binding(b)) => bindings.insert(b),
                Err(e) => tracing::warn!(error = %e, "skipping RBAC object"),
            }
        }
        // The old set is dropped after the lock is released.
        match kind {
            Kind::Role | Kind::ClusterRole => {
                let _old = std::mem::replace(&mut *write(self.roles_of(kind)), roles);
            }
            Kind::RoleBinding | Kind::ClusterRoleBinding => {
                let _old = std::mem::replace(&mut *write(self.bindings_of(kind)), bindings);
            }
        }
    }

    /// How many objects of `kind` the index holds.
    pub fn len(&self, kind: Kind) -> usize {
        match kind {
            Kind::Role => read(&self.roles).len(),
            Kind::ClusterRole => read(&self.cluster_roles).len(),
            Kind::RoleBinding => read(&self.role_bindings).len(),
            Kind::ClusterRoleBinding => read(&self.cluster_role_bindings).len(),
        }
    }

    /// Whether the index holds no object at all.
    pub fn is_empty(&self) -> bool {
        Kind::ALL.iter().all(|k| self.len(*k) == 0)
    }

    /// Records that `kind` has been listed once.
    pub fn mark_synced(&self, kind: Kind) {
        self.synced.send_modify(|s| *s |= kind.bit());
    }

    /// Whether every kind has been listed once (upstream's informers' `HasSynced`).
    pub fn has_synced(&self) -> bool {
        *self.synced.borrow() == ALL_SYNCED
    }

    /// Waits until [`Index::has_synced`], at most `timeout`; whether it did.
    pub async fn wait_synced(&self, timeout: Duration) -> bool {
        let mut rx = self.synced.subscribe();
        let synced = rx.wait_for(|s| *s == ALL_SYNCED);
        matches!(tokio::time::timeout(timeout, synced).await, Ok(Ok(_)))
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
