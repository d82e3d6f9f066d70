//! core/v1 ResourceQuota, after upstream's `pkg/registry/core/resourcequota`,
//! `ValidateResourceQuota`, `ValidateResourceQuotaUpdate`, `ValidateResourceQuotaStatusUpdate`
//! and `printResourceQuota`. Charging usage on writes is the `ResourceQuota` admission
//! plugin's, and recomputing `status.used` kube-controller-manager's.

use std::collections::BTreeSet;

use kas_apimachinery::resource::Quantity;
use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::meta::name_is_dns_subdomain;
use kas_endpoints::responsewriters::table::{AGE_COLUMN, NAME_COLUMN, age};
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, Subresource, TableColumn, Verb};
use serde_json::{Map, Value, json};

use crate::helper::{
    is_integer_resource_name, is_standard_quota_resource_name, validate_resource_name,
};
use kas_registry::strategy::causes;

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "",
    version: "v1",
    kind: "ResourceQuota",
    list_kind: "ResourceQuotaList",
    plural: "resourcequotas",
    singular: "resourcequota",
    short_names: &["quota"],
    categories: &[],
    scope: Scope::Namespaced,
    verbs: Verb::ALL,
    subresources: &[Subresource::STATUS],
    // Upstream's printer puts Age second.
    table_columns: &[
        NAME_COLUMN,
        AGE_COLUMN,
        TableColumn {
            name: "Request",
            type_: "string",
            format: "",
            description: "Request represents a minimum amount of cpu/memory that a container may consume.",
            priority: 0,
        },
        TableColumn {
            name: "Limit",
            type_: "string",
            format: "",
            description: "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.",
            priority: 0,
        },
    ],
    table_name_and_age: false,
    storage_resource: "resourcequotas",
    schema: Some(&kas_api::core::v1::RESOURCE_QUOTA),
    list_schema: Some(&kas_api::core::v1::RESOURCE_QUOTA_LIST),
};

/// How the role installs this resource.
pub fn install(_: &super::ResourceOptions) -> super::Install {
    super::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

/// Upstream `standardResourceQuotaScopes` plus `CrossNamespacePodAffinity`
/// (`IsStandardResourceQuotaScope`); `VolumeAttributesClass` is behind a gate that is off in
/// 1.33.
const STANDARD_SCOPES: [&str; 6] = [
    "Terminating",
    "NotTerminating",
    "BestEffort",
    "NotBestEffort",
    "PriorityClass",
    "CrossNamespacePodAffinity",
];

/// Upstream `podComputeQuotaResources`.
const POD_COMPUTE: [&str; 6] = [
    "cpu",
    "memory",
    "limits.cpu",
    "limits.memory",
    "requests.cpu",
    "requests.memory",
];

/// Upstream `IsResourceQuotaScopeValidForResource`.
fn scope_valid_for_resource(scope: &str, resource: &str) -> bool {
    match scope {
        "Terminating"
        | "NotTerminating"
        | "NotBestEffort"
        | "PriorityClass"
        | "CrossNamespacePodAffinity" => resource == "pods" || POD_COMPUTE.contains(&resource),
        "BestEffort" => resource == "pods",
        _ => true,
    }
}

/// Upstream's `invalidScopePairs`.
const CONFLICTING_SCOPES: [[&str; 2]; 2] = [
    ["BestEffort", "NotBestEffort"],
    ["Terminating", "NotTerminating"],
];

fn strings(v: Option<&Value>) -> Option<Vec<String>> {
    v.and_then(Value::as_array).map(|a| {
        a.iter()
            .map(|s| s.as_str().unwrap_or_default().to_owned())
            .collect()
    })
}

/// A `[]core.ResourceQuotaScope` as Go's `%#v` prints it.
fn scopes_value(scopes: Option<&[String]>) -> BadValue {
    BadValue::Raw(match scopes {
        None => "[]core.ResourceQuotaScope(nil)".to_owned(),
        Some(s) => {
            let items: Vec<String> = s
                .iter()
                .map(|x| kas_apimachinery::golang::strconv::quote(x))
                .collect();
            format!("[]core.ResourceQuotaScope{{{}}}", items.join(", "))
        }
    })
}

/// Upstream `ValidateResourceQuotaResourceName`.
fn validate_quota_resource_name(name: &str, path: &Path) -> Vec<field::Error> {
    let mut errs = validate_resource_name(name, path);
    if !name.contains('/') && !is_standard_quota_resource_name(name) {
        errs.push(field::invalid(
            path,
            name,
            "must be a standard resource for quota",
        ));
    }
    errs
}

/// Upstream `ValidateResourceQuantityValue` (with `ValidateNonnegativeQuantity`).
fn validate_quantity_value(name: &str, value: &Value, path: &Path) -> Vec<field::Error> {
    let text = match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let Ok(q) = Quantity::parse(text.trim()) else {
        return Vec::new();
    };
    let mut errs = Vec::new();
    if q.cmp_value(&Quantity::parse("0").expect("zero parses")) == std::cmp::Ordering::Less {
        errs.push(field::invalid(
            path,
            q.canonical(),
            "must be greater than or equal to 0",
        ));
    }
    if is_integer_resource_name(name) && q.milli_value() % 1000 != 0 {
        errs.push(field::invalid(
            path,
            BadValue::Raw(q.go_syntax()),
            "must be an integer",
        ));
    }
    errs
}

/// The names and quantities of a `ResourceList` at `path` (sorted: Go's map order is
/// random).
fn validate_resource_list(list: Option<&Value>, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    for (name, value) in list.and_then(Value::as_object).into_iter().flatten() {
        let p = path.key(name);
        errs.extend(validate_quota_resource_name(name, &p));
        errs.extend(validate_quantity_value(name, value, &p));
    }
    errs
}

fn hard_names(spec: &Value) -> BTreeSet<String> {
    spec.get("hard")
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// Upstream `validateResourceQuotaScopes`.
fn validate_scopes(spec: &Value, path: &Path) -> Vec<field::Error> {
    let Some(scopes) = strings(spec.get("scopes")).filter(|s| !s.is_empty()) else {
        return Vec::new();
    };
    let hard = hard_names(spec);
    let path = path.child("scopes");
    let value = || scopes_value(Some(&scopes));
    let mut errs = Vec::new();
    for scope in &scopes {
        if !STANDARD_SCOPES.contains(&scope.as_str()) {
            errs.push(field::invalid(&path, value(), "unsupported scope"));
        }
        for k in &hard {
            if is_standard_quota_resource_name(k) && !scope_valid_for_resource(scope, k) {
                errs.push(field::invalid(
                    &path,
                    value(),
                    "unsupported scope applied to resource",
                ));
            }
        }
    }
    for pair in CONFLICTING_SCOPES {
        if pair.iter().all(|p| scopes.iter().any(|s| s == p)) {
            errs.push(field::invalid(&path, value(), "conflicting scopes"));
        }
    }
    errs
}

/// Upstream `validateScopedResourceSelectorRequirement`, through `validateScopeSelector`.
fn validate_scope_selector(spec: &Value, path: &Path) -> Vec<field::Error> {
    let Some(selector) = spec.get("scopeSelector").filter(|s| !s.is_null()) else {
        return Vec::new();
    };
    let hard = hard_names(spec);
    let path = path.child("scopeSelector").child("matchExpressions");
    let mut errs = Vec::new();
    let mut seen = BTreeSet::new();
    let empty = Vec::new();
    let exprs = selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    for req in exprs {
        let scope = req.get("scopeName").and_then(Value::as_str).unwrap_or("");
        let op = req.get("operator").and_then(Value::as_str).unwrap_or("");
        let values = strings(req.get("values"));
        if !STANDARD_SCOPES.contains(&scope) {
            errs.push(field::invalid(
                &path.child("scopeName"),
                scope,
                "unsupported scope",
            ));
        }
        for k in &hard {
            if is_standard_quota_resource_name(k) && !scope_valid_for_resource(scope, k) {
                errs.push(field::invalid(
                    &path,
                    BadValue::Raw(scope_selector_value(selector)),
                    "unsupported scope applied to resource",
                ));
            }
        }
        if matches!(
            scope,
            "BestEffort"
                | "NotBestEffort"
                | "Terminating"
                | "NotTerminating"
                | "CrossNamespacePodAffinity"
        ) && op != "Exists"
        {
            errs.push(field::invalid(
                &path.child("operator"),
                op,
                "must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
            ));
        }
        let count = values.as_ref().map_or(0, Vec::len);
        match op {
            "In" | "NotIn" if count == 0 => errs.push(field::required(
                &path.child("values"),
                "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
            )),
            "Exists" | "DoesNotExist" if count != 0 => errs.push(field::invalid(
                &path.child("values"),
                BadValue::Strings(values.clone()),
                "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
            )),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            _ => errs.push(field::invalid(
                &path.child("operator"),
                op,
                "not a valid selector operator",
            )),
        }
        seen.insert(scope.to_owned());
    }
    for pair in CONFLICTING_SCOPES {
        if pair.iter().all(|p| seen.contains(*p)) {
            errs.push(field::invalid(
                &path,
                scopes_value(strings(spec.get("scopes")).as_deref()),
                "conflicting scopes",
            ));
        }
    }
    errs
}

/// A `*core.ScopeSelector` as Go's `%#v` prints the struct it points to.
fn scope_selector_value(selector: &Value) -> String {
    let q = kas_apimachinery::golang::strconv::quote;
    let exprs: Vec<String> = selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|r| {
            let s = |k: &str| q(r.get(k).and_then(Value::as_str).unwrap_or(""));
            let values = match strings(r.get("values")) {
                None => "[]string(nil)".to_owned(),
                Some(v) => format!(
                    "[]string{{{}}}",
                    v.iter().map(|x| q(x)).collect::<Vec<_>>().join(", ")
                ),
            };
            format!(
                "core.ScopedResourceSelectorRequirement{{ScopeName:{}, Operator:{}, Values:{values}}}",
                s("scopeName"),
                s("operator")
            )
        })
        .collect();
    let exprs = if selector
        .get("matchExpressions")
        .is_some_and(Value::is_array)
    {
        format!(
            "[]core.ScopedResourceSelectorRequirement{{{}}}",
            exprs.join(", ")
        )
    } else {
        "[]core.ScopedResourceSelectorRequirement(nil)".to_owned()
    };
    format!("core.ScopeSelector{{MatchExpressions:{exprs}}}")
}

/// Upstream `ValidateResourceQuotaSpec`.
fn validate_spec(obj: &Value) -> Vec<field::Error> {
    let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
    let path = Path::new("spec");
    let mut errs = validate_resource_list(spec.get("hard"), &path.child("hard"));
    errs.extend(validate_scopes(&spec, &path));
    errs.extend(validate_scope_selector(&spec, &path));
    errs
}

/// Upstream `ValidateResourceQuotaStatus`.
fn validate_status(obj: &Value) -> Vec<field::Error> {
    let status = obj.get("status").cloned().unwrap_or(Value::Null);
    let path = Path::new("status");
    let mut errs = validate_resource_list(status.get("hard"), &path.child("hard"));
    errs.extend(validate_resource_list(
        status.get("used"),
        &path.child("used"),
    ));
    errs
}

impl kas_registry::Strategy for Strategy {
    /// Upstream's store sets `ReturnDeletedObject`.
    fn return_deleted_object(&self) -> bool {
        true
    }

    fn reset_fields(&self, subresource: &str) -> &'static [&'static str] {
        match subresource {
            "status" => &["spec"],
            _ => &["status"],
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(map) = obj.as_object_mut() {
            map.insert("status".into(), Value::Object(Map::new()));
        }
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        kas_registry::meta::keep_status(new, old);
    }

    /// Upstream `ValidateResourceQuota`.
    fn validate(&self, obj: &Value) -> FieldErrors {
        let mut errs = validate_object_meta(obj, true, name_is_dns_subdomain);
        errs.extend(causes(validate_spec(obj)));
        errs.extend(causes(validate_status(obj)));
        errs
    }

    /// Upstream `ValidateResourceQuotaUpdate`: the spec again, and scopes that do not
    /// change.
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(causes(validate_spec(new)));
        let scopes = |o: &Value| -> BTreeSet<String> {
            strings(o.pointer("/spec/scopes"))
                .unwrap_or_default()
                .into_iter()
                .collect()
        };
        if scopes(new) != scopes(old) {
            let value = scopes_value(strings(new.pointer("/spec/scopes")).as_deref());
            errs.push(
                field::invalid(
                    &Path::new("spec").child("scopes"),
                    value,
                    "field is immutable",
                )
                .to_cause(),
            );
        }
        errs
    }

    /// Upstream `ValidateResourceQuotaStatusUpdate`.
    fn validate_status_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        if kas_registry::meta::str_field(new, "resourceVersion").is_empty() {
            errs.push(field::required(&Path::new("resourceVersion"), "").to_cause());
        }
        errs.extend(causes(validate_status(new)));
        errs
    }

    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        let (request, limit) = print_columns(obj);
        vec![
            json!(kas_registry::meta::name(obj)),
            json!(age(kas_registry::meta::str_field(obj, "creationTimestamp"))),
            json!(request),
            json!(limit),
        ]
    }
}

/// Upstream `printResourceQuota`'s Request and Limit cells: `<resource>: <used>/<hard>` for
/// each resource of `status.hard`, sorted, `limits.*` in the Limit column.
fn print_columns(obj: &Value) -> (String, String) {
    let hard = obj.pointer("/status/hard").and_then(Value::as_object);
    let used = obj.pointer("/status/used").and_then(Value::as_object);
    let (mut request, mut limit) = (Vec::new(), Vec::new());
    for (name, hard_q) in hard.into_iter().flatten() {
        let shown = |v: Option<&Value>| match v {
            Some(Value::String(s)) => s.clone(),
            Some(other) if !other.is_null() => other.to_string(),
            _ => "0".to_owned(),
        };
        let cell = format!(
            "{name}: {}/{}",
            shown(used.and_then(|u| u.get(name))),
            shown(Some(hard_q))
        );
        if name.split('.').next() == Some("limits") && name.contains('.') {
            limit.push(cell);
        } else {
            request.push(cell);
        }
    }
    (request.join(", "), limit.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::messages;
    use kas_registry::Strategy as _;

    fn quota(spec: Value) -> Value {
        json!({"metadata": {"name": "q", "namespace": "default"}, "spec": spec})
    }

    #[test]
    fn hard_names_and_values_are_upstreams() {
        let ok = quota(
            json!({"hard": {"cpu": "1", "pods": "10", "count/deployments.apps": "2",
            "requests.hugepages-2Mi": "1Gi"}}),
        );
        assert_eq!(messages(&Strategy.validate(&ok)), Vec::<String>::new());
        let bad = quota(json!({"hard": {"foo": "1", "cpu": "-1", "pods": "1500m"}}));
        assert_eq!(
            messages(&Strategy.validate(&bad)),
            vec![
                "spec.hard[cpu]: Invalid value: \"-1\": must be greater than or equal to 0",
                "spec.hard[foo]: Invalid value: \"foo\": must be a standard resource type or fully qualified",
                "spec.hard[foo]: Invalid value: \"foo\": must be a standard resource for quota",
                "spec.hard[pods]: Invalid value: resource.Quantity{i:resource.int64Amount{value:1500, scale:-3}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:\"1500m\", Format:\"DecimalSI\"}: must be an integer",
            ]
        );
    }

    #[test]
    fn scopes_are_checked_against_resources_and_each_other() {
        let bad =
            quota(json!({"hard": {"secrets": "1"}, "scopes": ["BestEffort", "NotBestEffort"]}));
        let got = messages(&Strategy.validate(&bad));
        assert!(got.contains(&"spec.scopes: Invalid value: []core.ResourceQuotaScope{\"BestEffort\", \"NotBestEffort\"}: unsupported scope applied to resource".to_owned()), "{got:?}");
        assert!(got.contains(&"spec.scopes: Invalid value: []core.ResourceQuotaScope{\"BestEffort\", \"NotBestEffort\"}: conflicting scopes".to_owned()), "{got:?}");
        let unknown = quota(json!({"hard": {"pods": "1"}, "scopes": ["Sometimes"]}));
        assert_eq!(
            messages(&Strategy.validate(&unknown)),
            vec![
                "spec.scopes: Invalid value: []core.ResourceQuotaScope{\"Sometimes\"}: unsupported scope"
            ]
        );
    }

    #[test]
    fn scope_selector_operators_are_checked() {
        let bad = quota(
            json!({"hard": {"pods": "1"}, "scopeSelector": {"matchExpressions": [
            {"scopeName": "PriorityClass", "operator": "In"},
            {"scopeName": "BestEffort", "operator": "In", "values": ["x"]}]}}),
        );
        assert_eq!(
            messages(&Strategy.validate(&bad)),
            vec![
                "spec.scopeSelector.matchExpressions.values: Required value: must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
                "spec.scopeSelector.matchExpressions.operator: Invalid value: \"In\": must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
            ]
        );
    }

    #[test]
    fn scopes_are_immutable_and_status_is_kept() {
        let old = quota(json!({"hard": {"pods": "1"}, "scopes": ["Terminating"]}));
        let new = quota(json!({"hard": {"pods": "2"}, "scopes": ["NotTerminating"]}));
        assert_eq!(
            messages(&Strategy.validate_update(&new, &old)),
            vec![
                "spec.scopes: Invalid value: []core.ResourceQuotaScope{\"NotTerminating\"}: field is immutable"
            ]
        );
        let mut created = quota(json!({"hard": {"pods": "1"}}));
        created["status"] = json!({"hard": {"pods": "5"}});
        Strategy.prepare_for_create(&mut created);
        assert_eq!(created["status"], json!({}));
    }

    #[test]
    fn printer_splits_requests_and_limits() {
        let mut q = quota(json!({}));
        q["status"] = json!({"hard": {"pods": "10", "limits.cpu": "2", "requests.memory": "1Gi"},
            "used": {"pods": "1"}});
        assert_eq!(
            print_columns(&q),
            (
                "pods: 1/10, requests.memory: 0/1Gi".to_owned(),
                "limits.cpu: 0/2".to_owned()
            )
        );
    }
}
