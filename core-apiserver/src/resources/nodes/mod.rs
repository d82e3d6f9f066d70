//! core/v1 Node, after upstream's `pkg/registry/core/node` (the node and node status
//! strategies, `NodeToSelectableFields`), `SetDefaults_NodeStatus`, `ValidateNode`,
//! `ValidateNodeUpdate` and `printNode`. The `proxy` subresource is not served.

mod printer;
mod validation;

use std::collections::BTreeMap;

use kas_apimachinery::validation::meta::name_is_dns_subdomain;
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, Subresource, Verb};
use serde_json::Value;

use crate::podspec::defaults::default_resource_list;
use kas_registry::strategy::causes;

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "",
    version: "v1",
    kind: "Node",
    list_kind: "NodeList",
    plural: "nodes",
    singular: "node",
    short_names: &["no"],
    categories: &[],
    scope: Scope::Cluster,
    verbs: Verb::ALL,
    subresources: &[Subresource::proxy("NodeProxyOptions"), Subresource::STATUS],
    table_columns: printer::COLUMNS,
    table_name_and_age: false,
    // Upstream keeps nodes under their old name.
    storage_resource: "minions",
    schema: Some(&kas_api::core::v1::NODE),
    list_schema: Some(&kas_api::core::v1::NODE_LIST),
};

/// How the role installs this resource.
pub fn install(_: &super::ResourceOptions) -> super::Install {
    super::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

fn present(obj: &Value, pointer: &str) -> bool {
    obj.pointer(pointer).is_some_and(|v| !v.is_null())
}

/// Removes `key` from the object at `pointer`, when there is one.
fn drop_field(obj: &mut Value, pointer: &str, key: &str) {
    if let Some(map) = obj.pointer_mut(pointer).and_then(Value::as_object_mut) {
        map.remove(key);
    }
}

/// Upstream's conversions of `NodeSpec` through the internal version, which has only
/// `podCIDRs`: a `podCIDR` that is set wins over a `podCIDRs` whose first entry differs
/// (it is then the only one, for older clients) and fills an empty `podCIDRs`; on the way
/// out `podCIDR` is the first of `podCIDRs`.
fn pod_cidrs_round_trip(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let single = spec
        .get("podCIDR")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let first = spec
        .get("podCIDRs")
        .and_then(Value::as_array)
        .and_then(|l| l.first())
        .map(|v| v.as_str().unwrap_or_default().to_owned());
    if !single.is_empty() && first.as_deref() != Some(single.as_str()) {
        spec.insert("podCIDRs".into(), Value::from(vec![single]));
    } else if single.is_empty()
        && let Some(first) = first
    {
        spec.insert("podCIDR".into(), Value::String(first));
    }
}

/// Upstream `ValidateNode`: the object meta (cluster-scoped, a DNS subdomain name), then
/// the node's own rules.
fn validate_node(obj: &Value) -> FieldErrors {
    let mut errs = validate_object_meta(obj, false, name_is_dns_subdomain);
    errs.extend(causes(validation::validate_node(obj)));
    errs
}

/// Upstream `ValidateNodeUpdate`.
fn validate_node_update(new: &Value, old: &Value) -> FieldErrors {
    let mut errs = validate_object_meta_update(new, old);
    errs.extend(causes(validation::validate_node_update(new, old)));
    errs
}

impl kas_registry::Strategy for Strategy {
    fn reset_fields(&self, subresource: &str) -> &'static [&'static str] {
        match subresource {
            "status" => &["spec"],
            _ => &["status"],
        }
    }

    /// `SetDefaults_NodeStatus` (allocatable is the capacity when unset) and
    /// `SetDefaults_ResourceList` on both; `spec.podCIDR` and `spec.podCIDRs` as the
    /// round trip through the internal version leaves them.
    fn default(&self, obj: &mut Value) {
        pod_cidrs_round_trip(obj);
        let Some(status) = obj.get_mut("status").and_then(Value::as_object_mut) else {
            return;
        };
        let capacity = status.get("capacity").filter(|c| !c.is_null()).cloned();
        if let Some(capacity) = capacity
            && status.get("allocatable").is_none_or(Value::is_null)
        {
            status.insert("allocatable".into(), capacity);
        }
        for key in ["capacity", "allocatable"] {
            if let Some(list) = status.get_mut(key) {
                default_resource_list(list);
            }
        }
    }

    /// Nodes keep their status on create; the retired dynamic kubelet configuration
    /// (`spec.configSource`, `status.config`) is dropped.
    fn prepare_for_create(&self, obj: &mut Value) {
        drop_field(obj, "/spec", "configSource");
        drop_field(obj, "/status", "config");
    }

    /// The status stays; `spec.configSource` only while the old node has one.
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        kas_registry::meta::keep_status(new, old);
        if !present(old, "/spec/configSource") {
            drop_field(new, "/spec", "configSource");
        }
    }

    fn validate(&self, obj: &Value) -> FieldErrors {
        validate_node(obj)
    }

    /// Upstream `dynamicKubeletConfigIsDeprecatedWarning`: a node keeps a configuration
    /// source only when its old one had one.
    fn warnings_on_update(&self, new: &Value, old: &Value) -> Vec<String> {
        if present(new, "/spec/configSource") && present(old, "/spec/configSource") {
            return vec!["spec.configSource: the feature is removed".to_owned()];
        }
        Vec::new()
    }

    /// `ValidateNode` and `ValidateNodeUpdate`, as upstream's node strategy runs both.
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_node(new);
        errs.extend(validate_node_update(new, old));
        errs
    }

    /// The status strategy runs `ValidateNodeUpdate` only.
    fn validate_status_update(&self, new: &Value, old: &Value) -> FieldErrors {
        validate_node_update(new, old)
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    /// Upstream `NodeToSelectableFields`: the name and `spec.unschedulable`.
    fn field_set(&self, obj: &Value) -> BTreeMap<String, String> {
        let unschedulable = obj
            .pointer("/spec/unschedulable")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        BTreeMap::from([
            (
                "metadata.name".to_owned(),
                kas_registry::meta::name(obj).to_owned(),
            ),
            ("spec.unschedulable".to_owned(), unschedulable.to_string()),
        ])
    }

    fn field_label_conversion(&self) -> bool {
        true
    }

    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        printer::cells(obj)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::messages;
    use kas_registry::Strategy as _;
    use serde_json::json;

    fn node() -> Value {
        json!({"metadata": {"name": "n1"}, "spec": {}})
    }

    #[test]
    fn allocatable_defaults_to_the_capacity_in_milli_units() {
        let mut n = node();
        n["status"] = json!({"capacity": {"cpu": "0.5001", "memory": "1Gi"}});
        Strategy.default(&mut n);
        assert_eq!(
            n["status"]["capacity"],
            json!({"cpu": "501m", "memory": "1Gi"})
        );
        assert_eq!(n["status"]["allocatable"], n["status"]["capacity"]);
        let mut n = node();
        n["status"] = json!({"capacity": {"cpu": "4"}, "allocatable": {"cpu": "3"}});
        Strategy.default(&mut n);
        assert_eq!(n["status"]["allocatable"], json!({"cpu": "3"}));
        let mut n = node();
        Strategy.default(&mut n);
        assert_eq!(n, node());
    }

    #[test]
    fn pod_cidr_and_pod_cidrs_mirror_each_other() {
        let mirrored = |spec: Value| {
            let mut n = json!({"metadata": {"name": "n1"}, "spec": spec});
            Strategy.default(&mut n);
            n["spec"].clone()
        };
        assert_eq!(
            mirrored(json!({"podCIDR": "10.0.0.0/24"})),
            json!({"podCIDR": "10.0.0.0/24", "podCIDRs": ["10.0.0.0/24"]})
        );
        assert_eq!(
            mirrored(json!({"podCIDRs": ["10.0.0.0/24", "fd00::/64"]})),
            json!({"podCIDR": "10.0.0.0/24", "podCIDRs": ["10.0.0.0/24", "fd00::/64"]})
        );
        // The singular field is authoritative when the two differ.
        assert_eq!(
            mirrored(json!({"podCIDR": "10.1.0.0/24", "podCIDRs": ["10.0.0.0/24", "fd00::/64"]})),
            json!({"podCIDR": "10.1.0.0/24", "podCIDRs": ["10.1.0.0/24"]})
        );
        assert_eq!(mirrored(json!({})), json!({}));
    }

    #[test]
    fn create_keeps_status_and_drops_dynamic_config() {
        let mut n = node();
        n["spec"]["configSource"] = json!({"configMap": {"name": "c"}});
        n["status"] = json!({"phase": "Running", "config": {"active": {}}});
        Strategy.prepare_for_create(&mut n);
        assert_eq!(n["spec"], json!({}));
        assert_eq!(n["status"], json!({"phase": "Running"}));
    }

    #[test]
    fn names_taints_and_resources_are_validated() {
        let mut n = node();
        n["metadata"]["name"] = json!("Bad_Name");
        n["spec"]["taints"] = json!([
            {"key": "a", "effect": "Sometimes"},
            {"key": "b", "value": "x y"},
            {"key": "a", "effect": "NoSchedule"},
            {"key": "a", "effect": "NoSchedule"}
        ]);
        n["status"] = json!({"capacity": {"cpu": "-1", "pods": "1500m"}});
        assert_eq!(
            messages(&Strategy.validate(&n)),
            [
                "metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                "metadata.taints[0].effect: Unsupported value: \"Sometimes\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"",
                "metadata.taints[1].value: Invalid value: \"x y\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
                "metadata.taints[1].effect: Required value",
                "metadata.taints[3]: Duplicate value: core.Taint{Key:\"a\", Value:\"\", Effect:\"NoSchedule\", TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair",
                "status.capacity.cpu: Invalid value: \"-1\": must be greater than or equal to 0",
                "status.capacity.pods: Invalid value: resource.Quantity{i:resource.int64Amount{value:1500, scale:-3}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:\"1500m\", Format:\"DecimalSI\"}: must be an integer",
            ]
        );
        let mut namespaced = node();
        namespaced["metadata"]["namespace"] = json!("default");
        assert_eq!(
            messages(&Strategy.validate(&namespaced)),
            ["metadata.namespace: Forbidden: not allowed on this type"]
        );
    }

    #[test]
    fn pod_cidrs_and_provider_id_are_set_once() {
        let mut old = node();
        Strategy.prepare_for_create(&mut old);
        let mut new = old.clone();
        new["spec"] =
            json!({"podCIDRs": ["10.0.0.0/24"], "podCIDR": "10.0.0.0/24", "providerID": "p1"});
        Strategy.prepare_for_update(&mut new, &old);
        assert_eq!(
            messages(&Strategy.validate_update(&new, &old)),
            Vec::<String>::new()
        );
        let old = new.clone();
        new["spec"] = json!({"podCIDRs": ["10.1.0.0/24"], "providerID": "p2", "externalID": "x"});
        assert_eq!(
            messages(&Strategy.validate_update(&new, &old)),
            [
                "spec.podCIDRs: Forbidden: node updates may not change podCIDR except from \"\" to valid",
                "spec.providerID: Forbidden: node updates may not change providerID except from \"\" to valid",
                "spec.externalID: Forbidden: may not be updated",
            ]
        );
        new["spec"] = json!({"podCIDRs": ["10.0.0.0/24", "fd00::/64"], "providerID": "p1"});
        assert_eq!(
            messages(&Strategy.validate_update(&new, &old)),
            [
                "spec.podCIDRs: Forbidden: node updates may not change podCIDR except from \"\" to valid"
            ]
        );
    }

    #[test]
    fn updates_keep_status_and_status_updates_check_addresses() {
        let mut old = node();
        old["status"] = json!({"phase": "Running"});
        let mut new = node();
        new["spec"] = json!({"unschedulable": true, "configSource": {}});
        new["status"] = json!({"phase": "Pending"});
        Strategy.prepare_for_update(&mut new, &old);
        assert_eq!(new["status"], json!({"phase": "Running"}));
        assert_eq!(new["spec"], json!({"unschedulable": true}));
        assert!(Strategy.warnings_on_update(&new, &old).is_empty());

        let mut status = old.clone();
        status["status"]["addresses"] = json!([
            {"type": "InternalIP", "address": "10.0.0.1"},
            {"type": "InternalIP", "address": "10.0.0.1"}
        ]);
        status["spec"]["taints"] = json!([{"key": "k", "effect": "Bad"}]);
        assert_eq!(
            messages(&Strategy.validate_status_update(&status, &old)),
            [
                "status.addresses[1]: Duplicate value: core.NodeAddress{Type:\"InternalIP\", Address:\"10.0.0.1\"}",
                "metadata.taints[0].effect: Unsupported value: \"Bad\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"",
            ]
        );
    }

    #[test]
    fn fields_select_on_name_and_unschedulable() {
        let mut n = node();
        assert_eq!(
            Strategy.field_set(&n),
            BTreeMap::from([
                ("metadata.name".to_owned(), "n1".to_owned()),
                ("spec.unschedulable".to_owned(), "false".to_owned()),
            ])
        );
        n["spec"]["unschedulable"] = json!(true);
        assert_eq!(Strategy.field_set(&n)["spec.unschedulable"], "true");
        assert!(Strategy.field_label_conversion());
        assert_eq!(Strategy.reset_fields("status"), ["spec"]);
        assert_eq!(Strategy.reset_fields(""), ["status"]);
    }
}
