//! A node's other objects: upstream `admitPVCStatus`, `admitLease`, `admitCSINode`,
//! `admitResourceSlice` and `admitCSR`.

use base64::Engine as _;
use kas_apimachinery::golang::strconv::quote;
use kas_registry::admission::{Attributes, Operation};
use serde_json::Value;

use super::{NodeRestriction, forbidden, semantic_eq, text, unexpected_operation};
use crate::resources::certificates::pem::csr_common_name;

/// Upstream `api.NamespaceNodeLease`.
const NODE_LEASE_NAMESPACE: &str = "kube-node-lease";
/// Upstream `KubeletServingSignerName` and `KubeAPIServerClientKubeletSignerName`.
const NODE_SIGNERS: &[&str] = &[
    "kubernetes.io/kubelet-serving",
    "kubernetes.io/kube-apiserver-client-kubelet",
];

/// Upstream `admitPVCStatus`: a node may change a claim's status capacity, conditions
/// and (with `RecoverVolumeExpansionFailure`, beta and on in 1.33) allocated resources
/// and their statuses, nothing else.
pub(super) fn admit_pvc_status(node: &str, a: &Attributes<'_>) -> kas_registry::Result<()> {
    if a.operation != Operation::Update {
        return Err(unexpected_operation(a));
    }
    let (Some(old), Some(new)) = (a.old_object, a.object) else {
        return Err(forbidden(a, "unexpected type <nil>"));
    };
    let (old, new) = (comparable_claim(old), comparable_claim(new));
    if !semantic_eq(Some(&old), Some(&new)) {
        let message = format!(
            "node {} is not allowed to update fields other than status.quantity and status.conditions: {}",
            quote(node),
            diff(&old, &new)
        );
        return Err(forbidden(a, &message));
    }
    Ok(())
}

/// A claim without what a node may change and what a write sets anyway.
fn comparable_claim(claim: &Value) -> Value {
    let mut claim = claim.clone();
    if let Some(meta) = claim.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("resourceVersion");
        meta.remove("managedFields");
    }
    if let Some(status) = claim.get_mut("status").and_then(Value::as_object_mut) {
        for field in [
            "capacity",
            "conditions",
            "allocatedResourceStatuses",
            "allocatedResources",
        ] {
            status.remove(field);
        }
    }
    claim
}

/// The fields that differ, as `path: old -> new` (upstream prints `cmp.Diff`, whose
/// layout is Go's own).
fn diff(old: &Value, new: &Value) -> String {
    let mut out = Vec::new();
    walk("", old, new, &mut out);
    out.join("; ")
}

fn walk(path: &str, old: &Value, new: &Value, out: &mut Vec<String>) {
    if semantic_eq(Some(old), Some(new)) {
        return;
    }
    if let (Value::Object(o), Value::Object(n)) = (old, new) {
        let keys: std::collections::BTreeSet<&String> = o.keys().chain(n.keys()).collect();
        for key in keys {
            let null = Value::Null;
            let (x, y) = (o.get(key).unwrap_or(&null), n.get(key).unwrap_or(&null));
            walk(&format!("{path}.{key}"), x, y, out);
        }
        return;
    }
    out.push(format!("{}: {old} -> {new}", path.trim_start_matches('.')));
}

/// Upstream `admitLease`: only the node's own lease, in `kube-node-lease`.
pub(super) fn admit_lease(node: &str, a: &Attributes<'_>) -> kas_registry::Result<()> {
    if a.namespace != NODE_LEASE_NAMESPACE {
        let message = format!(
            "can only access leases in the {} system namespace",
            quote(NODE_LEASE_NAMESPACE)
        );
        return Err(forbidden(a, &message));
    }
    if a.name != node {
        return Err(forbidden(
            a,
            "can only access node lease with the same name as the requesting node",
        ));
    }
    Ok(())
}

/// Upstream `admitCSINode`: only the node's own CSINode.
pub(super) fn admit_csi_node(node: &str, a: &Attributes<'_>) -> kas_registry::Result<()> {
    if a.name != node {
        return Err(forbidden(
            a,
            "can only access CSINode with the same name as the requesting node",
        ));
    }
    Ok(())
}

/// Whether a ResourceSlice is the node's (`spec.nodeName`).
fn own_slice(slice: &Value, node: &str) -> bool {
    slice
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .is_some_and(|n| n == node)
}

impl NodeRestriction {
    /// Upstream `admitResourceSlice`: a node creates and deletes only its own slices (the
    /// Node authorizer checks the rest).
    pub(super) async fn admit_resource_slice(
        &self,
        node: &str,
        a: &Attributes<'_>,
    ) -> kas_registry::Result<()> {
        match a.operation {
            Operation::Create => {
                if !a.object.is_some_and(|s| own_slice(s, node)) {
                    return Err(forbidden(
                        a,
                        "can only create ResourceSlice with the same NodeName as the requesting node",
                    ));
                }
            }
            Operation::Delete => {
                let old = match &self.slices {
                    Some(slices) => slices.get("", a.name).await.map_err(|e| forbidden(a, &e))?,
                    None => None,
                };
                let Some(old) = old else {
                    return Err(kas_apimachinery::Status::not_found(
                        "resource.k8s.io",
                        "resourceslices",
                        a.name,
                    )
                    .into());
                };
                if !own_slice(&old, node) {
                    return Err(forbidden(
                        a,
                        "can only delete ResourceSlice with the same NodeName as the requesting node",
                    ));
                }
            }
            Operation::Update => {}
        }
        Ok(())
    }
}

/// Upstream `admitCSR` (`AllowInsecureKubeletCertificateSigningRequests` is off in 1.33): a
/// node asks the kubelet signers only for its own name.
pub(super) fn admit_csr(node: &str, a: &Attributes<'_>) -> kas_registry::Result<()> {
    if a.operation != Operation::Create {
        return Ok(());
    }
    let Some(csr) = a.object else {
        return Err(forbidden(a, "unexpected type <nil>"));
    };
    if !NODE_SIGNERS.contains(&text(csr, "/spec/signerName")) {
        return Ok(());
    }
    let pem = base64::engine::general_purpose::STANDARD
        .decode(text(csr, "/spec/request"))
        .unwrap_or_default();
    let common_name =
        csr_common_name(&pem).map_err(|e| forbidden(a, &format!("unable to parse csr: {e}")))?;
    if common_name != format!("system:node:{node}") {
        let message = format!("can only create a node CSR with CN=system:node:{node}");
        return Err(forbidden(a, &message));
    }
    Ok(())
}
