//! Upstream's `NodeRestriction` plugin (`plugin/pkg/admission/noderestriction`), off by
//! default, which kubeadm turns on: a kubelet (user `system:node:<name>` in
//! `system:nodes`) may write only what belongs to its node. It may create mirror pods bound
//! to itself that reference no other API object, delete and evict its own pods, write the
//! status of its pods (not their labels) and of its PVCs (only capacity and conditions),
//! create and update its own Node (not its taints, owner references, config source or the
//! labels kubelets do not set), request tokens for service accounts only bound to a pod on
//! its node, for an audience the pod uses, and touch only its own Lease, CSINode,
//! ResourceSlices and node CSRs. Other users pass untouched.
//!
//! Upstream runs it among the mutating plugins; here it is a validating plugin (it changes
//! nothing), which sees creates, updates and subresource creates (`eviction`, `binding`,
//! `token`) through `Validate`, and deletes through `Admit`, the checks the store runs
//! before a delete reads the object.

mod nodes;
mod objects;
mod pods;
#[cfg(test)]
mod tests;
mod token;

use std::sync::Arc;

use futures_util::future::BoxFuture;
use kas_apimachinery::Status;
use kas_apimachinery::golang::strconv::quote;
use kas_auth::authorization::DynAuthorizer;
use kas_node_authorizer::node_identity;
use kas_registry::ResourceDescriptor;
use kas_registry::admission::{Admit, Attributes, Operation, Validate};
use kas_registry::store::Store;
use serde_json::Value;

use crate::admission::service_account::rules::{items, text};

/// Upstream's listers: one resource's objects by namespace and name.
pub trait Lister: Send + Sync {
    /// The object, `None` when there is none; another failure's text.
    fn get<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Option<Value>, String>>;
}

impl Lister for Store {
    /// From the watch cache, as an informer's lister reads.
    fn get<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Option<Value>, String>> {
        Box::pin(async move {
            match self.get_if_exists(namespace, name, Some("0".into())).await {
                Ok(found) => found
                    .map(|o| o.value())
                    .transpose()
                    .map_err(|e| e.to_string()),
                Err(e) => Err(e.to_status().message.unwrap_or_default()),
            }
        })
    }
}

/// The plugin, with the objects it reads and the authorizer it asks about token audiences
/// (the `ServiceAccountNodeAudienceRestriction` feature, beta and on in 1.33).
pub struct NodeRestriction {
    pub pods: Arc<dyn Lister>,
    pub nodes: Arc<dyn Lister>,
    pub claims: Option<Arc<dyn Lister>>,
    pub volumes: Option<Arc<dyn Lister>>,
    pub drivers: Option<Arc<dyn Lister>>,
    pub slices: Option<Arc<dyn Lister>>,
    pub authorizer: DynAuthorizer,
}

/// A lister of `plural` in `group` over the role's store of it.
pub fn lister(stores: &[Store], group: &str, plural: &str) -> Option<Arc<dyn Lister>> {
    let store = super::store(stores, group, plural)?;
    Some(Arc::new(store))
}

impl NodeRestriction {
    /// The plugin over the role's stores; `None` without pods or nodes, which upstream
    /// requires.
    pub fn new(stores: &[Store], authorizer: DynAuthorizer) -> Option<NodeRestriction> {
        Some(NodeRestriction {
            pods: lister(stores, "", "pods")?,
            nodes: lister(stores, "", "nodes")?,
            claims: lister(stores, "", "persistentvolumeclaims"),
            volumes: lister(stores, "", "persistentvolumes"),
            drivers: lister(stores, "storage.k8s.io", "csidrivers"),
            slices: lister(stores, "resource.k8s.io", "resourceslices"),
            authorizer,
        })
    }

    /// Upstream `Admit`.
    async fn admit(&self, a: &Attributes<'_>) -> kas_registry::Result<()> {
        let Some(user) = a.user else {
            return Ok(());
        };
        let Some(node) = node_identity(user) else {
            return Ok(());
        };
        if node.is_empty() {
            let message = format!("could not determine node from user {}", quote(&user.name));
            return Err(forbidden(a, &message));
        }
        match (a.descriptor.group, a.descriptor.plural) {
            ("", "pods") => match a.subresource {
                "" => self.admit_pod(node, a).await,
                "status" => pods::admit_pod_status(node, a),
                "eviction" => self.admit_pod_eviction(node, a).await,
                other => Err(forbidden(
                    a,
                    &format!(
                        "unexpected pod subresource {}, only 'status' and 'eviction' are allowed",
                        quote(other)
                    ),
                )),
            },
            ("", "nodes") => nodes::admit_node(node, a),
            ("", "persistentvolumeclaims") => match a.subresource {
                "status" => objects::admit_pvc_status(node, a),
                _ => Err(forbidden(a, "may only update PVC status")),
            },
            ("", "serviceaccounts") => self.admit_service_account(node, user, a).await,
            ("coordination.k8s.io", "leases") => objects::admit_lease(node, a),
            ("storage.k8s.io", "csinodes") => objects::admit_csi_node(node, a),
            ("resource.k8s.io", "resourceslices") => self.admit_resource_slice(node, a).await,
            ("certificates.k8s.io", "certificatesigningrequests") => objects::admit_csr(node, a),
            _ => Ok(()),
        }
    }
}

/// The resources `Admit` looks at.
fn restricted(descriptor: &ResourceDescriptor) -> bool {
    matches!(
        (descriptor.group, descriptor.plural),
        (
            "",
            "pods" | "nodes" | "persistentvolumeclaims" | "serviceaccounts"
        ) | ("coordination.k8s.io", "leases")
            | ("storage.k8s.io", "csinodes")
            | ("resource.k8s.io", "resourceslices")
            | ("certificates.k8s.io", "certificatesigningrequests")
    )
}

/// Upstream `admission.NewForbidden`: the resource (without its subresource) and the
/// name the request names, or the object's.
fn forbidden(a: &Attributes<'_>, message: &str) -> kas_registry::Error {
    Status::forbidden(
        a.descriptor.group,
        a.descriptor.plural,
        a.resource_name(),
        message,
    )
    .into()
}

/// Upstream's `admission.Operation` as `%q` and `%s` print it.
fn operation(o: Operation) -> &'static str {
    match o {
        Operation::Create => "CREATE",
        Operation::Update => "UPDATE",
        Operation::Delete => "DELETE",
    }
}

/// Upstream's `unexpected operation %q`.
fn unexpected_operation(a: &Attributes<'_>) -> kas_registry::Error {
    let message = format!("unexpected operation {}", quote(operation(a.operation)));
    forbidden(a, &message)
}

/// The NotFound an informer's lister answers (its resource is singular: `pod "p" not
/// found`).
fn lister_not_found(group: &str, resource: &str, name: &str) -> kas_registry::Error {
    Status::not_found(group, resource, name).into()
}

/// Upstream's `apiequality.Semantic.DeepEqual` of two fields: absent, null, empty and
/// zero are the same.
fn semantic_eq(a: Option<&Value>, b: Option<&Value>) -> bool {
    use crate::resources::persistentvolumes::validation::semantic;
    let norm = |v: Option<&Value>| semantic(&serde_json::json!({ "v": v }));
    norm(a) == norm(b)
}

impl Validate for NodeRestriction {
    /// Upstream's plugin handles creates, updates and deletes of the restricted resources;
    /// the store's own write of a pod's binding (after the create was admitted) is not
    /// one.
    fn handles(
        &self,
        descriptor: &'static ResourceDescriptor,
        _namespace: &str,
        subresource: &str,
        operation: Operation,
    ) -> bool {
        restricted(descriptor)
            && operation != Operation::Delete
            && !((descriptor.group, descriptor.plural) == ("", "pods")
                && subresource == "binding"
                && operation == Operation::Update)
    }

    fn validate<'a>(
        &'a self,
        attributes: &'a Attributes<'a>,
    ) -> BoxFuture<'a, kas_registry::Result<()>> {
        Box::pin(self.admit(attributes))
    }
}

impl Admit for NodeRestriction {
    /// Deletes only: creates and updates come through `Validate`.
    fn admit<'a>(
        &'a self,
        attributes: &'a Attributes<'a>,
    ) -> BoxFuture<'a, kas_registry::Result<()>> {
        Box::pin(async move {
            if attributes.operation != Operation::Delete || !restricted(attributes.descriptor) {
                return Ok(());
            }
            NodeRestriction::admit(self, attributes).await
        })
    }
}
