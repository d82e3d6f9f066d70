//! flowcontrol.apiserver.k8s.io/v1 FlowSchema, after upstream's
//! `pkg/registry/flowcontrol/flowschema` (strategy and status strategy),
//! `SetDefaults_FlowSchemaSpec`, `ValidateFlowSchema` and `printFlowSchema`.

use crate::resources::apps::common::{
    keep_status_and_bump_generation, reset_status_and_generation,
};
use kas_api::flowcontrol::v1::{FLOW_SCHEMA_SPEC, PRIORITY_LEVEL_CONFIGURATION_REFERENCE};
use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::meta::name_is_dns_subdomain;
use kas_endpoints::responsewriters::table::{AGE_COLUMN, NAME_COLUMN, age};
use kas_registry::strategy::{FieldErrors, causes};
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, Subresource, TableColumn, Verb};
use serde_json::{Value, json};

use super::{go_pointer, go_slice, go_strings, int, present, quote, s, semantic, validation};

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "flowcontrol.apiserver.k8s.io",
    version: "v1",
    kind: "FlowSchema",
    list_kind: "FlowSchemaList",
    plural: "flowschemas",
    singular: "flowschema",
    short_names: &[],
    categories: &[],
    scope: Scope::Cluster,
    verbs: Verb::ALL,
    subresources: &[Subresource::STATUS],
    table_columns: &[
        NAME_COLUMN,
        TableColumn {
            name: "PriorityLevel",
            type_: "string",
            format: "",
            description: PRIORITY_LEVEL_CONFIGURATION_REFERENCE.doc("name"),
            priority: 0,
        },
        TableColumn {
            name: "MatchingPrecedence",
            type_: "string",
            format: "",
            description: FLOW_SCHEMA_SPEC.doc("matchingPrecedence"),
            priority: 0,
        },
        TableColumn {
            name: "DistinguisherMethod",
            type_: "string",
            format: "",
            description: FLOW_SCHEMA_SPEC.doc("distinguisherMethod"),
            priority: 0,
        },
        AGE_COLUMN,
        TableColumn {
            name: "MissingPL",
            type_: "string",
            format: "",
            description: "references a broken or non-existent PriorityLevelConfiguration",
            priority: 0,
        },
    ],
    table_name_and_age: false,
    storage_resource: "flowschemas",
    schema: Some(&kas_api::flowcontrol::v1::FLOW_SCHEMA),
    list_schema: Some(&kas_api::flowcontrol::v1::FLOW_SCHEMA_LIST),
};

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

/// Upstream `FlowSchemaDefaultMatchingPrecedence`.
const DEFAULT_MATCHING_PRECEDENCE: i64 = 1000;

fn go_subject(v: &Value) -> String {
    format!(
        "flowcontrol.Subject{{Kind:{}, User:{}, Group:{}, ServiceAccount:{}}}",
        quote(s(v, "/kind")),
        go_pointer("UserSubject", present(v, "/user")),
        go_pointer("GroupSubject", present(v, "/group")),
        go_pointer("ServiceAccountSubject", present(v, "/serviceAccount")),
    )
}

fn go_resource_rule(v: &Value) -> String {
    format!(
        "flowcontrol.ResourcePolicyRule{{Verbs:{}, APIGroups:{}, Resources:{}, ClusterScope:{}, Namespaces:{}}}",
        go_strings(v, "/verbs"),
        go_strings(v, "/apiGroups"),
        go_strings(v, "/resources"),
        v.get("clusterScope").and_then(Value::as_bool) == Some(true),
        go_strings(v, "/namespaces"),
    )
}

fn go_non_resource_rule(v: &Value) -> String {
    format!(
        "flowcontrol.NonResourcePolicyRule{{Verbs:{}, NonResourceURLs:{}}}",
        go_strings(v, "/verbs"),
        go_strings(v, "/nonResourceURLs"),
    )
}

fn go_rule(v: &Value) -> String {
    format!(
        "flowcontrol.PolicyRulesWithSubjects{{Subjects:{}, ResourceRules:{}, NonResourceRules:{}}}",
        go_slice("Subject", v, "/subjects", go_subject),
        go_slice("ResourcePolicyRule", v, "/resourceRules", go_resource_rule),
        go_slice(
            "NonResourcePolicyRule",
            v,
            "/nonResourceRules",
            go_non_resource_rule
        ),
    )
}

/// A `flowcontrol.FlowSchemaSpec` as Go's `%#v` prints it.
fn go_spec(spec: &Value) -> String {
    format!(
        "flowcontrol.FlowSchemaSpec{{PriorityLevelConfiguration:flowcontrol.PriorityLevelConfigurationReference{{Name:{}}}, MatchingPrecedence:{}, DistinguisherMethod:{}, Rules:{}}}",
        quote(s(spec, "/priorityLevelConfiguration/name")),
        int(spec, "/matchingPrecedence"),
        go_pointer(
            "FlowDistinguisherMethod",
            present(spec, "/distinguisherMethod")
        ),
        go_slice("PolicyRulesWithSubjects", spec, "/rules", go_rule),
    )
}

/// Upstream `ValidateFlowSchema`.
fn validate_flow_schema(obj: &Value) -> FieldErrors {
    let mut errs = validate_object_meta(obj, false, name_is_dns_subdomain);
    let name = kas_registry::meta::name(obj);
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let path = Path::new("spec");
    let mut e = validation::flow_schema_spec(name, spec, &path);
    let mandatory = super::bootstrap::mandatory_flow_schema(name);
    if mandatory.is_some_and(|m| semantic(spec) != semantic(&m)) {
        let msg = format!("spec of '{name}' must equal the fixed value");
        e.push(field::invalid(&path, BadValue::Raw(go_spec(spec)), &msg));
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

    /// Upstream `SetDefaults_FlowSchemaSpec`.
    fn default(&self, obj: &mut Value) {
        if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
            let zero = spec
                .get("matchingPrecedence")
                .and_then(Value::as_i64)
                .is_none_or(|p| p == 0);
            if zero {
                spec.insert(
                    "matchingPrecedence".into(),
                    json!(DEFAULT_MATCHING_PRECEDENCE),
                );
            }
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        reset_status_and_generation(obj);
    }

    fn validate(&self, obj: &Value) -> FieldErrors {
        validate_flow_schema(obj)
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        let changed = new.get("spec") != old.get("spec");
        keep_status_and_bump_generation(new, old, changed);
    }

    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(validate_flow_schema(new));
        errs
    }

    /// Upstream `ValidateFlowSchemaStatusUpdate`.
    fn validate_status_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(causes(validation::status(new)));
        errs
    }

    /// Upstream `printFlowSchema`.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        let method = present(obj, "/spec/distinguisherMethod").map_or("<none>", |m| s(m, "/type"));
        let missing = super::list(obj, "/status/conditions")
            .iter()
            .find(|c| s(c, "/type") == "Dangling")
            .map_or("?", |c| s(c, "/status"));
        vec![
            json!(kas_registry::meta::name(obj)),
            json!(s(obj, "/spec/priorityLevelConfiguration/name")),
            json!(int(obj, "/spec/matchingPrecedence")),
            json!(method),
            json!(age(kas_registry::meta::str_field(obj, "creationTimestamp"))),
            json!(missing),
        ]
    }
}

#[cfg(test)]
#[path = "flowschemas_tests.rs"]
mod tests;
