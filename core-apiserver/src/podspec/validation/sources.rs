//! Upstream's checks of the less common volume sources (`validate*VolumeSource`).

use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::meta::name_is_dns_subdomain;
use kas_apimachinery::validation::{inclusive_range_error, is_dns1123_label, is_dns1123_subdomain};
use serde_json::Value;

use super::json::{arr, has, int_of, invalid_each, obj, opt_str, str_of, strings};
use super::paths::{validate_local_descending_path, validate_path_no_backsteps};

/// Upstream `supportedHostPathTypes`, sorted.
const HOST_PATH_TYPES: [&str; 8] = [
    "",
    "BlockDevice",
    "CharDevice",
    "Directory",
    "DirectoryOrCreate",
    "File",
    "FileOrCreate",
    "Socket",
];

fn required(source: &Value, key: &str, path: &Path) -> Vec<field::Error> {
    if str_of(source, key).is_empty() {
        return vec![field::required(&path.child(key), "")];
    }
    Vec::new()
}

fn required_list(source: &Value, key: &str, path: &Path) -> Vec<field::Error> {
    if arr(source, key).is_empty() {
        return vec![field::required(&path.child(key), "")];
    }
    Vec::new()
}

fn secret_ref_name(source: &Value, path: &Path) -> Vec<field::Error> {
    match obj(source, "secretRef") {
        Some(r) if str_of(r, "name").is_empty() => {
            vec![field::required(&path.child("secretRef").child("name"), "")]
        }
        _ => Vec::new(),
    }
}

/// Upstream `validateHostPathVolumeSource`.
pub fn host_path(source: &Value, path: &Path) -> Vec<field::Error> {
    let p = str_of(source, "path");
    if p.is_empty() {
        return vec![field::required(&path.child("path"), "")];
    }
    let mut errs = validate_path_no_backsteps(p, &path.child("path"));
    if let Some(t) = opt_str(source, "type")
        && !HOST_PATH_TYPES.contains(&t)
    {
        errs.push(field::not_supported(
            &path.child("type"),
            t,
            &HOST_PATH_TYPES,
        ));
    }
    errs
}

/// Upstream `validateGitRepoVolumeSource`.
pub fn git_repo(source: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = required(source, "repository", path);
    let dir = str_of(source, "directory");
    errs.extend(validate_local_descending_path(
        dir,
        &path.child("directory"),
    ));
    errs
}

/// Upstream `validateGCEPersistentDiskVolumeSource`.
pub fn gce_pd(source: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = required(source, "pdName", path);
    errs.extend(range_0_255(source, "partition", path, 1));
    errs
}

/// Upstream `validateAWSElasticBlockStoreVolumeSource`.
pub fn aws_ebs(source: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = required(source, "volumeID", path);
    errs.extend(range_0_255(source, "partition", path, 1));
    errs
}

/// Upstream `validateNFSVolumeSource`.
pub fn nfs(source: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = required(source, "server", path);
    errs.extend(required(source, "path", path));
    let p = str_of(source, "path");
    if !p.starts_with('/') {
        errs.push(field::invalid(
            &path.child("path"),
            p,
            "must be an absolute path",
        ));
    }
    errs
}

fn iqn_prefix_ok(s: &str) -> bool {
    s.starts_with("iqn") || s.starts_with("eui") || s.starts_with("naa")
}

/// Upstream `validateISCSIVolumeSource` (without its IQN/EUI/NAA regular expressions).
pub fn iscsi(source: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = required(source, "targetPortal", path);
    let iqn = str_of(source, "iqn");
    if iqn.is_empty() {
        errs.push(field::required(&path.child("iqn"), ""));
    } else if !iqn_prefix_ok(iqn) {
        let msg = "must be valid format starting with iqn, eui, or naa";
        errs.push(field::invalid(&path.child("iqn"), iqn, msg));
    }
    errs.extend(range_0_255(source, "lun", path, 0));
    let chap = super::json::bool_of(source, "chapAuthDiscovery")
        || super::json::bool_of(source, "chapAuthSession");
    if chap && !has(source, "secretRef") {
        errs.push(field::required(&path.child("secretRef"), ""));
    }
    if let Some(init) = opt_str(source, "initiatorName")
        && !iqn_prefix_ok(init)
    {
        let msg = "must be valid format starting with iqn, eui, or naa";
        errs.push(field::invalid(&path.child("initiatorname"), init, msg));
    }
    errs
}

/// The volume-name length check `validateVolumeSource` makes for ISCSI.
pub fn iscsi_name(vol: &Value, source: &Value, path: &Path) -> Vec<field::Error> {
    let name = str_of(vol, "name");
    let portal = str_of(source, "targetPortal");
    if has(source, "initiatorName") && name.len() + 1 + portal.len() > 64 {
        let msg = "Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified.";
        return vec![field::invalid(&path.child("name"), name, msg)];
    }
    Vec::new()
}

/// Upstream `validateGlusterfsVolumeSource`.
pub fn glusterfs(source: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = required(source, "endpoints", path);
    errs.extend(required(source, "path", path));
    errs
}

/// Upstream `validateFlockerVolumeSource`.
pub fn flocker(source: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let name = str_of(source, "datasetName");
    let uuid = str_of(source, "datasetUUID");
    if name.is_empty() && uuid.is_empty() {
        errs.push(field::required(
            path,
            "one of datasetName and datasetUUID is required",
        ));
    }
    if !name.is_empty() && !uuid.is_empty() {
        let msg = "datasetName and datasetUUID can not be specified simultaneously";
        errs.push(field::invalid(path, "resource", msg));
    }
    if name.contains('/') {
        errs.push(field::invalid(
            &path.child("datasetName"),
            name,
            "must not contain '/'",
        ));
    }
    errs
}

/// Upstream `validateRBDVolumeSource`.
pub fn rbd(source: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = required_list(source, "monitors", path);
    errs.extend(required(source, "image", path));
    errs
}

/// Upstream `validateCinderVolumeSource`.
pub fn cinder(source: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = required(source, "volumeID", path);
    errs.extend(secret_ref_name(source, path));
    errs
}

/// Upstream `validateCephFSVolumeSource`.
pub fn cephfs(source: &Value, path: &Path) -> Vec<field::Error> {
    required_list(source, "monitors", path)
}

/// Go's `net.SplitHostPort` succeeding, roughly: `host:port` or `[v6]:port`.
fn is_host_port(s: &str) -> bool {
    if let Some(rest) = s.strip_prefix('[') {
        return rest
            .split_once("]:")
            .is_some_and(|(h, p)| !h.contains(']') && !p.contains(':'));
    }
    s.matches(':').count() == 1 && !s.contains('[') && !s.contains(']')
}

/// Upstream `validateQuobyteVolumeSource`.
pub fn quobyte(source: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let registry = str_of(source, "registry");
    let msg = "must be a host:port pair or multiple pairs separated by commas";
    if registry.is_empty() {
        errs.push(field::required(&path.child("registry"), msg));
    } else if str_of(source, "tenant").len() >= 65 {
        let m = "must be a UUID and may not exceed a length of 64 characters";
        errs.push(field::required(&path.child("tenant"), m));
    } else {
        for pair in registry.split(',') {
            if !is_host_port(pair) {
                errs.push(field::invalid(&path.child("registry"), registry, msg));
            }
        }
    }
    errs.extend(required(source, "volume", path));
    errs
}

/// Upstream `validateFCVolumeSource`.
pub fn fc(source: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let wwns = strings(source, "targetWWNs");
    let wwids = arr(source, "wwids");
    let p = path.child("targetWWNs");
    if wwns.is_empty() && wwids.is_empty() {
        let msg = "must specify either targetWWNs or wwids, but not both";
        errs.push(field::required(&p, msg));
    }
    if !wwns.is_empty() && !wwids.is_empty() {
        let list: Vec<String> = wwns.iter().map(|s| (*s).to_owned()).collect();
        let msg = "targetWWNs and wwids can not be specified simultaneously";
        let value = field::BadValue::Strings(Some(list));
        errs.push(field::invalid(&p, value, msg));
    }
    if !wwns.is_empty() {
        if has(source, "lun") {
            errs.extend(range_0_255(source, "lun", path, 0));
        } else {
            let msg = "lun is required if targetWWNs is specified";
            errs.push(field::required(&path.child("lun"), msg));
        }
    }
    errs
}

/// Upstream `validateFlexVolumeSource`.
pub fn flex(source: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = required(source, "driver", path);
    for k in super::json::str_map(source, "options").keys() {
        let ns = k.split_once('/').map_or(k.as_str(), |(ns, _)| ns);
        let normalized = format!(".{}", ns.to_lowercase());
        if normalized.ends_with(".kubernetes.io") || normalized.ends_with(".k8s.io") {
            let msg = "kubernetes.io and k8s.io namespaces are reserved";
            errs.push(field::invalid(
                &path.child("options").key(k),
                k.as_str(),
                msg,
            ));
        }
    }
    errs
}

/// Upstream `validateAzureFile`.
pub fn azure_file(source: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = required(source, "secretName", path);
    errs.extend(required(source, "shareName", path));
    errs
}

/// Upstream `validateVsphereVolumeSource`.
pub fn vsphere(source: &Value, path: &Path) -> Vec<field::Error> {
    required(source, "volumePath", path)
}

/// Upstream `validatePhotonPersistentDiskVolumeSource`.
pub fn photon(source: &Value, path: &Path) -> Vec<field::Error> {
    required(source, "pdID", path)
}

/// Upstream `validatePortworxVolumeSource`.
pub fn portworx(source: &Value, path: &Path) -> Vec<field::Error> {
    required(source, "volumeID", path)
}

/// Upstream `validateAzureDisk`.
pub fn azure_disk(source: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = required(source, "diskName", path);
    errs.extend(required(source, "diskURI", path));
    let caching = ["None", "ReadOnly", "ReadWrite"];
    if let Some(c) = opt_str(source, "cachingMode")
        && !caching.contains(&c)
    {
        errs.push(field::not_supported(
            &path.child("cachingMode"),
            c,
            &caching,
        ));
    }
    let kinds = ["Dedicated", "Managed", "Shared"];
    let uri = str_of(source, "diskURI");
    if let Some(k) = opt_str(source, "kind") {
        if !kinds.contains(&k) {
            errs.push(field::not_supported(&path.child("kind"), k, &kinds));
        }
        let p = path.child("diskURI");
        if k == "Managed" && !uri.starts_with("/subscriptions/") {
            let supported = [
                "/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}",
            ];
            errs.push(field::not_supported(&p, uri, &supported));
        }
        if k != "Managed" && !uri.starts_with("https://") {
            let supported =
                ["https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"];
            errs.push(field::not_supported(&p, uri, &supported));
        }
    }
    errs
}

/// Upstream `validateStorageOSVolumeSource`.
pub fn storageos(source: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let name = str_of(source, "volumeName");
    if name.is_empty() {
        errs.push(field::required(&path.child("volumeName"), ""));
    } else {
        errs.extend(invalid_each(
            &path.child("volumeName"),
            name,
            is_dns1123_label(name),
        ));
    }
    let ns = str_of(source, "volumeNamespace");
    if !ns.is_empty() {
        errs.extend(invalid_each(
            &path.child("volumeNamespace"),
            ns,
            is_dns1123_label(ns),
        ));
    }
    errs.extend(secret_ref_name(source, path));
    errs
}

/// Upstream `validateScaleIOVolumeSource`.
pub fn scale_io(source: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = required(source, "gateway", path);
    errs.extend(required(source, "system", path));
    errs.extend(required(source, "volumeName", path));
    errs
}

/// Upstream `ValidateCSIDriverName`.
pub fn csi_driver_name(driver: &str, dp: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    if driver.is_empty() {
        errs.push(field::required(dp, ""));
    }
    if driver.len() > 63 {
        errs.push(field::too_long(dp, 63));
    }
    errs.extend(invalid_each(
        dp,
        driver,
        is_dns1123_subdomain(&driver.to_lowercase()),
    ));
    errs
}

/// Upstream `validateCSIVolumeSource`.
pub fn csi(source: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = csi_driver_name(str_of(source, "driver"), &path.child("driver"));
    if let Some(r) = obj(source, "nodePublishSecretRef") {
        let name = str_of(r, "name");
        if name.is_empty() {
            let p = path.child("nodePublishSecretRef").child("name");
            errs.push(field::required(&p, ""));
        } else {
            let msgs = name_is_dns_subdomain(name, false);
            errs.extend(invalid_each(&path.child("name"), name, msgs));
        }
    }
    errs
}

/// Upstream `validateEphemeralVolumeSource` (the claim template's spec is not checked).
pub fn ephemeral(source: &Value, path: &Path) -> Vec<field::Error> {
    if !has(source, "volumeClaimTemplate") {
        return vec![field::required(&path.child("volumeClaimTemplate"), "")];
    }
    Vec::new()
}

/// Upstream `pdPartitionErrorMsg` and the ISCSI/FC lun range.
fn range_0_255(source: &Value, key: &str, path: &Path, lo: i64) -> Vec<field::Error> {
    match int_of(source, key) {
        Some(n) if !(0..=255).contains(&n) => {
            vec![field::invalid(
                &path.child(key),
                n,
                &inclusive_range_error(lo, 255),
            )]
        }
        _ => Vec::new(),
    }
}
