//! A node's own Node object: upstream `admitNode` and its label rules
//! (`getForbiddenLabels`, with `kubeletapis.IsKubeletLabel`).

use std::collections::BTreeSet;

use kas_apimachinery::golang::strconv::quote;
use kas_registry::admission::{Attributes, Operation};
use serde_json::{Map, Value};

use super::{forbidden, semantic_eq};

/// Upstream `kubeletapis.KubeletLabels`: the well-known labels a kubelet sets.
const KUBELET_LABELS: &[&str] = &[
    "kubernetes.io/hostname",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "beta.kubernetes.io/instance-type",
    "node.kubernetes.io/instance-type",
    "kubernetes.io/os",
    "kubernetes.io/arch",
    "beta.kubernetes.io/os",
    "beta.kubernetes.io/arch",
];
/// Upstream `kubeletapis.KubeletLabelNamespaces` (`LabelNamespaceSuffixKubelet`,
/// `LabelNamespaceSuffixNode`): a kubelet may set labels under these and their subdomains.
const KUBELET_LABEL_NAMESPACES: &[&str] = &["kubelet.kubernetes.io", "node.kubernetes.io"];
/// Upstream `v1.LabelNamespaceNodeRestriction`: labels only administrators set.
const NODE_RESTRICTION_NAMESPACE: &str = "node-restriction.kubernetes.io";

/// Upstream `admitNode`.
pub(super) fn admit_node(node: &str, a: &Attributes<'_>) -> kas_registry::Result<()> {
    if a.name != node {
        let message = format!(
            "node {} is not allowed to modify node {}",
            quote(node),
            quote(a.name)
        );
        return Err(forbidden(a, &message));
    }
    match a.operation {
        Operation::Create => admit_create(node, a),
        Operation::Update => admit_update(node, a),
        Operation::Delete => Ok(()),
    }
}

fn admit_create(node: &str, a: &Attributes<'_>) -> kas_registry::Result<()> {
    let Some(object) = a.object else {
        return Err(forbidden(a, "unexpected type <nil>"));
    };
    if config_source(object).is_some() {
        let message = format!(
            "node {} is not allowed to create pods with a non-nil configSource",
            quote(node)
        );
        return Err(forbidden(a, &message));
    }
    let modified = modified_labels(labels(object), None);
    let refused = forbidden_labels(&modified);
    if !refused.is_empty() {
        let message = format!(
            "node {} is not allowed to set the following labels: {}",
            quote(node),
            refused.into_iter().collect::<Vec<_>>().join(", ")
        );
        return Err(forbidden(a, &message));
    }
    Ok(())
}

fn admit_update(node: &str, a: &Attributes<'_>) -> kas_registry::Result<()> {
    let (Some(new), Some(old)) = (a.object, a.old_object) else {
        return Err(forbidden(a, "unexpected type <nil>"));
    };
    let refuse = |what: &str| Err(forbidden(a, &format!("node {} {what}", quote(node))));
    // Old kubelets may drop the field on a status write: only a new non-nil one counts.
    if let Some(source) = config_source(new)
        && !semantic_eq(Some(source), config_source(old))
    {
        return refuse("is not allowed to update configSource to a new non-nil configSource");
    }
    if !semantic_eq(new.pointer("/spec/taints"), old.pointer("/spec/taints")) {
        return refuse("is not allowed to modify taints");
    }
    let owners = "/metadata/ownerReferences";
    if !semantic_eq(new.pointer(owners), old.pointer(owners)) {
        return refuse("is not allowed to modify ownerReferences");
    }
    let modified = modified_labels(labels(new), labels(old));
    let refused = forbidden_labels(&modified);
    if !refused.is_empty() {
        let list: Vec<&str> = refused.into_iter().collect();
        let message = format!("is not allowed to modify labels: {}", list.join(", "));
        return Err(forbidden(a, &message));
    }
    Ok(())
}

fn config_source(node: &Value) -> Option<&Value> {
    node.pointer("/spec/configSource").filter(|s| !s.is_null())
}

fn labels(node: &Value) -> Option<&Map<String, Value>> {
    node.pointer("/metadata/labels").and_then(Value::as_object)
}

/// Upstream `getModifiedLabels`: the keys added, removed or changed.
fn modified_labels<'a>(
    a: Option<&'a Map<String, Value>>,
    b: Option<&'a Map<String, Value>>,
) -> BTreeSet<&'a str> {
    let mut modified = BTreeSet::new();
    for (x, y) in [(a, b), (b, a)] {
        for (key, value) in x.into_iter().flatten() {
            if y.and_then(|y| y.get(key)) != Some(value) {
                modified.insert(key.as_str());
            }
        }
    }
    modified
}

/// Upstream `getLabelNamespace`: the prefix before the `/`, empty without one.
fn label_namespace(key: &str) -> &str {
    key.split_once('/').map(|(ns, _)| ns).unwrap_or("")
}

fn in_namespace(namespace: &str, domain: &str) -> bool {
    namespace == domain
        || namespace
            .strip_suffix(domain)
            .is_some_and(|rest| rest.ends_with('.'))
}

/// Upstream `isKubernetesLabel`: under `kubernetes.io` or `k8s.io`.
fn is_kubernetes_label(key: &str) -> bool {
    let namespace = label_namespace(key);
    in_namespace(namespace, "kubernetes.io") || in_namespace(namespace, "k8s.io")
}

/// Upstream `kubeletapis.IsKubeletLabel`.
fn is_kubelet_label(key: &str) -> bool {
    let namespace = label_namespace(key);
    KUBELET_LABELS.contains(&key)
        || KUBELET_LABEL_NAMESPACES
            .iter()
            .any(|allowed| in_namespace(namespace, allowed))
}

/// Upstream `getForbiddenLabels`: node-restriction labels, and Kubernetes labels kubelets
/// do not set, sorted.
fn forbidden_labels<'a>(modified: &BTreeSet<&'a str>) -> BTreeSet<&'a str> {
    modified
        .iter()
        .copied()
        .filter(|key| {
            in_namespace(label_namespace(key), NODE_RESTRICTION_NAMESPACE)
                || (is_kubernetes_label(key) && !is_kubelet_label(key))
        })
        .collect()
}
