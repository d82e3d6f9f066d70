//! A node's pods: upstream `admitPod`, `admitPodCreate`, `admitPodStatus` and
//! `admitPodEviction`.

use kas_apimachinery::golang::strconv::quote;
use kas_registry::admission::{Attributes, Operation};
use kas_registry::meta;
use serde_json::Value;

use super::{
    NodeRestriction, forbidden, items, lister_not_found, operation, text, unexpected_operation,
};
use crate::admission::service_account::rules::{is_mirror, references_secrets};

/// Upstream `api.MirrorPodAnnotationKey`.
const MIRROR_ANNOTATION: &str = "kubernetes.io/config.mirror";

impl NodeRestriction {
    /// Upstream `admitPod`: a node creates mirror pods and deletes its own pods.
    pub(super) async fn admit_pod(
        &self,
        node: &str,
        a: &Attributes<'_>,
    ) -> kas_registry::Result<()> {
        match a.operation {
            Operation::Create => self.admit_pod_create(node, a).await,
            Operation::Delete => {
                // Upstream's store reads the pod before its delete admission runs.
                let Some(pod) = self.read_pod(a, a.name).await? else {
                    return Err(lister_not_found("", "pods", a.name));
                };
                if text(&pod, "/spec/nodeName") != node {
                    let message = format!(
                        "node {} can only delete pods with spec.nodeName set to itself",
                        quote(node)
                    );
                    return Err(forbidden(a, &message));
                }
                Ok(())
            }
            Operation::Update => {
                let message = format!(
                    "unexpected operation {}, node {} can only create and delete mirror pods",
                    quote(operation(a.operation)),
                    quote(node)
                );
                Err(forbidden(a, &message))
            }
        }
    }

    /// The pod `name` in the request's namespace; a failed read is Forbidden.
    async fn read_pod(
        &self,
        a: &Attributes<'_>,
        name: &str,
    ) -> kas_registry::Result<Option<Value>> {
        self.pods
            .get(a.namespace, name)
            .await
            .map_err(|e| forbidden(a, &e))
    }

    async fn admit_pod_create(&self, node: &str, a: &Attributes<'_>) -> kas_registry::Result<()> {
        let Some(pod) = a.object else {
            return Err(forbidden(a, "unexpected type <nil>"));
        };
        let refuse = |what: &str| Err(forbidden(a, &format!("node {} {what}", quote(node))));
        if !is_mirror(pod) {
            let message = format!(
                "pod does not have {} annotation, node {} can only create mirror pods",
                quote(MIRROR_ANNOTATION),
                quote(node)
            );
            return Err(forbidden(a, &message));
        }
        if text(pod, "/spec/nodeName") != node {
            return refuse("can only create pods with spec.nodeName set to itself");
        }
        let owners: Vec<&Value> = items(pod, "/metadata/ownerReferences").collect();
        let owner = match owners[..] {
            [owner] => owner,
            [] => return refuse("can only create pods with an owner reference set to itself"),
            _ => return refuse("can only create pods with a single owner reference set to itself"),
        };
        if text(owner, "/apiVersion") != "v1"
            || text(owner, "/kind") != "Node"
            || text(owner, "/name") != node
        {
            return refuse("can only create pods with an owner reference set to itself");
        }
        if owner.get("controller").and_then(Value::as_bool) != Some(true) {
            return refuse("can only create pods with a controller owner reference set to itself");
        }
        if owner.get("blockOwnerDeletion").and_then(Value::as_bool) == Some(true) {
            return refuse("must not set blockOwnerDeletion on an owner reference");
        }
        self.check_node_uid(node, text(owner, "/uid"), a).await?;
        if let Some(kind) = api_object_reference(pod) {
            return refuse(&format!("can not create pods that reference {kind}"));
        }
        Ok(())
    }

    /// The owner reference names the node's current UID.
    async fn check_node_uid(
        &self,
        node: &str,
        uid: &str,
        a: &Attributes<'_>,
    ) -> kas_registry::Result<()> {
        let found = self.nodes.get("", node).await.map_err(|e| {
            forbidden(
                a,
                &format!("error looking up node {node} to verify uid: {e}"),
            )
        })?;
        let Some(found) = found else {
            return Err(lister_not_found("", "node", node));
        };
        let actual = meta::str_field(&found, "uid");
        if uid != actual {
            let message = format!("node {node} UID mismatch: expected {uid} got {actual}");
            return Err(forbidden(a, &message));
        }
        Ok(())
    }

    /// Upstream `admitPodEviction`: a node evicts its own pods.
    pub(super) async fn admit_pod_eviction(
        &self,
        node: &str,
        a: &Attributes<'_>,
    ) -> kas_registry::Result<()> {
        if a.operation != Operation::Create {
            let message = format!("unexpected operation {}", operation(a.operation));
            return Err(forbidden(a, &message));
        }
        let Some(eviction) = a.object else {
            return Err(forbidden(a, "unexpected type <nil>"));
        };
        let name = match (a.name, meta::name(eviction)) {
            ("", "") => return Err(forbidden(a, "could not determine pod from request data")),
            ("", from_body) => from_body,
            (from_path, _) => from_path,
        };
        let Some(pod) = self.read_pod(a, name).await? else {
            return Err(lister_not_found("", "pod", name));
        };
        if text(&pod, "/spec/nodeName") != node {
            let message =
                format!("node {node} can only evict pods with spec.nodeName set to itself");
            return Err(forbidden(a, &message));
        }
        Ok(())
    }
}

/// Upstream `admitPodStatus`: a node writes the status of its own pods, without their
/// labels or resource claim statuses.
pub(super) fn admit_pod_status(node: &str, a: &Attributes<'_>) -> kas_registry::Result<()> {
    if a.operation != Operation::Update {
        return Err(unexpected_operation(a));
    }
    let (Some(old), Some(new)) = (a.old_object, a.object) else {
        return Err(forbidden(a, "unexpected type <nil>"));
    };
    if text(old, "/spec/nodeName") != node {
        let message = format!(
            "node {} can only update pod status for pods with spec.nodeName set to itself",
            quote(node)
        );
        return Err(forbidden(a, &message));
    }
    if labels(old) != labels(new) {
        let message = format!(
            "node {} cannot update labels through pod status",
            quote(node)
        );
        return Err(forbidden(a, &message));
    }
    if !resource_claim_statuses_equal(old, new) {
        let message = format!("node {} cannot update resource claim statues", quote(node));
        return Err(forbidden(a, &message));
    }
    Ok(())
}

/// `labels.Equals`: no labels and an empty set are equal.
fn labels(pod: &Value) -> serde_json::Map<String, Value> {
    pod.pointer("/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// Upstream `resourceClaimStatusesEqual`: the same names and claim names, in order.
fn resource_claim_statuses_equal(old: &Value, new: &Value) -> bool {
    let entries = |pod: &Value| -> Vec<(String, Option<String>)> {
        items(pod, "/status/resourceClaimStatuses")
            .map(|s| {
                let claim = s.get("resourceClaimName").and_then(Value::as_str);
                (text(s, "/name").to_owned(), claim.map(str::to_owned))
            })
            .collect()
    };
    entries(old) == entries(new)
}

/// The kind of API object a mirror pod may not reference, if it references one (upstream's
/// checks in `admitPodCreate`, in their order).
fn api_object_reference(pod: &Value) -> Option<&'static str> {
    if !text(pod, "/spec/serviceAccountName").is_empty() {
        return Some("a service account");
    }
    if references_secrets(pod) {
        return Some("secrets");
    }
    if references_configmaps(pod) {
        return Some("configmaps");
    }
    let volumes = || items(pod, "/spec/volumes");
    let trust_bundle = volumes()
        .flat_map(|v| items(v, "/projected/sources"))
        .any(|s| s.get("clusterTrustBundle").is_some_and(|b| !b.is_null()));
    if trust_bundle {
        return Some("clustertrustbundles");
    }
    if volumes().any(|v| v.get("persistentVolumeClaim").is_some_and(|c| !c.is_null())) {
        return Some("persistentvolumeclaims");
    }
    if items(pod, "/spec/resourceClaims").next().is_some() {
        return Some("resourceclaims");
    }
    None
}

/// Upstream `podutil.VisitPodConfigmapNames` over all containers: whether the pod names a
/// ConfigMap (its environment, a `configMap` volume or projection).
fn references_configmaps(pod: &Value) -> bool {
    let present = |v: &Value, key: &str| v.get(key).is_some_and(|r| !r.is_null());
    for field in ["initContainers", "containers", "ephemeralContainers"] {
        for container in items(pod, &format!("/spec/{field}")) {
            if items(container, "/envFrom").any(|e| present(e, "configMapRef"))
                || items(container, "/env").any(|e| {
                    e.pointer("/valueFrom/configMapKeyRef")
                        .is_some_and(|r| !r.is_null())
                })
            {
                return true;
            }
        }
    }
    items(pod, "/spec/volumes").any(|v| {
        present(v, "configMap") || items(v, "/projected/sources").any(|s| present(s, "configMap"))
    })
}
