//! storage.k8s.io/v1 CSINode, after upstream's `pkg/registry/storage/csinode`,
//! `ValidateCSINode`, `ValidateCSINodeUpdate` (long node IDs allowed, as the strategy
//! allows them) and `printCSINode`.

use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::is_qualified_name;
use kas_apimachinery::validation::meta::name_is_dns_subdomain;
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, TableColumn, Verb};
use serde_json::{Value, json};

use super::{causes, go_pointer, go_strings, quote};
use crate::podspec::validation::sources::csi_driver_name;

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "storage.k8s.io",
    version: "v1",
    kind: "CSINode",
    list_kind: "CSINodeList",
    plural: "csinodes",
    singular: "csinode",
    short_names: &[],
    categories: &[],
    scope: Scope::Cluster,
    verbs: Verb::ALL,
    subresources: &[],
    table_columns: &[TableColumn {
        name: "Drivers",
        type_: "integer",
        format: "",
        // Upstream's printer writes this one itself.
        description: "Drivers indicates the number of CSI drivers registered on the node",
        priority: 0,
    }],
    table_name_and_age: true,
    storage_resource: "csinodes",
    schema: Some(&kas_api::storage::v1::CSI_NODE),
    list_schema: Some(&kas_api::storage::v1::CSI_NODE_LIST),
};

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

/// Upstream `csiNodeIDLongerMaxLength` (the strategy sets `AllowLongNodeID`).
const NODE_ID_MAX: usize = 256;

fn drivers(obj: &Value) -> &[Value] {
    obj.pointer("/spec/drivers")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Upstream `validateCSINodeDriver` for each driver.
fn validate_drivers(obj: &Value) -> Vec<field::Error> {
    let path = Path::new("spec").child("drivers");
    let mut errs = Vec::new();
    let mut names = std::collections::BTreeSet::new();
    for (i, d) in drivers(obj).iter().enumerate() {
        let p = path.index(i);
        let name = str_of(d, "name");
        errs.extend(csi_driver_name(name, &p.child("name")));
        let id = str_of(d, "nodeID");
        if id.is_empty() {
            errs.push(field::required(&p.child("nodeID"), ""));
        }
        if id.len() > NODE_ID_MAX {
            let msg = format!("must be {NODE_ID_MAX} characters or less");
            errs.push(field::invalid(&p.child("nodeID"), id, &msg));
        }
        let count = d.pointer("/allocatable/count").and_then(Value::as_i64);
        if let Some(count) = count.filter(|c| *c < 0) {
            {
                let msg = kas_apimachinery::validation::meta::IS_NEGATIVE_ERROR_MSG;
                errs.push(field::invalid(
                    &p.child("allocatable").child("count"),
                    count,
                    msg,
                ));
            }
        }
        if !names.insert(name) {
            errs.push(field::duplicate(&p.child("name"), name));
        }
        let mut keys = std::collections::BTreeSet::new();
        let topology = d.get("topologyKeys").and_then(Value::as_array);
        for key in topology.into_iter().flatten() {
            let key = key.as_str().unwrap_or("");
            if key.is_empty() {
                errs.push(field::required(&p, ""));
            }
            if !keys.insert(key) {
                errs.push(field::duplicate(&p, key));
            }
            errs.extend(
                is_qualified_name(key)
                    .iter()
                    .map(|m| field::invalid(&p, key, m)),
            );
        }
    }
    errs
}

/// Upstream `ValidateCSINode`.
fn validate_node(obj: &Value) -> FieldErrors {
    let mut errs = validate_object_meta(obj, false, name_is_dns_subdomain);
    errs.extend(causes(validate_drivers(obj)));
    errs
}

/// A `storage.CSINodeDriver` as Go's `%#v` prints it.
fn go_driver(d: &Value) -> String {
    format!(
        "storage.CSINodeDriver{{Name:{}, NodeID:{}, TopologyKeys:{}, Allocatable:{}}}",
        quote(str_of(d, "name")),
        quote(str_of(d, "nodeID")),
        go_strings("string", d.get("topologyKeys")),
        go_pointer("storage.VolumeNodeResources", d.get("allocatable")),
    )
}

/// Upstream `ValidateCSINodeUpdate`'s own part: a driver that stays may not change
/// (MutableCSINodeAllocatableCount is off in 1.33).
fn validate_node_update(new: &Value, old: &Value) -> Vec<field::Error> {
    let same = crate::resources::persistentvolumes::validation::semantic;
    let path = Path::new("spec").child("drivers");
    let mut errs = Vec::new();
    for o in drivers(old) {
        for n in drivers(new) {
            if str_of(o, "name") == str_of(n, "name") && same(o) != same(n) {
                let value = BadValue::Raw(go_driver(n));
                errs.push(field::invalid(&path, value, "field is immutable"));
            }
        }
    }
    errs
}

impl kas_registry::Strategy for Strategy {
    /// Upstream's store sets `ReturnDeletedObject`.
    fn return_deleted_object(&self) -> bool {
        true
    }

    fn validate(&self, obj: &Value) -> FieldErrors {
        validate_node(obj)
    }

    /// Upstream's strategy refuses updates without a resourceVersion.
    fn allow_unconditional_update(&self) -> bool {
        false
    }

    /// Upstream validates the node, then `ValidateCSINodeUpdate`, which validates it again.
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(validate_node(new));
        errs.extend(validate_node(new));
        errs.extend(causes(validate_node_update(new, old)));
        errs
    }

    /// Upstream `printCSINode`: the number of drivers.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        vec![json!(drivers(obj).len())]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::messages;
    use kas_registry::Strategy as _;

    fn node(drivers: Value) -> Value {
        json!({"metadata": {"name": "node-1"}, "spec": {"drivers": drivers}})
    }

    #[test]
    fn drivers_are_checked() {
        let ok = node(
            json!([{"name": "ebs.csi.aws.com", "nodeID": "i-1", "topologyKeys": ["topology.kubernetes.io/zone"]}]),
        );
        assert!(Strategy.validate(&ok).is_empty());
        let bad = node(json!([
            {"name": "d.example.com", "nodeID": "", "topologyKeys": ["k", "k"], "allocatable": {"count": -1}},
            {"name": "d.example.com", "nodeID": "x".repeat(257)},
        ]));
        let msgs = messages(&Strategy.validate(&bad));
        assert_eq!(
            msgs[..4],
            vec![
                "spec.drivers[0].nodeID: Required value".to_owned(),
                "spec.drivers[0].allocatable.count: Invalid value: -1: must be greater than or equal to 0".to_owned(),
                "spec.drivers[0]: Duplicate value: \"k\"".to_owned(),
                format!("spec.drivers[1].nodeID: Invalid value: \"{}\": must be 256 characters or less", "x".repeat(257)),
            ]
        );
        assert_eq!(
            msgs[4],
            "spec.drivers[1].name: Duplicate value: \"d.example.com\""
        );
    }

    #[test]
    fn drivers_are_immutable_and_counted() {
        let old = node(json!([{"name": "d.example.com", "nodeID": "a"}]));
        let new = node(json!([{"name": "d.example.com", "nodeID": "b"}]));
        assert_eq!(
            messages(&Strategy.validate_update(&new, &old)),
            vec![
                "spec.drivers: Invalid value: storage.CSINodeDriver{Name:\"d.example.com\", NodeID:\"b\", TopologyKeys:[]string(nil), Allocatable:(*storage.VolumeNodeResources)(nil)}: field is immutable"
            ]
        );
        let added = node(
            json!([{"name": "d.example.com", "nodeID": "a"}, {"name": "e.example.com", "nodeID": "a"}]),
        );
        assert!(Strategy.validate_update(&added, &old).is_empty());
        assert_eq!(Strategy.table_cells(&added), vec![json!(2)]);
    }
}
