//! Upstream's scheduling checks of a pod spec: `ValidateTolerations`, `validateAffinity`,
//! `validateTopologySpreadConstraints`, and metav1's `ValidateLabelSelector` they use.

use std::collections::BTreeSet;

use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::is_valid_label_value;
use kas_apimachinery::validation::meta::{
    name_is_dns_subdomain, validate_label_name, validate_labels, validate_namespace_name,
};
use serde_json::Value;

use super::json::{arr, int_of, int0, invalid_each, obj, opt_str, str_map, str_of, strings};

/// Upstream `ValidateTolerations`.
pub fn validate_tolerations(tolerations: &[Value], path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    for (i, t) in tolerations.iter().enumerate() {
        let idx = path.index(i);
        let key = str_of(t, "key");
        let operator = str_of(t, "operator");
        let effect = str_of(t, "effect");
        let value = str_of(t, "value");
        if !key.is_empty() {
            errs.extend(validate_label_name(key, &idx.child("key")));
        }
        if key.is_empty() && operator != "Exists" {
            let msg = "operator must be Exists when `key` is empty, which means \"match all values and all keys\"";
            errs.push(field::invalid(&idx.child("operator"), operator, msg));
        }
        if int_of(t, "tolerationSeconds").is_some() && effect != "NoExecute" {
            let msg = "effect must be 'NoExecute' when `tolerationSeconds` is set";
            errs.push(field::invalid(&idx.child("effect"), effect, msg));
        }
        match operator {
            "Equal" | "" => {
                let msgs = is_valid_label_value(value);
                if !msgs.is_empty() {
                    errs.push(field::invalid(
                        &idx.child("operator"),
                        value,
                        &msgs.join(";"),
                    ));
                }
            }
            "Exists" => {
                if !value.is_empty() {
                    let msg = "value must be empty when `operator` is 'Exists'";
                    errs.push(field::invalid(&idx.child("operator"), value, msg));
                }
            }
            _ => {
                let p = idx.child("operator");
                errs.push(field::not_supported(&p, operator, &["Equal", "Exists"]));
            }
        }
        let effects = ["NoSchedule", "PreferNoSchedule", "NoExecute"];
        if !effect.is_empty() && !effects.contains(&effect) {
            errs.push(field::not_supported(&idx.child("effect"), effect, &effects));
        }
    }
    errs
}

/// metav1 `ValidateLabelSelector` (invalid label values refused).
pub fn validate_label_selector(selector: Option<&Value>, path: &Path) -> Vec<field::Error> {
    let Some(sel) = selector else {
        return Vec::new();
    };
    let mut errs = validate_labels(&str_map(sel, "matchLabels"), &path.child("matchLabels"));
    for (i, expr) in arr(sel, "matchExpressions").iter().enumerate() {
        let p = path.child("matchExpressions").index(i);
        let values = strings(expr, "values");
        match str_of(expr, "operator") {
            "In" | "NotIn" if values.is_empty() => {
                let msg = "must be specified when `operator` is 'In' or 'NotIn'";
                errs.push(field::required(&p.child("values"), msg));
            }
            "Exists" | "DoesNotExist" if !values.is_empty() => {
                let msg = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'";
                errs.push(field::forbidden(&p.child("values"), msg));
            }
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            op => {
                let msg = "not a valid selector operator";
                errs.push(field::invalid(&p.child("operator"), op, msg));
            }
        }
        errs.extend(validate_label_name(str_of(expr, "key"), &p.child("key")));
        for (j, v) in values.iter().enumerate() {
            let vp = p.child("values").index(j);
            errs.extend(invalid_each(&vp, v, is_valid_label_value(v)));
        }
    }
    errs
}

/// Upstream `ValidateNodeSelectorRequirement` and `ValidateNodeFieldSelectorRequirement`.
pub(crate) fn node_selector_term(
    term: &Value,
    allow_invalid_values: bool,
    path: &Path,
) -> Vec<field::Error> {
    let mut errs = Vec::new();
    for (j, rq) in arr(term, "matchExpressions").iter().enumerate() {
        let p = path.child("matchExpressions").index(j);
        let values = strings(rq, "values");
        let vp = p.child("values");
        match str_of(rq, "operator") {
            "In" | "NotIn" if values.is_empty() => {
                let msg = "must be specified when `operator` is 'In' or 'NotIn'";
                errs.push(field::required(&vp, msg));
            }
            "Exists" | "DoesNotExist" if !values.is_empty() => {
                let msg = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'";
                errs.push(field::forbidden(&vp, msg));
            }
            "Gt" | "Lt" if values.len() != 1 => {
                let msg = "must be specified single value when `operator` is 'Lt' or 'Gt'";
                errs.push(field::required(&vp, msg));
            }
            "In" | "NotIn" | "Exists" | "DoesNotExist" | "Gt" | "Lt" => {}
            op => errs.push(field::invalid(
                &p.child("operator"),
                op,
                "not a valid selector operator",
            )),
        }
        errs.extend(validate_label_name(str_of(rq, "key"), &p.child("key")));
        if !allow_invalid_values {
            for (k, v) in values.iter().enumerate() {
                errs.extend(invalid_each(&vp.index(k), v, is_valid_label_value(v)));
            }
        }
    }
    for (j, rq) in arr(term, "matchFields").iter().enumerate() {
        let p = path.child("matchFields").index(j);
        let values = strings(rq, "values");
        match str_of(rq, "operator") {
            "In" | "NotIn" if values.len() != 1 => {
                let msg = "must be only one value when `operator` is 'In' or 'NotIn' for node field selector";
                errs.push(field::required(&p.child("values"), msg));
            }
            "In" | "NotIn" => {}
            op => errs.push(field::invalid(
                &p.child("operator"),
                op,
                "not a valid selector operator",
            )),
        }
        let key = str_of(rq, "key");
        if key != "metadata.name" {
            let msg = "not a valid field selector key";
            errs.push(field::invalid(&p.child("key"), key, msg));
        } else {
            for (k, v) in values.iter().enumerate() {
                let vp = p.child("values").index(k);
                errs.extend(invalid_each(&vp, v, name_is_dns_subdomain(v, false)));
            }
        }
    }
    errs
}

/// Upstream `validateNodeAffinity`.
fn node_affinity(na: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    if let Some(req) = obj(na, "requiredDuringSchedulingIgnoredDuringExecution") {
        let p = path.child("requiredDuringSchedulingIgnoredDuringExecution");
        let terms_path = p.child("nodeSelectorTerms");
        let terms = arr(req, "nodeSelectorTerms");
        if terms.is_empty() {
            let msg = "must have at least one node selector term";
            errs.push(field::required(&terms_path, msg));
        }
        for (i, term) in terms.iter().enumerate() {
            errs.extend(node_selector_term(term, false, &terms_path.index(i)));
        }
    }
    let p = path.child("preferredDuringSchedulingIgnoredDuringExecution");
    for (i, term) in arr(na, "preferredDuringSchedulingIgnoredDuringExecution")
        .iter()
        .enumerate()
    {
        let w = int0(term, "weight");
        if !(1..=100).contains(&w) {
            let msg = "must be in the range 1-100";
            errs.push(field::invalid(&p.index(i).child("weight"), w, msg));
        }
        let pref = obj(term, "preference").cloned().unwrap_or(Value::Null);
        errs.extend(node_selector_term(
            &pref,
            true,
            &p.index(i).child("preference"),
        ));
    }
    errs
}

/// Upstream `validateLabelKeys` and the key checks of
/// `validateMatchLabelKeysAndMismatchLabelKeys`.
fn match_label_keys(term: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let selector = obj(term, "labelSelector");
    let matches = strings(term, "matchLabelKeys");
    let mismatches = strings(term, "mismatchLabelKeys");
    for (key, keys) in [
        ("matchLabelKeys", &matches),
        ("mismatchLabelKeys", &mismatches),
    ] {
        if keys.is_empty() {
            continue;
        }
        let p = path.child(key);
        if selector.is_none() {
            let msg = "must not be specified when labelSelector is not set";
            errs.push(field::forbidden(&p, msg));
            continue;
        }
        for (i, k) in keys.iter().enumerate() {
            errs.extend(validate_label_name(k, &p.index(i)));
        }
    }
    if let Some(sel) = selector {
        let mut seen: BTreeSet<String> = str_map(sel, "matchLabels").into_keys().collect();
        for expr in arr(sel, "matchExpressions") {
            let key = str_of(expr, "key");
            if let Some(i) = matches.iter().rposition(|k| *k == key)
                && seen.contains(key)
            {
                let msg = "exists in both matchLabelKeys and labelSelector";
                errs.push(field::invalid(&path.index(i), key, msg));
            }
            seen.insert(key.to_owned());
        }
    }
    for (i, k) in matches.iter().enumerate() {
        if mismatches.contains(k) {
            let msg = "exists in both matchLabelKeys and mismatchLabelKeys";
            errs.push(field::invalid(
                &path.child("matchLabelKeys").index(i),
                *k,
                msg,
            ));
        }
    }
    errs
}

/// Upstream `validatePodAffinityTerm`.
fn pod_affinity_term(term: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs =
        validate_label_selector(obj(term, "labelSelector"), &path.child("labelSelector"));
    let ns_path = path.child("namespaceSelector");
    errs.extend(validate_label_selector(
        obj(term, "namespaceSelector"),
        &ns_path,
    ));
    for name in strings(term, "namespaces") {
        let p = path.child("namespace");
        errs.extend(invalid_each(&p, name, validate_namespace_name(name, false)));
    }
    errs.extend(match_label_keys(term, path));
    let tk = str_of(term, "topologyKey");
    if tk.is_empty() {
        errs.push(field::required(
            &path.child("topologyKey"),
            "can not be empty",
        ));
    }
    errs.extend(validate_label_name(tk, &path.child("topologyKey")));
    errs
}

/// Upstream `validatePodAffinity` / `validatePodAntiAffinity`.
fn pod_affinity(pa: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let req = "requiredDuringSchedulingIgnoredDuringExecution";
    for (i, term) in arr(pa, req).iter().enumerate() {
        errs.extend(pod_affinity_term(term, &path.child(req).index(i)));
    }
    let pref = "preferredDuringSchedulingIgnoredDuringExecution";
    for (j, wt) in arr(pa, pref).iter().enumerate() {
        let p = path.child(pref).index(j);
        let w = int0(wt, "weight");
        if !(1..=100).contains(&w) {
            errs.push(field::invalid(
                &p.child("weight"),
                w,
                "must be in the range 1-100",
            ));
        }
        let term = obj(wt, "podAffinityTerm").cloned().unwrap_or(Value::Null);
        errs.extend(pod_affinity_term(&term, &p.child("podAffinityTerm")));
    }
    errs
}

/// Upstream `validateAffinity`.
pub fn validate_affinity(spec: &Value, path: &Path) -> Vec<field::Error> {
    let Some(affinity) = obj(spec, "affinity") else {
        return Vec::new();
    };
    let mut errs = Vec::new();
    if let Some(na) = obj(affinity, "nodeAffinity") {
        errs.extend(node_affinity(na, &path.child("nodeAffinity")));
    }
    for key in ["podAffinity", "podAntiAffinity"] {
        if let Some(pa) = obj(affinity, key) {
            errs.extend(pod_affinity(pa, &path.child(key)));
        }
    }
    errs
}

/// Upstream `validateTopologySpreadConstraints`.
pub fn validate_topology_spread(constraints: &[Value], path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    for (i, c) in constraints.iter().enumerate() {
        let p = path.index(i);
        let max_skew = int0(c, "maxSkew");
        if max_skew <= 0 {
            errs.push(field::invalid(
                &p.child("maxSkew"),
                max_skew,
                "must be greater than zero",
            ));
        }
        let key = str_of(c, "topologyKey");
        if key.is_empty() {
            errs.push(field::required(&p.child("topologyKey"), "can not be empty"));
        }
        let action = str_of(c, "whenUnsatisfiable");
        let actions = ["DoNotSchedule", "ScheduleAnyway"];
        if !actions.contains(&action) {
            errs.push(field::not_supported(
                &p.child("whenUnsatisfiable"),
                action,
                &actions,
            ));
        }
        let repeated = constraints[i + 1..]
            .iter()
            .any(|r| str_of(r, "topologyKey") == key && str_of(r, "whenUnsatisfiable") == action);
        if repeated {
            let dp = p.child("{topologyKey, whenUnsatisfiable}");
            errs.push(field::duplicate(&dp, format!("{{{key}, {action}}}")));
        }
        if let Some(md) = int_of(c, "minDomains") {
            let mp = p.child("minDomains");
            if md <= 0 {
                errs.push(field::invalid(&mp, md, "must be greater than zero"));
            }
            if action != "DoNotSchedule" {
                let msg = format!(
                    "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}"
                );
                errs.push(field::invalid(&mp, md, &msg));
            }
        }
        for policy in ["nodeAffinityPolicy", "nodeTaintsPolicy"] {
            if let Some(v) = opt_str(c, policy).filter(|v| !["Honor", "Ignore"].contains(v)) {
                errs.push(field::not_supported(
                    &p.child(policy),
                    v,
                    &["Honor", "Ignore"],
                ));
            }
        }
        errs.extend(topology_match_label_keys(c, &p.child("matchLabelKeys")));
        errs.extend(validate_label_selector(
            obj(c, "labelSelector"),
            &p.child("labelSelector"),
        ));
    }
    errs
}

/// Upstream `validateMatchLabelKeysInTopologySpread`.
fn topology_match_label_keys(c: &Value, path: &Path) -> Vec<field::Error> {
    let keys = strings(c, "matchLabelKeys");
    if keys.is_empty() {
        return Vec::new();
    }
    let mut errs = Vec::new();
    let mut selector_keys = BTreeSet::new();
    if let Some(sel) = obj(c, "labelSelector") {
        selector_keys.extend(str_map(sel, "matchLabels").into_keys());
        selector_keys.extend(
            arr(sel, "matchExpressions")
                .iter()
                .map(|e| str_of(e, "key").to_owned()),
        );
    } else {
        let msg = "must not be specified when labelSelector is not set";
        errs.push(field::forbidden(path, msg));
    }
    for (i, key) in keys.iter().enumerate() {
        errs.extend(validate_label_name(key, &path.index(i)));
        if selector_keys.contains(*key) {
            let msg = "exists in both matchLabelKeys and labelSelector";
            errs.push(field::invalid(&path.index(i), *key, msg));
        }
    }
    errs
}
