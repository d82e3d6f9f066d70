//! rbac.authorization.k8s.io/v1 ClusterRole, after upstream's
//! `pkg/registry/rbac/clusterrole`, `ValidateClusterRole` and `ValidateClusterRoleUpdate`;
//! printed by the default table convertor.

use kas_registry::strategy::FieldErrors;
use kas_registry::validation::validate_object_meta_update;
use kas_registry::{ResourceDescriptor, Scope, Verb};
use serde_json::Value;

use super::validation::{
    has_invalid_label_value_in_aggregation_rule, validate_aggregation_rule, validate_meta_and_rules,
};
use super::{DEFAULT_TABLE_COLUMNS, default_table_cells};

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    kind: "ClusterRole",
    list_kind: "ClusterRoleList",
    plural: "clusterroles",
    singular: "clusterrole",
    short_names: &[],
    categories: &[],
    scope: Scope::Cluster,
    verbs: Verb::ALL,
    subresources: &[],
    table_columns: DEFAULT_TABLE_COLUMNS,
    table_name_and_age: false,
    storage_resource: "clusterroles",
    schema: Some(&kas_api::rbac::v1::CLUSTER_ROLE),
    list_schema: Some(&kas_api::rbac::v1::CLUSTER_ROLE_LIST),
};

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

/// Upstream `ValidateClusterRole`: the metadata, each rule, then the aggregation rule.
fn validate_cluster_role(obj: &Value, allow_invalid_label_value: bool) -> FieldErrors {
    let mut errs = validate_meta_and_rules(obj, false);
    errs.extend(validate_aggregation_rule(obj, allow_invalid_label_value));
    errs
}

impl kas_registry::Strategy for Strategy {
    fn validate(&self, obj: &Value) -> FieldErrors {
        validate_cluster_role(obj, false)
    }

    /// The strategy's `ValidateUpdate`: invalid label values in the aggregation selectors
    /// stay allowed when the stored role has them; `ValidateClusterRole`, then
    /// `ValidateClusterRoleUpdate`, which validates the role again (so its causes come
    /// twice) and the metadata update.
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let allow = has_invalid_label_value_in_aggregation_rule(old);
        let mut errs = validate_cluster_role(new, allow);
        errs.extend(validate_cluster_role(new, allow));
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

    fn cluster_role(extra: Value) -> Value {
        let mut obj = json!({"metadata": {"name": "admin"}});
        if let (Some(o), Some(e)) = (obj.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        obj
    }

    #[test]
    fn url_rules_are_allowed_but_not_mixed() {
        let ok =
            cluster_role(json!({"rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]}));
        assert!(Strategy.validate(&ok).is_empty());
        let mixed = cluster_role(json!({"rules": [
            {"verbs": ["get"], "nonResourceURLs": ["/a", "/b"], "apiGroups": [""]}]}));
        assert_eq!(
            messages(&Strategy.validate(&mixed)),
            [
                "rules[0].nonResourceURLs: Invalid value: []string{\"/a\", \"/b\"}: rules cannot apply to both regular resources and non-resource URLs"
            ]
        );
        let mut namespaced = ok.clone();
        namespaced["metadata"]["namespace"] = json!("default");
        assert_eq!(
            messages(&Strategy.validate(&namespaced)),
            ["metadata.namespace: Forbidden: not allowed on this type"]
        );
    }

    #[test]
    fn aggregation_rules_need_valid_selectors() {
        let empty = cluster_role(json!({"aggregationRule": {}}));
        assert_eq!(
            messages(&Strategy.validate(&empty)),
            [
                "aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil"
            ]
        );
        let ok = cluster_role(json!({"aggregationRule": {"clusterRoleSelectors": [
            {"matchLabels": {"rbac.example.com/aggregate-to-admin": "true"}}]}}));
        assert!(Strategy.validate(&ok).is_empty());
        let bad = cluster_role(json!({"aggregationRule": {"clusterRoleSelectors": [
            {"matchExpressions": [{"key": "k", "operator": "Is"}]}]}}));
        assert_eq!(
            messages(&Strategy.validate(&bad)),
            [
                "aggregationRule.clusterRoleSelectors[0].matchExpressions[0].operator: Invalid value: \"Is\": not a valid selector operator",
                "aggregationRule.clusterRoleSelectors[0]: Invalid value: \"null\": invalid label selector.",
            ]
        );
    }

    #[test]
    fn stored_invalid_label_values_stay_allowed() {
        let invalid = cluster_role(json!({"aggregationRule": {"clusterRoleSelectors": [
            {"matchExpressions": [{"key": "k", "operator": "In", "values": ["a b"]}]}]}}));
        assert!(!Strategy.validate(&invalid).is_empty());
        let ok = cluster_role(json!({}));
        assert!(!Strategy.validate_update(&invalid, &ok).is_empty());
        let errs = messages(&Strategy.validate_update(&invalid, &invalid));
        // Only the conversion, which checks values, still fails (twice: validated twice).
        assert_eq!(
            errs,
            [
                "aggregationRule.clusterRoleSelectors[0]: Invalid value: \"null\": invalid label selector.",
                "aggregationRule.clusterRoleSelectors[0]: Invalid value: \"null\": invalid label selector.",
            ]
        );
    }
}
