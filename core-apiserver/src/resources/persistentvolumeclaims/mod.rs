//! core/v1 PersistentVolumeClaim, after upstream's `pkg/registry/core/persistentvolumeclaim`
//! (the strategy and status strategy, `PersistentVolumeClaimToSelectableFields`,
//! `NormalizeDataSources`, `GetWarningsForPersistentVolumeClaim`),
//! `SetObjectDefaults_PersistentVolumeClaim`, `ValidatePersistentVolumeClaim`,
//! `ValidatePersistentVolumeClaimUpdate`, `ValidatePersistentVolumeClaimStatusUpdate` and
//! `printPersistentVolumeClaim`.

mod validation;

use std::collections::BTreeMap;

use kas_api::core::v1::{PERSISTENT_VOLUME_CLAIM_SPEC, PERSISTENT_VOLUME_CLAIM_STATUS};
use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::meta::name_is_dns_subdomain;
use kas_endpoints::responsewriters::table::{AGE_COLUMN, NAME_COLUMN, age};
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, Subresource, TableColumn, Verb};
use serde_json::{Value, json};

use super::persistentvolumes::validation::{
    access_modes_string, beta_storage_class, drop_disabled_vac, quantity,
    storage_class_annotation_warning,
};
use crate::podspec::defaults::default_resource_list;
use kas_registry::strategy::causes;
use validation::Options;

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "",
    version: "v1",
    kind: "PersistentVolumeClaim",
    list_kind: "PersistentVolumeClaimList",
    plural: "persistentvolumeclaims",
    singular: "persistentvolumeclaim",
    short_names: &["pvc"],
    categories: &[],
    scope: Scope::Namespaced,
    verbs: Verb::ALL,
    subresources: &[Subresource::STATUS],
    table_columns: &[
        NAME_COLUMN,
        TableColumn {
            name: "Status",
            type_: "string",
            format: "",
            description: PERSISTENT_VOLUME_CLAIM_STATUS.doc("phase"),
            priority: 0,
        },
        TableColumn {
            name: "Volume",
            type_: "string",
            format: "",
            description: PERSISTENT_VOLUME_CLAIM_SPEC.doc("volumeName"),
            priority: 0,
        },
        TableColumn {
            name: "Capacity",
            type_: "string",
            format: "",
            description: PERSISTENT_VOLUME_CLAIM_STATUS.doc("capacity"),
            priority: 0,
        },
        TableColumn {
            name: "Access Modes",
            type_: "string",
            format: "",
            description: PERSISTENT_VOLUME_CLAIM_STATUS.doc("accessModes"),
            priority: 0,
        },
        TableColumn {
            name: "StorageClass",
            type_: "string",
            format: "",
            description: "StorageClass of the pvc",
            priority: 0,
        },
        TableColumn {
            name: "VolumeAttributesClass",
            type_: "string",
            format: "",
            description: "VolumeAttributesClass of the pvc",
            priority: 0,
        },
        AGE_COLUMN,
        TableColumn {
            name: "VolumeMode",
            type_: "string",
            format: "",
            description: PERSISTENT_VOLUME_CLAIM_SPEC.doc("volumeMode"),
            priority: 1,
        },
    ],
    table_name_and_age: false,
    storage_resource: "persistentvolumeclaims",
    schema: Some(&kas_api::core::v1::PERSISTENT_VOLUME_CLAIM),
    list_schema: Some(&kas_api::core::v1::PERSISTENT_VOLUME_CLAIM_LIST),
};

/// How the role installs this resource.
pub fn install(_: &super::ResourceOptions) -> super::Install {
    super::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

fn s<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// Upstream `ValidatePersistentVolumeClaim`.
fn validate_pvc(obj: &Value, opts: Options) -> FieldErrors {
    let mut errs = validate_object_meta(obj, true, name_is_dns_subdomain);
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    errs.extend(causes(validation::validate_spec(
        spec,
        opts,
        &Path::new("spec"),
    )));
    errs
}

/// The reference half of a data source: kind, name and API group.
fn reference(from: &Value) -> Value {
    let mut r = json!({"kind": s(from, "/kind"), "name": s(from, "/name")});
    if let Some(group) = from.get("apiGroup").filter(|g| !g.is_null()) {
        r["apiGroup"] = group.clone();
    }
    r
}

/// Upstream `NormalizeDataSources`: a data source and its reference fill in each other.
fn normalize_data_sources(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let ds = spec.get("dataSource").filter(|d| d.is_object()).cloned();
    let ds_ref = spec.get("dataSourceRef").filter(|d| d.is_object()).cloned();
    match (ds, ds_ref) {
        (Some(ds), None) => {
            spec.insert("dataSourceRef".into(), reference(&ds));
        }
        (None, Some(r)) if s(&r, "/namespace").is_empty() => {
            spec.insert("dataSource".into(), reference(&r));
        }
        _ => {}
    }
}

/// Upstream `DropDisabledFields` with the 1.33 gates: no volume attributes class and no
/// cross-namespace data source unless the old claim had them.
fn drop_disabled_fields(new: &mut Value, old: Option<&Value>) {
    drop_disabled_vac(new, old);
    let old_uses_ref = old
        .and_then(|o| o.pointer("/spec/dataSourceRef"))
        .is_some_and(|r| !r.is_null());
    if !old_uses_ref
        && let Some(r) = new
            .pointer_mut("/spec/dataSourceRef")
            .and_then(Value::as_object_mut)
        && r.get("namespace")
            .and_then(Value::as_str)
            .is_some_and(|n| !n.is_empty())
    {
        r.remove("namespace");
    }
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

    /// `SetObjectDefaults_PersistentVolumeClaim`: a Pending phase, the Filesystem mode, and
    /// every resource list rounded to milli units.
    fn default(&self, obj: &mut Value) {
        let Some(map) = obj.as_object_mut() else {
            return;
        };
        let status = map.entry("status").or_insert_with(|| json!({}));
        if status.is_null() {
            *status = json!({});
        }
        if let Some(status) = status.as_object_mut() {
            if status
                .get("phase")
                .and_then(Value::as_str)
                .unwrap_or("")
                .is_empty()
            {
                status.insert("phase".into(), json!("Pending"));
            }
            for list in ["capacity", "allocatedResources"] {
                if let Some(l) = status.get_mut(list) {
                    default_resource_list(l);
                }
            }
        }
        let spec = map.entry("spec").or_insert_with(|| json!({}));
        if spec.is_null() {
            *spec = json!({});
        }
        let Some(spec) = spec.as_object_mut() else {
            return;
        };
        if spec.get("volumeMode").is_none_or(Value::is_null) {
            spec.insert("volumeMode".into(), json!("Filesystem"));
        }
        if let Some(resources) = spec.get_mut("resources").and_then(Value::as_object_mut) {
            for list in ["limits", "requests"] {
                if let Some(l) = resources.get_mut(list) {
                    default_resource_list(l);
                }
            }
        }
    }

    /// A new claim is Pending; disabled fields go, and data sources are normalized.
    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(map) = obj.as_object_mut() {
            map.insert("status".into(), json!({"phase": "Pending"}));
        }
        drop_disabled_fields(obj, None);
        normalize_data_sources(obj);
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        kas_registry::meta::keep_status(new, old);
        drop_disabled_fields(new, Some(old));
        normalize_data_sources(new);
    }

    fn validate(&self, obj: &Value) -> FieldErrors {
        validate_pvc(obj, Options::default())
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        warnings(obj)
    }

    /// Upstream's strategy: the claim, then `ValidatePersistentVolumeClaimUpdate`, which
    /// checks the metadata update and validates the claim once more.
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut normalized_old = old.clone();
        normalize_data_sources(&mut normalized_old);
        let opts = Options::for_update(&normalized_old);
        let mut errs = validate_pvc(new, opts);
        errs.extend(validate_object_meta_update(new, &normalized_old));
        errs.extend(validate_pvc(new, opts));
        errs.extend(causes(validation::validate_update(
            new,
            &normalized_old,
            opts,
        )));
        errs
    }

    fn warnings_on_update(&self, new: &Value, _old: &Value) -> Vec<String> {
        warnings(new)
    }

    /// Upstream `ValidatePersistentVolumeClaimStatusUpdate`.
    fn validate_status_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        if kas_registry::meta::str_field(new, "resourceVersion").is_empty() {
            errs.push(field::required(&Path::new("resourceVersion"), "").to_cause());
        }
        errs.extend(causes(validation::validate_status(new)));
        errs
    }

    /// Upstream `PersistentVolumeClaimToSelectableFields`: the metadata fields, and `name`
    /// (which upstream keeps for compatibility).
    fn field_set(&self, obj: &Value) -> BTreeMap<String, String> {
        let mut set = kas_registry::meta::default_field_set(obj);
        set.insert("name".into(), kas_registry::meta::name(obj).to_owned());
        set
    }

    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        cells(obj)
    }
}

/// Upstream `GetWarningsForPersistentVolumeClaim`.
fn warnings(obj: &Value) -> Vec<String> {
    let mut out: Vec<String> = storage_class_annotation_warning(obj).into_iter().collect();
    for list in ["requests", "limits"] {
        let Some(q) = obj
            .pointer(&format!("/spec/resources/{list}/storage"))
            .and_then(quantity)
        else {
            continue;
        };
        if q.milli_value() % 1000 != 0 {
            out.push(format!(
                "{}: fractional byte value \"{}\" is invalid, must be an integer",
                Path::new("spec")
                    .child("resources")
                    .child(list)
                    .key("storage"),
                q.canonical()
            ));
        }
    }
    out
}

/// Upstream `printPersistentVolumeClaim`: Name, Status, Volume, Capacity, Access Modes,
/// StorageClass, VolumeAttributesClass, Age, VolumeMode. Capacity and access modes are the
/// status's, once the claim names a volume.
fn cells(obj: &Value) -> Vec<Value> {
    let phase = if obj
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null())
    {
        "Terminating"
    } else {
        s(obj, "/status/phase")
    };
    let volume = s(obj, "/spec/volumeName");
    let (capacity, modes) = if volume.is_empty() {
        (String::new(), String::new())
    } else {
        let capacity = obj
            .pointer("/status/capacity/storage")
            .and_then(quantity)
            .map_or_else(|| "0".to_owned(), |q| q.canonical());
        (
            capacity,
            access_modes_string(obj.pointer("/status/accessModes")),
        )
    };
    let class = beta_storage_class(obj).unwrap_or_else(|| s(obj, "/spec/storageClassName"));
    let unset = |p: &str| {
        obj.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or("<unset>")
            .to_owned()
    };
    vec![
        json!(kas_registry::meta::name(obj)),
        json!(phase),
        json!(volume),
        json!(capacity),
        json!(modes),
        json!(class),
        json!(unset("/spec/volumeAttributesClassName")),
        json!(age(kas_registry::meta::str_field(obj, "creationTimestamp"))),
        json!(unset("/spec/volumeMode")),
    ]
}

#[cfg(test)]
mod tests;
