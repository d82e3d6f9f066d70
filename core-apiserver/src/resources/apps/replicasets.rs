//! apps/v1 ReplicaSet, after upstream's `pkg/registry/apps/replicaset` (strategy, status
//! strategy, `GetResetFields`, `ToSelectableFields`, the scale subresource),
//! `SetDefaults_ReplicaSet`, `ValidateReplicaSet`, `ValidateReplicaSetUpdate`,
//! `ValidateReplicaSetStatusUpdate` and `printReplicaSet`.

use std::collections::BTreeMap;

use kas_api::apps::v1::{REPLICA_SET_SPEC, REPLICA_SET_STATUS};
use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::meta::{name_is_dns_subdomain, validate_nonnegative_field};
use kas_endpoints::responsewriters::table::{AGE_COLUMN, NAME_COLUMN, age};
use kas_registry::descriptor::{ScaleSelector, ScaleSpec};
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, Subresource, TableColumn, Verb};
use serde_json::{Value, json};

use super::common::{
    causes, default_template, format_label_selector, int, keep_status_and_bump_generation,
    name_warnings, reset_status_and_generation, validate_pod_template_spec_for_replica_set,
    validate_selector_immutable, validate_workload_selector,
};
use crate::podspec::container_cells;

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "apps",
    version: "v1",
    kind: "ReplicaSet",
    list_kind: "ReplicaSetList",
    plural: "replicasets",
    singular: "replicaset",
    short_names: &["rs"],
    categories: &["all"],
    scope: Scope::Namespaced,
    verbs: Verb::ALL,
    subresources: &[
        Subresource::STATUS,
        Subresource::scale(ScaleSpec {
            spec_replicas: ".spec.replicas",
            status_replicas: ".status.replicas",
            label_selector: Some(ScaleSelector::LabelSelector(".spec.selector")),
        }),
    ],
    table_columns: &[
        NAME_COLUMN,
        TableColumn {
            name: "Desired",
            type_: "integer",
            format: "",
            description: REPLICA_SET_SPEC.doc("replicas"),
            priority: 0,
        },
        TableColumn {
            name: "Current",
            type_: "integer",
            format: "",
            description: REPLICA_SET_STATUS.doc("replicas"),
            priority: 0,
        },
        TableColumn {
            name: "Ready",
            type_: "integer",
            format: "",
            description: REPLICA_SET_STATUS.doc("readyReplicas"),
            priority: 0,
        },
        AGE_COLUMN,
        crate::podspec::CONTAINERS_COLUMN,
        crate::podspec::IMAGES_COLUMN,
        TableColumn {
            name: "Selector",
            type_: "string",
            format: "",
            description: REPLICA_SET_SPEC.doc("selector"),
            priority: 1,
        },
    ],
    table_name_and_age: false,
    storage_resource: "replicasets",
    schema: Some(&kas_api::apps::v1::REPLICA_SET),
    list_schema: Some(&kas_api::apps::v1::REPLICA_SET_LIST),
};

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

/// Upstream `ValidateReplicaSetSpec`.
fn validate_spec(obj: &Value) -> Vec<field::Error> {
    let path = Path::new("spec");
    let null = Value::Null;
    let spec = obj.get("spec").unwrap_or(&null);
    let mut errs = validate_nonnegative_field(int(spec, "/replicas"), &path.child("replicas"));
    errs.extend(validate_nonnegative_field(
        int(spec, "/minReadySeconds"),
        &path.child("minReadySeconds"),
    ));
    if let Some(selector) = validate_workload_selector(spec, &path, &mut errs) {
        let empty = json!({});
        let template = spec.get("template").unwrap_or(&empty);
        errs.extend(validate_pod_template_spec_for_replica_set(
            template,
            &selector,
            &path.child("template"),
        ));
    }
    errs
}

impl kas_registry::Strategy for Strategy {
    fn reset_fields(&self, subresource: &str) -> &'static [&'static str] {
        match subresource {
            "status" => &["spec"],
            _ => &["status"],
        }
    }

    /// `SetDefaults_ReplicaSet` and the template's defaults.
    fn default(&self, obj: &mut Value) {
        // The spec is a value, not a pointer: a missing one is defaulted too.
        if let Some(map) = obj.as_object_mut()
            && map.get("spec").is_none_or(Value::is_null)
        {
            map.insert("spec".into(), json!({}));
        }
        if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut)
            && spec.get("replicas").is_none_or(Value::is_null)
        {
            spec.insert("replicas".into(), json!(1));
        }
        default_template(obj);
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        reset_status_and_generation(obj);
    }

    /// The status stays; a changed spec is a new generation.
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        let changed = new.get("spec") != old.get("spec");
        keep_status_and_bump_generation(new, old, changed);
    }

    /// `ValidateReplicaSet`.
    fn validate(&self, obj: &Value) -> FieldErrors {
        let mut errs = validate_object_meta(obj, true, name_is_dns_subdomain);
        errs.extend(causes(validate_spec(obj)));
        errs
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        name_warnings(obj)
    }

    /// Upstream's strategy runs `ValidateReplicaSet` and `ValidateReplicaSetUpdate` (so the
    /// spec's errors come twice, as upstream's causes do), then checks the selector is
    /// unchanged for apps/v1.
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = self.validate(new);
        errs.extend(validate_object_meta_update(new, old));
        let mut spec_errs = validate_spec(new);
        spec_errs.extend(validate_selector_immutable(new, old));
        errs.extend(causes(spec_errs));
        errs
    }

    /// `ValidateReplicaSetStatusUpdate`.
    fn validate_status_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(causes(crate::podspec::validate_replica_status(new)));
        errs
    }

    /// Upstream `ToSelectableFields`.
    fn field_set(&self, obj: &Value) -> BTreeMap<String, String> {
        let mut set = kas_registry::meta::default_field_set(obj);
        set.insert(
            "status.replicas".into(),
            int(obj, "/status/replicas").to_string(),
        );
        set
    }

    /// `printReplicaSet`.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        let (names, images) = container_cells(obj.pointer("/spec/template/spec"));
        vec![
            json!(kas_registry::meta::name(obj)),
            json!(int(obj, "/spec/replicas")),
            json!(int(obj, "/status/replicas")),
            json!(int(obj, "/status/readyReplicas")),
            json!(age(kas_registry::meta::str_field(obj, "creationTimestamp"))),
            json!(names),
            json!(images),
            json!(format_label_selector(obj.pointer("/spec/selector"))),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::messages;
    use kas_registry::Strategy as _;

    fn rs() -> Value {
        let mut rs = json!({"metadata": {"name": "web", "namespace": "ns"},
            "spec": {"selector": {"matchExpressions": [
                    {"key": "app", "operator": "In", "values": ["web", "api"]}]},
                "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}});
        Strategy.default(&mut rs);
        rs
    }

    #[test]
    fn replicas_and_template_default() {
        let rs = rs();
        assert_eq!(rs["spec"]["replicas"], 1);
        assert_eq!(rs["spec"]["template"]["spec"]["restartPolicy"], "Always");
        let errs = Strategy.validate(&rs);
        assert!(errs.is_empty(), "{:?}", messages(&errs));
    }

    #[test]
    fn spec_rules_and_messages() {
        let mut bad = rs();
        bad["spec"]["replicas"] = json!(-1);
        bad["spec"]["minReadySeconds"] = json!(-3);
        bad["spec"]["template"]["metadata"]["labels"] = json!({"app": "db"});
        bad["spec"]["template"]["spec"]["restartPolicy"] = json!("Never");
        assert_eq!(
            messages(&Strategy.validate(&bad)),
            [
                "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
                "spec.minReadySeconds: Invalid value: -3: must be greater than or equal to 0",
                "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"db\"}: `selector` does not match template `labels`",
                "spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\"",
            ]
        );
        let mut empty = rs();
        empty["spec"]["selector"] = json!({"matchLabels": {}});
        assert_eq!(
            messages(&Strategy.validate(&empty)),
            [
                "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment"
            ]
        );
    }

    #[test]
    fn updates_keep_the_selector_and_bump_generations() {
        let mut old = rs();
        Strategy.prepare_for_create(&mut old);
        assert_eq!(old["metadata"]["generation"], 1);
        let mut scaled = old.clone();
        scaled["spec"]["replicas"] = json!(4);
        Strategy.prepare_for_update(&mut scaled, &old);
        assert_eq!(scaled["metadata"]["generation"], 2);
        assert!(Strategy.validate_update(&scaled, &old).is_empty());

        let mut labelled = old.clone();
        labelled["metadata"]["labels"] = json!({"x": "y"});
        Strategy.prepare_for_update(&mut labelled, &old);
        assert_eq!(labelled["metadata"]["generation"], 1);

        let mut moved = old.clone();
        moved["spec"]["selector"] = json!({"matchLabels": {"app": "web"}});
        moved["spec"]["replicas"] = json!(-1);
        assert_eq!(
            messages(&Strategy.validate_update(&moved, &old)),
            [
                "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
                "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
                "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"web\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable",
            ]
        );
    }

    #[test]
    fn status_counts_are_bounded() {
        let old = rs();
        let mut new = old.clone();
        new["status"] = json!({"replicas": 1, "fullyLabeledReplicas": 2, "readyReplicas": -1});
        assert_eq!(
            messages(&Strategy.validate_status_update(&new, &old)),
            [
                "status.readyReplicas: Invalid value: -1: must be greater than or equal to 0",
                "status.fullyLabeledReplicas: Invalid value: 2: cannot be greater than status.replicas",
                "status.availableReplicas: Invalid value: 0: cannot be greater than readyReplicas",
            ]
        );
    }

    #[test]
    fn printer_cells_and_fields() {
        let mut rs = rs();
        rs["status"] = json!({"replicas": 2, "readyReplicas": 1});
        let cells = Strategy.table_cells(&rs);
        assert_eq!(cells[..4], [json!("web"), json!(1), json!(2), json!(1)]);
        assert_eq!(
            cells[5..],
            [json!("c"), json!("nginx"), json!("app in (api,web)")]
        );
        assert_eq!(cells.len(), DESCRIPTOR.table_columns.len());
        assert_eq!(Strategy.field_set(&rs)["status.replicas"], "2");
    }
}
