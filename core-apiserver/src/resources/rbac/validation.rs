//! Upstream `pkg/apis/rbac/validation`: what the four kinds' validation shares.

use kas_apimachinery::golang::strconv::quote;
use kas_apimachinery::labels::from_label_selector;
use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::meta::{name_is_dns_subdomain, validate_path_segment_name};
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use serde_json::Value;

use super::{GROUP_KIND, GROUP_NAME, SERVICE_ACCOUNT_KIND, USER_KIND, items};
use crate::resources::apps::common::{causes, validate_label_selector};

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A `[]string` field as upstream's BadValue prints it (`[]string(nil)` when absent).
fn strings(v: &Value, key: &str) -> BadValue {
    BadValue::Strings(v.get(key).and_then(Value::as_array).map(|a| {
        a.iter()
            .map(|s| s.as_str().unwrap_or("").to_owned())
            .collect()
    }))
}

/// Upstream `ValidatePolicyRule`.
fn validate_policy_rule(rule: &Value, namespaced: bool, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    if items(rule, "verbs").is_empty() {
        errs.push(field::required(
            &path.child("verbs"),
            "verbs must contain at least one value",
        ));
    }
    let has = |k: &str| !items(rule, k).is_empty();
    if has("nonResourceURLs") {
        let urls_path = path.child("nonResourceURLs");
        if namespaced {
            errs.push(field::invalid(
                &urls_path,
                strings(rule, "nonResourceURLs"),
                "namespaced rules cannot apply to non-resource URLs",
            ));
        }
        if has("apiGroups") || has("resources") || has("resourceNames") {
            errs.push(field::invalid(
                &urls_path,
                strings(rule, "nonResourceURLs"),
                "rules cannot apply to both regular resources and non-resource URLs",
            ));
        }
        return errs;
    }
    if !has("apiGroups") {
        errs.push(field::required(
            &path.child("apiGroups"),
            "resource rules must supply at least one api group",
        ));
    }
    if !has("resources") {
        errs.push(field::required(
            &path.child("resources"),
            "resource rules must supply at least one resource",
        ));
    }
    errs
}

/// The object meta (names are upstream's `ValidateRBACName`, path segment names) and each
/// rule, as `ValidateRole` (namespaced) and the first half of `ValidateClusterRole` check them.
pub fn validate_meta_and_rules(obj: &Value, namespaced: bool) -> FieldErrors {
    let mut errs = validate_object_meta(obj, namespaced, validate_path_segment_name);
    let path = Path::new("rules");
    for (i, rule) in items(obj, "rules").iter().enumerate() {
        errs.extend(causes(validate_policy_rule(
            rule,
            namespaced,
            &path.index(i),
        )));
    }
    errs
}

/// The selector with every expression value replaced by a valid one, so that metav1
/// `ValidateLabelSelector` with `AllowInvalidLabelValueInSelector` (which skips the
/// values' syntax, not their count) can be run as the strict one.
fn without_value_syntax(selector: &Value) -> Value {
    let mut sel = selector.clone();
    if let Some(exprs) = sel
        .get_mut("matchExpressions")
        .and_then(Value::as_array_mut)
    {
        for values in exprs
            .iter_mut()
            .filter_map(|e| e.get_mut("values").and_then(Value::as_array_mut))
        {
            values.iter_mut().for_each(|v| *v = Value::from(""));
        }
    }
    sel
}

/// The aggregation rule half of upstream `ValidateClusterRole`.
pub fn validate_aggregation_rule(obj: &Value, allow_invalid_label_value: bool) -> FieldErrors {
    let Some(rule) = obj.get("aggregationRule").filter(|r| !r.is_null()) else {
        return Vec::new();
    };
    let path = Path::new("aggregationRule").child("clusterRoleSelectors");
    let selectors = items(rule, "clusterRoleSelectors");
    let mut errs = Vec::new();
    if selectors.is_empty() {
        errs.push(field::required(
            &path,
            "at least one clusterRoleSelector required if aggregationRule is non-nil",
        ));
    }
    for (i, selector) in selectors.iter().enumerate() {
        let p = path.index(i);
        // A null item is Go's zero LabelSelector.
        let selector = match selector {
            Value::Null => Value::Object(Default::default()),
            s => s.clone(),
        };
        let checked = if allow_invalid_label_value {
            without_value_syntax(&selector)
        } else {
            selector.clone()
        };
        errs.extend(validate_label_selector(Some(&checked), &p));
        if from_label_selector(&selector).is_err() {
            // Upstream passes the failed conversion's nil selector.
            errs.push(field::invalid(
                &p,
                BadValue::Null,
                "invalid label selector.",
            ));
        }
    }
    causes(errs)
}

/// The ClusterRole strategy's `hasInvalidLabelValueInLabelSelector`: whether the stored
/// role's aggregation selectors fail strict validation, which the update then allows.
pub fn has_invalid_label_value_in_aggregation_rule(obj: &Value) -> bool {
    let Some(rule) = obj.get("aggregationRule").filter(|r| !r.is_null()) else {
        return false;
    };
    items(rule, "clusterRoleSelectors")
        .iter()
        .any(|s| !validate_label_selector(Some(s), &Path::nil()).is_empty())
}

/// Upstream `ValidateRoleBindingSubject`.
fn validate_subject(subject: &Value, namespaced: bool, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let name = str_of(subject, "name");
    let api_group = str_of(subject, "apiGroup");
    if name.is_empty() {
        errs.push(field::required(&path.child("name"), ""));
    }
    match str_of(subject, "kind") {
        SERVICE_ACCOUNT_KIND => {
            if !name.is_empty() {
                for msg in name_is_dns_subdomain(name, false) {
                    errs.push(field::invalid(&path.child("name"), name, &msg));
                }
            }
            if !api_group.is_empty() {
                errs.push(field::not_supported(
                    &path.child("apiGroup"),
                    api_group,
                    &[""],
                ));
            }
            if !namespaced && str_of(subject, "namespace").is_empty() {
                errs.push(field::required(&path.child("namespace"), ""));
            }
        }
        USER_KIND | GROUP_KIND => {
            if api_group != GROUP_NAME {
                errs.push(field::not_supported(
                    &path.child("apiGroup"),
                    api_group,
                    &[GROUP_NAME],
                ));
            }
        }
        kind => errs.push(field::not_supported(
            &path.child("kind"),
            kind,
            &[SERVICE_ACCOUNT_KIND, USER_KIND, GROUP_KIND],
        )),
    }
    errs
}

/// Upstream `ValidateRoleBinding` (namespaced, `role_kinds` Role and ClusterRole) and
/// `ValidateClusterRoleBinding` (`role_kinds` ClusterRole).
pub fn validate_binding(obj: &Value, namespaced: bool, role_kinds: &[&str]) -> FieldErrors {
    let mut errs = validate_object_meta(obj, namespaced, validate_path_segment_name);
    let role_ref = obj.get("roleRef").unwrap_or(&Value::Null);
    let path = Path::new("roleRef");
    let mut field_errs = Vec::new();
    let api_group = str_of(role_ref, "apiGroup");
    if api_group != GROUP_NAME {
        field_errs.push(field::not_supported(
            &path.child("apiGroup"),
            api_group,
            &[GROUP_NAME],
        ));
    }
    let kind = str_of(role_ref, "kind");
    if !role_kinds.contains(&kind) {
        field_errs.push(field::not_supported(&path.child("kind"), kind, role_kinds));
    }
    let name = str_of(role_ref, "name");
    if name.is_empty() {
        field_errs.push(field::required(&path.child("name"), ""));
    } else {
        for msg in validate_path_segment_name(name, false) {
            field_errs.push(field::invalid(&path.child("name"), name, &msg));
        }
    }
    let subjects = Path::new("subjects");
    for (i, subject) in items(obj, "subjects").iter().enumerate() {
        field_errs.extend(validate_subject(subject, namespaced, &subjects.index(i)));
    }
    errs.extend(causes(field_errs));
    errs
}

/// An internal `rbac.RoleRef` as upstream's `%#v` prints it.
fn go_role_ref(role_ref: &Value) -> BadValue {
    BadValue::Raw(format!(
        "rbac.RoleRef{{APIGroup:{}, Kind:{}, Name:{}}}",
        quote(str_of(role_ref, "apiGroup")),
        quote(str_of(role_ref, "kind")),
        quote(str_of(role_ref, "name"))
    ))
}

/// Upstream `ValidateRoleBindingUpdate`/`ValidateClusterRoleBindingUpdate`: the binding
/// again, the metadata update, and the role reference unchanged.
pub fn validate_binding_update(
    new: &Value,
    old: &Value,
    namespaced: bool,
    role_kinds: &[&str],
) -> FieldErrors {
    let mut errs = validate_binding(new, namespaced, role_kinds);
    errs.extend(validate_object_meta_update(new, old));
    let null = Value::Null;
    let (new_ref, old_ref) = (
        new.get("roleRef").unwrap_or(&null),
        old.get("roleRef").unwrap_or(&null),
    );
    if ["apiGroup", "kind", "name"]
        .iter()
        .any(|k| str_of(new_ref, k) != str_of(old_ref, k))
    {
        errs.extend(causes(vec![field::invalid(
            &Path::new("roleRef"),
            go_role_ref(new_ref),
            "cannot change roleRef",
        )]));
    }
    errs
}
