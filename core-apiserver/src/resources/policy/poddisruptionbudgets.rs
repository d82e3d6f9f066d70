//! policy/v1 PodDisruptionBudget, after upstream's `pkg/registry/policy/poddisruptionbudget`
//! (strategy, status strategy, `GetResetFields`), the v1 conversion's
//! `StripPDBV1beta1Label`, `ValidatePodDisruptionBudget`,
//! `ValidatePodDisruptionBudgetStatusUpdate` and `printPodDisruptionBudget`.

use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::meta::{
    validate_label_name, validate_nonnegative_field, validate_path_segment_name,
};
use kas_apimachinery::validation::regex_error;
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, Subresource, TableColumn, Verb};
use serde_json::{Value, json};

use crate::resources::apps::common::{
    causes, int, is_not_more_than_100_percent, keep_status_and_bump_generation,
    reset_status_and_generation, validate_label_selector, validate_positive_int_or_percent,
};

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "policy",
    version: "v1",
    kind: "PodDisruptionBudget",
    list_kind: "PodDisruptionBudgetList",
    plural: "poddisruptionbudgets",
    singular: "poddisruptionbudget",
    short_names: &["pdb"],
    categories: &[],
    scope: Scope::Namespaced,
    verbs: Verb::ALL,
    subresources: &[Subresource::STATUS],
    table_columns: &[
        TableColumn {
            name: "Min Available",
            type_: "string",
            format: "",
            description: "The minimum number of pods that must be available.",
            priority: 0,
        },
        TableColumn {
            name: "Max Unavailable",
            type_: "string",
            format: "",
            description: "The maximum number of pods that may be unavailable.",
            priority: 0,
        },
        TableColumn {
            name: "Allowed Disruptions",
            type_: "integer",
            format: "",
            description: "Calculated number of pods that may be disrupted at this time.",
            priority: 0,
        },
    ],
    table_name_and_age: true,
    storage_resource: "poddisruptionbudgets",
    schema: Some(&kas_api::policy::v1::POD_DISRUPTION_BUDGET),
    list_schema: Some(&kas_api::policy::v1::POD_DISRUPTION_BUDGET_LIST),
};

/// Upstream `supportedUnhealthyPodEvictionPolicies`, sorted.
const UNHEALTHY_POD_EVICTION_POLICIES: &[&str] = &["AlwaysAllow", "IfHealthyBudget"];

/// Upstream `PDBV1beta1Label`.
const PDB_V1BETA1_LABEL: &str = "pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match";

/// metav1 condition limits (`maxReasonLen`, `maxMessageLen`).
const MAX_REASON_LEN: usize = 1024;
const MAX_MESSAGE_LEN: usize = 32 * 1024;

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

/// A set (non-null) field of the spec.
fn spec_field<'a>(obj: &'a Value, name: &str) -> Option<&'a Value> {
    obj.pointer(&format!("/spec/{name}"))
        .filter(|v| !v.is_null())
}

/// A pointer field as Go's `%#v` prints it (addresses are not reproducible; kas prints a
/// fixed one, as elsewhere).
fn go_pointer(ty: &str, set: bool) -> String {
    if set {
        format!("(*{ty})(0xc000000000)")
    } else {
        format!("(*{ty})(nil)")
    }
}

/// The internal `policy.PodDisruptionBudgetSpec` as `%#v` prints it.
fn go_spec(obj: &Value) -> BadValue {
    let p = |f: &str, ty: &str| go_pointer(ty, spec_field(obj, f).is_some());
    BadValue::Raw(format!(
        "policy.PodDisruptionBudgetSpec{{MinAvailable:{}, Selector:{}, MaxUnavailable:{}, UnhealthyPodEvictionPolicy:{}}}",
        p("minAvailable", "intstr.IntOrString"),
        p("selector", "v1.LabelSelector"),
        p("maxUnavailable", "intstr.IntOrString"),
        p(
            "unhealthyPodEvictionPolicy",
            "policy.UnhealthyPodEvictionPolicyType"
        ),
    ))
}

/// Upstream `ValidatePodDisruptionBudgetSpec` (`AllowInvalidLabelValueInSelector` false).
fn validate_spec(obj: &Value) -> Vec<field::Error> {
    let path = Path::new("spec");
    let mut errs = Vec::new();
    let min = spec_field(obj, "minAvailable");
    let max = spec_field(obj, "maxUnavailable");
    if min.is_some() && max.is_some() {
        errs.push(field::invalid(
            &path,
            go_spec(obj),
            "minAvailable and maxUnavailable cannot be both set",
        ));
    }
    for (name, v) in [("minAvailable", min), ("maxUnavailable", max)] {
        if let Some(v) = v {
            errs.extend(validate_positive_int_or_percent(v, &path.child(name)));
            errs.extend(is_not_more_than_100_percent(v, &path.child(name)));
        }
    }
    errs.extend(validate_label_selector(
        spec_field(obj, "selector"),
        &path.child("selector"),
    ));
    if let Some(policy) = spec_field(obj, "unhealthyPodEvictionPolicy") {
        let policy = policy.as_str().unwrap_or("");
        if !UNHEALTHY_POD_EVICTION_POLICIES.contains(&policy) {
            errs.push(field::not_supported(
                &path.child("unhealthyPodEvictionPolicy"),
                policy,
                UNHEALTHY_POD_EVICTION_POLICIES,
            ));
        }
    }
    errs
}

/// Upstream `isValidConditionReason`: `[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?`.
fn is_valid_condition_reason(reason: &str) -> Vec<String> {
    let b = reason.as_bytes();
    let inner = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b',' | b':');
    let valid = b.first().is_some_and(u8::is_ascii_alphabetic)
        && b.iter().all(inner)
        && b.last()
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_');
    if valid {
        return Vec::new();
    }
    vec![regex_error(
        "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'",
        "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?",
        &[
            "my_name",
            "MY_NAME",
            "MyName",
            "ReasonA,ReasonB",
            "ReasonA:ReasonB",
        ],
    )]
}

/// metav1 `ValidateCondition`.
fn validate_condition(c: &Value, path: &Path) -> Vec<field::Error> {
    let s = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("");
    let mut errs = validate_label_name(s("type"), &path.child("type"));
    let status = s("status");
    if !["False", "True", "Unknown"].contains(&status) {
        errs.push(field::not_supported(
            &path.child("status"),
            status,
            &["False", "True", "Unknown"],
        ));
    }
    let generation = int(c, "/observedGeneration");
    if generation < 0 {
        errs.push(field::invalid(
            &path.child("observedGeneration"),
            generation,
            "must be greater than or equal to zero",
        ));
    }
    if s("lastTransitionTime").is_empty() {
        errs.push(field::required(
            &path.child("lastTransitionTime"),
            "must be set",
        ));
    }
    let reason = s("reason");
    if reason.is_empty() {
        errs.push(field::required(&path.child("reason"), "must be set"));
    } else {
        for msg in is_valid_condition_reason(reason) {
            errs.push(field::invalid(&path.child("reason"), reason, &msg));
        }
        if reason.len() > MAX_REASON_LEN {
            errs.push(field::too_long(
                &path.child("reason"),
                MAX_REASON_LEN as i64,
            ));
        }
    }
    if s("message").len() > MAX_MESSAGE_LEN {
        errs.push(field::too_long(
            &path.child("message"),
            MAX_MESSAGE_LEN as i64,
        ));
    }
    errs
}

/// metav1 `ValidateConditions`.
fn validate_conditions(conditions: &[Value], path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (i, c) in conditions.iter().enumerate() {
        let t = c.get("type").and_then(Value::as_str).unwrap_or("");
        if !seen.insert(t) {
            errs.push(field::duplicate(&path.index(i).child("type"), t));
        }
        errs.extend(validate_condition(c, &path.index(i)));
    }
    errs
}

/// Upstream `ValidatePodDisruptionBudgetStatusUpdate` for policy/v1.
fn validate_status(obj: &Value) -> Vec<field::Error> {
    let path = Path::new("status");
    let conditions = obj
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let mut errs = validate_conditions(conditions, &path.child("conditions"));
    for f in [
        "disruptionsAllowed",
        "currentHealthy",
        "desiredHealthy",
        "expectedPods",
    ] {
        errs.extend(validate_nonnegative_field(
            int(obj, &format!("/status/{f}")),
            &path.child(f),
        ));
    }
    errs
}

/// The common checks of upstream's `BeforeUpdate` (`validateCommonFields`): ObjectMeta with
/// path-segment names, and what an update may not change in it.
fn common_update_fields(new: &Value, old: &Value) -> FieldErrors {
    let mut errs = validate_object_meta(new, true, validate_path_segment_name);
    errs.extend(validate_object_meta_update(new, old));
    errs
}

/// Upstream `StripPDBV1beta1Label`, which the v1 conversion applies to any selector but
/// the exact match-none and match-all ones.
fn strip_v1beta1_label(obj: &mut Value) {
    let Some(selector) = obj
        .pointer_mut("/spec/selector")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    let labels_empty = selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .is_none_or(|m| m.is_empty());
    if let Some(Value::Array(exprs)) = selector.get("matchExpressions")
        && labels_empty
        && exprs.len() == 1
        && exprs[0].get("key").and_then(Value::as_str) == Some(PDB_V1BETA1_LABEL)
        && exprs[0]
            .get("values")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
        && matches!(
            exprs[0].get("operator").and_then(Value::as_str),
            Some("Exists" | "DoesNotExist")
        )
    {
        return;
    }
    if let Some(labels) = selector
        .get_mut("matchLabels")
        .and_then(Value::as_object_mut)
    {
        labels.remove(PDB_V1BETA1_LABEL);
    }
    if let Some(exprs) = selector
        .get_mut("matchExpressions")
        .and_then(Value::as_array_mut)
    {
        exprs.retain(|e| e.get("key").and_then(Value::as_str) != Some(PDB_V1BETA1_LABEL));
    }
}

/// `printPodDisruptionBudget`'s Min Available and Max Unavailable: the value's `String()`,
/// `N/A` when unset.
fn int_or_string_cell(v: Option<&Value>) -> String {
    match v {
        None => "N/A".to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.as_i64().unwrap_or(0).to_string(),
    }
}

impl kas_registry::Strategy for Strategy {
    fn reset_fields(&self, subresource: &str) -> &'static [&'static str] {
        match subresource {
            "status" => &["spec"],
            _ => &["status"],
        }
    }

    /// The v1 conversion to the internal version.
    fn default(&self, obj: &mut Value) {
        strip_v1beta1_label(obj);
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        reset_status_and_generation(obj);
    }

    /// The status stays; a changed spec is a new generation.
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        let changed = new.get("spec") != old.get("spec");
        keep_status_and_bump_generation(new, old, changed);
    }

    /// `ValidatePodDisruptionBudget` then, only if it passes, upstream's `BeforeCreate`
    /// ObjectMeta checks with path-segment names.
    fn validate(&self, obj: &Value) -> FieldErrors {
        let errs = causes(validate_spec(obj));
        if !errs.is_empty() {
            return errs;
        }
        validate_object_meta(obj, true, validate_path_segment_name)
    }

    /// `BeforeUpdate`'s common checks, then `ValidatePodDisruptionBudget`.
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = common_update_fields(new, old);
        errs.extend(causes(validate_spec(new)));
        errs
    }

    /// `BeforeUpdate`'s common checks, then `ValidatePodDisruptionBudgetStatusUpdate`.
    fn validate_status_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = common_update_fields(new, old);
        errs.extend(causes(validate_status(new)));
        errs
    }

    fn allow_unconditional_update(&self) -> bool {
        false
    }

    /// `printPodDisruptionBudget`.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        vec![
            json!(int_or_string_cell(spec_field(obj, "minAvailable"))),
            json!(int_or_string_cell(spec_field(obj, "maxUnavailable"))),
            json!(int(obj, "/status/disruptionsAllowed")),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::messages;
    use kas_registry::Strategy as _;

    fn pdb(spec: Value) -> Value {
        let mut obj = json!({"metadata": {"name": "web", "namespace": "ns"}, "spec": spec});
        Strategy.default(&mut obj);
        obj
    }

    #[test]
    fn create_resets_status_and_sets_generation() {
        let mut obj = pdb(json!({"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}));
        obj["status"] = json!({"disruptionsAllowed": 3});
        Strategy.prepare_for_create(&mut obj);
        assert_eq!(obj["status"], json!({}));
        assert_eq!(obj["metadata"]["generation"], 1);
        assert!(Strategy.validate(&obj).is_empty());
        assert_eq!(
            Strategy.table_cells(&obj),
            [json!("1"), json!("N/A"), json!(0)]
        );
        assert_eq!(
            Strategy.table_cells(&obj).len(),
            DESCRIPTOR.table_columns.len()
        );
    }

    #[test]
    fn spec_rules_and_messages() {
        let obj = pdb(json!({"minAvailable": 1, "maxUnavailable": "10%"}));
        assert_eq!(
            messages(&Strategy.validate(&obj)),
            [
                "spec: Invalid value: policy.PodDisruptionBudgetSpec{MinAvailable:(*intstr.IntOrString)(0xc000000000), Selector:(*v1.LabelSelector)(nil), MaxUnavailable:(*intstr.IntOrString)(0xc000000000), UnhealthyPodEvictionPolicy:(*policy.UnhealthyPodEvictionPolicyType)(nil)}: minAvailable and maxUnavailable cannot be both set"
            ]
        );
        let obj = pdb(json!({"minAvailable": -1,
            "selector": {"matchExpressions": [{"key": "app", "operator": "In"}]},
            "unhealthyPodEvictionPolicy": "Never"}));
        assert_eq!(
            messages(&Strategy.validate(&obj)),
            [
                "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0",
                "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
                "spec.unhealthyPodEvictionPolicy: Unsupported value: \"Never\": supported values: \"AlwaysAllow\", \"IfHealthyBudget\"",
            ]
        );
        let obj = pdb(json!({"maxUnavailable": "120%"}));
        assert_eq!(
            messages(&Strategy.validate(&obj)),
            [
                "spec.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"120%\"}: must not be greater than 100%"
            ]
        );
        let obj = pdb(json!({"maxUnavailable": "x"}));
        assert_eq!(
            messages(&Strategy.validate(&obj)),
            [
                "spec.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"x\"}: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
            ]
        );
    }

    #[test]
    fn metadata_is_checked_only_after_the_spec() {
        let mut obj = pdb(json!({"minAvailable": "50%"}));
        obj["metadata"]["name"] = json!("a/b");
        assert_eq!(
            messages(&Strategy.validate(&obj)),
            ["metadata.name: Invalid value: \"a/b\": may not contain '/'"]
        );
        obj["spec"]["minAvailable"] = json!(-2);
        assert_eq!(
            messages(&Strategy.validate(&obj)),
            ["spec.minAvailable: Invalid value: -2: must be greater than or equal to 0"]
        );
    }

    #[test]
    fn updates_keep_status_and_bump_generation() {
        let mut old = pdb(json!({"minAvailable": 1}));
        Strategy.prepare_for_create(&mut old);
        old["status"] = json!({"disruptionsAllowed": 2});
        let mut new = pdb(json!({"minAvailable": 2}));
        new["status"] = json!({});
        Strategy.prepare_for_update(&mut new, &old);
        assert_eq!(new["metadata"]["generation"], 2);
        assert_eq!(new["status"]["disruptionsAllowed"], 2);
        assert!(Strategy.validate_update(&new, &old).is_empty());
        assert_eq!(Strategy.table_cells(&new)[2], json!(2));
        let mut same = old.clone();
        same["metadata"]["labels"] = json!({"a": "b"});
        Strategy.prepare_for_update(&mut same, &old);
        assert_eq!(same["metadata"]["generation"], 1);
        let mut both = new.clone();
        both["spec"]["maxUnavailable"] = json!(1);
        assert_eq!(Strategy.validate_update(&both, &old).len(), 1);
    }

    #[test]
    fn status_updates_are_validated() {
        let old = pdb(json!({"minAvailable": 1}));
        let mut new = old.clone();
        new["status"] = json!({"disruptionsAllowed": -1, "expectedPods": -2,
            "conditions": [
                {"type": "DisruptionAllowed", "status": "True", "reason": "SufficientPods",
                    "lastTransitionTime": "2024-01-01T00:00:00Z"},
                {"type": "DisruptionAllowed", "status": "Maybe", "reason": "1bad",
                    "observedGeneration": -1}]});
        assert_eq!(
            messages(&Strategy.validate_status_update(&new, &old)),
            [
                "status.conditions[1].type: Duplicate value: \"DisruptionAllowed\"",
                "status.conditions[1].status: Unsupported value: \"Maybe\": supported values: \"False\", \"True\", \"Unknown\"",
                "status.conditions[1].observedGeneration: Invalid value: -1: must be greater than or equal to zero",
                "status.conditions[1].lastTransitionTime: Required value: must be set",
                "status.conditions[1].reason: Invalid value: \"1bad\": a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')",
                "status.disruptionsAllowed: Invalid value: -1: must be greater than or equal to 0",
                "status.expectedPods: Invalid value: -2: must be greater than or equal to 0",
            ]
        );
        // The main update does not look at the status.
        assert!(Strategy.validate_update(&new, &old).is_empty());
    }

    #[test]
    fn v1beta1_label_is_stripped_but_from_match_none_and_match_all() {
        let obj = pdb(
            json!({"selector": {"matchLabels": {"app": "web", PDB_V1BETA1_LABEL: "x"},
            "matchExpressions": [{"key": PDB_V1BETA1_LABEL, "operator": "Exists"}]}}),
        );
        assert_eq!(
            obj["spec"]["selector"],
            json!({"matchLabels": {"app": "web"}, "matchExpressions": []})
        );
        let none = json!({"matchExpressions": [{"key": PDB_V1BETA1_LABEL, "operator": "Exists"}]});
        assert_eq!(
            pdb(json!({"selector": none.clone()}))["spec"]["selector"],
            none
        );
    }

    #[test]
    fn percent_cells() {
        let obj = pdb(json!({"maxUnavailable": "25%"}));
        assert_eq!(
            Strategy.table_cells(&obj),
            [json!("N/A"), json!("25%"), json!(0)]
        );
    }
}
