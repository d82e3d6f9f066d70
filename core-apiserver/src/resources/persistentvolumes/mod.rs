//! core/v1 PersistentVolume, after upstream's `pkg/registry/core/persistentvolume` (the
//! strategy and status strategy, `PersistentVolumeToSelectableFields`,
//! `GetWarningsForPersistentVolume`), `SetObjectDefaults_PersistentVolume`,
//! `ValidatePersistentVolume`, `ValidatePersistentVolumeUpdate`,
//! `ValidatePersistentVolumeStatusUpdate` and `printPersistentVolume`.

pub(crate) mod validation;

use std::collections::BTreeMap;

use kas_api::core::v1::{PERSISTENT_VOLUME_SPEC, PERSISTENT_VOLUME_STATUS};
use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::meta::name_is_dns_subdomain;
use kas_endpoints::responsewriters::table::{AGE_COLUMN, NAME_COLUMN, age};
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, Subresource, TableColumn, Verb};
use serde_json::{Value, json};

use crate::podspec::defaults::{default_resource_list, default_volume_sources};
use kas_registry::strategy::causes;
use validation::{access_modes_string, beta_storage_class, validate_pv_spec, validate_pv_update};

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "",
    version: "v1",
    kind: "PersistentVolume",
    list_kind: "PersistentVolumeList",
    plural: "persistentvolumes",
    singular: "persistentvolume",
    short_names: &["pv"],
    categories: &[],
    scope: Scope::Cluster,
    verbs: Verb::ALL,
    subresources: &[Subresource::STATUS],
    table_columns: &[
        NAME_COLUMN,
        TableColumn {
            name: "Capacity",
            type_: "string",
            format: "",
            description: PERSISTENT_VOLUME_SPEC.doc("capacity"),
            priority: 0,
        },
        TableColumn {
            name: "Access Modes",
            type_: "string",
            format: "",
            description: PERSISTENT_VOLUME_SPEC.doc("accessModes"),
            priority: 0,
        },
        TableColumn {
            name: "Reclaim Policy",
            type_: "string",
            format: "",
            description: PERSISTENT_VOLUME_SPEC.doc("persistentVolumeReclaimPolicy"),
            priority: 0,
        },
        TableColumn {
            name: "Status",
            type_: "string",
            format: "",
            description: PERSISTENT_VOLUME_STATUS.doc("phase"),
            priority: 0,
        },
        TableColumn {
            name: "Claim",
            type_: "string",
            format: "",
            description: PERSISTENT_VOLUME_SPEC.doc("claimRef"),
            priority: 0,
        },
        TableColumn {
            name: "StorageClass",
            type_: "string",
            format: "",
            description: "StorageClass of the pv",
            priority: 0,
        },
        TableColumn {
            name: "VolumeAttributesClass",
            type_: "string",
            format: "",
            description: "VolumeAttributesClass of the pv",
            priority: 0,
        },
        TableColumn {
            name: "Reason",
            type_: "string",
            format: "",
            description: PERSISTENT_VOLUME_STATUS.doc("reason"),
            priority: 0,
        },
        AGE_COLUMN,
        TableColumn {
            name: "VolumeMode",
            type_: "string",
            format: "",
            description: PERSISTENT_VOLUME_SPEC.doc("volumeMode"),
            priority: 1,
        },
    ],
    table_name_and_age: false,
    storage_resource: "persistentvolumes",
    schema: Some(&kas_api::core::v1::PERSISTENT_VOLUME),
    list_schema: Some(&kas_api::core::v1::PERSISTENT_VOLUME_LIST),
};

/// How the role installs this resource.
pub fn install(_: &super::ResourceOptions) -> super::Install {
    super::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

fn s<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// Upstream `ValidatePersistentVolume`: the metadata of a cluster-scoped object and the spec.
fn validate_pv(obj: &Value) -> FieldErrors {
    let mut errs = validate_object_meta(obj, false, name_is_dns_subdomain);
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let name = kas_registry::meta::name(obj);
    errs.extend(causes(validate_pv_spec(spec, name, &Path::new("spec"))));
    errs
}

/// Upstream `GetPersistentVolumeClass`: the beta annotation first, then
/// `spec.storageClassName`.
fn storage_class(obj: &Value) -> &str {
    beta_storage_class(obj).unwrap_or_else(|| s(obj, "/spec/storageClassName"))
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

    /// `SetObjectDefaults_PersistentVolume`: a Pending phase, the Retain policy, the
    /// Filesystem mode, the capacity rounded to milli units and the sources' defaults.
    fn default(&self, obj: &mut Value) {
        let Some(map) = obj.as_object_mut() else {
            return;
        };
        if let Some(status) = map.get_mut("status").and_then(Value::as_object_mut) {
            if status
                .get("phase")
                .and_then(Value::as_str)
                .unwrap_or("")
                .is_empty()
            {
                status.insert("phase".into(), json!("Pending"));
            }
        } else {
            map.insert("status".into(), json!({"phase": "Pending"}));
        }
        let spec = map.entry("spec").or_insert_with(|| json!({}));
        if spec.is_null() {
            *spec = json!({});
        }
        let Some(spec) = spec.as_object_mut() else {
            return;
        };
        let policy = spec.get("persistentVolumeReclaimPolicy");
        if policy.and_then(Value::as_str).unwrap_or("").is_empty() {
            spec.insert("persistentVolumeReclaimPolicy".into(), json!("Retain"));
        }
        crate::podspec::defaults::set_nil(spec, "volumeMode", json!("Filesystem"));
        if let Some(capacity) = spec.get_mut("capacity") {
            default_resource_list(capacity);
        }
        default_volume_sources(spec);
    }

    /// A new volume is Pending since now; the VolumeAttributesClass gate is off.
    fn prepare_for_create(&self, obj: &mut Value) {
        let now = kas_registry::meta::rfc3339(std::time::SystemTime::now());
        validation::drop_disabled_vac(obj, None);
        if let Some(map) = obj.as_object_mut() {
            map.insert(
                "status".into(),
                json!({"phase": "Pending", "lastPhaseTransitionTime": now}),
            );
        }
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        validation::drop_disabled_vac(new, Some(old));
        kas_registry::meta::keep_status(new, old);
    }

    fn validate(&self, obj: &Value) -> FieldErrors {
        validate_pv(obj)
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        warnings(obj)
    }

    /// The metadata rules every update gets, then upstream's strategy: the volume, and
    /// `ValidatePersistentVolumeUpdate`, which validates the volume once more.
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(validate_pv(new));
        errs.extend(validate_pv(new));
        errs.extend(causes(validate_pv_update(new, old)));
        errs
    }

    fn warnings_on_update(&self, new: &Value, _old: &Value) -> Vec<String> {
        warnings(new)
    }

    /// Upstream `ValidatePersistentVolumeStatusUpdate`.
    fn validate_status_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        if kas_registry::meta::str_field(new, "resourceVersion").is_empty() {
            errs.push(field::required(&Path::new("resourceVersion"), "").to_cause());
        }
        errs
    }

    /// Upstream `PersistentVolumeToSelectableFields`: the metadata name, and `name` (which
    /// upstream keeps for compatibility).
    fn field_set(&self, obj: &Value) -> BTreeMap<String, String> {
        let name = kas_registry::meta::name(obj).to_owned();
        BTreeMap::from([
            ("metadata.name".to_owned(), name.clone()),
            ("name".to_owned(), name),
        ])
    }

    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        cells(obj)
    }
}

/// Upstream `GetWarningsForPersistentVolume` (without the deprecated node label warnings).
fn warnings(obj: &Value) -> Vec<String> {
    let mut out: Vec<String> = validation::storage_class_annotation_warning(obj)
        .into_iter()
        .collect();
    if s(obj, "/spec/persistentVolumeReclaimPolicy") == "Recycle" {
        out.push(format!(
            "{}: The Recycle reclaim policy is deprecated. Instead, the recommended approach is to use dynamic provisioning.",
            Path::new("spec").child("persistentVolumeReclaimPolicy")
        ));
    }
    out
}

/// Upstream `printPersistentVolume`: Name, Capacity, Access Modes, Reclaim Policy, Status,
/// Claim, StorageClass, VolumeAttributesClass, Reason, Age, VolumeMode.
fn cells(obj: &Value) -> Vec<Value> {
    let claim = match obj.pointer("/spec/claimRef").filter(|c| c.is_object()) {
        Some(r) => format!("{}/{}", s(r, "/namespace"), s(r, "/name")),
        None => String::new(),
    };
    let capacity = obj
        .pointer("/spec/capacity/storage")
        .and_then(validation::quantity)
        .map_or_else(|| "0".to_owned(), |q| q.canonical());
    let phase = if obj
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null())
    {
        "Terminating"
    } else {
        s(obj, "/status/phase")
    };
    let unset = |p: &str| {
        obj.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or("<unset>")
            .to_owned()
    };
    vec![
        json!(kas_registry::meta::name(obj)),
        json!(capacity),
        json!(access_modes_string(obj.pointer("/spec/accessModes"))),
        json!(s(obj, "/spec/persistentVolumeReclaimPolicy")),
        json!(phase),
        json!(claim),
        json!(storage_class(obj)),
        json!(unset("/spec/volumeAttributesClassName")),
        json!(s(obj, "/status/reason")),
        json!(age(kas_registry::meta::str_field(obj, "creationTimestamp"))),
        json!(unset("/spec/volumeMode")),
    ]
}

#[cfg(test)]
mod tests;
