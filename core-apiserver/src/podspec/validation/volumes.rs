//! Upstream `ValidateVolumes` and `validateVolumeSource`.

use std::collections::BTreeMap;

use kas_apimachinery::resource::Quantity;
use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::is_dns1123_label;
use serde_json::Value;

use super::json::{arr, has, int_of, invalid_each, obj, str_of};
use super::sources;

/// The volumes that passed validation, by name (upstream's `map[string]VolumeSource`).
pub type Volumes<'a> = BTreeMap<String, &'a Value>;

/// Upstream `fileModeErrorMsg`.
pub const FILE_MODE_ERROR_MSG: &str = "must be a number between 0 and 0777 (octal), both inclusive";

/// Upstream `ValidateVolumes` (without the pod-name checks of generic ephemeral volumes).
pub fn validate_volumes<'a>(volumes: &'a [Value], path: &Path) -> (Volumes<'a>, Vec<field::Error>) {
    let mut errs = Vec::new();
    let mut vols = Volumes::new();
    for (i, vol) in volumes.iter().enumerate() {
        let idx = path.index(i);
        let name_path = idx.child("name");
        let name = str_of(vol, "name");
        let mut el = validate_volume_source(vol, &idx);
        if name.is_empty() {
            el.push(field::required(&name_path, ""));
        } else {
            el.extend(invalid_each(&name_path, name, is_dns1123_label(name)));
        }
        if vols.contains_key(name) {
            el.push(field::duplicate(&name_path, name));
        }
        if el.is_empty() {
            vols.insert(name.to_owned(), vol);
        } else {
            errs.extend(el);
        }
    }
    (vols, errs)
}

type SourceFn = fn(&Value, &Path) -> Vec<field::Error>;

/// The volume sources in upstream's order: JSON key, the child named in "more than 1
/// volume type", the child its own checks use, and those checks.
const SOURCES: [(&str, &str, &str, SourceFn); 29] = [
    ("emptyDir", "emptyDir", "emptyDir", empty_dir),
    ("hostPath", "hostPath", "hostPath", sources::host_path),
    ("gitRepo", "gitRepo", "gitRepo", sources::git_repo),
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
    ("secret", "secret", "secret", secret),
    ("nfs", "nfs", "nfs", sources::nfs),
    ("iscsi", "iscsi", "iscsi", sources::iscsi),
    ("glusterfs", "glusterfs", "glusterfs", sources::glusterfs),
    ("flocker", "flocker", "flocker", sources::flocker),
    (
        "persistentVolumeClaim",
        "persistentVolumeClaim",
        "persistentVolumeClaim",
        pvc,
    ),
    ("rbd", "rbd", "rbd", sources::rbd),
    ("cinder", "cinder", "cinder", sources::cinder),
    ("cephfs", "cephFS", "cephfs", sources::cephfs),
    ("quobyte", "quobyte", "quobyte", sources::quobyte),
    ("downwardAPI", "downwarAPI", "downwardAPI", downward_api),
    ("fc", "fc", "fc", sources::fc),
    ("flexVolume", "flexVolume", "flexVolume", sources::flex),
    ("configMap", "configMap", "configMap", config_map),
    ("azureFile", "azureFile", "azureFile", sources::azure_file),
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
    ("storageos", "storageos", "storageos", sources::storageos),
    ("projected", "projected", "projected", projected),
    ("scaleIO", "scaleIO", "scaleIO", sources::scale_io),
    ("csi", "csi", "csi", sources::csi),
    ("ephemeral", "ephemeral", "ephemeral", sources::ephemeral),
];

/// Upstream `validateVolumeSource`: exactly one source, and its own checks.
fn validate_volume_source(vol: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let mut num = 0;
    for (key, dup_child, child, check) in SOURCES {
        let Some(source) = obj(vol, key) else {
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
        errs.extend(check(source, &path.child(child)));
        if key == "iscsi" {
            errs.extend(sources::iscsi_name(vol, source, path));
        }
    }
    if num == 0 {
        errs.push(field::required(path, "must specify a volume type"));
    }
    errs
}

fn empty_dir(source: &Value, path: &Path) -> Vec<field::Error> {
    let negative = source
        .get("sizeLimit")
        .and_then(Value::as_str)
        .and_then(|s| Quantity::parse(s).ok())
        .is_some_and(|q| super::resources::is_negative(&q));
    if negative {
        let p = path.child("sizeLimit");
        return vec![field::forbidden(
            &p,
            "SizeLimit field must be a valid resource quantity",
        )];
    }
    Vec::new()
}

/// A `defaultMode`/`mode` outside 0..=0777.
pub fn validate_mode(source: &Value, key: &str, path: &Path) -> Vec<field::Error> {
    match int_of(source, key) {
        Some(m) if !(0..=0o777).contains(&m) => {
            vec![field::invalid(&path.child(key), m, FILE_MODE_ERROR_MSG)]
        }
        _ => Vec::new(),
    }
}

/// Upstream `validateKeyToPath`.
pub fn validate_key_to_path(kp: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    if str_of(kp, "key").is_empty() {
        errs.push(field::required(&path.child("key"), ""));
    }
    let p = str_of(kp, "path");
    if p.is_empty() {
        errs.push(field::required(&path.child("path"), ""));
    }
    errs.extend(super::paths::validate_local_non_reserved_path(
        p,
        &path.child("path"),
    ));
    errs.extend(validate_mode(kp, "mode", path));
    errs
}

fn items(source: &Value, path: &Path) -> Vec<field::Error> {
    let items = path.child("items");
    arr(source, "items")
        .iter()
        .enumerate()
        .flat_map(|(i, kp)| validate_key_to_path(kp, &items.index(i)))
        .collect()
}

/// Upstream `validateSecretVolumeSource`.
fn secret(source: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    if str_of(source, "secretName").is_empty() {
        errs.push(field::required(&path.child("secretName"), ""));
    }
    errs.extend(validate_mode(source, "defaultMode", path));
    errs.extend(items(source, path));
    errs
}

/// Upstream `validateConfigMapVolumeSource`.
fn config_map(source: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    if str_of(source, "name").is_empty() {
        errs.push(field::required(&path.child("name"), ""));
    }
    errs.extend(validate_mode(source, "defaultMode", path));
    errs.extend(items(source, path));
    errs
}

/// Upstream `validatePersistentClaimVolumeSource`.
fn pvc(source: &Value, path: &Path) -> Vec<field::Error> {
    if str_of(source, "claimName").is_empty() {
        return vec![field::required(&path.child("claimName"), "")];
    }
    Vec::new()
}

/// Upstream `validateDownwardAPIVolumeFile`: upstream hands it the source's path, not
/// the item's, and so do its errors.
pub fn validate_downward_api_file(file: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let p = str_of(file, "path");
    if p.is_empty() {
        errs.push(field::required(&path.child("path"), ""));
    }
    errs.extend(super::paths::validate_local_non_reserved_path(
        p,
        &path.child("path"),
    ));
    if let Some(fr) = obj(file, "fieldRef") {
        errs.extend(super::downward::validate_object_field_selector(
            fr,
            &super::downward::VOLUME_FIELD_PATHS,
            &path.child("fieldRef"),
        ));
        if has(file, "resourceFieldRef") {
            errs.push(field::invalid(
                path,
                "resource",
                "fieldRef and resourceFieldRef can not be specified simultaneously",
            ));
        }
    } else if let Some(rf) = obj(file, "resourceFieldRef") {
        errs.extend(super::downward::validate_resource_field_selector(
            rf,
            &path.child("resourceFieldRef"),
            true,
        ));
    } else {
        errs.push(field::required(
            path,
            "one of fieldRef and resourceFieldRef is required",
        ));
    }
    errs.extend(validate_mode(file, "mode", path));
    errs
}

/// Upstream `validateDownwardAPIVolumeSource`.
fn downward_api(source: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = validate_mode(source, "defaultMode", path);
    for file in arr(source, "items") {
        errs.extend(validate_downward_api_file(file, path));
    }
    errs
}

/// Upstream `validateProjectedVolumeSource` and `validateProjectionSources` (without the
/// disabled-by-default `clusterTrustBundle` source).
fn projected(source: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = validate_mode(source, "defaultMode", path);
    let mut all_paths = std::collections::BTreeSet::new();
    for (i, src) in arr(source, "sources").iter().enumerate() {
        let src_path = path.child("sources").index(i);
        let mut num = 0;
        for kind in ["secret", "configMap"] {
            let Some(s) = obj(src, kind) else { continue };
            num += 1;
            let proj = src_path.child(kind);
            let name = str_of(s, "name");
            if name.is_empty() {
                errs.push(field::required(&proj.child("name"), ""));
            }
            for (j, kp) in arr(s, "items").iter().enumerate() {
                errs.extend(validate_key_to_path(kp, &proj.child("items").index(j)));
                let p = str_of(kp, "path");
                if !p.is_empty() && !all_paths.insert(p.to_owned()) {
                    errs.push(field::invalid(path, name, "conflicting duplicate paths"));
                }
            }
        }
        if let Some(d) = obj(src, "downwardAPI") {
            num += 1;
            let proj = src_path.child("downwardAPI");
            for file in arr(d, "items") {
                errs.extend(validate_downward_api_file(file, &proj));
                let p = str_of(file, "path");
                if !p.is_empty() && !all_paths.insert(p.to_owned()) {
                    errs.push(field::invalid(path, p, "conflicting duplicate paths"));
                }
            }
        }
        if let Some(t) = obj(src, "serviceAccountToken") {
            num += 1;
            errs.extend(service_account_token(
                t,
                &src_path.child("serviceAccountToken"),
                path,
            ));
        }
        if num > 1 {
            errs.push(field::forbidden(
                &src_path,
                "may not specify more than 1 volume type per source",
            ));
        }
    }
    errs
}

fn service_account_token(t: &Value, proj: &Path, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let exp = int_of(t, "expirationSeconds").unwrap_or(0);
    let exp_path = proj.child("expirationSeconds");
    if exp < 10 * 60 {
        errs.push(field::invalid(
            &exp_path,
            exp,
            "may not specify a duration less than 10 minutes",
        ));
    }
    if exp > 1 << 32 {
        errs.push(field::invalid(
            &exp_path,
            exp,
            "may not specify a duration larger than 2^32 seconds",
        ));
    }
    let p = str_of(t, "path");
    if p.is_empty() {
        errs.push(field::required(&path.child("path"), ""));
    } else {
        errs.extend(super::paths::validate_local_non_reserved_path(
            p,
            &path.child("path"),
        ));
    }
    errs
}
