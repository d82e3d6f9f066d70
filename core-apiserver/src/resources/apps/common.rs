//! What the apps/v1 workloads share, after upstream's `pkg/apis/apps/validation` (the
//! template, selector and int-or-percent checks), metav1's label selector helpers and the
//! registry strategies' generation and status handling.

use std::collections::BTreeMap;

use kas_apimachinery::golang::strconv::quote;
use kas_apimachinery::labels::{Selector, from_label_selector};
use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::meta::validate_nonnegative_field;
use kas_apimachinery::validation::{is_dns1123_label, regex_error};
use serde_json::{Map, Value, json};

use crate::podspec::validation::validate_pod_template_spec;
pub(crate) use kas_registry::strategy::causes;

/// An integer field of `v` at a JSON pointer; 0 when absent, as Go's zero value.
pub(crate) fn int(v: &Value, pointer: &str) -> i64 {
    v.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

/// Whether `v` has a non-null value at a JSON pointer (a Go pointer that is set).
pub(crate) fn is_set(v: &Value, pointer: &str) -> bool {
    v.pointer(pointer).is_some_and(|v| !v.is_null())
}

/// A `map[string]string` of a JSON object (non-string values count as empty).
pub(crate) fn string_map(v: Option<&Value>) -> BTreeMap<String, String> {
    v.and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_owned()))
        .collect()
}

/// A `map[string]string` as Go's `%#v` prints it: `map[string]string(nil)` when absent.
pub(crate) fn go_string_map(v: Option<&Value>) -> String {
    match v.and_then(Value::as_object) {
        None => "map[string]string(nil)".to_owned(),
        Some(m) => {
            let sorted: BTreeMap<&String, &str> = m
                .iter()
                .map(|(k, v)| (k, v.as_str().unwrap_or("")))
                .collect();
            let pairs: Vec<String> = sorted
                .iter()
                .map(|(k, v)| format!("{}:{}", quote(k), quote(v)))
                .collect();
            format!("map[string]string{{{}}}", pairs.join(", "))
        }
    }
}

/// A `[]string` as Go's `%#v` prints it.
pub(crate) fn go_strings(v: Option<&Value>) -> String {
    match v.and_then(Value::as_array) {
        None => "[]string(nil)".to_owned(),
        Some(items) => {
            let quoted: Vec<String> = items
                .iter()
                .map(|s| quote(s.as_str().unwrap_or("")))
                .collect();
            format!("[]string{{{}}}", quoted.join(", "))
        }
    }
}

/// A `*metav1.LabelSelector` as upstream's `field.Error` prints it: the pointer
/// dereferenced and written with `%#v` (`LabelSelector`'s `String` takes a pointer, so it is
/// not used); a nil selector is `"null"`.
pub(crate) fn go_label_selector(selector: Option<&Value>) -> BadValue {
    let Some(sel) = selector.filter(|s| !s.is_null()) else {
        return BadValue::Null;
    };
    let expressions = match sel.get("matchExpressions").and_then(Value::as_array) {
        None => "[]v1.LabelSelectorRequirement(nil)".to_owned(),
        Some(exprs) => {
            let items: Vec<String> = exprs
                .iter()
                .map(|e| {
                    let s = |k: &str| quote(e.get(k).and_then(Value::as_str).unwrap_or(""));
                    format!(
                        "v1.LabelSelectorRequirement{{Key:{}, Operator:{}, Values:{}}}",
                        s("key"),
                        s("operator"),
                        go_strings(e.get("values"))
                    )
                })
                .collect();
            format!("[]v1.LabelSelectorRequirement{{{}}}", items.join(", "))
        }
    };
    BadValue::Raw(format!(
        "v1.LabelSelector{{MatchLabels:{}, MatchExpressions:{}}}",
        go_string_map(sel.get("matchLabels")),
        expressions
    ))
}

/// metav1 `ValidateLabelSelector` with `AllowInvalidLabelValueInSelector: false`, which
/// every apps/v1 workload's selector is validated with.
pub(crate) fn validate_label_selector(selector: Option<&Value>, path: &Path) -> Vec<field::Error> {
    crate::podspec::validation::scheduling::validate_label_selector(
        selector.filter(|s| !s.is_null()),
        path,
    )
}

/// `len(selector.MatchLabels) + len(selector.MatchExpressions) == 0`.
pub(crate) fn selector_is_empty(selector: &Value) -> bool {
    let len = |k: &str| match selector.get(k) {
        Some(Value::Object(m)) => m.len(),
        Some(Value::Array(a)) => a.len(),
        _ => 0,
    };
    len("matchLabels") + len("matchExpressions") == 0
}

/// The selector checks `ValidateDeploymentSpec` and `ValidateReplicaSetSpec` share: required,
/// valid (`ValidateLabelSelector`) and not empty (upstream says "deployment" for both), then
/// metav1 `LabelSelectorAsSelector` ("invalid label selector" when it fails). Answers the
/// selector the template is checked against, `None` when it could not be built.
pub(crate) fn validate_workload_selector(
    spec: &Value,
    path: &Path,
    errs: &mut Vec<field::Error>,
) -> Option<Selector> {
    let sel_path = path.child("selector");
    let selector = spec.get("selector").filter(|s| !s.is_null());
    match selector {
        None => errs.push(field::required(&sel_path, "")),
        Some(sel) => {
            errs.extend(validate_label_selector(Some(sel), &sel_path));
            if selector_is_empty(sel) {
                errs.push(field::invalid(
                    &sel_path,
                    go_label_selector(Some(sel)),
                    "empty selector is invalid for deployment",
                ));
            }
        }
    }
    match from_label_selector(selector.unwrap_or(&Value::Null)) {
        Ok(s) => Some(s),
        Err(_) => {
            errs.push(field::invalid(
                &sel_path,
                go_label_selector(selector),
                "invalid label selector",
            ));
            None
        }
    }
}

/// Upstream `ValidatePodTemplateSpecForReplicaSet`: the template's labels match the
/// selector, the template is a valid pod template, restarts always, and has no
/// `activeDeadlineSeconds` (upstream names ReplicaSet in the message for Deployments too).
/// `path` is the template's.
pub(crate) fn validate_pod_template_spec_for_replica_set(
    template: &Value,
    selector: &Selector,
    path: &Path,
) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let labels_value = template
        .pointer("/metadata/labels")
        .filter(|l| !l.is_null());
    if !selector.is_empty() && !selector.matches(&string_map(labels_value)) {
        errs.push(field::invalid(
            &path.child("metadata").child("labels"),
            BadValue::Raw(go_string_map(labels_value)),
            "`selector` does not match template `labels`",
        ));
    }
    errs.extend(validate_pod_template_spec(template, path));
    errs.extend(crate::podspec::validate_controller_template(
        template,
        path,
        "ReplicaSet",
    ));
    errs
}

/// Upstream `ValidateImmutableField` of `spec.selector` (semantic equality: a nil and an
/// empty map or list are equal), which the Deployment and ReplicaSet strategies add on
/// update for apps/v1.
pub(crate) fn validate_selector_immutable(new: &Value, old: &Value) -> Vec<field::Error> {
    let new_sel = new.pointer("/spec/selector");
    if semantic_selector(new_sel) == semantic_selector(old.pointer("/spec/selector")) {
        return Vec::new();
    }
    vec![field::invalid(
        &Path::new("spec").child("selector"),
        go_label_selector(new_sel),
        "field is immutable",
    )]
}

/// A selector with nulls, empty maps and empty lists dropped (`apiequality.Semantic`).
fn semantic_selector(v: Option<&Value>) -> Option<Value> {
    fn strip(v: &Value) -> Option<Value> {
        match v {
            Value::Null => None,
            Value::Object(m) => {
                let kept: Map<String, Value> = m
                    .iter()
                    .filter_map(|(k, v)| strip(v).map(|v| (k.clone(), v)))
                    .collect();
                (!kept.is_empty()).then_some(Value::Object(kept))
            }
            Value::Array(a) if a.is_empty() => None,
            Value::Array(a) => Some(Value::Array(
                a.iter().map(|v| strip(v).unwrap_or(json!({}))).collect(),
            )),
            other => Some(other.clone()),
        }
    }
    // A set selector, even an empty one, differs from a nil one.
    v.filter(|v| !v.is_null())
        .map(|v| strip(v).unwrap_or(json!({})))
}

/// Upstream `IsValidPercent`'s message.
fn percent_errors(s: &str) -> Vec<String> {
    let valid =
        s.len() > 1 && s.ends_with('%') && s[..s.len() - 1].bytes().all(|b| b.is_ascii_digit());
    if valid {
        Vec::new()
    } else {
        vec![regex_error(
            "a valid percent string must be a numeric string followed by an ending '%'",
            "[0-9]+%",
            &["1%", "93%"],
        )]
    }
}

/// An `intstr.IntOrString` as upstream's `field.Error` prints it (`%#v`: its `String` takes
/// a pointer). `Type` is 0 for an int, 1 for a string.
pub(crate) fn go_int_or_string(v: &Value) -> BadValue {
    let raw = match v {
        Value::String(s) => format!(
            "intstr.IntOrString{{Type:1, IntVal:0, StrVal:{}}}",
            quote(s)
        ),
        other => format!(
            "intstr.IntOrString{{Type:0, IntVal:{}, StrVal:\"\"}}",
            other.as_i64().unwrap_or(0)
        ),
    };
    BadValue::Raw(raw)
}

/// Upstream `ValidatePositiveIntOrPercent`.
pub(crate) fn validate_positive_int_or_percent(v: &Value, path: &Path) -> Vec<field::Error> {
    match v {
        Value::String(s) => percent_errors(s)
            .iter()
            .map(|msg| field::invalid(path, go_int_or_string(v), msg))
            .collect(),
        other => validate_nonnegative_field(other.as_i64().unwrap_or(0), path),
    }
}

/// Upstream `getPercentValue`: the number of a valid percent string.
fn percent_value(v: &Value) -> Option<i64> {
    let s = v.as_str()?;
    if !percent_errors(s).is_empty() {
        return None;
    }
    // Go's Atoi saturates on overflow.
    Some(s[..s.len() - 1].parse().unwrap_or(i64::MAX))
}

/// Upstream `getIntOrPercentValue`: a percent's number, else `IntValue()` (a string that
/// is no integer counts 0).
pub(crate) fn int_or_percent_value(v: &Value) -> i64 {
    if let Some(p) = percent_value(v) {
        return p;
    }
    match v {
        Value::String(s) => s.parse().unwrap_or(0),
        other => other.as_i64().unwrap_or(0),
    }
}

/// Upstream `IsNotMoreThan100Percent`.
pub(crate) fn is_not_more_than_100_percent(v: &Value, path: &Path) -> Vec<field::Error> {
    match percent_value(v) {
        Some(p) if p > 100 => vec![field::invalid(
            path,
            go_int_or_string(v),
            "must not be greater than 100%",
        )],
        _ => Vec::new(),
    }
}

/// The status of a new object: upstream's `PrepareForCreate` resets it to the zero value,
/// which the v1 JSON writes as `{}`.
pub(crate) fn reset_status_and_generation(obj: &mut Value) {
    if let Some(map) = obj.as_object_mut() {
        map.insert("status".into(), json!({}));
    }
    kas_registry::meta::first_generation(obj);
}

/// Upstream strategies' `PrepareForUpdate`: the status stays the stored one, and the
/// generation goes up by one when `changed` (a spec change, for Deployments also an
/// annotation change) and stays otherwise.
pub(crate) fn keep_status_and_bump_generation(new: &mut Value, old: &Value, changed: bool) {
    kas_registry::meta::keep_status(new, old);
    kas_registry::meta::next_generation(new, old, changed);
}

/// The warning upstream's Deployment, ReplicaSet and StatefulSet strategies give on create
/// for a name that is no DNS label.
pub(crate) fn name_warnings(obj: &Value) -> Vec<String> {
    let msgs = is_dns1123_label(kas_registry::meta::name(obj));
    if msgs.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [{}]",
        msgs.join(" ")
    )]
}

/// The `selector.String()` of a metav1 LabelSelector, `err` when it is not one
/// (`printDeployment` shows `<invalid>`, metav1 `FormatLabelSelector` `<error>`).
pub(crate) fn label_selector_string(selector: Option<&Value>, err: &str) -> String {
    match from_label_selector(selector.unwrap_or(&Value::Null)) {
        Ok(s) => s.to_string(),
        Err(_) => err.to_owned(),
    }
}

/// metav1 `FormatLabelSelector`: the selector's string, `<none>` when that is empty.
pub(crate) fn format_label_selector(selector: Option<&Value>) -> String {
    let s = label_selector_string(selector, "<error>");
    if s.is_empty() { "<none>".to_owned() } else { s }
}

/// A workload's `spec.template` after upstream's defaulting: apps/v1 templates are values,
/// not pointers, so a missing one is an empty template, defaulted as any.
pub(crate) fn default_template(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let template = spec.entry("template").or_insert_with(|| json!({}));
    if template.is_null() {
        *template = json!({});
    }
    crate::podspec::defaults::default_pod_template_spec(template);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_print_as_go_does() {
        let sel = json!({"matchLabels": {"b": "2", "a": "1"},
            "matchExpressions": [{"key": "k", "operator": "In", "values": ["x"]}]});
        assert_eq!(
            go_label_selector(Some(&sel)).to_string(),
            "v1.LabelSelector{MatchLabels:map[string]string{\"a\":\"1\", \"b\":\"2\"}, MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:\"k\", Operator:\"In\", Values:[]string{\"x\"}}}}"
        );
        assert_eq!(
            go_label_selector(Some(&json!({}))).to_string(),
            "v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}"
        );
        assert_eq!(go_label_selector(None).to_string(), "\"null\"");
        assert_eq!(format_label_selector(Some(&sel)), "a=1,b=2,k in (x)");
        assert_eq!(format_label_selector(None), "<none>");
    }

    #[test]
    fn int_or_percent_rules() {
        let p = Path::new("x");
        assert!(validate_positive_int_or_percent(&json!("25%"), &p).is_empty());
        assert!(validate_positive_int_or_percent(&json!(3), &p).is_empty());
        let bad = validate_positive_int_or_percent(&json!("25"), &p);
        assert_eq!(
            bad[0].to_string(),
            "x: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"25\"}: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
        );
        assert_eq!(
            validate_positive_int_or_percent(&json!(-1), &p)[0].to_string(),
            "x: Invalid value: -1: must be greater than or equal to 0"
        );
        assert_eq!(int_or_percent_value(&json!("0%")), 0);
        assert_eq!(int_or_percent_value(&json!("7")), 7);
        assert_eq!(int_or_percent_value(&json!(2)), 2);
        assert_eq!(is_not_more_than_100_percent(&json!("101%"), &p).len(), 1);
        assert!(is_not_more_than_100_percent(&json!(500), &p).is_empty());
    }

    #[test]
    fn selector_immutability_is_semantic() {
        let with = |sel: Value| json!({"spec": {"selector": sel}});
        let a = with(json!({"matchLabels": {"app": "web"}}));
        let b = with(json!({"matchLabels": {"app": "web"}, "matchExpressions": []}));
        assert!(validate_selector_immutable(&a, &b).is_empty());
        let c = with(json!({"matchLabels": {"app": "db"}}));
        assert_eq!(
            validate_selector_immutable(&c, &a)[0].to_string(),
            "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"db\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"
        );
    }

    #[test]
    fn names_that_are_no_dns_labels_warn() {
        assert!(name_warnings(&json!({"metadata": {"name": "web"}})).is_empty());
        let w = name_warnings(&json!({"metadata": {"name": "web.v1"}}));
        assert_eq!(w.len(), 1);
        assert!(
            w[0].starts_with("metadata.name: this is used in Pod names"),
            "{w:?}"
        );
    }
}
