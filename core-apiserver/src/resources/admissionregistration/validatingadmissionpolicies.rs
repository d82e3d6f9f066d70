//! admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy (with `status`), after upstream's
//! `pkg/registry/admissionregistration/validatingadmissionpolicy`, `SetDefaults_*` and
//! `printValidatingAdmissionPolicy`. Only part of `ValidateValidatingAdmissionPolicy` is
//! implemented (see `validate_spec`); CEL expressions are not compiled.

use crate::resources::apps::common::{
    keep_status_and_bump_generation, reset_status_and_generation,
};
use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::meta::name_is_dns_subdomain;
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, Subresource, TableColumn, Verb};
use serde_json::{Value, json};

use crate::resources::apps::common::causes;

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "admissionregistration.k8s.io",
    version: "v1",
    kind: "ValidatingAdmissionPolicy",
    list_kind: "ValidatingAdmissionPolicyList",
    plural: "validatingadmissionpolicies",
    singular: "validatingadmissionpolicy",
    short_names: &[],
    categories: &["api-extensions"],
    scope: Scope::Cluster,
    verbs: Verb::ALL,
    subresources: &[Subresource::STATUS],
    table_columns: &[
        TableColumn {
            name: "Validations",
            type_: "integer",
            format: "",
            description: "Validations indicates the number of validation rules defined in this configuration",
            priority: 0,
        },
        TableColumn {
            name: "ParamKind",
            type_: "string",
            format: "",
            description: "ParamKind specifies the kind of resources used to parameterize this policy",
            priority: 0,
        },
    ],
    table_name_and_age: true,
    storage_resource: "validatingadmissionpolicies",
    schema: Some(&kas_api::admissionregistration::v1::VALIDATING_ADMISSION_POLICY),
    list_schema: Some(&kas_api::admissionregistration::v1::VALIDATING_ADMISSION_POLICY_LIST),
};

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

fn set_if_absent(obj: &mut serde_json::Map<String, Value>, key: &str, v: Value) {
    if obj.get(key).is_none_or(Value::is_null) {
        obj.insert(key.into(), v);
    }
}

/// `SetDefaults_MatchResources` (shared with the binding).
pub fn default_match_resources(m: &mut Value) {
    let Some(m) = m.as_object_mut() else { return };
    set_if_absent(m, "matchPolicy", json!("Equivalent"));
    set_if_absent(m, "namespaceSelector", json!({}));
    set_if_absent(m, "objectSelector", json!({}));
    for key in ["resourceRules", "excludeResourceRules"] {
        if let Some(rules) = m.get_mut(key).and_then(Value::as_array_mut) {
            for rule in rules.iter_mut().filter_map(Value::as_object_mut) {
                set_if_absent(rule, "scope", json!("*"));
            }
        }
    }
}

/// Part of upstream `validateValidatingAdmissionPolicySpec`: matchConstraints required
/// with resourceRules, failurePolicy values, at least one of validations/auditAnnotations.
fn validate_spec(obj: &Value) -> Vec<field::Error> {
    let path = Path::new("spec");
    let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
    let mut errs = Vec::new();
    if let Some(fp) = spec.get("failurePolicy").and_then(Value::as_str)
        && !["Fail", "Ignore"].contains(&fp)
    {
        errs.push(field::not_supported(
            &path.child("failurePolicy"),
            fp,
            &["Fail", "Ignore"],
        ));
    }
    match spec.get("matchConstraints").filter(|m| !m.is_null()) {
        None => errs.push(field::required(&path.child("matchConstraints"), "")),
        Some(m) => {
            if m.get("resourceRules")
                .and_then(Value::as_array)
                .is_none_or(Vec::is_empty)
            {
                errs.push(field::required(
                    &path.child("matchConstraints").child("resourceRules"),
                    "",
                ));
            }
        }
    }
    let vp = path.child("validations");
    for (i, v) in spec
        .get("validations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let expr = v.get("expression").and_then(Value::as_str).unwrap_or("");
        if expr.trim().is_empty() {
            errs.push(field::required(
                &vp.index(i).child("expression"),
                "expression is not specified",
            ));
        }
    }
    let empty = |k: &str| {
        spec.get(k)
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
    };
    if empty("validations") && empty("auditAnnotations") {
        errs.push(field::required(
            &path.child("validations"),
            "validations or auditAnnotations must contain at least one item",
        ));
        errs.push(field::required(
            &path.child("auditAnnotations"),
            "validations or auditAnnotations must contain at least one item",
        ));
    }
    errs
}

impl kas_registry::Strategy for Strategy {
    /// Upstream's status strategy: `ResetObjectMetaForStatus`.
    fn prepare_for_status_update(&self, new: &mut Value, old: &Value) {
        kas_registry::meta::reset_object_meta_for_status(new, old);
    }

    fn reset_fields(&self, subresource: &str) -> &'static [&'static str] {
        match subresource {
            "status" => &["spec"],
            _ => &["status"],
        }
    }

    /// `SetDefaults_ValidatingAdmissionPolicySpec` and `SetDefaults_MatchResources`.
    fn default(&self, obj: &mut Value) {
        if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
            set_if_absent(spec, "failurePolicy", json!("Fail"));
            if let Some(m) = spec.get_mut("matchConstraints") {
                default_match_resources(m);
            }
        }
    }

    /// A new policy has no status and generation 1.
    fn prepare_for_create(&self, obj: &mut Value) {
        reset_status_and_generation(obj);
    }

    /// The status is kept; generation bumps on a spec change.
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        let changed = new.get("spec") != old.get("spec");
        keep_status_and_bump_generation(new, old, changed);
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

    fn validate_status_update(&self, new: &Value, old: &Value) -> FieldErrors {
        validate_object_meta_update(new, old)
    }

    /// Upstream `printValidatingAdmissionPolicy`.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        let count = obj
            .pointer("/spec/validations")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let param_kind = match obj.pointer("/spec/paramKind").filter(|p| !p.is_null()) {
            None => "<unset>".to_owned(),
            Some(p) => format!(
                "{}/{}",
                p.get("apiVersion").and_then(Value::as_str).unwrap_or(""),
                p.get("kind").and_then(Value::as_str).unwrap_or("")
            ),
        };
        vec![json!(count), json!(param_kind)]
    }
}
