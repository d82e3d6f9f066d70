//! admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration, after upstream's
//! `pkg/registry/admissionregistration/validatingwebhookconfiguration` and
//! `printValidatingWebhook` (columns `Webhooks`, `Age`).

use kas_apimachinery::validation::meta::name_is_dns_subdomain;
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, TableColumn, Verb};
use serde_json::{Value, json};

use super::webhook::{default_webhooks, validate_webhooks};
use crate::resources::apps::common::causes;

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "admissionregistration.k8s.io",
    version: "v1",
    kind: "ValidatingWebhookConfiguration",
    list_kind: "ValidatingWebhookConfigurationList",
    plural: "validatingwebhookconfigurations",
    singular: "validatingwebhookconfiguration",
    short_names: &[],
    categories: &["api-extensions"],
    scope: Scope::Cluster,
    verbs: Verb::ALL,
    subresources: &[],
    table_columns: &[TableColumn {
        name: "Webhooks",
        type_: "integer",
        format: "",
        description: "Webhooks indicates the number of webhooks registered in this configuration",
        priority: 0,
    }],
    table_name_and_age: true,
    storage_resource: "validatingwebhookconfigurations",
    schema: Some(&kas_api::admissionregistration::v1::VALIDATING_WEBHOOK_CONFIGURATION),
    list_schema: Some(&kas_api::admissionregistration::v1::VALIDATING_WEBHOOK_CONFIGURATION_LIST),
};

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

/// Number of webhooks, the printers' `Webhooks` cell.
pub fn webhook_count(obj: &Value) -> Value {
    json!(
        obj.get("webhooks")
            .and_then(Value::as_array)
            .map_or(0, Vec::len)
    )
}

impl kas_registry::Strategy for Strategy {
    fn default(&self, obj: &mut Value) {
        default_webhooks(obj, false);
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        kas_registry::meta::first_generation(obj);
    }

    /// Generation bumps when `webhooks` changes.
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        let changed = new.get("webhooks") != old.get("webhooks");
        kas_registry::meta::next_generation(new, old, changed);
    }

    fn validate(&self, obj: &Value) -> FieldErrors {
        let mut errs = validate_object_meta(obj, false, name_is_dns_subdomain);
        errs.extend(causes(validate_webhooks(obj, false)));
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(causes(validate_webhooks(new, false)));
        errs
    }

    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        vec![webhook_count(obj)]
    }
}
