//! Upstream's `pkg/apis/flowcontrol/validation` for v1 requests (zero nominal
//! concurrency shares allowed): the FlowSchema rules here, the priority levels' in
//! `levels`.

use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::meta::{name_is_dns_subdomain, validate_namespace_name};
use serde_json::Value;

use super::{go_strings, int, list, present, s, strings};

mod levels;
pub use levels::priority_level_spec;

const VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "proxy",
    "update",
    "watch",
];
const NS_INTRO: &str = "each member of this list must be '*' or a DNS-1123 label; ";

fn has_wildcard(items: &[String]) -> bool {
    items.iter().any(|i| i == "*")
}

/// Upstream `ValidateFlowSchemaSpec`.
pub fn flow_schema_spec(name: &str, spec: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let precedence = int(spec, "/matchingPrecedence");
    let p = path.child("matchingPrecedence");
    if precedence <= 0 {
        errs.push(field::invalid(&p, precedence, "must be a positive value"));
    }
    if precedence > 10000 {
        errs.push(field::invalid(
            &p,
            precedence,
            "must not be greater than 10000",
        ));
    }
    if precedence == 1 && name != "exempt" {
        let msg = "only the schema named 'exempt' may have matchingPrecedence 1";
        errs.push(field::invalid(&p, precedence, msg));
    }
    if let Some(method) = present(spec, "/distinguisherMethod") {
        let ty = s(method, "/type");
        if !["ByNamespace", "ByUser"].contains(&ty) {
            let value = BadValue::Raw(format!(
                "flowcontrol.FlowDistinguisherMethod{{Type:{}}}",
                super::quote(ty)
            ));
            let p = path.child("distinguisherMethod").child("type");
            errs.push(field::not_supported(&p, value, &["ByNamespace", "ByUser"]));
        }
    }
    let pl = s(spec, "/priorityLevelConfiguration/name");
    let p = path.child("priorityLevelConfiguration").child("name");
    if pl.is_empty() {
        errs.push(field::required(&p, "must reference a priority level"));
    } else {
        for msg in name_is_dns_subdomain(pl, false) {
            errs.push(field::invalid(&p, pl, &msg));
        }
    }
    for (i, rule) in list(spec, "/rules").iter().enumerate() {
        errs.extend(rules_with_subjects(rule, &path.child("rules").index(i)));
    }
    errs
}

fn rules_with_subjects(rule: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let subjects = list(rule, "/subjects");
    if subjects.is_empty() {
        let msg = "subjects must contain at least one value";
        errs.push(field::required(&path.child("subjects"), msg));
    }
    for (i, subject) in subjects.iter().enumerate() {
        errs.extend(validate_subject(subject, &path.child("subjects").index(i)));
    }
    let resource_rules = list(rule, "/resourceRules");
    let non_resource_rules = list(rule, "/nonResourceRules");
    if resource_rules.is_empty() && non_resource_rules.is_empty() {
        let msg = "at least one of resourceRules and nonResourceRules has to be non-empty";
        errs.push(field::required(path, msg));
    }
    for (i, r) in resource_rules.iter().enumerate() {
        errs.extend(resource_rule(r, &path.child("resourceRules").index(i)));
    }
    for (i, r) in non_resource_rules.iter().enumerate() {
        errs.extend(non_resource_rule(
            r,
            &path.child("nonResourceRules").index(i),
        ));
    }
    errs
}

fn validate_subject(subject: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let kind = s(subject, "/kind");
    let others: &[(&str, &str)] = match kind {
        "ServiceAccount" => {
            let p = path.child("serviceAccount");
            match present(subject, "/serviceAccount") {
                None => errs.push(field::required(
                    &p,
                    "serviceAccount is required when subject kind is 'ServiceAccount'",
                )),
                Some(sa) => errs.extend(service_account(sa, &p)),
            }
            &[("user", "User"), ("group", "Group")]
        }
        "User" => {
            named(subject, "user", "User", path, &mut errs);
            &[("serviceAccount", "ServiceAccount"), ("group", "Group")]
        }
        "Group" => {
            named(subject, "group", "Group", path, &mut errs);
            &[("serviceAccount", "ServiceAccount"), ("user", "User")]
        }
        _ => {
            let valid = ["Group", "ServiceAccount", "User"];
            errs.push(field::not_supported(&path.child("kind"), kind, &valid));
            &[]
        }
    };
    for (key, kind) in others {
        if present(subject, &format!("/{key}")).is_some() {
            let msg = format!("{key} is forbidden when subject kind is not '{kind}'");
            errs.push(field::forbidden(&path.child(key), &msg));
        }
    }
    errs
}

/// A User or Group subject: required, with a name.
fn named(subject: &Value, key: &str, kind: &str, path: &Path, errs: &mut Vec<field::Error>) {
    let p = path.child(key);
    match present(subject, &format!("/{key}")) {
        None => {
            let msg = format!("{key} is required when subject kind is '{kind}'");
            errs.push(field::required(&p, &msg));
        }
        Some(v) if s(v, "/name").is_empty() => errs.push(field::required(&p.child("name"), "")),
        Some(_) => {}
    }
}

fn service_account(sa: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let name = s(sa, "/name");
    if name.is_empty() {
        errs.push(field::required(&path.child("name"), ""));
    } else if name != "*" {
        for msg in name_is_dns_subdomain(name, false) {
            errs.push(field::invalid(&path.child("name"), name, &msg));
        }
    }
    let ns = s(sa, "/namespace");
    if ns.is_empty() {
        let msg = "must specify namespace for service account";
        errs.push(field::required(&path.child("namespace"), msg));
    } else {
        for msg in validate_namespace_name(ns, false) {
            errs.push(field::invalid(&path.child("namespace"), ns, &msg));
        }
    }
    errs
}

fn verbs(rule: &Value, path: &Path, errs: &mut Vec<field::Error>) {
    let verbs = strings(rule, "/verbs");
    let p = path.child("verbs");
    let value = || BadValue::Raw(go_strings(rule, "/verbs"));
    if verbs.is_empty() {
        errs.push(field::required(&p, "verbs must contain at least one value"));
    } else if has_wildcard(&verbs) {
        if verbs.len() > 1 {
            let msg = "if '*' is present, must not specify other verbs";
            errs.push(field::invalid(&p, value(), msg));
        }
    } else if !verbs.iter().all(|v| VERBS.contains(&v.as_str())) {
        errs.push(field::not_supported(&p, value(), VERBS));
    }
}

fn resource_rule(rule: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    verbs(rule, path, &mut errs);
    for (key, what) in [("apiGroups", "api group"), ("resources", "resource")] {
        let items = strings(rule, &format!("/{key}"));
        let p = path.child(key);
        if items.is_empty() {
            let msg = format!("resource rules must supply at least one {what}");
            errs.push(field::required(&p, &msg));
        } else if items.len() > 1 && has_wildcard(&items) {
            let msg = format!("if '*' is present, must not specify other {what}s");
            let value = BadValue::Raw(go_strings(rule, &format!("/{key}")));
            errs.push(field::invalid(&p, value, &msg));
        }
    }
    let namespaces = strings(rule, "/namespaces");
    let cluster = rule.get("clusterScope").and_then(Value::as_bool) == Some(true);
    let p = path.child("namespaces");
    if namespaces.is_empty() && !cluster {
        let msg = "resource rules that are not cluster scoped must supply at least one namespace";
        errs.push(field::required(&p, msg));
    } else if has_wildcard(&namespaces) {
        if namespaces.len() > 1 {
            let msg = "if '*' is present, must not specify other namespaces";
            let value = BadValue::Raw(go_strings(rule, "/namespaces"));
            errs.push(field::invalid(&p, value, msg));
        }
    } else {
        for (i, ns) in namespaces.iter().enumerate() {
            for msg in validate_namespace_name(ns, false) {
                let msg = format!("{NS_INTRO}{msg}");
                errs.push(field::invalid(&p.index(i), ns.as_str(), &msg));
            }
        }
    }
    errs
}

fn non_resource_rule(rule: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    verbs(rule, path, &mut errs);
    let urls = strings(rule, "/nonResourceURLs");
    let p = path.child("nonResourceURLs");
    if urls.is_empty() {
        let msg = "nonResourceURLs must contain at least one value";
        errs.push(field::required(&p, msg));
    } else if has_wildcard(&urls) {
        if urls.len() > 1 {
            let msg = "if '*' is present, must not specify other non-resource URLs";
            let value = BadValue::Raw(go_strings(rule, "/nonResourceURLs"));
            errs.push(field::invalid(&p, value, msg));
        }
    } else {
        for (i, url) in urls.iter().enumerate() {
            if let Some(msg) = non_resource_url(url) {
                errs.push(field::invalid(&p.index(i), url.as_str(), msg));
            }
        }
    }
    errs
}

/// Upstream `ValidateNonResourceURLPath`.
fn non_resource_url(path: &str) -> Option<&'static str> {
    if path.is_empty() {
        return Some("must not be empty");
    }
    if path == "/" {
        return None;
    }
    if !path.starts_with('/') {
        return Some("must start with slash");
    }
    if path.contains(' ') {
        return Some("must not contain white-space");
    }
    if path.contains("//") {
        return Some("must not contain double slash");
    }
    let wildcards = path.matches('*').count();
    if wildcards > 1 || (wildcards == 1 && !path.ends_with('*')) {
        return Some("wildcard can only do suffix matching");
    }
    None
}

/// Upstream's status validation of both kinds: condition types set and unique.
pub fn status(obj: &Value) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let path = Path::new("status").child("conditions");
    let mut seen = Vec::new();
    for (i, condition) in list(obj, "/status/conditions").iter().enumerate() {
        let ty = s(condition, "/type");
        if seen.contains(&ty) {
            errs.push(field::duplicate(&path.index(i).child("type"), ty));
        }
        seen.push(ty);
        if ty.is_empty() {
            errs.push(field::required(
                &path.index(i).child("type"),
                "must not be empty",
            ));
        }
    }
    errs
}
