//! storage.k8s.io/v1 CSIDriver, after upstream's `pkg/registry/storage/csidriver`,
//! `SetDefaults_CSIDriver`, `ValidateCSIDriver`, `ValidateCSIDriverUpdate` and
//! `printCSIDriver`.

use kas_api::storage::v1::CSI_DRIVER_SPEC;
use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::meta::name_is_dns_subdomain;
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, TableColumn, Verb};
use serde_json::{Value, json};

use super::{bool_value, causes, go_strings, is_nil};

const fn column(name: &'static str, type_: &'static str, field: &str) -> TableColumn {
    TableColumn {
        name,
        type_,
        format: "",
        description: CSI_DRIVER_SPEC.doc(field),
        priority: 0,
    }
}

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "storage.k8s.io",
    version: "v1",
    kind: "CSIDriver",
    list_kind: "CSIDriverList",
    plural: "csidrivers",
    singular: "csidriver",
    short_names: &[],
    categories: &[],
    scope: Scope::Cluster,
    verbs: Verb::ALL,
    subresources: &[],
    table_columns: &[
        column("AttachRequired", "boolean", "attachRequired"),
        column("PodInfoOnMount", "boolean", "podInfoOnMount"),
        column("StorageCapacity", "boolean", "storageCapacity"),
        column("TokenRequests", "string", "tokenRequests"),
        column("RequiresRepublish", "boolean", "requiresRepublish"),
        column("Modes", "string", "volumeLifecycleModes"),
    ],
    table_name_and_age: true,
    storage_resource: "csidrivers",
    schema: Some(&kas_api::storage::v1::CSI_DRIVER),
    list_schema: Some(&kas_api::storage::v1::CSI_DRIVER_LIST),
};

/// How the role installs this resource.
pub fn install(_: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

/// Upstream `supportedFSGroupPolicy`, sorted.
const FS_GROUP_POLICIES: [&str; 3] = ["File", "None", "ReadWriteOnceWithFSType"];
const LIFECYCLE_MODES: [&str; 2] = ["Persistent", "Ephemeral"];
/// The field of the MutableCSINodeAllocatableCount gate, off in 1.33.
const GATED: &str = "nodeAllocatableUpdatePeriodSeconds";

fn spec(obj: &Value) -> &Value {
    obj.get("spec").unwrap_or(&Value::Null)
}

/// Upstream `validateCSIDriverSpec`.
fn validate_spec(spec: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    // Upstream's path spells the field `attachedRequired`.
    for (key, p) in [
        ("attachRequired", "attachedRequired"),
        ("podInfoOnMount", "podInfoOnMount"),
        ("storageCapacity", "storageCapacity"),
    ] {
        if is_nil(spec, key) {
            errs.push(field::required(&path.child(p), ""));
        }
    }
    if let Some(p) = spec.get("fsGroupPolicy").filter(|v| !v.is_null()) {
        let p = p.as_str().unwrap_or("");
        if !FS_GROUP_POLICIES.contains(&p) {
            let path = path.child("fsGroupPolicy");
            errs.push(field::not_supported(&path, p, &FS_GROUP_POLICIES));
        }
    }
    let mut audiences = std::collections::BTreeSet::new();
    let requests = spec.get("tokenRequests").and_then(Value::as_array);
    for (i, r) in requests.into_iter().flatten().enumerate() {
        let p = path.child("tokenRequests").index(i);
        let audience = r.get("audience").and_then(Value::as_str).unwrap_or("");
        if !audiences.insert(audience) {
            errs.push(field::duplicate(&p.child("audience"), audience));
            continue;
        }
        let Some(secs) = r.get("expirationSeconds").and_then(Value::as_i64) else {
            continue;
        };
        let p = p.child("expirationSeconds");
        if secs < 600 {
            let msg = "may not specify a duration less than 10 minutes";
            errs.push(field::invalid(&p, secs, msg));
        }
        if secs > 1 << 32 {
            let msg = "may not specify a duration larger than 2^32 seconds";
            errs.push(field::invalid(&p, secs, msg));
        }
    }
    let modes = spec.get("volumeLifecycleModes").and_then(Value::as_array);
    for m in modes.into_iter().flatten() {
        let m = m.as_str().unwrap_or("");
        if !LIFECYCLE_MODES.contains(&m) {
            let p = path.child("volumeLifecycleModes");
            errs.push(field::not_supported(&p, m, &LIFECYCLE_MODES));
        }
    }
    // SELinuxMountReadWriteOncePod is on in 1.33.
    if is_nil(spec, "seLinuxMount") {
        errs.push(field::required(&path.child("seLinuxMount"), ""));
    }
    if let Some(period) = spec.get(GATED).and_then(Value::as_i64).filter(|p| *p < 10) {
        let msg = "must be greater than or equal to 10 seconds";
        errs.push(field::invalid(&path.child(GATED), period, msg));
    }
    errs
}

/// Upstream `ValidateCSIDriver`.
fn validate_driver(obj: &Value) -> FieldErrors {
    let mut errs = validate_object_meta(obj, false, name_is_dns_subdomain);
    errs.extend(causes(validate_spec(spec(obj), &Path::new("spec"))));
    errs
}

/// Upstream `ValidateCSIDriverUpdate`, after its metadata rules.
fn validate_driver_update(new: &Value, old: &Value) -> Vec<field::Error> {
    let (n, o) = (spec(new), spec(old));
    let mut errs = validate_spec(n, &Path::new("spec"));
    let path = Path::new("spec");
    if n.get("attachRequired").and_then(Value::as_bool)
        != o.get("attachRequired").and_then(Value::as_bool)
    {
        let value = bool_value(n.get("attachRequired"));
        let p = path.child("attachedRequired");
        errs.push(field::invalid(&p, value, "field is immutable"));
    }
    let modes = |s: &Value| {
        s.get("volumeLifecycleModes")
            .filter(|v| !v.is_null())
            .cloned()
    };
    let (nm, om) = (modes(n), modes(o));
    let empty = |m: &Option<Value>| {
        m.as_ref()
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
    };
    if nm != om && !(empty(&nm) && empty(&om)) {
        let value = BadValue::Raw(go_strings("storage.VolumeLifecycleMode", nm.as_ref()));
        let p = path.child("volumeLifecycleModes");
        errs.push(field::invalid(&p, value, "field is immutable"));
    }
    errs
}

impl kas_registry::Strategy for Strategy {
    /// Upstream's store sets `ReturnDeletedObject`.
    fn return_deleted_object(&self) -> bool {
        true
    }

    /// `SetDefaults_CSIDriver`.
    fn default(&self, obj: &mut Value) {
        let Some(map) = obj.as_object_mut() else {
            return;
        };
        let spec = map.entry("spec").or_insert_with(|| json!({}));
        if spec.is_null() {
            *spec = json!({});
        }
        let Some(spec) = spec.as_object_mut() else {
            return;
        };
        crate::podspec::defaults::set_nil(spec, "attachRequired", json!(true));
        crate::podspec::defaults::set_nil(spec, "podInfoOnMount", json!(false));
        crate::podspec::defaults::set_nil(spec, "storageCapacity", json!(false));
        crate::podspec::defaults::set_nil(spec, "fsGroupPolicy", json!("ReadWriteOnceWithFSType"));
        let no_modes = spec
            .get("volumeLifecycleModes")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty);
        if no_modes {
            spec.insert("volumeLifecycleModes".into(), json!(["Persistent"]));
        }
        crate::podspec::defaults::set_nil(spec, "requiresRepublish", json!(false));
        crate::podspec::defaults::set_nil(spec, "seLinuxMount", json!(false));
    }

    /// The MutableCSINodeAllocatableCount field is dropped: its gate is off.
    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
            spec.remove(GATED);
        }
    }

    fn validate(&self, obj: &Value) -> FieldErrors {
        validate_driver(obj)
    }

    /// The gated field is kept only when the stored driver has it; spec changes bump the
    /// generation.
    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        if is_nil(spec(old), GATED)
            && let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut)
        {
            spec.remove(GATED);
        }
        let changed = crate::resources::persistentvolumes::validation::semantic(spec(new))
            != crate::resources::persistentvolumes::validation::semantic(spec(old));
        kas_registry::meta::next_generation(new, old, changed);
    }

    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(causes(validate_driver_update(new, old)));
        errs
    }

    /// Upstream: an update must name the resourceVersion it replaces.
    fn allow_unconditional_update(&self) -> bool {
        false
    }

    /// Upstream `printCSIDriver`.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        let spec = spec(obj);
        let flag = |k: &str, d: bool| spec.get(k).and_then(Value::as_bool).unwrap_or(d);
        let join = |list: Option<&Vec<Value>>, key: Option<&str>| {
            list.into_iter()
                .flatten()
                .map(|v| match key {
                    Some(k) => v.get(k).and_then(Value::as_str).unwrap_or(""),
                    None => v.as_str().unwrap_or(""),
                })
                .collect::<Vec<_>>()
                .join(",")
        };
        let tokens = match spec.get("tokenRequests").and_then(Value::as_array) {
            Some(list) => join(Some(list), Some("audience")),
            None => "<unset>".to_owned(),
        };
        let mut modes = join(
            spec.get("volumeLifecycleModes").and_then(Value::as_array),
            None,
        );
        if modes.is_empty() {
            modes = "<none>".to_owned();
        }
        vec![
            json!(flag("attachRequired", true)),
            json!(flag("podInfoOnMount", false)),
            json!(flag("storageCapacity", false)),
            json!(tokens),
            json!(flag("requiresRepublish", false)),
            json!(modes),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::messages;
    use kas_registry::Strategy as _;

    fn driver(spec: Value) -> Value {
        let mut obj =
            json!({"metadata": {"name": "ebs.csi.aws.com", "generation": 1}, "spec": spec});
        Strategy.default(&mut obj);
        obj
    }

    #[test]
    fn upstream_defaults() {
        let obj = driver(json!({}));
        assert_eq!(
            obj["spec"],
            json!({"attachRequired": true, "podInfoOnMount": false, "storageCapacity": false,
                "fsGroupPolicy": "ReadWriteOnceWithFSType", "volumeLifecycleModes": ["Persistent"],
                "requiresRepublish": false, "seLinuxMount": false})
        );
        assert!(Strategy.validate(&obj).is_empty());
    }

    #[test]
    fn spec_checks() {
        let obj = driver(
            json!({"fsGroupPolicy": "All", "volumeLifecycleModes": ["Forever"],
            "tokenRequests": [{"audience": "a", "expirationSeconds": 60}, {"audience": "a"}]}),
        );
        assert_eq!(
            messages(&Strategy.validate(&obj)),
            vec![
                "spec.fsGroupPolicy: Unsupported value: \"All\": supported values: \"File\", \"None\", \"ReadWriteOnceWithFSType\"",
                "spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes",
                "spec.tokenRequests[1].audience: Duplicate value: \"a\"",
                "spec.volumeLifecycleModes: Unsupported value: \"Forever\": supported values: \"Persistent\", \"Ephemeral\"",
            ]
        );
        let missing = json!({"metadata": {"name": "d"}, "spec": {}});
        assert_eq!(
            messages(&Strategy.validate(&missing)),
            vec![
                "spec.attachedRequired: Required value",
                "spec.podInfoOnMount: Required value",
                "spec.storageCapacity: Required value",
                "spec.seLinuxMount: Required value",
            ]
        );
    }

    #[test]
    fn immutable_fields_and_generation() {
        let old = driver(json!({}));
        let mut new =
            driver(json!({"attachRequired": false, "volumeLifecycleModes": ["Ephemeral"]}));
        Strategy.prepare_for_update(&mut new, &old);
        assert_eq!(new["metadata"]["generation"], 2);
        assert_eq!(
            messages(&Strategy.validate_update(&new, &old)),
            vec![
                "spec.attachedRequired: Invalid value: false: field is immutable",
                "spec.volumeLifecycleModes: Invalid value: []storage.VolumeLifecycleMode{\"Ephemeral\"}: field is immutable",
            ]
        );
        let mut same = driver(json!({"podInfoOnMount": false}));
        Strategy.prepare_for_update(&mut same, &old);
        assert_eq!(same["metadata"]["generation"], 1);
        let mut gated = driver(json!({"nodeAllocatableUpdatePeriodSeconds": 30}));
        Strategy.prepare_for_create(&mut gated);
        assert!(gated["spec"].get(GATED).is_none());
    }

    #[test]
    fn printer() {
        let obj = driver(json!({"tokenRequests": [{"audience": "a"}, {"audience": "b"}]}));
        assert_eq!(
            Strategy.table_cells(&obj),
            [
                json!(true),
                json!(false),
                json!(false),
                json!("a,b"),
                json!(false),
                json!("Persistent")
            ]
        );
        assert_eq!(
            Strategy.table_cells(&driver(json!({})))[3],
            json!("<unset>")
        );
    }
}
