//! Upstream `ValidatePersistentVolumeSpec`, `ValidatePersistentVolumeUpdate` and
//! `ValidatePersistentVolumeStatusUpdate`, and the checks PersistentVolumeClaims share with
//! them (access modes, volume modes, class names, quantities, storage classes).
//!
//! Left out, as in the pod volume checks: the IQN/EUI/NAA formats of ISCSI; and
//! `volumeAttributesClassName`, whose gate is off in 1.33 (the strategies drop the field).

use std::cmp::Ordering;
use std::collections::BTreeMap;

use kas_apimachinery::resource::Quantity;
use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::is_dns1123_subdomain;
use kas_apimachinery::validation::meta::{name_is_dns_subdomain, validate_namespace_name};
use serde_json::{Map, Value};

use crate::podspec::validation::json::{arr, has, invalid_each, obj, opt_str, str_of};
use crate::podspec::validation::{paths, scheduling, sources};

/// Upstream `supportedAccessModes`, as `sets.List` sorts them.
const ACCESS_MODES: [&str; 4] = [
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];

/// Upstream `supportedReclaimPolicy`, sorted.
const RECLAIM_POLICIES: [&str; 3] = ["Delete", "Recycle", "Retain"];

/// Upstream `supportedVolumeModes`, sorted.
const VOLUME_MODES: [&str; 2] = ["Block", "Filesystem"];

/// Upstream `BetaStorageClassAnnotation`.
pub(crate) const BETA_STORAGE_CLASS: &str = "volume.beta.kubernetes.io/storage-class";

/// The sources of a `PersistentVolumeSource`, as their JSON keys.
const SOURCE_KEYS: [&str; 22] = [
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "hostPath",
    "glusterfs",
    "nfs",
    "rbd",
    "iscsi",
    "cinder",
    "cephfs",
    "fc",
    "flocker",
    "flexVolume",
    "azureFile",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "local",
    "storageos",
    "csi",
];

/// A quantity as the JSON form holds it (a string, or a bare number).
pub(crate) fn quantity(v: &Value) -> Option<Quantity> {
    match v {
        Value::String(s) => Quantity::parse(s.trim()).ok(),
        Value::Number(n) => Quantity::parse(&n.to_string()).ok(),
        _ => None,
    }
}

/// The quantities of a `ResourceList`, by name (sorted: Go's map order is random).
pub(crate) fn resource_list(list: Option<&Value>) -> BTreeMap<String, Quantity> {
    list.and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.clone(), quantity(v)?)))
        .collect()
}

/// A `core.ResourceList` as Go's `%#v` prints it.
fn go_resource_list(list: Option<&Value>) -> BadValue {
    let Some(map) = list.and_then(Value::as_object) else {
        return BadValue::Raw("core.ResourceList(nil)".into());
    };
    let items: Vec<String> = resource_list(Some(&Value::Object(map.clone())))
        .iter()
        .map(|(k, q)| {
            format!(
                "{}:{}",
                kas_apimachinery::golang::strconv::quote(k),
                q.go_syntax()
            )
        })
        .collect();
    BadValue::Raw(format!("core.ResourceList{{{}}}", items.join(", ")))
}

/// Upstream `validateBasicResource`.
pub(crate) fn validate_basic_resource(q: &Quantity, path: &Path) -> Vec<field::Error> {
    let value = q.value();
    if value < 0 {
        let v = i64::try_from(value).unwrap_or(i64::MIN);
        return vec![field::invalid(path, v, "must be a valid resource quantity")];
    }
    Vec::new()
}

/// Upstream `ValidatePositiveQuantityValue`.
pub(crate) fn validate_positive_quantity(q: &Quantity, path: &Path) -> Vec<field::Error> {
    let zero = Quantity::parse("0").ok();
    if zero.is_some_and(|z| q.cmp_value(&z) != Ordering::Greater) {
        return vec![field::invalid(
            path,
            q.canonical(),
            "must be greater than zero",
        )];
    }
    Vec::new()
}

/// The access-mode loop of `ValidatePersistentVolumeSpec` and
/// `ValidatePersistentVolumeClaimSpec`: supported modes, and ReadWriteOncePod alone.
pub(crate) fn validate_access_modes(modes: &[Value], path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let (mut rwop, mut other) = (false, false);
    for mode in modes {
        let mode = mode.as_str().unwrap_or("");
        let supported = ACCESS_MODES.contains(&mode);
        if !supported {
            errs.push(field::not_supported(path, mode, &ACCESS_MODES));
        }
        if mode == "ReadWriteOncePod" {
            rwop = true;
        } else if supported {
            other = true;
        }
    }
    if rwop && other {
        errs.push(field::forbidden(
            path,
            "may not use ReadWriteOncePod with other access modes",
        ));
    }
    errs
}

/// A volume mode other than Block and Filesystem.
pub(crate) fn validate_volume_mode(spec: &Value, path: &Path) -> Vec<field::Error> {
    match opt_str(spec, "volumeMode") {
        Some(m) if !VOLUME_MODES.contains(&m) => {
            vec![field::not_supported(
                &path.child("volumeMode"),
                m,
                &VOLUME_MODES,
            )]
        }
        _ => Vec::new(),
    }
}

/// Upstream `ValidateClassName` of a storage class name.
pub(crate) fn validate_class_name(name: &str, path: &Path) -> Vec<field::Error> {
    invalid_each(path, name, name_is_dns_subdomain(name, false))
}

/// Upstream `GetAccessModesAsString`: the modes abbreviated, deduplicated, in a fixed
/// order.
pub(crate) fn access_modes_string(modes: Option<&Value>) -> String {
    let modes: Vec<&str> = modes
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .iter()
    .filter(|(mode, _)| modes.contains(mode))
    .map(|(_, short)| *short)
    .collect::<Vec<_>>()
    .join(",")
}

/// The beta storage class annotation, when set.
pub(crate) fn beta_storage_class(obj: &Value) -> Option<&str> {
    obj.pointer("/metadata/annotations")
        .and_then(|a| a.get(BETA_STORAGE_CLASS))
        .and_then(Value::as_str)
}

/// Upstream's warning for the beta storage class annotation (PVs and PVCs).
pub(crate) fn storage_class_annotation_warning(obj: &Value) -> Option<String> {
    beta_storage_class(obj).map(|_| {
        format!(
            "{}: deprecated since v1.8; use \"storageClassName\" attribute instead",
            Path::new("metadata")
                .child("annotations")
                .key(BETA_STORAGE_CLASS)
        )
    })
}

/// Upstream `validateGlusterfsPersistentVolumeSource`.
fn glusterfs(source: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = sources::glusterfs(source, path);
    if let Some(ns) = opt_str(source, "endpointsNamespace") {
        let p = path.child("endpointsNamespace");
        if ns.is_empty() {
            let msg = "if the endpointnamespace is set, it must be a valid namespace name";
            errs.push(field::invalid(&p, ns, msg));
        } else {
            errs.extend(invalid_each(&p, ns, validate_namespace_name(ns, false)));
        }
    }
    errs
}

/// Upstream `validateISCSIPersistentVolumeSource` (without its IQN/EUI/NAA regular
/// expressions).
fn iscsi(source: &Value, pv_name: &str, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let portal = str_of(source, "targetPortal");
    if portal.is_empty() {
        errs.push(field::required(&path.child("targetPortal"), ""));
    }
    if has(source, "initiatorName") && pv_name.len() + 1 + portal.len() > 64 {
        let msg = "Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified.";
        errs.push(field::invalid(&path.child("targetportal"), portal, msg));
    }
    let prefixed = |s: &str| s.starts_with("iqn") || s.starts_with("eui") || s.starts_with("naa");
    let iqn = str_of(source, "iqn");
    if iqn.is_empty() {
        errs.push(field::required(&path.child("iqn"), ""));
    } else if !prefixed(iqn) {
        errs.push(field::invalid(
            &path.child("iqn"),
            iqn,
            "must be valid format",
        ));
    }
    errs.extend(sources_lun(source, path));
    let chap = source.get("chapAuthDiscovery").and_then(Value::as_bool) == Some(true)
        || source.get("chapAuthSession").and_then(Value::as_bool) == Some(true);
    if chap && !has(source, "secretRef") {
        errs.push(field::required(&path.child("secretRef"), ""));
    }
    if let Some(r) = obj(source, "secretRef")
        && str_of(r, "name").is_empty()
    {
        errs.push(field::required(&path.child("secretRef").child("name"), ""));
    }
    if let Some(init) = opt_str(source, "initiatorName")
        && !prefixed(init)
    {
        let p = path.child("initiatorname");
        errs.push(field::invalid(&p, init, "must be valid format"));
    }
    errs
}

/// The lun range of an ISCSI source.
fn sources_lun(source: &Value, path: &Path) -> Vec<field::Error> {
    match source.get("lun").and_then(Value::as_i64) {
        Some(n) if !(0..=255).contains(&n) => vec![field::invalid(
            &path.child("lun"),
            n,
            &kas_apimachinery::validation::inclusive_range_error(0, 255),
        )],
        _ => Vec::new(),
    }
}

/// A secret reference's name and namespace, both required (Cinder, StorageOS).
fn secret_ref_name_and_namespace(source: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    if let Some(r) = obj(source, "secretRef") {
        for key in ["name", "namespace"] {
            if str_of(r, key).is_empty() {
                errs.push(field::required(&path.child("secretRef").child(key), ""));
            }
        }
    }
    errs
}

/// Upstream `validateCinderPersistentVolumeSource`.
fn cinder(source: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    if str_of(source, "volumeID").is_empty() {
        errs.push(field::required(&path.child("volumeID"), ""));
    }
    errs.extend(secret_ref_name_and_namespace(source, path));
    errs
}

/// Upstream `validateStorageOSPersistentVolumeSource`.
fn storageos(source: &Value, path: &Path) -> Vec<field::Error> {
    let mut without_ref = source.clone();
    if let Some(m) = without_ref.as_object_mut() {
        m.remove("secretRef");
    }
    let mut errs = sources::storageos(&without_ref, path);
    errs.extend(secret_ref_name_and_namespace(source, path));
    errs
}

/// Upstream `validateAzureFilePV`.
fn azure_file(source: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = sources::azure_file(source, path);
    if opt_str(source, "secretNamespace").is_some_and(str::is_empty) {
        errs.push(field::required(&path.child("secretNamespace"), ""));
    }
    errs
}

/// Upstream `validateLocalVolumeSource`.
fn local(source: &Value, path: &Path) -> Vec<field::Error> {
    let p = str_of(source, "path");
    if p.is_empty() {
        return vec![field::required(&path.child("path"), "")];
    }
    paths::validate_path_no_backsteps(p, &path.child("path"))
}

/// Upstream `validatePVSecretReference`.
fn pv_secret_reference(r: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let name = str_of(r, "name");
    if name.is_empty() {
        errs.push(field::required(&path.child("name"), ""));
    } else {
        errs.extend(invalid_each(
            &path.child("name"),
            name,
            is_dns1123_subdomain(name),
        ));
    }
    let ns = str_of(r, "namespace");
    if ns.is_empty() {
        errs.push(field::required(&path.child("namespace"), ""));
    } else {
        errs.extend(invalid_each(
            &path.child("namespace"),
            ns,
            kas_apimachinery::validation::is_dns1123_label(ns),
        ));
    }
    errs
}

/// Upstream `validateCSIPersistentVolumeSource`.
fn csi(source: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = sources::csi_driver_name(str_of(source, "driver"), &path.child("driver"));
    if str_of(source, "volumeHandle").is_empty() {
        errs.push(field::required(&path.child("volumeHandle"), ""));
    }
    for key in [
        "controllerPublishSecretRef",
        "controllerExpandSecretRef",
        "nodePublishSecretRef",
        "nodeExpandSecretRef",
    ] {
        if let Some(r) = obj(source, key) {
            errs.extend(pv_secret_reference(r, &path.child(key)));
        }
    }
    errs
}

/// Upstream `validateVolumeNodeAffinity` (with `ValidateNodeSelector`): whether node
/// affinity is set, and its errors.
fn validate_volume_node_affinity(spec: &Value, path: &Path) -> (bool, Vec<field::Error>) {
    let Some(affinity) = obj(spec, "nodeAffinity") else {
        return (false, Vec::new());
    };
    let mut errs = Vec::new();
    match obj(affinity, "required") {
        Some(required) => {
            let terms_path = path.child("required").child("nodeSelectorTerms");
            let terms = arr(required, "nodeSelectorTerms");
            if terms.is_empty() {
                let msg = "must have at least one node selector term";
                errs.push(field::required(&terms_path, msg));
            }
            for (i, term) in terms.iter().enumerate() {
                errs.extend(scheduling::node_selector_term(
                    term,
                    false,
                    &terms_path.index(i),
                ));
            }
        }
        None => errs.push(field::required(
            &path.child("required"),
            "must specify required node constraints",
        )),
    }
    (true, errs)
}

type Source = fn(&Value, &Path) -> Vec<field::Error>;

/// Upstream `ValidatePersistentVolumeSpec` of a PersistentVolume (not an inline spec):
/// `spec` is the object's `spec`, `pv_name` its name.
pub(crate) fn validate_pv_spec(spec: &Value, pv_name: &str, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let modes_path = path.child("accessModes");
    let modes = arr(spec, "accessModes");
    if modes.is_empty() {
        errs.push(field::required(&modes_path, ""));
    }
    errs.extend(validate_access_modes(modes, &modes_path));

    let cap_path = path.child("capacity");
    let capacity = spec.get("capacity").filter(|c| !c.is_null());
    let cap_map = capacity.and_then(Value::as_object);
    if cap_map.is_none_or(Map::is_empty) {
        errs.push(field::required(&cap_path, ""));
    }
    if cap_map.is_none_or(|m| !m.contains_key("storage") || m.len() > 1) {
        errs.push(field::not_supported(
            &cap_path,
            go_resource_list(capacity),
            &["storage"],
        ));
    }
    for (name, q) in resource_list(capacity) {
        let p = cap_path.key(&name);
        errs.extend(validate_basic_resource(&q, &p));
        errs.extend(validate_positive_quantity(&q, &p));
    }

    let policy = str_of(spec, "persistentVolumeReclaimPolicy");
    if !policy.is_empty() && !RECLAIM_POLICIES.contains(&policy) {
        errs.push(field::not_supported(
            &path.child("persistentVolumeReclaimPolicy"),
            policy,
            &RECLAIM_POLICIES,
        ));
    }
    let (affinity_set, affinity_errs) =
        validate_volume_node_affinity(spec, &path.child("nodeAffinity"));
    errs.extend(affinity_errs);

    // Upstream's order; the child its "more than 1 volume type" names, and the one its own
    // checks use.
    let checks: [(&str, &str, &str, Source); 21] = [
        ("hostPath", "hostPath", "hostPath", sources::host_path),
        (
            "gcePersistentDisk",
            "gcePersistentDisk",
            "persistentDisk",
            sources::gce_pd,
        ),
        (
            "awsElasticBlockStore",
            "awsElasticBlockStore",
            "awsElasticBlockStore",
            sources::aws_ebs,
        ),
        ("glusterfs", "glusterfs", "glusterfs", glusterfs),
        ("flocker", "flocker", "flocker", sources::flocker),
        ("nfs", "nfs", "nfs", sources::nfs),
        ("rbd", "rbd", "rbd", sources::rbd),
        ("quobyte", "quobyte", "quobyte", sources::quobyte),
        ("cephfs", "cephFS", "cephfs", sources::cephfs),
        // ISCSI needs the volume's name: checked below.
        ("iscsi", "iscsi", "iscsi", |_, _| Vec::new()),
        ("cinder", "cinder", "cinder", cinder),
        ("fc", "fc", "fc", sources::fc),
        ("azureFile", "azureFile", "azureFile", azure_file),
        (
            "vsphereVolume",
            "vsphereVolume",
            "vsphereVolume",
            sources::vsphere,
        ),
        (
            "photonPersistentDisk",
            "photonPersistentDisk",
            "photonPersistentDisk",
            sources::photon,
        ),
        (
            "portworxVolume",
            "portworxVolume",
            "portworxVolume",
            sources::portworx,
        ),
        ("azureDisk", "azureDisk", "azureDisk", sources::azure_disk),
        ("scaleIO", "scaleIO", "scaleIO", sources::scale_io),
        ("local", "local", "local", local),
        ("storageos", "storageos", "storageos", storageos),
        ("csi", "csi", "csi", csi),
    ];
    let mut num = 0;
    for (key, dup_child, child, check) in checks {
        // Upstream counts and checks a flex volume whatever came before it.
        if key == "azureFile"
            && let Some(flex) = obj(spec, "flexVolume")
        {
            num += 1;
            errs.extend(sources::flex(flex, &path.child("flexVolume")));
        }
        let Some(source) = obj(spec, key) else {
            continue;
        };
        if num > 0 {
            errs.push(field::forbidden(
                &path.child(dup_child),
                "may not specify more than 1 volume type",
            ));
            continue;
        }
        num += 1;
        let p = path.child(child);
        match key {
            "iscsi" => errs.extend(iscsi(source, pv_name, &p)),
            "local" => {
                errs.extend(local(source, &p));
                if !affinity_set {
                    errs.push(field::required(
                        &path.child("nodeAffinity"),
                        "Local volume requires node affinity",
                    ));
                }
            }
            _ => errs.extend(check(source, &p)),
        }
    }
    if num == 0 {
        errs.push(field::required(path, "must specify a volume type"));
    }

    let host_path = obj(spec, "hostPath").map(|h| str_of(h, "path"));
    if host_path.is_some_and(clean_is_root) && policy == "Recycle" {
        errs.push(field::forbidden(
            &path.child("persistentVolumeReclaimPolicy"),
            "may not be 'recycle' for a hostPath mount of '/'",
        ));
    }
    let class = str_of(spec, "storageClassName");
    if !class.is_empty() {
        errs.extend(validate_class_name(class, &path.child("storageClassName")));
    }
    errs.extend(validate_volume_mode(spec, path));
    errs
}

/// Whether Go's `path.Clean(p)` is `/`.
fn clean_is_root(p: &str) -> bool {
    if !p.starts_with('/') {
        return false;
    }
    let mut depth: Vec<&str> = Vec::new();
    for part in p.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                depth.pop();
            }
            other => depth.push(other),
        }
    }
    depth.is_empty()
}

/// A value as upstream's semantic equality sees it: nil and empty collections, and zero
/// scalars of plain fields, are the same as an absent field.
pub(crate) fn semantic(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter_map(|(k, v)| {
                    let s = semantic(v);
                    (!is_zero(&s)).then(|| (k.clone(), s))
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(semantic).collect()),
        other => other.clone(),
    }
}

fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
    }
}

/// The `PersistentVolumeSource` of a spec: its source fields only.
fn volume_source(spec: &Value) -> Value {
    let map: Map<String, Value> = SOURCE_KEYS
        .iter()
        .filter_map(|k| Some(((*k).to_owned(), spec.get(*k)?.clone())))
        .collect();
    Value::Object(map)
}

/// Upstream `betaToGALabel`.
fn beta_to_ga(key: &str) -> Option<&'static str> {
    Some(match key {
        "failure-domain.beta.kubernetes.io/zone" => "topology.kubernetes.io/zone",
        "failure-domain.beta.kubernetes.io/region" => "topology.kubernetes.io/region",
        "beta.kubernetes.io/os" => "kubernetes.io/os",
        "beta.kubernetes.io/arch" => "kubernetes.io/arch",
        "beta.kubernetes.io/instance-type" => "node.kubernetes.io/instance-type",
        _ => return None,
    })
}

/// Upstream `validatePvNodeAffinity`: node affinity is immutable, except that a beta
/// node label may become its GA label.
fn validate_pv_node_affinity(new: Option<&Value>, old: &Value, path: &Path) -> Vec<field::Error> {
    let mut masked = old.clone();
    let terms = |v: &Value| -> Vec<Value> {
        v.pointer("/required/nodeSelectorTerms")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let new_terms = new.map(terms).unwrap_or_default();
    if let Some(old_terms) = masked
        .pointer_mut("/required/nodeSelectorTerms")
        .and_then(Value::as_array_mut)
    {
        for (i, term) in old_terms.iter_mut().enumerate() {
            let Some(exprs) = term
                .get_mut("matchExpressions")
                .and_then(Value::as_array_mut)
            else {
                continue;
            };
            for (j, expr) in exprs.iter_mut().enumerate() {
                let new_key = new_terms
                    .get(i)
                    .and_then(|t| t.pointer(&format!("/matchExpressions/{j}/key")))
                    .and_then(Value::as_str);
                let old_key = expr.get("key").and_then(Value::as_str).unwrap_or("");
                if let Some(nk) = new_key
                    && nk != old_key
                    && beta_to_ga(old_key) == Some(nk)
                    && let Some(m) = expr.as_object_mut()
                {
                    m.insert("key".into(), Value::String(nk.to_owned()));
                }
            }
        }
    }
    if new.map(semantic) == Some(semantic(&masked)) {
        return Vec::new();
    }
    let value = match new {
        None => BadValue::Null,
        Some(n) if has(n, "required") => BadValue::Raw(
            "core.VolumeNodeAffinity{Required:(*core.NodeSelector)(0xc000000000)}".into(),
        ),
        Some(_) => {
            BadValue::Raw("core.VolumeNodeAffinity{Required:(*core.NodeSelector)(nil)}".into())
        }
    };
    vec![field::invalid(
        path,
        value,
        "field is immutable, except for updating from beta label to GA",
    )]
}

/// The rules of upstream `ValidatePersistentVolumeUpdate` past its `ValidatePersistentVolume`
/// call: the source, the volume mode and the node affinity are immutable.
pub(crate) fn validate_pv_update(new: &Value, old: &Value) -> Vec<field::Error> {
    let null = Value::Null;
    let new_spec = new.get("spec").unwrap_or(&null);
    let old_spec = old.get("spec").unwrap_or(&null);
    let mut errs = Vec::new();
    let mut new_source = volume_source(new_spec);
    let old_source = volume_source(old_spec);
    // A CSI volume may gain a controllerExpandSecretRef.
    let old_lacks_ref = old_source
        .get("csi")
        .is_some_and(|c| c.is_object() && !has(c, "controllerExpandSecretRef"));
    if old_lacks_ref && let Some(csi) = new_source.get_mut("csi").and_then(Value::as_object_mut) {
        csi.remove("controllerExpandSecretRef");
    }
    if semantic(&new_source) != semantic(&old_source) {
        let diff = crate::resources::pods::update::struct_diff(
            "core.PersistentVolumeSource",
            &semantic(&old_source),
            &semantic(&new_source),
        );
        errs.push(field::forbidden(
            &Path::new("spec").child("persistentvolumesource"),
            &format!("spec.persistentvolumesource is immutable after creation\n{diff}"),
        ));
    }
    errs.extend(validate_immutable_volume_mode(new_spec, old_spec));
    if let Some(old_affinity) = obj(old_spec, "nodeAffinity") {
        errs.extend(validate_pv_node_affinity(
            obj(new_spec, "nodeAffinity"),
            old_affinity,
            &Path::new("nodeAffinity"),
        ));
    }
    errs.extend(validate_vac_update(new_spec, old_spec));
    errs
}

/// `ValidateImmutableField` of `spec.volumeMode`, which upstream names `volumeMode`.
pub(crate) fn validate_immutable_volume_mode(
    new_spec: &Value,
    old_spec: &Value,
) -> Vec<field::Error> {
    let (n, o) = (
        opt_str(new_spec, "volumeMode"),
        opt_str(old_spec, "volumeMode"),
    );
    if n == o {
        return Vec::new();
    }
    let value = n.map_or(BadValue::Null, BadValue::from);
    vec![field::invalid(
        &Path::new("volumeMode"),
        value,
        "field is immutable",
    )]
}

/// A changed `volumeAttributesClassName` while the VolumeAttributesClass gate is off (as it
/// is by default in 1.33).
pub(crate) fn validate_vac_update(new_spec: &Value, old_spec: &Value) -> Vec<field::Error> {
    let key = "volumeAttributesClassName";
    let present = |s: &Value| s.get(key).filter(|v| !v.is_null()).cloned();
    if present(new_spec) == present(old_spec) {
        return Vec::new();
    }
    vec![field::forbidden(
        &Path::new("spec").child(key),
        "update is forbidden when the VolumeAttributesClass feature gate is disabled",
    )]
}

/// Drops `spec.volumeAttributesClassName` unless the old object used it (upstream's
/// `DropDisabledSpecFields` / `DropDisabledFields` with the gate off).
pub(crate) fn drop_disabled_vac(new: &mut Value, old: Option<&Value>) {
    let key = "volumeAttributesClassName";
    let old_uses = old
        .and_then(|o| o.pointer("/spec/volumeAttributesClassName"))
        .is_some_and(|v| !v.is_null());
    if !old_uses && let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) {
        spec.remove(key);
    }
}
