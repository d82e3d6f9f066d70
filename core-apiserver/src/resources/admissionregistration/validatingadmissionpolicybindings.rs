//! admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding, after upstream's
//! `pkg/registry/admissionregistration/validatingadmissionpolicybinding` and
//! `printValidatingAdmissionPolicyBinding`. Only part of
//! `ValidateValidatingAdmissionPolicyBinding` is implemented (see `validate_spec`).

use std::collections::HashSet;

use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::meta::name_is_dns_subdomain;
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, TableColumn, Verb};
use serde_json::{Value, json};

use super::validatingadmissionpolicies::default_match_resources;
use crate::resources::apps::common::causes;

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "admissionregistration.k8s.io",
    version: "v1",
    kind: "ValidatingAdmissionPolicyBinding",
    list_kind: "ValidatingAdmissionPolicyBindingList",
    plural: "validatingadmissionpolicybindings",
    singular: "validatingadmissionpolicybinding",
    short_names: &[],
    categories: &["api-extensions"],
    scope: Scope::Cluster,
    verbs: Verb::ALL,
    subresources: &[],
    table_columns: &[
        TableColumn {
            name: "PolicyName",
            type_: "string",
            format: "",
            description: "PolicyName indicates the policy definition which the policy binding binded to",
            priority: 0,
        },
        TableColumn {
            name: "ParamRef",
            type_: "string",
            format: "",
            description: "ParamRef indicates the param resource which sets the configration param",
            priority: 0,
        },
    ],
    table_name_and_age: true,
    storage_resource: "validatingadmissionpolicybindings",
    schema: Some(&kas_api::admissionregistration::v1::VALIDATING_ADMISSION_POLICY_BINDING),
    list_schema: Some(
        &kas_api::admissionregistration::v1::VALIDATING_ADMISSION_POLICY_BINDING_LIST,
    ),
};

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

const ACTIONS: &[&str] = &["Audit", "Deny", "Warn"];

/// Part of upstream `validateValidatingAdmissionPolicyBindingSpec`: policyName and
/// validationActions.
fn validate_spec(obj: &Value) -> Vec<field::Error> {
    let path = Path::new("spec");
    let mut errs = Vec::new();
    if obj
        .pointer("/spec/policyName")
        .and_then(Value::as_str)
        .unwrap_or("")
        .is_empty()
    {
        errs.push(field::required(&path.child("policyName"), ""));
    }
    let actions: Vec<&str> = obj
        .pointer("/spec/validationActions")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let ap = path.child("validationActions");
    let mut seen = HashSet::new();
    for (i, a) in actions.iter().enumerate() {
        if !ACTIONS.contains(a) {
            errs.push(field::not_supported(&ap.index(i), *a, ACTIONS));
        }
        if !seen.insert(*a) {
            errs.push(field::duplicate(&ap.index(i), *a));
        }
    }
    if seen.contains("Deny") && seen.contains("Warn") {
        let list: Vec<String> = actions.iter().map(|a| (*a).to_owned()).collect();
        let quoted: Vec<String> = list.iter().map(|a| format!("{a:?}")).collect();
        errs.push(field::invalid(
            &ap,
            BadValue::Raw(format!("[]admissionregistration.ValidationAction{{{}}}", quoted.join(", "))),
            "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
        ));
    }
    if seen.is_empty() {
        errs.push(field::required(
            &ap,
            "at least one validation action is required",
        ));
    }
    errs
}

impl kas_registry::Strategy for Strategy {
    fn default(&self, obj: &mut Value) {
        if let Some(m) = obj.pointer_mut("/spec/matchResources") {
            default_match_resources(m);
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        kas_registry::meta::first_generation(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        let changed = new.get("spec") != old.get("spec");
        kas_registry::meta::next_generation(new, old, changed);
    }

    fn validate(&self, obj: &Value) -> FieldErrors {
        let mut errs = validate_object_meta(obj, false, name_is_dns_subdomain);
        errs.extend(causes(validate_spec(obj)));
        errs
    }

    /// Upstream's strategy refuses updates without a resourceVersion.
    fn allow_unconditional_update(&self) -> bool {
        false
    }

    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(causes(validate_spec(new)));
        errs
    }

    /// Upstream `printValidatingAdmissionPolicyBinding` (a selector prints as `<selector>`).
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        let policy = obj
            .pointer("/spec/policyName")
            .and_then(Value::as_str)
            .unwrap_or("");
        let pr = obj.pointer("/spec/paramRef").filter(|p| !p.is_null());
        let param = match pr {
            None => "<unset>".to_owned(),
            Some(pr) => {
                let name = pr.get("name").and_then(Value::as_str).unwrap_or("");
                let ns = pr.get("namespace").and_then(Value::as_str).unwrap_or("");
                if !name.is_empty() {
                    if ns.is_empty() {
                        format!("*/{name}")
                    } else {
                        format!("{ns}/{name}")
                    }
                } else if pr.get("selector").is_some_and(|s| !s.is_null()) {
                    "<selector>".to_owned()
                } else {
                    "<unset>".to_owned()
                }
            }
        };
        vec![json!(policy), json!(param)]
    }
}
