//! Builders shared by the crate's tests: RBAC objects as JSON, users and request attributes.

use std::sync::Arc;

use kas_auth::UserInfo;
use kas_auth::authorization::Attributes;
use serde_json::{Value, json};

use crate::index::{Index, Kind};
use crate::rules::PolicyRule;

/// A comma-separated list; `""` is no element (unlike upstream's `strings.Split`).
fn list(s: &str) -> Vec<&str> {
    if s.is_empty() {
        Vec::new()
    } else {
        s.split(',').collect()
    }
}

/// The groups of a rule: `""` is the core group, unless the rule names no resources.
fn groups<'a>(groups: &'a str, resources: &str) -> Vec<&'a str> {
    if groups.is_empty() && resources.is_empty() {
        Vec::new()
    } else {
        groups.split(',').collect()
    }
}

/// A rule from comma-separated verbs, groups, resources and non-resource URLs.
pub fn rule_json(verbs: &str, groups_: &str, resources: &str, urls: &str) -> Value {
    json!({
        "verbs": list(verbs),
        "apiGroups": groups(groups_, resources),
        "resources": list(resources),
        "nonResourceURLs": list(urls),
    })
}

/// A [`PolicyRule`] with resource names too.
pub fn rule(verbs: &str, groups_: &str, resources: &str, names: &str, urls: &str) -> PolicyRule {
    PolicyRule::new(
        &list(verbs),
        &groups(groups_, resources),
        &list(resources),
        &list(names),
        &list(urls),
    )
}

pub fn cluster_role(name: &str, rules: &[Value]) -> (Kind, Value) {
    let role = json!({"kind": "ClusterRole", "metadata": {"name": name}, "rules": rules});
    (Kind::ClusterRole, role)
}

pub fn role(namespace: &str, name: &str, rules: &[Value]) -> (Kind, Value) {
    let role = json!({
        "kind": "Role",
        "metadata": {"name": name, "namespace": namespace},
        "rules": rules,
    });
    (Kind::Role, role)
}

/// Subjects written `Kind:name` or `ServiceAccount:namespace:name`.
fn subjects(subjects: &[&str]) -> Vec<Value> {
    subjects
        .iter()
        .map(|s| {
            let (kind, rest) = s.split_once(':').unwrap();
            match (kind, rest.split_once(':')) {
                ("ServiceAccount", Some((ns, name))) => {
                    json!({"kind": kind, "namespace": ns, "name": name})
                }
                ("ServiceAccount", None) => json!({"kind": kind, "name": rest}),
                _ => json!({"kind": kind, "apiGroup": "rbac.authorization.k8s.io", "name": rest}),
            }
        })
        .collect()
}

pub fn cluster_role_binding(name: &str, role: &str, subjects_: &[&str]) -> (Kind, Value) {
    let binding = json!({
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": subjects(subjects_),
    });
    (Kind::ClusterRoleBinding, binding)
}

pub fn role_binding(
    namespace: &str,
    name: &str,
    role_kind: &str,
    role: &str,
    subjects_: &[&str],
) -> (Kind, Value) {
    let binding = json!({
        "kind": "RoleBinding",
        "metadata": {"name": name, "namespace": namespace},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
        "subjects": subjects(subjects_),
    });
    (Kind::RoleBinding, binding)
}

pub fn index(objects: &[(Kind, Value)]) -> Arc<Index> {
    let index = Index::new();
    for (kind, value) in objects {
        index.upsert_value(*kind, value).unwrap();
    }
    Arc::new(index)
}

pub fn user(name: &str, groups: &[&str]) -> UserInfo {
    UserInfo {
        name: name.to_owned(),
        groups: groups.iter().map(|g| (*g).to_owned()).collect(),
        ..UserInfo::default()
    }
}

/// A resource request: `resource` may be `resource/subresource`.
pub fn resource_request(
    user: UserInfo,
    verb: &str,
    group: &str,
    resource: &str,
    namespace: &str,
) -> Attributes {
    let (resource, subresource) = resource.split_once('/').unwrap_or((resource, ""));
    Attributes {
        user,
        verb: verb.to_owned(),
        is_resource_request: true,
        namespace: namespace.to_owned(),
        api_group: group.to_owned(),
        resource: resource.to_owned(),
        subresource: subresource.to_owned(),
        ..Attributes::default()
    }
}

pub fn non_resource_request(user: UserInfo, verb: &str, path: &str) -> Attributes {
    Attributes {
        user,
        verb: verb.to_owned(),
        path: path.to_owned(),
        ..Attributes::default()
    }
}
