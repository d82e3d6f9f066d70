//! core/v1 PodTemplate, after upstream's `pkg/registry/core/podtemplate`,
//! `ValidatePodTemplate`, `ValidatePodTemplateUpdate` and `printPodTemplate`.

use kas_apimachinery::labels::format_labels;
use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::meta::name_is_dns_subdomain;
use kas_endpoints::responsewriters::table::NAME_COLUMN;
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, TableColumn, Verb};
use serde_json::{Value, json};

use crate::podspec::validation::validate_pod_template_spec;
use crate::podspec::{container_cells, defaults};

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "",
    version: "v1",
    kind: "PodTemplate",
    list_kind: "PodTemplateList",
    plural: "podtemplates",
    singular: "podtemplate",
    short_names: &[],
    categories: &[],
    scope: Scope::Namespaced,
    verbs: Verb::ALL,
    subresources: &[],
    table_columns: &[
        NAME_COLUMN,
        TableColumn {
            name: "Containers",
            type_: "string",
            format: "",
            description: "Names of each container in the template.",
            priority: 0,
        },
        TableColumn {
            name: "Images",
            type_: "string",
            format: "",
            description: "Images referenced by each container in the template.",
            priority: 0,
        },
        TableColumn {
            name: "Pod Labels",
            type_: "string",
            format: "",
            description: "The labels for the pod template.",
            priority: 0,
        },
    ],
    table_name_and_age: false,
    storage_resource: "podtemplates",
    schema: Some(&kas_api::core::v1::POD_TEMPLATE),
    list_schema: Some(&kas_api::core::v1::POD_TEMPLATE_LIST),
};

/// How the role installs this resource.
pub fn install(_: &super::ResourceOptions) -> super::Install {
    super::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

fn validate_template(obj: &Value) -> FieldErrors {
    let template = obj.get("template").unwrap_or(&Value::Null);
    validate_pod_template_spec(template, &Path::new("template"))
        .iter()
        .map(field::Error::to_cause)
        .collect()
}

impl kas_registry::Strategy for Strategy {
    /// Upstream's store sets `ReturnDeletedObject`.
    fn return_deleted_object(&self) -> bool {
        true
    }

    fn default(&self, obj: &mut Value) {
        if let Some(template) = obj.get_mut("template") {
            defaults::default_pod_template_spec(template);
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        kas_registry::meta::first_generation(obj);
    }

    /// Any change of the template is a new generation.
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        let changed = new.get("template") != old.get("template");
        kas_registry::meta::next_generation(new, old, changed);
    }

    /// Upstream `ValidatePodTemplate`.
    fn validate(&self, obj: &Value) -> FieldErrors {
        let mut errs = validate_object_meta(obj, true, name_is_dns_subdomain);
        errs.extend(validate_template(obj));
        errs
    }

    /// Upstream `ValidatePodTemplateUpdate`.
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(validate_template(new));
        errs
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        let template = obj.get("template");
        let (names, images) = container_cells(template.and_then(|t| t.get("spec")));
        let labels = template.map(kas_registry::meta::labels).unwrap_or_default();
        vec![
            json!(kas_registry::meta::name(obj)),
            json!(names),
            json!(images),
            json!(format_labels(&labels)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kas_registry::Strategy as _;

    fn template() -> Value {
        json!({"metadata": {"name": "t", "namespace": "ns"},
            "template": {"metadata": {"labels": {"app": "web", "tier": "a"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}, {"name": "d", "image": "busybox:1"}]}}})
    }

    #[test]
    fn a_template_is_defaulted_and_counts_generations() {
        let mut t = template();
        Strategy.default(&mut t);
        assert_eq!(
            t.pointer("/template/spec/restartPolicy"),
            Some(&json!("Always"))
        );
        Strategy.prepare_for_create(&mut t);
        assert_eq!(t.pointer("/metadata/generation"), Some(&json!(1)));
        let old = t.clone();
        let mut same = t.clone();
        Strategy.prepare_for_update(&mut same, &old);
        assert_eq!(same.pointer("/metadata/generation"), Some(&json!(1)));
        let mut changed = t.clone();
        changed["template"]["spec"]["containers"][0]["image"] = json!("nginx:2");
        Strategy.prepare_for_update(&mut changed, &old);
        assert_eq!(changed.pointer("/metadata/generation"), Some(&json!(2)));
    }

    #[test]
    fn the_printer_lists_containers_images_and_labels() {
        let cells = Strategy.table_cells(&template());
        assert_eq!(
            cells,
            vec![
                json!("t"),
                json!("c,d"),
                json!("nginx,busybox:1"),
                json!("app=web,tier=a")
            ]
        );
    }
}
