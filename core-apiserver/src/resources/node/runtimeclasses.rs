//! node.k8s.io/v1 RuntimeClass, after upstream's `pkg/registry/node/runtimeclass`,
//! `ValidateRuntimeClass`, `ValidateRuntimeClassUpdate` and `printRuntimeClass`.

use std::collections::BTreeSet;

use kas_apimachinery::golang::strconv::quote;
use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::meta::{
    name_is_dns_label, name_is_dns_subdomain, validate_labels,
};
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, TableColumn, Verb};
use serde_json::{Value, json};

use crate::podspec::validation::resources::validate_resource_requirements;
use crate::podspec::validation::scheduling::validate_tolerations;
use crate::resources::apps::common::{causes, string_map};

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "node.k8s.io",
    version: "v1",
    kind: "RuntimeClass",
    list_kind: "RuntimeClassList",
    plural: "runtimeclasses",
    singular: "runtimeclass",
    short_names: &[],
    categories: &[],
    scope: Scope::Cluster,
    verbs: Verb::ALL,
    subresources: &[],
    // Upstream describes the column with `metav1.ObjectMeta{}.SwaggerDoc()["handler"]`,
    // which ObjectMeta lacks: the description is empty.
    table_columns: &[TableColumn {
        name: "Handler",
        type_: "string",
        format: "",
        description: "",
        priority: 0,
    }],
    table_name_and_age: true,
    storage_resource: "runtimeclasses",
    schema: Some(&kas_api::node::v1::RUNTIME_CLASS),
    list_schema: Some(&kas_api::node::v1::RUNTIME_CLASS_LIST),
};

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

fn handler(obj: &Value) -> &str {
    obj.get("handler").and_then(Value::as_str).unwrap_or("")
}

/// A set (non-null) object field.
fn set<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|v| !v.is_null())
}

/// The internal `core.Toleration` as `%#v` prints it (a set `tolerationSeconds` is a
/// pointer, whose address kas prints as a fixed one, as elsewhere).
fn go_toleration(t: &Value) -> BadValue {
    let s = |k: &str| quote(t.get(k).and_then(Value::as_str).unwrap_or(""));
    let seconds = if set(t, "tolerationSeconds").is_some() {
        "(*int64)(0xc000000000)"
    } else {
        "(*int64)(nil)"
    };
    BadValue::Raw(format!(
        "core.Toleration{{Key:{}, Operator:{}, Value:{}, Effect:{}, TolerationSeconds:{seconds}}}",
        s("key"),
        s("operator"),
        s("value"),
        s("effect"),
    ))
}

/// Upstream `validateTolerations`: the pod's checks, then no two alike (by key, operator,
/// value and effect).
fn validate_runtime_tolerations(tolerations: &[Value], path: &Path) -> Vec<field::Error> {
    let mut errs = validate_tolerations(tolerations, path);
    let mut seen = BTreeSet::new();
    for (i, t) in tolerations.iter().enumerate() {
        let s = |k: &str| t.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
        if !seen.insert([s("key"), s("operator"), s("value"), s("effect")]) {
            errs.push(field::duplicate(&path.index(i), go_toleration(t)));
        }
    }
    errs
}

/// Upstream `ValidateRuntimeClass`.
fn validate_runtime_class(obj: &Value) -> FieldErrors {
    let mut errs = validate_object_meta(obj, false, name_is_dns_subdomain);
    let mut more = Vec::new();
    let h = handler(obj);
    for msg in name_is_dns_label(h, false) {
        more.push(field::invalid(&Path::new("handler"), h, &msg));
    }
    if let Some(overhead) = set(obj, "overhead") {
        // Upstream reuses the container resource checks on `Limits: overhead.PodFixed`.
        let limits = set(overhead, "podFixed").cloned().unwrap_or(json!({}));
        more.extend(validate_resource_requirements(
            &json!({ "limits": limits }),
            &Path::new("overhead"),
        ));
    }
    if let Some(scheduling) = set(obj, "scheduling") {
        let path = Path::new("scheduling");
        if set(scheduling, "nodeSelector").is_some() {
            more.extend(validate_labels(
                &string_map(scheduling.get("nodeSelector")),
                &path.child("nodeSelector"),
            ));
        }
        let tolerations = scheduling
            .get("tolerations")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        more.extend(validate_runtime_tolerations(
            tolerations,
            &path.child("tolerations"),
        ));
    }
    errs.extend(causes(more));
    errs
}

impl kas_registry::Strategy for Strategy {
    fn validate(&self, obj: &Value) -> FieldErrors {
        validate_runtime_class(obj)
    }

    /// `ValidateRuntimeClass`, then `ValidateRuntimeClassUpdate`: the metadata update and
    /// the handler unchanged.
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_runtime_class(new);
        errs.extend(validate_object_meta_update(new, old));
        let h = handler(new);
        if h != handler(old) {
            errs.extend(causes(vec![field::invalid(
                &Path::new("handler"),
                h,
                "field is immutable",
            )]));
        }
        errs
    }

    /// Upstream: a PUT may create a RuntimeClass.
    fn allow_create_on_update(&self) -> bool {
        true
    }

    fn allow_unconditional_update(&self) -> bool {
        false
    }

    /// `printRuntimeClass`.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        vec![json!(handler(obj))]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::messages;
    use kas_registry::Strategy as _;

    fn rc(handler: &str, rest: Value) -> Value {
        let mut obj = json!({"metadata": {"name": "gvisor"}, "handler": handler});
        if let (Some(o), Some(r)) = (obj.as_object_mut(), rest.as_object()) {
            o.extend(r.clone());
        }
        obj
    }

    #[test]
    fn valid_class_and_cells() {
        let obj = rc(
            "runsc",
            json!({"overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}},
                "scheduling": {"nodeSelector": {"runtime": "gvisor"},
                    "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]}}),
        );
        let errs = Strategy.validate(&obj);
        assert!(errs.is_empty(), "{:?}", messages(&errs));
        assert_eq!(Strategy.table_cells(&obj), [json!("runsc")]);
        assert_eq!(
            Strategy.table_cells(&obj).len(),
            DESCRIPTOR.table_columns.len()
        );
    }

    #[test]
    fn handler_overhead_and_scheduling_rules() {
        assert_eq!(
            messages(&Strategy.validate(&rc("Run_SC", json!({})))),
            [
                "handler: Invalid value: \"Run_SC\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
            ]
        );
        let obj = rc(
            "runc",
            json!({"overhead": {"podFixed": {"cpu": "-1", "foo": "1"}},
                "scheduling": {"nodeSelector": {"bad key!": "v"},
                    "tolerations": [
                        {"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"},
                        {"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule",
                            "tolerationSeconds": 5},
                        {"operator": "Equal", "value": "v"}]}}),
        );
        assert_eq!(
            messages(&Strategy.validate(&obj)),
            [
                // Upstream's container checks name the limits they were given.
                "overhead.limits[cpu]: Invalid value: \"-1\": must be greater than or equal to 0",
                "overhead.limits[foo]: Invalid value: \"foo\": must be a standard resource type or fully qualified",
                "overhead.limits[foo]: Invalid value: \"foo\": must be a standard resource for containers",
                "scheduling.nodeSelector: Invalid value: \"bad key!\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                "scheduling.tolerations[1].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set",
                "scheduling.tolerations[2].operator: Invalid value: \"Equal\": operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
                "scheduling.tolerations[1]: Duplicate value: core.Toleration{Key:\"k\", Operator:\"Equal\", Value:\"v\", Effect:\"NoSchedule\", TolerationSeconds:(*int64)(0xc000000000)}",
            ]
        );
    }

    #[test]
    fn handler_is_immutable() {
        let old = rc("runc", json!({}));
        let new = rc("runsc", json!({}));
        assert_eq!(
            messages(&Strategy.validate_update(&new, &old)),
            ["handler: Invalid value: \"runsc\": field is immutable"]
        );
        let mut relabelled = old.clone();
        relabelled["metadata"]["labels"] = json!({"a": "b"});
        assert!(Strategy.validate_update(&relabelled, &old).is_empty());
        assert!(Strategy.allow_create_on_update());
    }
}
