//! rbac.authorization.k8s.io/v1 Role, after upstream's `pkg/registry/rbac/role`,
//! `ValidateRole` and `ValidateRoleUpdate`; printed by the default table convertor.

use kas_registry::strategy::FieldErrors;
use kas_registry::validation::validate_object_meta_update;
use kas_registry::{ResourceDescriptor, Scope, Verb};
use serde_json::Value;

use super::validation::validate_meta_and_rules;
use super::{DEFAULT_TABLE_COLUMNS, default_table_cells};

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    kind: "Role",
    list_kind: "RoleList",
    plural: "roles",
    singular: "role",
    short_names: &[],
    categories: &[],
    scope: Scope::Namespaced,
    verbs: Verb::ALL,
    subresources: &[],
    table_columns: DEFAULT_TABLE_COLUMNS,
    table_name_and_age: false,
    storage_resource: "roles",
    schema: Some(&kas_api::rbac::v1::ROLE),
    list_schema: Some(&kas_api::rbac::v1::ROLE_LIST),
};

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

impl kas_registry::Strategy for Strategy {
    /// `ValidateRole`: the metadata (namespaced) and each rule.
    fn validate(&self, obj: &Value) -> FieldErrors {
        validate_meta_and_rules(obj, true)
    }

    /// The strategy's `ValidateUpdate`: `ValidateRole`, then `ValidateRoleUpdate`, which
    /// validates the role again (so its causes come twice) and the metadata update.
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_meta_and_rules(new, true);
        errs.extend(validate_meta_and_rules(new, true));
        errs.extend(validate_object_meta_update(new, old));
        errs
    }

    fn allow_create_on_update(&self) -> bool {
        true
    }

    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        default_table_cells(obj)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::messages;
    use kas_registry::Strategy as _;
    use serde_json::json;

    fn role(rules: Value) -> Value {
        json!({"metadata": {"name": "reader", "namespace": "default",
            "creationTimestamp": "2024-01-02T03:04:05Z"}, "rules": rules})
    }

    #[test]
    fn resource_rules_need_verbs_groups_and_resources() {
        let ok = role(json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]));
        assert!(Strategy.validate(&ok).is_empty());
        assert_eq!(
            messages(&Strategy.validate(&role(json!([{}])))),
            [
                "rules[0].verbs: Required value: verbs must contain at least one value",
                "rules[0].apiGroups: Required value: resource rules must supply at least one api group",
                "rules[0].resources: Required value: resource rules must supply at least one resource",
            ]
        );
    }

    #[test]
    fn namespaced_rules_cannot_name_urls() {
        let obj = role(json!([{"verbs": ["get"], "nonResourceURLs": ["/healthz"],
            "resources": ["pods"]}]));
        assert_eq!(
            messages(&Strategy.validate(&obj)),
            [
                "rules[0].nonResourceURLs: Invalid value: []string{\"/healthz\"}: namespaced rules cannot apply to non-resource URLs",
                "rules[0].nonResourceURLs: Invalid value: []string{\"/healthz\"}: rules cannot apply to both regular resources and non-resource URLs",
            ]
        );
    }

    #[test]
    fn names_are_path_segments_and_namespaced() {
        let mut obj = role(json!([]));
        obj["metadata"] = json!({"name": "a/b"});
        assert_eq!(
            messages(&Strategy.validate(&obj)),
            [
                "metadata.name: Invalid value: \"a/b\": may not contain '/'",
                "metadata.namespace: Required value",
            ]
        );
        obj["metadata"] = json!({"name": "Upper:Case", "namespace": "default"});
        assert!(Strategy.validate(&obj).is_empty());
    }

    #[test]
    fn updates_validate_twice_and_print_the_default_table() {
        let old = role(json!([]));
        let new = role(json!([{"verbs": []}]));
        assert_eq!(
            messages(&Strategy.validate_update(&new, &old)).len(),
            6,
            "ValidateRole runs twice"
        );
        assert!(Strategy.allow_create_on_update());
        assert_eq!(
            Strategy.table_cells(&old),
            [json!("reader"), json!("2024-01-02T03:04:05Z")]
        );
        let names: Vec<_> = DESCRIPTOR.table_columns.iter().map(|c| c.name).collect();
        assert_eq!(names, ["Name", "Created At"]);
    }
}
