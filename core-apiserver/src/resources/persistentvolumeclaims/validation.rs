//! Upstream `ValidatePersistentVolumeClaimSpec`, `ValidatePersistentVolumeClaimUpdate` and
//! `ValidatePersistentVolumeClaimStatusUpdate`, with the gates of a default 1.33 server
//! (RecoverVolumeExpansionFailure on, VolumeAttributesClass and
//! CrossNamespaceVolumeDataSource off).

use std::cmp::Ordering;

use kas_apimachinery::resource::Quantity;
use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::meta::{IS_NEGATIVE_ERROR_MSG, validate_namespace_name};
use kas_apimachinery::validation::{is_dns1123_subdomain, is_qualified_name};
use serde_json::Value;

use crate::helper::is_native_resource;
use crate::podspec::validation::json::{arr, invalid_each, obj, opt_str, str_of};
use crate::podspec::validation::scheduling::validate_label_selector;
use crate::resources::persistentvolumes::validation::{
    BETA_STORAGE_CLASS, beta_storage_class, quantity, resource_list, semantic,
    validate_access_modes, validate_basic_resource, validate_class_name,
    validate_immutable_volume_mode, validate_positive_quantity, validate_vac_update,
    validate_volume_mode,
};

/// Upstream `resizeStatusSet`, sorted.
const RESIZE_STATUSES: [&str; 5] = [
    "ControllerResizeInProgress",
    "ControllerResizeInfeasible",
    "NodeResizeInProgress",
    "NodeResizeInfeasible",
    "NodeResizePending",
];

/// What `ValidationOptionsForPersistentVolumeClaim` takes from the old claim.
#[derive(Default, Clone, Copy)]
pub struct Options {
    /// The old claim named an API group in its data source or reference.
    pub allow_invalid_api_group: bool,
    /// The old claim had a volume attributes class.
    pub enable_vac: bool,
}

impl Options {
    pub fn for_update(old: &Value) -> Options {
        let spec = old.get("spec").unwrap_or(&Value::Null);
        let group = |k: &str| obj(spec, k).is_some_and(|r| opt_str(r, "apiGroup").is_some());
        Options {
            allow_invalid_api_group: group("dataSource") || group("dataSourceRef"),
            enable_vac: spec
                .get("volumeAttributesClassName")
                .is_some_and(|v| !v.is_null()),
        }
    }
}

/// Upstream `validateDataSource` and `validateDataSourceRef`.
fn validate_data_source(ds: &Value, allow_invalid_group: bool, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    if str_of(ds, "name").is_empty() {
        errs.push(field::required(&path.child("name"), ""));
    }
    let kind = str_of(ds, "kind");
    if kind.is_empty() {
        errs.push(field::required(&path.child("kind"), ""));
    }
    let group = str_of(ds, "apiGroup");
    if group.is_empty() && kind != "PersistentVolumeClaim" {
        let msg = "must be 'PersistentVolumeClaim' when referencing the default apiGroup";
        errs.push(field::invalid(path, kind, msg));
    }
    if !group.is_empty() && !allow_invalid_group {
        errs.extend(invalid_each(
            &path.child("apiGroup"),
            group,
            is_dns1123_subdomain(group),
        ));
    }
    errs
}

/// Upstream `ValidatePersistentVolumeClaimSpec`.
pub fn validate_spec(spec: &Value, opts: Options, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let modes_path = path.child("accessModes");
    let modes = arr(spec, "accessModes");
    if modes.is_empty() {
        errs.push(field::required(
            &modes_path,
            "at least 1 access mode is required",
        ));
    }
    if let Some(selector) = obj(spec, "selector") {
        errs.extend(validate_label_selector(
            Some(selector),
            &path.child("selector"),
        ));
    }
    errs.extend(validate_access_modes(modes, &modes_path));

    let storage_path = path.child("resources").key("storage");
    match spec
        .pointer("/resources/requests/storage")
        .and_then(quantity)
    {
        None => errs.push(field::required(&storage_path, "")),
        Some(q) => errs.extend(validate_positive_quantity(&q, &storage_path)),
    }
    let class = str_of(spec, "storageClassName");
    if !class.is_empty() {
        errs.extend(validate_class_name(class, &path.child("storageClassName")));
    }
    errs.extend(validate_volume_mode(spec, path));

    let ds = obj(spec, "dataSource");
    let ds_ref = obj(spec, "dataSourceRef");
    if let Some(ds) = ds {
        errs.extend(validate_data_source(
            ds,
            opts.allow_invalid_api_group,
            &path.child("dataSource"),
        ));
    }
    if let Some(r) = ds_ref {
        let p = path.child("dataSourceRef");
        errs.extend(validate_data_source(r, opts.allow_invalid_api_group, &p));
        let ns = str_of(r, "namespace");
        if !ns.is_empty() {
            errs.extend(invalid_each(
                &p.child("namespace"),
                ns,
                validate_namespace_name(ns, false),
            ));
        }
    }
    let ds_value = || BadValue::Raw(path.child("dataSource").to_string());
    let ref_ns = ds_ref.map(|r| str_of(r, "namespace")).unwrap_or("");
    if !ref_ns.is_empty() {
        if ds.is_some() {
            let msg = "may not be specified when dataSourceRef.namespace is specified";
            errs.push(field::invalid(path, ds_value(), msg));
        }
    } else if let (Some(ds), Some(r)) = (ds, ds_ref) {
        let same = ["apiGroup", "kind", "name"]
            .iter()
            .all(|k| ds.get(*k).filter(|v| !v.is_null()) == r.get(*k).filter(|v| !v.is_null()));
        if !same {
            errs.push(field::invalid(path, ds_value(), "must match dataSourceRef"));
        }
    }
    if opts.enable_vac
        && let Some(vac) = opt_str(spec, "volumeAttributesClassName")
        && !vac.is_empty()
    {
        errs.extend(validate_class_name(
            vac,
            &path.child("volumeAttributesClassName"),
        ));
    }
    errs
}

/// A storage quantity, or Go's zero Quantity when absent (`None` compares as zero).
fn storage(v: &Value, pointer: &str) -> Option<Quantity> {
    v.pointer(pointer).and_then(quantity)
}

/// Go's `Cmp` of two quantities, an absent one being zero.
fn cmp(a: Option<&Quantity>, b: Option<&Quantity>) -> Ordering {
    let zero = Quantity::parse("0").ok();
    match (a.or(zero.as_ref()), b.or(zero.as_ref())) {
        (Some(a), Some(b)) => a.cmp_value(b),
        _ => Ordering::Equal,
    }
}

/// The rules of upstream `ValidatePersistentVolumeClaimUpdate` past its metadata and
/// `ValidatePersistentVolumeClaim` checks. `new` already carries the old status.
pub fn validate_update(new: &Value, old: &Value, opts: Options) -> Vec<field::Error> {
    let null = Value::Null;
    let new_spec = new.get("spec").unwrap_or(&null);
    let old_spec = old.get("spec").unwrap_or(&null);
    let mut errs = Vec::new();
    let mut new_clone = new_spec.clone();
    let mut old_clone = old_spec.clone();
    let set = |v: &mut Value, key: &str, value: Option<Value>| {
        if let Some(m) = v.as_object_mut() {
            match value {
                Some(x) if !x.is_null() => m.insert(key.to_owned(), x),
                _ => m.remove(key),
            };
        }
    };
    if str_of(old_spec, "volumeName").is_empty() {
        set(
            &mut old_clone,
            "volumeName",
            new_spec.get("volumeName").cloned(),
        );
    }
    let old_sc = opt_str(old_spec, "storageClassName");
    let new_sc = opt_str(new_spec, "storageClassName");
    let (old_ann, new_ann) = (beta_storage_class(old), beta_storage_class(new));
    let upgrade_from_annotation = old_ann.is_some()
        && old_sc.is_none()
        && new_sc.is_some_and(|n| Some(n) == old_ann)
        && (new_ann.is_none() || new_ann == old_ann);
    if upgrade_from_annotation {
        set(&mut new_clone, "storageClassName", None);
    } else {
        if new_ann != old_ann {
            errs.push(field::invalid(
                &Path::new("metadata")
                    .child("annotations")
                    .child(BETA_STORAGE_CLASS),
                new_ann.unwrap_or(""),
                "field is immutable",
            ));
        }
        let upgrade_from_nil =
            new_sc.is_some() && old_sc.is_none() && (old_ann.is_none() || new_sc == old_ann);
        if upgrade_from_nil {
            set(&mut new_clone, "storageClassName", None);
        }
    }
    let bound = new.pointer("/status/phase").and_then(Value::as_str) == Some("Bound");
    if bound
        && let Some(requests) = new_clone
            .pointer_mut("/resources/requests")
            .and_then(Value::as_object_mut)
    {
        let old_storage = old_spec
            .pointer("/resources/requests/storage")
            .cloned()
            .unwrap_or_else(|| Value::String("0".into()));
        requests.insert("storage".into(), old_storage);
    }
    if bound
        && new_clone
            .get("volumeAttributesClassName")
            .is_some_and(|v| !v.is_null())
    {
        set(
            &mut new_clone,
            "volumeAttributesClassName",
            old_clone.get("volumeAttributesClassName").cloned(),
        );
    }
    if semantic(&new_clone) != semantic(&old_clone) {
        let diff = crate::resources::pods::update::struct_diff(
            "core.PersistentVolumeClaimSpec",
            &semantic(&old_clone),
            &semantic(&new_clone),
        );
        errs.push(field::forbidden(
            &Path::new("spec"),
            &format!(
                "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n{diff}"
            ),
        ));
    }
    let old_size = storage(old, "/spec/resources/requests/storage");
    let new_size = storage(new, "/spec/resources/requests/storage");
    let status_size = storage(old, "/status/capacity/storage");
    if cmp(new_size.as_ref(), old_size.as_ref()) == Ordering::Less
        && cmp(new_size.as_ref(), status_size.as_ref()) != Ordering::Greater
    {
        errs.push(field::forbidden(
            &Path::new("spec")
                .child("resources")
                .child("requests")
                .child("storage"),
            "field can not be less than status.capacity",
        ));
    }
    errs.extend(validate_immutable_volume_mode(new_spec, old_spec));
    let vac_errs = validate_vac_update(new_spec, old_spec);
    if !vac_errs.is_empty() {
        errs.extend(vac_errs);
        if opts.enable_vac {
            let p = Path::new("spec").child("volumeAttributesClassName");
            match opt_str(new_spec, "volumeAttributesClassName") {
                None => errs.push(field::forbidden(
                    &p,
                    "update from non-nil value to nil is forbidden",
                )),
                Some("") => errs.push(field::forbidden(
                    &p,
                    "update from non-nil value to an empty string is forbidden",
                )),
                Some(_) => {}
            }
        }
    }
    errs
}

/// Upstream `validatePersistentVolumeClaimResourceKey`.
fn validate_resource_key(key: &str, path: &Path) -> Vec<field::Error> {
    let errs = invalid_each(path, key, is_qualified_name(key));
    if !errs.is_empty() {
        return errs;
    }
    if is_native_resource(key) && key != "storage" {
        return vec![field::not_supported(path, key, &["storage"])];
    }
    Vec::new()
}

/// The rules of upstream `ValidatePersistentVolumeClaimStatusUpdate` past its metadata
/// and resourceVersion checks.
pub fn validate_status(new: &Value) -> Vec<field::Error> {
    let mut errs = Vec::new();
    if new
        .pointer("/spec/accessModes")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty)
    {
        errs.push(field::required(&Path::new("Spec").child("accessModes"), ""));
    }
    let cap_path = Path::new("status").child("capacity");
    for (name, q) in resource_list(new.pointer("/status/capacity")) {
        errs.extend(validate_basic_resource(&q, &cap_path.key(&name)));
    }
    let resize_path = Path::new("status").child("allocatedResourceStatus");
    let statuses = new
        .pointer("/status/allocatedResourceStatuses")
        .and_then(Value::as_object);
    for (key, value) in statuses.into_iter().flatten() {
        errs.extend(validate_resource_key(key, &resize_path));
        if !RESIZE_STATUSES.contains(&value.as_str().unwrap_or("")) {
            errs.push(field::not_supported(
                &resize_path,
                BadValue::Raw(key.clone()),
                &RESIZE_STATUSES,
            ));
        }
    }
    let alloc_path = Path::new("status").child("allocatedResources");
    for (name, q) in resource_list(new.pointer("/status/allocatedResources")) {
        let key_errs = validate_resource_key(&name, &alloc_path);
        if !key_errs.is_empty() {
            errs.extend(key_errs);
            continue;
        }
        let p = alloc_path.key(&name);
        let basic = validate_basic_resource(&q, &p);
        if !basic.is_empty() {
            errs.extend(basic);
        } else if is_negative(&q) {
            errs.push(field::invalid(&p, q.canonical(), IS_NEGATIVE_ERROR_MSG));
        }
    }
    errs
}

fn is_negative(q: &Quantity) -> bool {
    Quantity::parse("0").is_ok_and(|z| q.cmp_value(&z) == Ordering::Less)
}
