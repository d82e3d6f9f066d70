//! flowcontrol.apiserver.k8s.io/v1 PriorityLevelConfiguration, after upstream's
//! `pkg/registry/flowcontrol/prioritylevelconfiguration` (strategy and status strategy),
//! the v1 defaults, `ValidatePriorityLevelConfiguration` and
//! `printPriorityLevelConfiguration`.

use crate::resources::apps::common::{
    keep_status_and_bump_generation, reset_status_and_generation,
};
use kas_api::flowcontrol::v1::{
    LIMITED_PRIORITY_LEVEL_CONFIGURATION, PRIORITY_LEVEL_CONFIGURATION_SPEC, QUEUING_CONFIGURATION,
};
use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::meta::name_is_dns_subdomain;
use kas_endpoints::responsewriters::table::{AGE_COLUMN, NAME_COLUMN, age};
use kas_registry::strategy::{FieldErrors, causes};
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, Subresource, TableColumn, Verb};
use serde_json::{Map, Value, json};

use super::{go_pointer, present, quote, s, semantic, validation};

const fn column(name: &'static str, description: &'static str) -> TableColumn {
    TableColumn {
        name,
        type_: "string",
        format: "",
        description,
        priority: 0,
    }
}

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "flowcontrol.apiserver.k8s.io",
    version: "v1",
    kind: "PriorityLevelConfiguration",
    list_kind: "PriorityLevelConfigurationList",
    plural: "prioritylevelconfigurations",
    singular: "prioritylevelconfiguration",
    short_names: &[],
    categories: &[],
    scope: Scope::Cluster,
    verbs: Verb::ALL,
    subresources: &[Subresource::STATUS],
    table_columns: &[
        NAME_COLUMN,
        column("Type", PRIORITY_LEVEL_CONFIGURATION_SPEC.doc("type")),
        column(
            "NominalConcurrencyShares",
            LIMITED_PRIORITY_LEVEL_CONFIGURATION.doc("nominalConcurrencyShares"),
        ),
        column("Queues", QUEUING_CONFIGURATION.doc("queues")),
        column("HandSize", QUEUING_CONFIGURATION.doc("handSize")),
        column(
            "QueueLengthLimit",
            QUEUING_CONFIGURATION.doc("queueLengthLimit"),
        ),
        AGE_COLUMN,
    ],
    table_name_and_age: false,
    storage_resource: "prioritylevelconfigurations",
    schema: Some(&kas_api::flowcontrol::v1::PRIORITY_LEVEL_CONFIGURATION),
    list_schema: Some(&kas_api::flowcontrol::v1::PRIORITY_LEVEL_CONFIGURATION_LIST),
};

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

/// Upstream `PriorityLevelConfigurationDefaultNominalConcurrencyShares`.
const DEFAULT_SHARES: i64 = 30;

fn default_if_unset(map: &mut Map<String, Value>, key: &str, value: i64) {
    if map.get(key).is_none_or(Value::is_null) {
        map.insert(key.into(), json!(value));
    }
}

fn default_if_zero(map: &mut Map<String, Value>, key: &str, value: i64) {
    if map.get(key).and_then(Value::as_i64).is_none_or(|v| v == 0) {
        map.insert(key.into(), json!(value));
    }
}

/// A `flowcontrol.PriorityLevelConfigurationSpec` as Go's `%#v` prints it.
fn go_spec(spec: &Value) -> String {
    format!(
        "flowcontrol.PriorityLevelConfigurationSpec{{Type:{}, Limited:{}, Exempt:{}}}",
        quote(s(spec, "/type")),
        go_pointer(
            "LimitedPriorityLevelConfiguration",
            present(spec, "/limited")
        ),
        go_pointer("ExemptPriorityLevelConfiguration", present(spec, "/exempt")),
    )
}

/// Upstream `ValidatePriorityLevelConfiguration`, with its checks of the mandatory
/// objects: `exempt` may change only its `exempt` field, `catch-all` nothing.
fn validate_priority_level(obj: &Value) -> FieldErrors {
    let mut errs = validate_object_meta(obj, false, name_is_dns_subdomain);
    let name = kas_registry::meta::name(obj);
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let path = Path::new("spec");
    let mut e = validation::priority_level_spec(name, spec, &path);
    if let Some(mandatory) = super::bootstrap::mandatory_priority_level(name) {
        let value = || BadValue::Raw(go_spec(spec));
        if name == "exempt" {
            let mut have = spec.clone();
            if let Some(map) = have.as_object_mut() {
                match mandatory.get("exempt") {
                    Some(want) => map.insert("exempt".into(), want.clone()),
                    None => map.remove("exempt"),
                };
            }
            if semantic(&have) != semantic(&mandatory) {
                let msg =
                    "spec of 'exempt' except the 'spec.exempt' field must equal the fixed value";
                e.push(field::invalid(&path, value(), msg));
            }
        } else if semantic(spec) != semantic(&mandatory) {
            let msg = format!("spec of '{name}' must equal the fixed value");
            e.push(field::invalid(&path, value(), &msg));
        }
    }
    e.extend(validation::status(obj));
    errs.extend(causes(e));
    errs
}

impl kas_registry::Strategy for Strategy {
    /// Upstream's status strategy keeps the stored metadata but the managed fields.
    fn prepare_for_status_update(&self, new: &mut Value, old: &Value) {
        kas_registry::meta::keep_object_meta(new, old);
    }

    fn reset_fields(&self, subresource: &str) -> &'static [&'static str] {
        match subresource {
            "status" => &["metadata", "spec"],
            _ => &["status"],
        }
    }

    /// Upstream's v1 defaults: 30 nominal shares when unset, lendable percents of 0,
    /// queuing's 8, 64 and 50, and the exempt level's zero shares.
    fn default(&self, obj: &mut Value) {
        let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
            return;
        };
        if let Some(limited) = spec.get_mut("limited").and_then(Value::as_object_mut) {
            default_if_unset(limited, "nominalConcurrencyShares", DEFAULT_SHARES);
            default_if_unset(limited, "lendablePercent", 0);
            let queuing = limited
                .get_mut("limitResponse")
                .and_then(|lr| lr.get_mut("queuing"))
                .and_then(Value::as_object_mut);
            if let Some(q) = queuing {
                default_if_zero(q, "handSize", 8);
                default_if_zero(q, "queues", 64);
                default_if_zero(q, "queueLengthLimit", 50);
            }
        }
        if let Some(exempt) = spec.get_mut("exempt").and_then(Value::as_object_mut) {
            default_if_unset(exempt, "nominalConcurrencyShares", 0);
            default_if_unset(exempt, "lendablePercent", 0);
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        reset_status_and_generation(obj);
    }

    fn validate(&self, obj: &Value) -> FieldErrors {
        validate_priority_level(obj)
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        let changed = new.get("spec") != old.get("spec");
        keep_status_and_bump_generation(new, old, changed);
    }

    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(validate_priority_level(new));
        errs
    }

    fn validate_status_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(causes(validation::status(new)));
        errs
    }

    /// Upstream `printPriorityLevelConfiguration`.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        let none = || json!("<none>");
        let limited = present(obj, "/spec/limited");
        let shares = limited
            .and_then(|l| l.get("nominalConcurrencyShares"))
            .cloned()
            .map_or_else(none, |v| if v.is_null() { json!(0) } else { v });
        let queuing = limited.and_then(|l| present(l, "/limitResponse/queuing"));
        let q = |key: &str| queuing.map_or_else(none, |q| q.get(key).cloned().unwrap_or(json!(0)));
        vec![
            json!(kas_registry::meta::name(obj)),
            json!(s(obj, "/spec/type")),
            shares,
            q("queues"),
            q("handSize"),
            q("queueLengthLimit"),
            json!(age(kas_registry::meta::str_field(obj, "creationTimestamp"))),
        ]
    }
}

#[cfg(test)]
#[path = "prioritylevelconfigurations_tests.rs"]
mod tests;
