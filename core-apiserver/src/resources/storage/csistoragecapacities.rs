//! storage.k8s.io/v1 CSIStorageCapacity, after upstream's
//! `pkg/registry/storage/csistoragecapacity`, `ValidateCSIStorageCapacity`,
//! `ValidateCSIStorageCapacityUpdate` and `printCSIStorageCapacity` (which has no Age).
//!
//! Left out: upstream's tolerance of invalid label values in a stored `nodeTopology`.

use kas_api::storage::v1::CSI_STORAGE_CAPACITY;
use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::meta::{IS_NEGATIVE_ERROR_MSG, name_is_dns_subdomain};
use kas_endpoints::responsewriters::table::NAME_COLUMN;
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, TableColumn, Verb};
use serde_json::{Value, json};

use super::{causes, go_strings, quote, s};
use crate::podspec::validation::scheduling::validate_label_selector;
use crate::resources::persistentvolumes::validation::quantity;

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "storage.k8s.io",
    version: "v1",
    kind: "CSIStorageCapacity",
    list_kind: "CSIStorageCapacityList",
    plural: "csistoragecapacities",
    singular: "csistoragecapacity",
    short_names: &[],
    categories: &[],
    scope: Scope::Namespaced,
    verbs: Verb::ALL,
    subresources: &[],
    table_columns: &[
        NAME_COLUMN,
        TableColumn {
            name: "StorageClassName",
            type_: "string",
            format: "",
            description: CSI_STORAGE_CAPACITY.doc("storageClassName"),
            priority: 0,
        },
        TableColumn {
            name: "Capacity",
            type_: "string",
            format: "",
            description: CSI_STORAGE_CAPACITY.doc("capacity"),
            priority: 0,
        },
    ],
    table_name_and_age: false,
    storage_resource: "csistoragecapacities",
    schema: Some(&kas_api::storage::v1::CSI_STORAGE_CAPACITY),
    list_schema: Some(&kas_api::storage::v1::CSI_STORAGE_CAPACITY_LIST),
};

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

/// Upstream `ValidateCSIStorageCapacity`.
fn validate_capacity(obj: &Value) -> FieldErrors {
    let mut errs = validate_object_meta(obj, true, name_is_dns_subdomain);
    let topology = obj.get("nodeTopology").filter(|v| !v.is_null());
    let mut e = validate_label_selector(topology, &Path::new("nodeTopology"));
    let class = s(obj, "/storageClassName");
    for msg in name_is_dns_subdomain(class, false) {
        e.push(field::invalid(&Path::new("storageClassName"), class, &msg));
    }
    if let Some(q) = obj
        .get("capacity")
        .and_then(quantity)
        .filter(|q| q.value() < 0)
    {
        {
            let path = Path::new("capacity");
            e.push(field::invalid(&path, q.canonical(), IS_NEGATIVE_ERROR_MSG));
        }
    }
    errs.extend(causes(e));
    errs
}

/// A `*metav1.LabelSelector` as upstream's field errors print it.
fn go_selector(sel: Option<&Value>) -> BadValue {
    let Some(sel) = sel.filter(|v| !v.is_null()) else {
        return BadValue::Null;
    };
    let labels = match sel.get("matchLabels").and_then(Value::as_object) {
        None => "map[string]string(nil)".to_owned(),
        Some(m) => {
            let items: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}:{}", quote(k), quote(v.as_str().unwrap_or(""))))
                .collect();
            format!("map[string]string{{{}}}", items.join(", "))
        }
    };
    let exprs = match sel.get("matchExpressions").and_then(Value::as_array) {
        None => "[]v1.LabelSelectorRequirement(nil)".to_owned(),
        Some(list) => {
            let items: Vec<String> = list
                .iter()
                .map(|r| {
                    format!(
                        "v1.LabelSelectorRequirement{{Key:{}, Operator:{}, Values:{}}}",
                        quote(s(r, "/key")),
                        quote(s(r, "/operator")),
                        go_strings("string", r.get("values")),
                    )
                })
                .collect();
            format!("[]v1.LabelSelectorRequirement{{{}}}", items.join(", "))
        }
    };
    BadValue::Raw(format!(
        "v1.LabelSelector{{MatchLabels:{labels}, MatchExpressions:{exprs}}}"
    ))
}

/// Upstream `ValidateCSIStorageCapacityUpdate`'s own part.
fn validate_capacity_update(new: &Value, old: &Value) -> Vec<field::Error> {
    let same = crate::resources::persistentvolumes::validation::semantic;
    let topology = |o: &Value| o.get("nodeTopology").filter(|v| !v.is_null()).map(same);
    let mut errs = Vec::new();
    if topology(new) != topology(old) {
        let value = go_selector(new.get("nodeTopology"));
        errs.push(field::invalid(
            &Path::new("nodeTopology"),
            value,
            "field is immutable",
        ));
    }
    let class = s(new, "/storageClassName");
    if class != s(old, "/storageClassName") {
        let path = Path::new("storageClassName");
        errs.push(field::invalid(&path, class, "field is immutable"));
    }
    errs
}

impl kas_registry::Strategy for Strategy {
    fn validate(&self, obj: &Value) -> FieldErrors {
        validate_capacity(obj)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(validate_capacity(new));
        errs.extend(causes(validate_capacity_update(new, old)));
        errs
    }

    /// Upstream: an update must name the resourceVersion it replaces.
    fn allow_unconditional_update(&self) -> bool {
        false
    }

    /// Upstream `printCSIStorageCapacity`: Name, StorageClassName, Capacity.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        let capacity = obj
            .get("capacity")
            .and_then(quantity)
            .map_or_else(|| "<unset>".to_owned(), |q| q.canonical());
        vec![
            json!(kas_registry::meta::name(obj)),
            json!(s(obj, "/storageClassName")),
            json!(capacity),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::messages;
    use kas_registry::Strategy as _;

    fn capacity(extra: Value) -> Value {
        let mut obj = json!({"metadata": {"name": "c1", "namespace": "kube-system"},
            "storageClassName": "fast", "nodeTopology": {"matchLabels": {"zone": "a"}}});
        if let (Some(o), Some(e)) = (obj.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        obj
    }

    #[test]
    fn fields_are_checked() {
        assert!(
            Strategy
                .validate(&capacity(json!({"capacity": "10Gi"})))
                .is_empty()
        );
        let bad = capacity(json!({"capacity": "-1Gi", "storageClassName": "Fast"}));
        let msgs = messages(&Strategy.validate(&bad));
        assert!(
            msgs[0].starts_with(
                "storageClassName: Invalid value: \"Fast\": a lowercase RFC 1123 subdomain"
            ),
            "{msgs:?}"
        );
        assert_eq!(
            msgs[1],
            "capacity: Invalid value: \"-1Gi\": must be greater than or equal to 0"
        );
    }

    #[test]
    fn inputs_are_immutable_and_printed() {
        let old = capacity(json!({"capacity": "1Gi"}));
        let new = capacity(json!({"capacity": "2Gi", "storageClassName": "slow",
            "nodeTopology": {"matchLabels": {"zone": "b"}}}));
        assert_eq!(
            messages(&Strategy.validate_update(&new, &old)),
            vec![
                "nodeTopology: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"zone\":\"b\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable",
                "storageClassName: Invalid value: \"slow\": field is immutable",
            ]
        );
        assert!(
            Strategy
                .validate_update(&capacity(json!({"capacity": "5Gi"})), &old)
                .is_empty()
        );
        assert_eq!(
            Strategy.table_cells(&new),
            vec![json!("c1"), json!("slow"), json!("2Gi")]
        );
        assert_eq!(
            Strategy.table_cells(&capacity(json!({})))[2],
            json!("<unset>")
        );
    }
}
