//! Upstream's default RBAC policy (`plugin/pkg/auth/authorizer/rbac/bootstrappolicy`,
//! 1.33 with its default feature gates) and its reconciliation at start (the
//! `rbac/bootstrap-roles` post-start hook of `pkg/registry/rbac/rest/storage_rbac.go`,
//! deciding as `pkg/registry/rbac/reconciliation` does).
//!
//! The objects are built as JSON values in upstream's order; `reconcile` holds the pure
//! decisions (what to create, what to add to an existing object) and `ensure` applies them
//! through the role's stores.

pub mod aggregated;
pub mod builder;
pub mod controller;
pub mod ensure;
pub mod namespace;
pub mod policy;
pub mod reconcile;
#[cfg(test)]
mod tests;

use serde_json::Value;

pub use builder::AUTO_UPDATE_ANNOTATION;
pub use ensure::ensure_rbac_policy;

/// Upstream's `PolicyData`: every object the hook reconciles.
#[derive(Clone, Debug)]
pub struct PolicyData {
    pub cluster_roles: Vec<Value>,
    pub cluster_role_bindings: Vec<Value>,
    /// Namespaced: each carries its `metadata.namespace`.
    pub roles: Vec<Value>,
    pub role_bindings: Vec<Value>,
    /// Upstream `ClusterRolesToAggregate`: (old role, the role its rules move to).
    pub cluster_roles_to_aggregate: &'static [(&'static str, &'static str)],
    /// Upstream `ClusterRoleBindingsToSplit`: (source binding, the binding to create).
    pub cluster_role_bindings_to_split: Vec<(&'static str, Value)>,
}

/// Upstream's `PolicyData` as kube-apiserver builds it: the cluster roles then the
/// controllers' roles, and likewise for the bindings.
pub fn policy_data() -> PolicyData {
    let mut cluster_roles = policy::cluster_roles();
    cluster_roles.extend(controller::controller_roles());
    let mut cluster_role_bindings = policy::cluster_role_bindings();
    cluster_role_bindings.extend(controller::controller_role_bindings());
    PolicyData {
        cluster_roles,
        cluster_role_bindings,
        roles: namespace::namespace_roles(),
        role_bindings: namespace::namespace_role_bindings(),
        cluster_roles_to_aggregate: policy::CLUSTER_ROLES_TO_AGGREGATE,
        cluster_role_bindings_to_split: policy::cluster_role_bindings_to_split(),
    }
}
