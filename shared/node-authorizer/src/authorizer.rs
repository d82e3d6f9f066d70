//! Upstream's `NodeAuthorizer` (`plugin/pkg/auth/authorizer/node/node_authorizer.go`).
//!
//! Only node identities get an opinion. Reads of secrets, config maps, claims, volumes,
//! attachments and (with `AuthorizeNodeWithSelectors`) pods are allowed along a path of
//! the graph to the node; leases and CSINodes by the node's name; everything else by the
//! static node rules of the bootstrap policy.

use std::sync::Arc;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use kas_apimachinery::fields::Requirement;
use kas_apimachinery::golang::strconv::quote;
use kas_apimachinery::selection::Operator;
use kas_auth::UserInfo;
use kas_auth::authorization::{Attributes, Authorizer, Decision, RuleResolver, RulesInfo};
use kas_rbac::PolicyRule;
use kas_rbac::rules::rules_allow;

use crate::graph::{Graph, VertexType};

/// `user.NodesGroup`.
pub const NODES_GROUP: &str = "system:nodes";
/// The prefix of a node's user name.
pub const NODE_USER_NAME_PREFIX: &str = "system:node:";
/// `api.NamespaceNodeLease`.
pub const NAMESPACE_NODE_LEASE: &str = "kube-node-lease";

const LEGACY: &str = "";
const RESOURCE: &str = "resource.k8s.io";
const STORAGE: &str = "storage.k8s.io";
const COORDINATION: &str = "coordination.k8s.io";

/// Upstream's `nodeidentifier.NewDefaultNodeIdentifier().NodeIdentity`: the node name of
/// a user named `system:node:<name>` in group `system:nodes` (possibly empty), or `None`
/// for any other user.
pub fn node_identity(user: &UserInfo) -> Option<&str> {
    let name = user.name.strip_prefix(NODE_USER_NAME_PREFIX)?;
    user.groups.iter().any(|g| g == NODES_GROUP).then_some(name)
}

type Answer = (Decision, String);

fn allow() -> Answer {
    (Decision::Allow, String::new())
}

fn deny(reason: impl Into<String>) -> Answer {
    (Decision::NoOpinion, reason.into())
}

/// Upstream's node authorizer over a [`Graph`] and the static node rules.
#[derive(Clone)]
pub struct NodeAuthorizer {
    graph: Arc<Graph>,
    node_rules: Arc<[PolicyRule]>,
    /// The `AuthorizeNodeWithSelectors` feature (beta and on by default in 1.33).
    with_selectors: bool,
}

impl NodeAuthorizer {
    /// An authorizer with `AuthorizeNodeWithSelectors` on, as 1.33 defaults it.
    pub fn new(graph: Arc<Graph>, node_rules: Vec<PolicyRule>) -> Self {
        NodeAuthorizer {
            graph,
            node_rules: node_rules.into(),
            with_selectors: true,
        }
    }

    /// Sets the `AuthorizeNodeWithSelectors` feature. Without it, pods and nodes fall to
    /// the static rules and nodes may list and watch ResourceSlices freely.
    pub fn with_selectors(mut self, enabled: bool) -> Self {
        self.with_selectors = enabled;
        self
    }

    pub fn graph(&self) -> &Arc<Graph> {
        &self.graph
    }

    /// The decision and reason for a request without a field selector.
    pub fn decide(&self, attrs: &Attributes) -> Answer {
        self.decide_with_fields(attrs, &[])
    }

    /// The decision and reason, given the requirements of the request's field selector
    /// (upstream's `attrs.GetFieldSelector()`; a selector that does not parse has none).
    pub fn decide_with_fields(&self, attrs: &Attributes, fields: &[Requirement]) -> Answer {
        let Some(node) = node_identity(&attrs.user) else {
            return deny("");
        };
        if node.is_empty() {
            tracing::debug!(
                "NODE DENY: unknown node for user {}",
                quote(&attrs.user.name)
            );
            return deny(format!("unknown node for user {}", quote(&attrs.user.name)));
        }
        if attrs.is_resource_request {
            let r = (attrs.api_group.as_str(), attrs.resource.as_str());
            match r {
                (LEGACY, "secrets") => {
                    return self.read_namespaced(node, VertexType::Secret, attrs);
                }
                (LEGACY, "configmaps") => {
                    return self.read_namespaced(node, VertexType::ConfigMap, attrs);
                }
                (LEGACY, "persistentvolumeclaims") => {
                    if attrs.subresource == "status" {
                        return self.status_update(node, VertexType::Pvc, attrs);
                    }
                    return self.get(node, VertexType::Pvc, attrs);
                }
                (LEGACY, "persistentvolumes") => return self.get(node, VertexType::Pv, attrs),
                (RESOURCE, "resourceclaims") => {
                    return self.get(node, VertexType::ResourceClaim, attrs);
                }
                (STORAGE, "volumeattachments") => {
                    return self.get(node, VertexType::VolumeAttachment, attrs);
                }
                (LEGACY, "serviceaccounts") => return self.create_token(node, attrs),
                (COORDINATION, "leases") => return lease(node, attrs),
                (STORAGE, "csinodes") => return csi_node(node, attrs),
                (RESOURCE, "resourceslices") => return self.resource_slice(node, attrs, fields),
                (LEGACY, "nodes") if self.with_selectors => return node_object(node, attrs),
                (LEGACY, "pods") if self.with_selectors => return self.pod(node, attrs, fields),
                _ => {}
            }
        }
        if rules_allow(attrs, &self.node_rules) {
            return allow();
        }
        deny("")
    }

    /// Upstream's `authorizeStatusUpdate`.
    fn status_update(&self, node: &str, ty: VertexType, attrs: &Attributes) -> Answer {
        if !matches!(attrs.verb.as_str(), "update" | "patch") {
            return denied(node, attrs, "can only get/update/patch this type");
        }
        if attrs.subresource != "status" {
            return denied(node, attrs, "can only update status subresource");
        }
        self.authorize_named(node, ty, attrs)
    }

    /// Upstream's `authorizeGet`.
    fn get(&self, node: &str, ty: VertexType, attrs: &Attributes) -> Answer {
        if attrs.verb != "get" {
            return denied(
                node,
                attrs,
                "can only get individual resources of this type",
            );
        }
        if !attrs.subresource.is_empty() {
            return denied(node, attrs, "cannot get subresource");
        }
        self.authorize_named(node, ty, attrs)
    }

    /// Upstream's `authorizeReadNamespacedObject`.
    fn read_namespaced(&self, node: &str, ty: VertexType, attrs: &Attributes) -> Answer {
        if !matches!(attrs.verb.as_str(), "get" | "list" | "watch") {
            return denied(node, attrs, "can only read resources of this type");
        }
        if !attrs.subresource.is_empty() {
            return denied(node, attrs, "cannot read subresource");
        }
        if attrs.namespace.is_empty() {
            return denied(node, attrs, "can only read namespaced object of this type");
        }
        self.authorize_named(node, ty, attrs)
    }

    /// Upstream's `authorize`: a named object with a path to the node.
    fn authorize_named(&self, node: &str, ty: VertexType, attrs: &Attributes) -> Answer {
        if attrs.name.is_empty() {
            return denied(node, attrs, "No Object name found");
        }
        self.path(node, ty, attrs)
    }

    fn path(&self, node: &str, ty: VertexType, attrs: &Attributes) -> Answer {
        match self
            .graph
            .has_path_from(node, ty, &attrs.namespace, &attrs.name)
        {
            Ok(()) => allow(),
            Err(e) => {
                tracing::debug!(error = %e, "NODE DENY");
                deny(format!(
                    "no relationship found between node '{node}' and this object"
                ))
            }
        }
    }

    /// Upstream's `authorizeCreateToken`: the token of a service account a pod on the
    /// node runs as. (Which pod the token is bound to is NodeRestriction's check.)
    fn create_token(&self, node: &str, attrs: &Attributes) -> Answer {
        if attrs.verb != "create" || attrs.name.is_empty() {
            return denied(
                node,
                attrs,
                "can only create tokens for individual service accounts",
            );
        }
        if attrs.subresource != "token" {
            return denied(
                node,
                attrs,
                "can only create token subresource of serviceaccount",
            );
        }
        self.path(node, VertexType::ServiceAccount, attrs)
    }

    /// Upstream's `authorizeResourceSlice`.
    fn resource_slice(&self, node: &str, attrs: &Attributes, fields: &[Requirement]) -> Answer {
        if !attrs.subresource.is_empty() {
            return denied(node, attrs, "cannot authorize ResourceSlice subresources");
        }
        match attrs.verb.as_str() {
            // NodeRestriction checks the new object's node.
            "create" => allow(),
            "get" | "update" | "patch" | "delete" => {
                self.authorize_named(node, VertexType::ResourceSlice, attrs)
            }
            "watch" | "list" | "deletecollection" => {
                if !self.with_selectors || selects(fields, "nodeName", node) {
                    return allow();
                }
                denied(
                    node,
                    attrs,
                    "can only list/watch/deletecollection resourceslices with nodeName field selector",
                )
            }
            _ => denied(
                node,
                attrs,
                "only the following verbs are allowed for a ResourceSlice: get, watch, list, create, update, patch, delete, deletecollection",
            ),
        }
    }

    /// Upstream's `authorizePod`. Creating, deleting and updating the status of pods is
    /// limited to the node's own by NodeRestriction.
    fn pod(&self, node: &str, attrs: &Attributes, fields: &[Requirement]) -> Answer {
        let verb = attrs.verb.as_str();
        match attrs.subresource.as_str() {
            "" => match verb {
                "get" => return self.get(node, VertexType::Pod, attrs),
                "list" | "watch" => {
                    if selects(fields, "spec.nodeName", node) {
                        return allow();
                    }
                    if !attrs.name.is_empty() {
                        return self.authorize_named(node, VertexType::Pod, attrs);
                    }
                    return denied(
                        node,
                        attrs,
                        "can only list/watch pods with spec.nodeName field selector",
                    );
                }
                "create" | "delete" => return allow(),
                _ => {}
            },
            "status" if matches!(verb, "update" | "patch") => return allow(),
            "eviction" if verb == "create" => return allow(),
            _ => {}
        }
        denied(node, attrs, "")
    }
}

/// Whether the field selector requires `field=<value>`.
fn selects(fields: &[Requirement], field: &str, value: &str) -> bool {
    fields
        .iter()
        .any(|r| r.field == field && r.operator == Operator::Equals && r.value == value)
}

/// A denial, logged as upstream's `NODE DENY` line.
fn denied(node: &str, attrs: &Attributes, reason: &str) -> Answer {
    tracing::debug!("NODE DENY: '{node}' {attrs:?}");
    deny(reason)
}

/// Upstream's `authorizeLease`: the node's own lease in `kube-node-lease` (NodeRestriction
/// checks the name on create).
fn lease(node: &str, attrs: &Attributes) -> Answer {
    let verb = attrs.verb.as_str();
    if !matches!(verb, "get" | "create" | "update" | "patch" | "delete") {
        return denied(
            node,
            attrs,
            "can only get, create, update, patch, or delete a node lease",
        );
    }
    if attrs.namespace != NAMESPACE_NODE_LEASE {
        let reason = format!(
            "can only access leases in the {} system namespace",
            quote(NAMESPACE_NODE_LEASE)
        );
        return denied(node, attrs, &reason);
    }
    if verb != "create" && attrs.name != node {
        return denied(
            node,
            attrs,
            "can only access node lease with the same name as the requesting node",
        );
    }
    allow()
}

/// Upstream's `authorizeCSINode`: the node's own CSINode (NodeRestriction checks the name
/// on create).
fn csi_node(node: &str, attrs: &Attributes) -> Answer {
    let verb = attrs.verb.as_str();
    if !matches!(verb, "get" | "create" | "update" | "patch" | "delete") {
        return denied(
            node,
            attrs,
            "can only get, create, update, patch, or delete a CSINode",
        );
    }
    if !attrs.subresource.is_empty() {
        return denied(node, attrs, "cannot authorize CSINode subresources");
    }
    if verb != "create" && attrs.name != node {
        return denied(
            node,
            attrs,
            "can only access CSINode with the same name as the requesting node",
        );
    }
    allow()
}

/// Upstream's `authorizeNode`: its own Node object by name; create, update and status
/// updates are NodeRestriction's to limit.
fn node_object(node: &str, attrs: &Attributes) -> Answer {
    let verb = attrs.verb.as_str();
    match attrs.subresource.as_str() {
        "" => match verb {
            "create" | "update" | "patch" => return allow(),
            "get" | "list" | "watch" => {
                if attrs.name == node {
                    return allow();
                }
                let reason = if attrs.name.is_empty() {
                    format!("node '{node}' cannot read all nodes, only its own Node object")
                } else {
                    format!(
                        "node '{node}' cannot read '{}', only its own Node object",
                        attrs.name
                    )
                };
                return denied(node, attrs, &reason);
            }
            _ => {}
        },
        "status" if matches!(verb, "update" | "patch") => return allow(),
        _ => {}
    }
    denied(node, attrs, "")
}

impl Authorizer for NodeAuthorizer {
    fn authorize<'a>(
        &'a self,
        attrs: &'a Attributes,
    ) -> BoxFuture<'a, kas_auth::Result<(Decision, String)>> {
        // Upstream's `AuthorizeWithSelectors`: the request's field selector's requirements;
        // one that does not parse has none.
        let fields = match attrs.field_selector.as_str() {
            "" => Vec::new(),
            raw => kas_apimachinery::fields::parse_selector(raw)
                .map(|s| s.requirements())
                .unwrap_or_default(),
        };
        futures_util::future::ready(Ok(self.decide_with_fields(attrs, &fields))).boxed()
    }
}

impl RuleResolver for NodeAuthorizer {
    /// Upstream's `RulesFor`: a node's permissions are not enumerable.
    fn rules_for<'a>(
        &'a self,
        user: &'a UserInfo,
        _namespace: &'a str,
    ) -> BoxFuture<'a, RulesInfo> {
        let info = match node_identity(user) {
            Some(_) => RulesInfo {
                incomplete: true,
                evaluation_error: "node authorizer does not support user rule resolution"
                    .to_owned(),
                ..RulesInfo::default()
            },
            None => RulesInfo::default(),
        };
        futures_util::future::ready(info).boxed()
    }
}

#[cfg(test)]
#[path = "authorizer_tests.rs"]
mod tests;
