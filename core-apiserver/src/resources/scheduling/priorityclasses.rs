//! scheduling.k8s.io/v1 PriorityClass, after upstream's `pkg/registry/scheduling/priorityclass`,
//! `SetDefaults_PriorityClass`, `ValidatePriorityClass`, `ValidatePriorityClassUpdate` and
//! `printPriorityClass`.

use kas_api::scheduling::v1::PRIORITY_CLASS;
use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::meta::name_is_dns_subdomain;
use kas_endpoints::responsewriters::table::{AGE_COLUMN, NAME_COLUMN, age};
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, TableColumn, Verb};
use serde_json::{Value, json};

use crate::resources::apps::common::causes;

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "scheduling.k8s.io",
    version: "v1",
    kind: "PriorityClass",
    list_kind: "PriorityClassList",
    plural: "priorityclasses",
    singular: "priorityclass",
    short_names: &["pc"],
    categories: &[],
    scope: Scope::Cluster,
    verbs: Verb::ALL,
    subresources: &[],
    table_columns: &[
        NAME_COLUMN,
        TableColumn {
            name: "Value",
            type_: "integer",
            format: "",
            description: PRIORITY_CLASS.doc("value"),
            priority: 0,
        },
        TableColumn {
            name: "Global-Default",
            type_: "boolean",
            format: "",
            description: PRIORITY_CLASS.doc("globalDefault"),
            priority: 0,
        },
        AGE_COLUMN,
        TableColumn {
            name: "PreemptionPolicy",
            type_: "string",
            format: "",
            description: PRIORITY_CLASS.doc("preemptionPolicy"),
            priority: 0,
        },
    ],
    table_name_and_age: false,
    storage_resource: "priorityclasses",
    schema: Some(&kas_api::scheduling::v1::PRIORITY_CLASS),
    list_schema: Some(&kas_api::scheduling::v1::PRIORITY_CLASS_LIST),
};

/// Upstream `HighestUserDefinablePriority`.
pub const HIGHEST_USER_DEFINABLE_PRIORITY: i64 = 1_000_000_000;
/// Upstream `SystemCriticalPriority`.
pub const SYSTEM_CRITICAL_PRIORITY: i64 = 2 * HIGHEST_USER_DEFINABLE_PRIORITY;
/// Upstream `SystemPriorityClassPrefix`.
const SYSTEM_PRIORITY_CLASS_PREFIX: &str = "system-";
/// Upstream `systemPriorityClasses`: name and value (neither is a global default).
pub const SYSTEM_PRIORITY_CLASSES: [(&str, i64); 2] = [
    ("system-node-critical", SYSTEM_CRITICAL_PRIORITY + 1000),
    ("system-cluster-critical", SYSTEM_CRITICAL_PRIORITY),
];
/// The system classes as upstream's scheduling bootstrap creates them
/// (`AddSystemPriorityClasses`, from `scheduling.systemPriorityClasses`).
pub fn system_priority_classes() -> Vec<Value> {
    let description = |name: &str| match name {
        "system-node-critical" => {
            "Used for system critical pods that must not be moved from their current node."
        }
        _ => {
            "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."
        }
    };
    SYSTEM_PRIORITY_CLASSES
        .iter()
        .map(|(name, value)| {
            json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                "metadata": {"name": name}, "value": value, "description": description(name)})
        })
        .collect()
}

/// `PreemptLowerPriority` and `Never`, in upstream's order.
const PREEMPTION_POLICIES: [&str; 2] = ["PreemptLowerPriority", "Never"];

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

fn value_of(obj: &Value) -> i64 {
    obj.get("value").and_then(Value::as_i64).unwrap_or(0)
}

fn global_default(obj: &Value) -> bool {
    obj.get("globalDefault")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// A pointer field: `None` when absent or null.
fn preemption_policy(obj: &Value) -> Option<&str> {
    obj.get("preemptionPolicy")
        .filter(|x| !x.is_null())
        .map(|x| x.as_str().unwrap_or(""))
}

/// Upstream `IsKnownSystemPriorityClass`.
fn is_known_system_priority_class(name: &str, value: i64, global: bool) -> Result<(), String> {
    let Some((name, want)) = SYSTEM_PRIORITY_CLASSES.iter().find(|(n, _)| *n == name) else {
        return Err(format!("{name} is not a known system priority class"));
    };
    if *want != value {
        return Err(format!("value of {name} PriorityClass must be {want}"));
    }
    if global {
        return Err(format!(
            "globalDefault of {name} PriorityClass must be false"
        ));
    }
    Ok(())
}

/// Upstream `ValidatePreemptionPolicy`.
fn validate_preemption_policy(policy: &str, path: &Path) -> Vec<field::Error> {
    match policy {
        "PreemptLowerPriority" | "Never" => Vec::new(),
        "" => vec![field::required(path, "")],
        other => vec![field::not_supported(path, other, &PREEMPTION_POLICIES)],
    }
}

/// Upstream `ValidatePriorityClass`.
fn validate_priority_class(obj: &Value) -> FieldErrors {
    let mut errs = validate_object_meta(obj, false, name_is_dns_subdomain);
    let name = kas_registry::meta::name(obj);
    let value = value_of(obj);
    let mut rest = Vec::new();
    if name.starts_with(SYSTEM_PRIORITY_CLASS_PREFIX) {
        if let Err(err) = is_known_system_priority_class(name, value, global_default(obj)) {
            rest.push(field::forbidden(
                &Path::new("metadata").child("name"),
                &format!(
                    "priority class names with '{SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are reserved for system use only. error: {err}"
                ),
            ));
        }
    } else if value > HIGHEST_USER_DEFINABLE_PRIORITY {
        rest.push(field::forbidden(
            &Path::new("value"),
            &format!(
                "maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}"
            ),
        ));
    }
    if let Some(policy) = preemption_policy(obj) {
        rest.extend(validate_preemption_policy(
            policy,
            &Path::new("preemptionPolicy"),
        ));
    }
    errs.extend(causes(rest));
    errs
}

impl kas_registry::Strategy for Strategy {
    /// Upstream `SetDefaults_PriorityClass`: preemption of lower priorities.
    fn default(&self, obj: &mut Value) {
        if let Some(m) = obj.as_object_mut()
            && m.get("preemptionPolicy").is_none_or(Value::is_null)
        {
            m.insert("preemptionPolicy".into(), json!("PreemptLowerPriority"));
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        kas_registry::meta::first_generation(obj);
    }

    fn validate(&self, obj: &Value) -> FieldErrors {
        validate_priority_class(obj)
    }

    /// Upstream `ValidatePriorityClassUpdate`: the metadata update, then value and
    /// preemptionPolicy unchanged.
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        let mut rest = Vec::new();
        if value_of(new) != value_of(old) {
            rest.push(field::forbidden(
                &Path::new("value"),
                "may not be changed in an update.",
            ));
        }
        let policy = preemption_policy(new);
        if policy != preemption_policy(old) {
            let path = Path::new("preemptionPolicy");
            rest.push(match policy {
                Some(p) => field::invalid(&path, p, "field is immutable"),
                None => field::invalid(&path, field::BadValue::Null, "field is immutable"),
            });
        }
        errs.extend(causes(rest));
        errs
    }

    /// `printPriorityClass`.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        vec![
            json!(kas_registry::meta::name(obj)),
            json!(value_of(obj)),
            json!(global_default(obj)),
            json!(age(kas_registry::meta::str_field(obj, "creationTimestamp"))),
            json!(preemption_policy(obj).unwrap_or("<unset>")),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::messages;
    use kas_registry::Strategy as _;

    fn class(name: &str, body: Value) -> Value {
        let mut obj = body;
        obj["metadata"] = json!({"name": name});
        Strategy.default(&mut obj);
        obj
    }

    #[test]
    fn preemption_policy_defaults_and_printer_cells() {
        let mut obj = class("high", json!({"value": 1000}));
        assert_eq!(obj["preemptionPolicy"], "PreemptLowerPriority");
        assert!(Strategy.validate(&obj).is_empty());
        Strategy.prepare_for_create(&mut obj);
        assert_eq!(obj["metadata"]["generation"], 1);
        let cells = Strategy.table_cells(&obj);
        assert_eq!(
            cells,
            [
                json!("high"),
                json!(1000),
                json!(false),
                json!("<unknown>"),
                json!("PreemptLowerPriority")
            ]
        );
        assert_eq!(DESCRIPTOR.table_columns.len(), cells.len());
        assert_eq!(
            DESCRIPTOR.table_columns[4].description,
            PRIORITY_CLASS.doc("preemptionPolicy")
        );
        let never = class("low", json!({"value": -5, "preemptionPolicy": "Never"}));
        assert_eq!(never["preemptionPolicy"], "Never");
    }

    #[test]
    fn values_names_and_policies_are_validated_like_upstream() {
        assert_eq!(
            messages(&Strategy.validate(&class("huge", json!({"value": 1_000_000_001})))),
            ["value: Forbidden: maximum allowed value of a user defined priority is 1000000000"]
        );
        assert!(
            Strategy
                .validate(&class("max", json!({"value": 1_000_000_000})))
                .is_empty()
        );
        assert!(
            Strategy
                .validate(&class(
                    "system-node-critical",
                    json!({"value": 2_000_001_000})
                ))
                .is_empty()
        );
        assert_eq!(
            messages(&Strategy.validate(&class("system-mine", json!({"value": 1})))),
            [
                "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class"
            ]
        );
        assert_eq!(
            messages(&Strategy.validate(&class("system-cluster-critical", json!({"value": 1})))),
            [
                "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: value of system-cluster-critical PriorityClass must be 2000000000"
            ]
        );
        assert_eq!(
            messages(&Strategy.validate(&class(
                "system-cluster-critical",
                json!({"value": 2_000_000_000, "globalDefault": true})
            ))),
            [
                "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: globalDefault of system-cluster-critical PriorityClass must be false"
            ]
        );
        assert_eq!(
            messages(&Strategy.validate(&class(
                "p",
                json!({"value": 1, "preemptionPolicy": "Sometimes"})
            ))),
            [
                "preemptionPolicy: Unsupported value: \"Sometimes\": supported values: \"PreemptLowerPriority\", \"Never\""
            ]
        );
        assert_eq!(
            messages(&Strategy.validate(&class("p", json!({"value": 1, "preemptionPolicy": ""})))),
            ["preemptionPolicy: Required value"]
        );
    }

    #[test]
    fn value_and_preemption_policy_are_immutable() {
        let old = class("high", json!({"value": 1000}));
        let new = class("high", json!({"value": 2000, "preemptionPolicy": "Never"}));
        assert_eq!(
            messages(&Strategy.validate_update(&new, &old)),
            [
                "value: Forbidden: may not be changed in an update.",
                "preemptionPolicy: Invalid value: \"Never\": field is immutable",
            ]
        );
        let mut described = old.clone();
        described["description"] = json!("now described");
        assert!(Strategy.validate_update(&described, &old).is_empty());
    }
}
