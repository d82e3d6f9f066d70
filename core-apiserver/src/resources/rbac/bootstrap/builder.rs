//! Builders for the bootstrap policy's objects, after upstream's `rbacv1helpers`
//! (`NewRule`, `NewClusterBinding`, `NewRoleBinding`) and the defaults every bootstrap
//! object carries (`addDefaultMetadata`).

use serde_json::{Map, Value, json};

pub use kas_rbac::bootstrap::{READ, READ_UPDATE, READ_WRITE, Rule, WRITE, groups, rule};

use super::super::{GROUP_KIND, GROUP_NAME, SERVICE_ACCOUNT_KIND, USER_KIND};

/// Upstream `rbacv1.AutoUpdateAnnotationKey`.
pub const AUTO_UPDATE_ANNOTATION: &str = "rbac.authorization.kubernetes.io/autoupdate";

/// Upstream `bootstrappolicy.Label`'s key and value.
pub const BOOTSTRAPPING_LABEL: (&str, &str) = ("kubernetes.io/bootstrapping", "rbac-defaults");

/// Upstream's `eventsRule`: events written in the core and events.k8s.io groups.
pub fn events_rule() -> Value {
    rule(&["create", "update", "patch"])
        .groups(&[groups::LEGACY, groups::EVENTS])
        .resources(&["events"])
        .build()
}

/// The metadata of a bootstrap object: its own labels plus upstream's default label and
/// the autoupdate annotation (`addDefaultMetadata`).
fn metadata(name: &str, namespace: Option<&str>, labels: &[(&str, &str)]) -> Value {
    let mut label_map = Map::new();
    for (k, v) in labels.iter().chain([&BOOTSTRAPPING_LABEL]) {
        label_map.insert((*k).to_owned(), json!(v));
    }
    let mut meta = json!({
        "name": name,
        "labels": label_map,
        "annotations": {AUTO_UPDATE_ANNOTATION: "true"},
    });
    if let Some(ns) = namespace {
        meta["namespace"] = json!(ns);
    }
    meta
}

fn object(kind: &str, meta: Value) -> Value {
    json!({"apiVersion": format!("{GROUP_NAME}/v1"), "kind": kind, "metadata": meta})
}

/// A ClusterRole with `rules`.
pub fn cluster_role(name: &str, rules: Vec<Value>) -> Value {
    labeled_cluster_role(name, &[], rules)
}

/// A ClusterRole with its own labels (the aggregation labels) and `rules`.
pub fn labeled_cluster_role(name: &str, labels: &[(&str, &str)], rules: Vec<Value>) -> Value {
    let mut role = object("ClusterRole", metadata(name, None, labels));
    role["rules"] = Value::Array(rules);
    role
}

/// An aggregated ClusterRole: no rules of its own, and one selector matching the label
/// `aggregate_label` = "true".
pub fn aggregated_cluster_role(
    name: &str,
    labels: &[(&str, &str)],
    aggregate_label: &str,
) -> Value {
    let mut role = object("ClusterRole", metadata(name, None, labels));
    role["aggregationRule"] =
        json!({"clusterRoleSelectors": [{"matchLabels": {aggregate_label: "true"}}]});
    role
}

/// A Role in `namespace`.
pub fn role(namespace: &str, name: &str, rules: Vec<Value>) -> Value {
    let mut role = object("Role", metadata(name, Some(namespace), &[]));
    role["rules"] = Value::Array(rules);
    role
}

/// A binding's subjects, after upstream's `ClusterRoleBindingBuilder`/`RoleBindingBuilder`.
#[derive(Clone, Debug, Default)]
pub struct Subjects(Vec<Value>);

impl Subjects {
    pub fn groups(mut self, names: &[&str]) -> Self {
        for name in names {
            self.0
                .push(json!({"apiGroup": GROUP_NAME, "kind": GROUP_KIND, "name": name}));
        }
        self
    }

    pub fn users(mut self, names: &[&str]) -> Self {
        for name in names {
            self.0
                .push(json!({"apiGroup": GROUP_NAME, "kind": USER_KIND, "name": name}));
        }
        self
    }

    pub fn service_accounts(mut self, namespace: &str, names: &[&str]) -> Self {
        for name in names {
            self.0
                .push(json!({"kind": SERVICE_ACCOUNT_KIND, "name": name, "namespace": namespace}));
        }
        self
    }
}

/// Subjects to bind, starting empty.
pub fn subjects() -> Subjects {
    Subjects::default()
}

fn with_subjects(mut binding: Value, subjects: Subjects) -> Value {
    // Upstream's `subjects` is `omitempty`: a binding without subjects has none.
    if !subjects.0.is_empty() {
        binding["subjects"] = Value::Array(subjects.0);
    }
    binding
}

/// Upstream `NewClusterBinding(role)`: a ClusterRoleBinding named after the ClusterRole it
/// binds.
pub fn cluster_binding(role: &str, subjects: Subjects) -> Value {
    let mut binding = object("ClusterRoleBinding", metadata(role, None, &[]));
    binding["roleRef"] = json!({"apiGroup": GROUP_NAME, "kind": "ClusterRole", "name": role});
    with_subjects(binding, subjects)
}

/// Upstream `NewRoleBinding(role, namespace)`: a RoleBinding named after the Role it binds.
pub fn role_binding(namespace: &str, role: &str, subjects: Subjects) -> Value {
    let mut binding = object("RoleBinding", metadata(role, Some(namespace), &[]));
    binding["roleRef"] = json!({"apiGroup": GROUP_NAME, "kind": "Role", "name": role});
    with_subjects(binding, subjects)
}
