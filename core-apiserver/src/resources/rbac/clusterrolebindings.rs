//! rbac.authorization.k8s.io/v1 ClusterRoleBinding, after upstream's
//! `pkg/registry/rbac/clusterrolebinding`, `SetDefaults_ClusterRoleBinding`,
//! `SetDefaults_Subject`, `ValidateClusterRoleBinding`, `ValidateClusterRoleBindingUpdate`
//! and `printClusterRoleBinding`.

use kas_api::rbac::v1::CLUSTER_ROLE_BINDING;
use kas_endpoints::responsewriters::table::{AGE_COLUMN, NAME_COLUMN};
use kas_registry::{ResourceDescriptor, Scope, Verb};

use super::{role_column, wide_column};

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    kind: "ClusterRoleBinding",
    list_kind: "ClusterRoleBindingList",
    plural: "clusterrolebindings",
    singular: "clusterrolebinding",
    short_names: &[],
    categories: &[],
    scope: Scope::Cluster,
    verbs: Verb::ALL,
    subresources: &[],
    table_columns: &[
        NAME_COLUMN,
        role_column(CLUSTER_ROLE_BINDING.doc("roleRef")),
        AGE_COLUMN,
        wide_column("Users", "Users in the clusterRoleBinding"),
        wide_column("Groups", "Groups in the clusterRoleBinding"),
        wide_column(
            "ServiceAccounts",
            "ServiceAccounts in the clusterRoleBinding",
        ),
    ],
    table_name_and_age: false,
    storage_resource: "clusterrolebindings",
    schema: Some(&kas_api::rbac::v1::CLUSTER_ROLE_BINDING),
    list_schema: Some(&kas_api::rbac::v1::CLUSTER_ROLE_BINDING_LIST),
};

/// Upstream's only role kind a ClusterRoleBinding may reference.
const ROLE_KINDS: &[&str] = &["ClusterRole"];

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, STRATEGY)
}

/// The binding strategy with this kind's scope and role kinds.
pub const STRATEGY: super::BindingStrategy = super::BindingStrategy {
    namespaced: false,
    role_kinds: ROLE_KINDS,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::messages;
    use kas_registry::Strategy as _;
    use serde_json::{Value, json};

    fn binding(role_ref: Value, subjects: Value) -> Value {
        let mut obj = json!({"metadata": {"name": "crb", "creationTimestamp": null},
            "roleRef": role_ref, "subjects": subjects});
        STRATEGY.default(&mut obj);
        obj
    }

    #[test]
    fn only_cluster_roles_and_namespaced_service_accounts() {
        let obj = binding(
            json!({"kind": "Role", "name": "reader"}),
            json!([{"kind": "ServiceAccount", "name": "default"}]),
        );
        assert_eq!(
            messages(&STRATEGY.validate(&obj)),
            [
                "roleRef.kind: Unsupported value: \"Role\": supported values: \"ClusterRole\"",
                "subjects[0].namespace: Required value",
            ]
        );
        let ok = binding(
            json!({"kind": "ClusterRole", "name": "view"}),
            json!([{"kind": "ServiceAccount", "name": "default", "namespace": "kube-system"},
                {"kind": "Group", "name": "system:authenticated"}]),
        );
        assert!(STRATEGY.validate(&ok).is_empty());
        assert_eq!(
            STRATEGY.table_cells(&ok),
            [
                json!("crb"),
                json!("ClusterRole/view"),
                json!("<unknown>"),
                json!(""),
                json!("system:authenticated"),
                json!("kube-system/default"),
            ]
        );
        assert_eq!(
            DESCRIPTOR.table_columns[5].description,
            "ServiceAccounts in the clusterRoleBinding"
        );
    }

    #[test]
    fn role_ref_is_immutable_and_errors_come_twice() {
        let old = binding(json!({"kind": "ClusterRole", "name": "view"}), json!([]));
        let new = binding(
            json!({"kind": "ClusterRole", "name": "edit"}),
            json!([{"kind": "Nobody", "name": "x"}]),
        );
        assert_eq!(
            messages(&STRATEGY.validate_update(&new, &old)),
            [
                "subjects[0].kind: Unsupported value: \"Nobody\": supported values: \"ServiceAccount\", \"User\", \"Group\"",
                "subjects[0].kind: Unsupported value: \"Nobody\": supported values: \"ServiceAccount\", \"User\", \"Group\"",
                "roleRef: Invalid value: rbac.RoleRef{APIGroup:\"rbac.authorization.k8s.io\", Kind:\"ClusterRole\", Name:\"edit\"}: cannot change roleRef",
            ]
        );
    }
}
