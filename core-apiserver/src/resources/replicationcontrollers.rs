//! core/v1 ReplicationController, after upstream's `pkg/registry/core/replicationcontroller`
//! (strategy, status strategy, `ControllerToSelectableFields`, the scale subresource's
//! `scaleFromRC`), `SetDefaults_ReplicationController`, `ValidateReplicationController`,
//! `ValidateReplicationControllerStatus` and `printReplicationController`.

use std::collections::BTreeMap;

use kas_api::core::v1::{REPLICATION_CONTROLLER_SPEC, REPLICATION_CONTROLLER_STATUS};
use kas_apimachinery::golang::strconv::quote;
use kas_apimachinery::labels::{format_labels, selector_from_set};
use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::meta::{name_is_dns_subdomain, validate_nonnegative_field};
use kas_endpoints::responsewriters::table::{AGE_COLUMN, NAME_COLUMN, age};
use kas_registry::descriptor::{ScaleSelector, ScaleSpec};
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, Subresource, TableColumn, Verb};
use serde_json::{Map, Value, json};

use crate::podspec::validation::validate_pod_template_spec;
use crate::podspec::{container_cells, defaults};
use kas_registry::strategy::causes;

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "",
    version: "v1",
    kind: "ReplicationController",
    list_kind: "ReplicationControllerList",
    plural: "replicationcontrollers",
    singular: "replicationcontroller",
    short_names: &["rc"],
    categories: &["all"],
    scope: Scope::Namespaced,
    verbs: Verb::ALL,
    subresources: &[
        Subresource::STATUS,
        Subresource::scale(ScaleSpec {
            spec_replicas: ".spec.replicas",
            status_replicas: ".status.replicas",
            label_selector: Some(ScaleSelector::Set(".spec.selector")),
        }),
    ],
    table_columns: &[
        NAME_COLUMN,
        TableColumn {
            name: "Desired",
            type_: "integer",
            format: "",
            description: REPLICATION_CONTROLLER_SPEC.doc("replicas"),
            priority: 0,
        },
        TableColumn {
            name: "Current",
            type_: "integer",
            format: "",
            description: REPLICATION_CONTROLLER_STATUS.doc("replicas"),
            priority: 0,
        },
        TableColumn {
            name: "Ready",
            type_: "integer",
            format: "",
            description: REPLICATION_CONTROLLER_STATUS.doc("readyReplicas"),
            priority: 0,
        },
        AGE_COLUMN,
        crate::podspec::CONTAINERS_COLUMN,
        crate::podspec::IMAGES_COLUMN,
        TableColumn {
            name: "Selector",
            type_: "string",
            format: "",
            description: REPLICATION_CONTROLLER_SPEC.doc("selector"),
            priority: 1,
        },
    ],
    table_name_and_age: false,
    storage_resource: "controllers",
    schema: Some(&kas_api::core::v1::REPLICATION_CONTROLLER),
    list_schema: Some(&kas_api::core::v1::REPLICATION_CONTROLLER_LIST),
};

/// How the role installs this resource.
pub fn install(_: &super::ResourceOptions) -> super::Install {
    super::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

fn string_map(v: Option<&Value>) -> BTreeMap<String, String> {
    v.and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_owned()))
        .collect()
}

/// A `map[string]string` as Go's `%#v` prints it.
fn go_string_map(m: &BTreeMap<String, String>) -> BadValue {
    let pairs: Vec<String> = m
        .iter()
        .map(|(k, v)| format!("{}:{}", quote(k), quote(v)))
        .collect();
    BadValue::Raw(format!("map[string]string{{{}}}", pairs.join(", ")))
}

fn int(v: &Value, pointer: &str) -> i64 {
    v.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

/// Upstream `ValidateReplicationControllerSpec`.
fn validate_spec(obj: &Value) -> Vec<field::Error> {
    let path = Path::new("spec");
    let null = Value::Null;
    let spec = obj.get("spec").unwrap_or(&null);
    let mut errs = validate_nonnegative_field(
        int(spec, "/minReadySeconds"),
        &path.child("minReadySeconds"),
    );
    let selector = string_map(spec.get("selector"));
    if selector.is_empty() {
        errs.push(field::required(&path.child("selector"), ""));
    }
    errs.extend(validate_nonnegative_field(
        int(spec, "/replicas"),
        &path.child("replicas"),
    ));
    let template_path = path.child("template");
    match spec.get("template").filter(|t| !t.is_null()) {
        None => errs.push(field::required(&template_path, "")),
        Some(template) => {
            let labels = string_map(template.pointer("/metadata/labels"));
            if !selector.is_empty() && !selector.iter().all(|(k, v)| labels.get(k) == Some(v)) {
                errs.push(field::invalid(
                    &template_path.child("metadata").child("labels"),
                    go_string_map(&labels),
                    "`selector` does not match template `labels`",
                ));
            }
            errs.extend(validate_pod_template_spec(template, &template_path));
            errs.extend(crate::podspec::validate_controller_template(
                template,
                &template_path,
                "ReplicationController",
            ));
        }
    }
    errs
}

impl kas_registry::Strategy for Strategy {
    /// Upstream's `rcStrategy.DefaultGarbageCollectionPolicy`: v1's pods are orphaned
    /// unless the delete asks otherwise (for back compatibility).
    fn default_garbage_collection_policy(
        &self,
    ) -> Option<kas_registry::strategy::GarbageCollectionPolicy> {
        Some(kas_registry::strategy::GarbageCollectionPolicy::OrphanDependents)
    }

    fn reset_fields(&self, subresource: &str) -> &'static [&'static str] {
        match subresource {
            "status" => &["spec"],
            _ => &["status"],
        }
    }

    /// `SetDefaults_ReplicationController` (selector and labels from the template's
    /// labels), one replica, and the template's defaults.
    fn default(&self, obj: &mut Value) {
        let template_labels = obj
            .pointer("/spec/template/metadata/labels")
            .filter(|l| l.is_object())
            .cloned();
        if let Some(labels) = template_labels {
            let empty = |v: Option<&Value>| v.and_then(Value::as_object).is_none_or(Map::is_empty);
            if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut)
                && empty(spec.get("selector"))
            {
                spec.insert("selector".into(), labels.clone());
            }
            let meta = kas_registry::meta::metadata_mut(obj);
            if empty(meta.get("labels")) {
                meta.insert("labels".into(), labels);
            }
        }
        if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
            if spec.get("replicas").is_none_or(Value::is_null) {
                spec.insert("replicas".into(), json!(1));
            }
            if let Some(template) = spec.get_mut("template").filter(|t| !t.is_null()) {
                defaults::default_pod_template_spec(template);
            }
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(map) = obj.as_object_mut() {
            map.insert("status".into(), json!({"replicas": 0}));
        }
        kas_registry::meta::first_generation(obj);
    }

    /// The status stays; a changed spec is a new generation.
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        kas_registry::meta::keep_status(new, old);
        let changed = new.get("spec") != old.get("spec");
        kas_registry::meta::next_generation(new, old, changed);
    }

    fn validate(&self, obj: &Value) -> FieldErrors {
        let mut errs = validate_object_meta(obj, true, name_is_dns_subdomain);
        errs.extend(causes(validate_spec(obj)));
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(causes(validate_spec(new)));
        errs
    }

    fn validate_status_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(causes(crate::podspec::validate_replica_status(new)));
        errs
    }

    /// Upstream `ControllerToSelectableFields`.
    fn field_set(&self, obj: &Value) -> BTreeMap<String, String> {
        let mut set = kas_registry::meta::default_field_set(obj);
        set.insert(
            "status.replicas".into(),
            int(obj, "/status/replicas").to_string(),
        );
        set
    }

    fn field_label_conversion(&self) -> bool {
        true
    }

    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        let (names, images) = container_cells(obj.pointer("/spec/template/spec"));
        let selector = string_map(obj.pointer("/spec/selector"));
        vec![
            json!(kas_registry::meta::name(obj)),
            json!(int(obj, "/spec/replicas")),
            json!(int(obj, "/status/replicas")),
            json!(int(obj, "/status/readyReplicas")),
            json!(age(kas_registry::meta::str_field(obj, "creationTimestamp"))),
            json!(names),
            json!(images),
            json!(format_labels(&selector)),
        ]
    }
}

/// The selector a Scale of a controller shows.
pub fn scale_selector(obj: &Value) -> String {
    selector_from_set(&string_map(obj.pointer("/spec/selector"))).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::messages;
    use kas_registry::Strategy as _;

    fn rc() -> Value {
        let mut rc = json!({"metadata": {"name": "web", "namespace": "ns"},
            "spec": {"template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}});
        Strategy.default(&mut rc);
        rc
    }

    #[test]
    fn selector_labels_and_replicas_default_from_the_template() {
        let rc = rc();
        assert_eq!(rc["spec"]["selector"], json!({"app": "web"}));
        assert_eq!(rc["metadata"]["labels"], json!({"app": "web"}));
        assert_eq!(rc["spec"]["replicas"], 1);
        assert_eq!(rc["spec"]["template"]["spec"]["restartPolicy"], "Always");
        assert!(
            Strategy.validate(&rc).is_empty(),
            "{:?}",
            messages(&Strategy.validate(&rc))
        );
        assert_eq!(scale_selector(&rc), "app=web");
    }

    #[test]
    fn the_template_must_match_the_selector_and_always_restart() {
        let mut bad = rc();
        bad["spec"]["selector"] = json!({"app": "db"});
        bad["spec"]["template"]["spec"]["restartPolicy"] = json!("Never");
        bad["spec"]["template"]["spec"]["activeDeadlineSeconds"] = json!(5);
        bad["spec"]["replicas"] = json!(-1);
        assert_eq!(
            messages(&Strategy.validate(&bad)),
            [
                "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
                "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`",
                "spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\"",
                "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicationController is not Supported",
            ]
        );
    }

    #[test]
    fn status_counts_are_bounded_by_replicas() {
        let old = rc();
        let mut new = old.clone();
        new["status"] = json!({"replicas": 1, "readyReplicas": 2, "availableReplicas": 2});
        assert_eq!(
            messages(&Strategy.validate_status_update(&new, &old)),
            [
                "status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas",
                "status.availableReplicas: Invalid value: 2: cannot be greater than status.replicas",
            ]
        );
    }

    #[test]
    fn spec_changes_are_generations() {
        let mut old = rc();
        Strategy.prepare_for_create(&mut old);
        let mut new = old.clone();
        new["spec"]["replicas"] = json!(3);
        Strategy.prepare_for_update(&mut new, &old);
        assert_eq!(new["metadata"]["generation"], 2);
        assert_eq!(new["status"], json!({"replicas": 0}));
    }
}
