//! rbac.authorization.k8s.io/v1 RoleBinding, after upstream's
//! `pkg/registry/rbac/rolebinding`, `SetDefaults_RoleBinding`, `SetDefaults_Subject`,
//! `ValidateRoleBinding`, `ValidateRoleBindingUpdate` and `printRoleBinding`.

use kas_api::rbac::v1::ROLE_BINDING;
use kas_endpoints::responsewriters::table::{AGE_COLUMN, NAME_COLUMN};
use kas_registry::{ResourceDescriptor, Scope, Verb};

use super::{role_column, wide_column};

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    kind: "RoleBinding",
    list_kind: "RoleBindingList",
    plural: "rolebindings",
    singular: "rolebinding",
    short_names: &[],
    categories: &[],
    scope: Scope::Namespaced,
    verbs: Verb::ALL,
    subresources: &[],
    table_columns: &[
        NAME_COLUMN,
        role_column(ROLE_BINDING.doc("roleRef")),
        AGE_COLUMN,
        wide_column("Users", "Users in the roleBinding"),
        wide_column("Groups", "Groups in the roleBinding"),
        wide_column("ServiceAccounts", "ServiceAccounts in the roleBinding"),
    ],
    table_name_and_age: false,
    storage_resource: "rolebindings",
    schema: Some(&kas_api::rbac::v1::ROLE_BINDING),
    list_schema: Some(&kas_api::rbac::v1::ROLE_BINDING_LIST),
};

/// Upstream's role kinds a RoleBinding may reference.
const ROLE_KINDS: &[&str] = &["Role", "ClusterRole"];

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, STRATEGY)
}

/// The binding strategy with this kind's scope and role kinds.
pub const STRATEGY: super::BindingStrategy = super::BindingStrategy {
    namespaced: true,
    role_kinds: ROLE_KINDS,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::messages;
    use kas_registry::Strategy as _;
    use serde_json::{Value, json};

    fn binding(role_ref: Value, subjects: Value) -> Value {
        let mut obj = json!({"metadata": {"name": "rb", "namespace": "ns"},
            "roleRef": role_ref, "subjects": subjects});
        STRATEGY.default(&mut obj);
        obj
    }

    #[test]
    fn groups_are_defaulted() {
        let obj = binding(
            json!({"kind": "Role", "name": "reader"}),
            json!([{"kind": "User", "name": "alice"}, {"kind": "Group", "name": "devs"},
                {"kind": "ServiceAccount", "name": "default", "namespace": "ns"},
                {"kind": "User", "name": "bob", "apiGroup": "example.com"}]),
        );
        assert_eq!(obj["roleRef"]["apiGroup"], "rbac.authorization.k8s.io");
        assert_eq!(obj["subjects"][0]["apiGroup"], "rbac.authorization.k8s.io");
        assert_eq!(obj["subjects"][1]["apiGroup"], "rbac.authorization.k8s.io");
        assert_eq!(obj["subjects"][2].get("apiGroup"), None);
        assert_eq!(
            messages(&STRATEGY.validate(&obj)),
            [
                "subjects[3].apiGroup: Unsupported value: \"example.com\": supported values: \"rbac.authorization.k8s.io\""
            ]
        );
        let mut missing = json!({"metadata": {"name": "rb", "namespace": "ns"}});
        STRATEGY.default(&mut missing);
        assert_eq!(
            missing["roleRef"],
            json!({"apiGroup": "rbac.authorization.k8s.io"})
        );
        assert_eq!(
            messages(&STRATEGY.validate(&missing)),
            [
                "roleRef.kind: Unsupported value: \"\": supported values: \"Role\", \"ClusterRole\"",
                "roleRef.name: Required value",
            ]
        );
    }

    #[test]
    fn role_refs_and_subjects_are_checked() {
        let obj = binding(
            json!({"apiGroup": "example.com", "kind": "Pod", "name": "a/b"}),
            json!([{"kind": "Robot", "name": "r2"}, {"kind": "ServiceAccount", "name": "Bad_Name",
                "apiGroup": "v1"}, {"kind": "User"}]),
        );
        assert_eq!(
            messages(&STRATEGY.validate(&obj)),
            [
                "roleRef.apiGroup: Unsupported value: \"example.com\": supported values: \"rbac.authorization.k8s.io\"",
                "roleRef.kind: Unsupported value: \"Pod\": supported values: \"Role\", \"ClusterRole\"",
                "roleRef.name: Invalid value: \"a/b\": may not contain '/'",
                "subjects[0].kind: Unsupported value: \"Robot\": supported values: \"ServiceAccount\", \"User\", \"Group\"",
                "subjects[1].name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                "subjects[1].apiGroup: Unsupported value: \"v1\": supported values: \"\"",
                "subjects[2].name: Required value",
            ]
        );
        // A namespaced binding's service accounts need no namespace.
        let sa = binding(
            json!({"kind": "ClusterRole", "name": "view"}),
            json!([{"kind": "ServiceAccount", "name": "default"}]),
        );
        assert!(STRATEGY.validate(&sa).is_empty());
    }

    #[test]
    fn role_ref_is_immutable() {
        let old = binding(json!({"kind": "Role", "name": "reader"}), json!([]));
        let new = binding(json!({"kind": "Role", "name": "writer"}), json!([]));
        assert_eq!(
            messages(&STRATEGY.validate_update(&new, &old)),
            [
                "roleRef: Invalid value: rbac.RoleRef{APIGroup:\"rbac.authorization.k8s.io\", Kind:\"Role\", Name:\"writer\"}: cannot change roleRef"
            ]
        );
        assert!(STRATEGY.validate_update(&old, &old).is_empty());
        assert!(STRATEGY.allow_create_on_update());
    }

    #[test]
    fn printed_as_upstream() {
        let obj = binding(
            json!({"kind": "ClusterRole", "name": "view"}),
            json!([{"kind": "User", "name": "alice"}, {"kind": "User", "name": "bob"},
                {"kind": "Group", "name": "devs"},
                {"kind": "ServiceAccount", "name": "default", "namespace": "ns"},
                {"kind": "Other", "name": "x"}]),
        );
        assert_eq!(
            STRATEGY.table_cells(&obj),
            [
                json!("rb"),
                json!("ClusterRole/view"),
                json!("<unknown>"),
                json!("alice, bob"),
                json!("devs"),
                json!("ns/default"),
            ]
        );
        let cols: Vec<_> = DESCRIPTOR
            .table_columns
            .iter()
            .map(|c| (c.name, c.priority))
            .collect();
        assert_eq!(
            cols,
            [
                ("Name", 0),
                ("Role", 0),
                ("Age", 0),
                ("Users", 1),
                ("Groups", 1),
                ("ServiceAccounts", 1)
            ]
        );
        assert_eq!(
            DESCRIPTOR.table_columns[1].description,
            ROLE_BINDING.doc("roleRef")
        );
    }
}
