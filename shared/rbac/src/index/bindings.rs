//! Bindings indexed by subject, so that finding the bindings of a user costs time in
//! proportion to the bindings that name them, not to all bindings.
//!
//! Per namespace (`""` for ClusterRoleBindings), each binding is listed under the user
//! name of each User subject, the group name of each Group subject, and, for each
//! ServiceAccount subject, the user name that service account authenticates as
//! (`system:serviceaccount:<namespace>:<name>`, the namespace defaulting to the binding's),
//! which is exactly upstream's `serviceaccount.MatchesUsername`.

use std::borrow::Borrow;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use kas_auth::UserInfo;

use super::objects::{Binding, Subject, SubjectKind};

/// Upstream's `serviceaccount.ServiceAccountUsernamePrefix`.
pub(crate) const SERVICE_ACCOUNT_USERNAME_PREFIX: &str = "system:serviceaccount:";

/// The bindings of one kind, by namespace.
#[derive(Default)]
pub(crate) struct Bindings {
    namespaces: HashMap<Box<str>, Namespace>,
}

#[derive(Default)]
struct Namespace {
    by_name: HashSet<ByName>,
    by_user: HashMap<Box<str>, Vec<Arc<Binding>>>,
    by_group: HashMap<Box<str>, Vec<Arc<Binding>>>,
}

/// A binding keyed by its name, so that the set does not hold the name twice.
struct ByName(Arc<Binding>);

impl Borrow<str> for ByName {
    fn borrow(&self) -> &str {
        &self.0.name
    }
}

impl Hash for ByName {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.name.hash(state);
    }
}

impl PartialEq for ByName {
    fn eq(&self, other: &Self) -> bool {
        self.0.name == other.0.name
    }
}

impl Eq for ByName {}

/// Where a subject is listed: under a user name or a group name.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    User(Box<str>),
    Group(Box<str>),
}

/// The key a subject of a binding in `binding_namespace` is listed under; `None` for a
/// subject that applies to no user.
fn subject_key(s: &Subject, binding_namespace: &str) -> Option<Key> {
    match s.kind {
        SubjectKind::User => Some(Key::User(s.name.clone())),
        SubjectKind::Group => Some(Key::Group(s.name.clone())),
        SubjectKind::ServiceAccount => {
            let ns = if s.namespace.is_empty() {
                binding_namespace
            } else {
                &s.namespace
            };
            (!ns.is_empty()).then(|| {
                Key::User(format!("{SERVICE_ACCOUNT_USERNAME_PREFIX}{ns}:{}", s.name).into())
            })
        }
        SubjectKind::Other => None,
    }
}

/// The distinct keys of a binding.
fn keys(b: &Binding) -> Vec<Key> {
    let mut keys: Vec<Key> = b
        .subjects
        .iter()
        .filter_map(|s| subject_key(s, &b.namespace))
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

impl Namespace {
    fn list(&mut self, key: Key) -> &mut Vec<Arc<Binding>> {
        match key {
            Key::User(k) => self.by_user.entry(k).or_default(),
            Key::Group(k) => self.by_group.entry(k).or_default(),
        }
    }

    fn unlist(&mut self, key: &Key, binding: &Arc<Binding>) {
        let (map, k) = match key {
            Key::User(k) => (&mut self.by_user, k),
            Key::Group(k) => (&mut self.by_group, k),
        };
        if let Some(list) = map.get_mut(k) {
            list.retain(|b| !Arc::ptr_eq(b, binding));
            if list.is_empty() {
                map.remove(k);
            }
        }
    }

    fn remove(&mut self, name: &str) {
        if let Some(ByName(old)) = self.by_name.take(name) {
            for key in keys(&old) {
                self.unlist(&key, &old);
            }
        }
    }

    fn insert(&mut self, binding: Binding) {
        self.remove(&binding.name);
        let binding = Arc::new(binding);
        for key in keys(&binding) {
            self.list(key).push(binding.clone());
        }
        self.by_name.insert(ByName(binding));
    }
}

impl Bindings {
    /// Adds `binding`, replacing the one of the same namespace and name.
    pub(crate) fn insert(&mut self, binding: Binding) {
        if let Some(ns) = self.namespaces.get_mut(&*binding.namespace) {
            ns.insert(binding);
            return;
        }
        let key = binding.namespace.clone();
        self.namespaces.entry(key).or_default().insert(binding);
    }

    pub(crate) fn remove(&mut self, namespace: &str, name: &str) {
        if let Some(ns) = self.namespaces.get_mut(namespace) {
            ns.remove(name);
            if ns.by_name.is_empty() {
                self.namespaces.remove(namespace);
            }
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.namespaces.values().map(|ns| ns.by_name.len()).sum()
    }

    /// The bindings in `namespace` that may apply to `user` (listed under their name or one
    /// of their groups), each once, by name. Which subject applies is for the caller to
    /// find, as upstream's `appliesTo` does.
    pub(crate) fn candidates<'a>(&'a self, namespace: &str, user: &UserInfo) -> Vec<&'a Binding> {
        let Some(ns) = self.namespaces.get(namespace) else {
            return Vec::new();
        };
        let mut found: Vec<&Binding> = Vec::new();
        if let Some(list) = ns.by_user.get(user.name.as_str()) {
            found.extend(list.iter().map(|b| &**b));
        }
        for group in &user.groups {
            if let Some(list) = ns.by_group.get(group.as_str()) {
                found.extend(list.iter().map(|b| &**b));
            }
        }
        if found.len() > 1 {
            found.sort_by(|a, b| a.name.cmp(&b.name));
            found.dedup_by(|a, b| std::ptr::eq(*a, *b));
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::objects::RoleKind;

    fn binding(ns: &str, name: &str, subjects: &[(SubjectKind, &str, &str)]) -> Binding {
        Binding {
            name: name.into(),
            namespace: ns.into(),
            role_kind: RoleKind::ClusterRole,
            role_name: "r".into(),
            subjects: subjects
                .iter()
                .map(|(kind, name, namespace)| Subject {
                    kind: *kind,
                    name: (*name).into(),
                    namespace: (*namespace).into(),
                })
                .collect(),
        }
    }

    fn user(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            name: name.into(),
            groups: groups.iter().map(|g| (*g).to_owned()).collect(),
            ..UserInfo::default()
        }
    }

    fn names(found: Vec<&Binding>) -> Vec<&str> {
        found.into_iter().map(|b| &*b.name).collect()
    }

    #[test]
    fn lookup_is_by_subject_and_each_binding_comes_once() {
        let mut b = Bindings::default();
        b.insert(binding(
            "ns",
            "b",
            &[
                (SubjectKind::User, "alice", ""),
                (SubjectKind::Group, "devs", ""),
            ],
        ));
        b.insert(binding("ns", "a", &[(SubjectKind::Group, "devs", "")]));
        b.insert(binding("ns", "c", &[(SubjectKind::User, "bob", "")]));
        b.insert(binding("other", "d", &[(SubjectKind::User, "alice", "")]));
        assert_eq!(
            names(b.candidates("ns", &user("alice", &["devs"]))),
            ["a", "b"]
        );
        assert_eq!(names(b.candidates("ns", &user("bob", &[]))), ["c"]);
        assert!(b.candidates("ns", &user("carol", &["ops"])).is_empty());
        assert!(b.candidates("none", &user("alice", &[])).is_empty());
        assert_eq!(b.len(), 4);
    }

    #[test]
    fn service_accounts_are_listed_under_their_user_name() {
        let mut b = Bindings::default();
        b.insert(binding(
            "ns",
            "local",
            &[(SubjectKind::ServiceAccount, "sa", "")],
        ));
        b.insert(binding(
            "ns",
            "other",
            &[(SubjectKind::ServiceAccount, "sa", "x")],
        ));
        b.insert(binding(
            "",
            "cluster",
            &[(SubjectKind::ServiceAccount, "sa", "")],
        ));
        let sa = user("system:serviceaccount:ns:sa", &[]);
        assert_eq!(names(b.candidates("ns", &sa)), ["local"]);
        let sa_x = user("system:serviceaccount:x:sa", &[]);
        assert_eq!(names(b.candidates("ns", &sa_x)), ["other"]);
        // A ServiceAccount subject without a namespace applies to no one cluster-wide.
        assert!(b.candidates("", &sa).is_empty());
    }

    #[test]
    fn replacing_and_removing_unlist_the_old_subjects() {
        let mut b = Bindings::default();
        b.insert(binding("ns", "x", &[(SubjectKind::User, "alice", "")]));
        b.insert(binding("ns", "x", &[(SubjectKind::User, "bob", "")]));
        assert!(b.candidates("ns", &user("alice", &[])).is_empty());
        assert_eq!(names(b.candidates("ns", &user("bob", &[]))), ["x"]);
        b.remove("ns", "x");
        assert!(b.candidates("ns", &user("bob", &[])).is_empty());
        assert_eq!(b.len(), 0);
        assert!(b.namespaces.is_empty());
    }
}
