//! Upstream `validateContainerCommon` and the per-field checks it makes.

use std::collections::{BTreeMap, BTreeSet};

use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::meta::name_is_dns_subdomain;
use kas_apimachinery::validation::{
    is_dns1123_label, is_relaxed_env_var_name, is_valid_port_name, is_valid_port_num,
};
use serde_json::Value;

use super::downward::{
    ENV_FIELD_PATHS, validate_key_selector, validate_object_field_selector,
    validate_resource_field_selector,
};
use super::json::{arr, has, int0, invalid_each, obj, opt_bool, opt_str, str_of};
use super::paths::{validate_local_descending_path, validate_path_no_backsteps};
use super::volumes::Volumes;

/// Upstream `validateContainerCommon`.
pub fn validate_container_common(
    ctr: &Value,
    volumes: &Volumes<'_>,
    path: &Path,
    pod_restart_policy: &str,
    host_users: bool,
) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let name = str_of(ctr, "name");
    let name_path = path.child("name");
    if name.is_empty() {
        errs.push(field::required(&name_path, ""));
    } else {
        errs.extend(invalid_each(&name_path, name, is_dns1123_label(name)));
    }
    if str_of(ctr, "image").is_empty() {
        errs.push(field::required(&path.child("image"), ""));
    }
    let tmp = str_of(ctr, "terminationMessagePolicy");
    let tmp_path = path.child("terminationMessagePolicy");
    match tmp {
        "File" | "FallbackToLogsOnError" => {}
        "" => errs.push(field::required(&tmp_path, "")),
        _ => errs.push(field::not_supported(
            &tmp_path,
            tmp,
            &["File", "FallbackToLogsOnError"],
        )),
    }
    let mounts = arr(ctr, "volumeMounts");
    let devices = arr(ctr, "volumeDevices");
    let mount_map = name_map(mounts, "mountPath");
    let device_map = name_map(devices, "devicePath");
    errs.extend(validate_container_ports(
        arr(ctr, "ports"),
        &path.child("ports"),
    ));
    errs.extend(validate_env(arr(ctr, "env"), &path.child("env")));
    errs.extend(validate_env_from(
        arr(ctr, "envFrom"),
        &path.child("envFrom"),
    ));
    errs.extend(validate_volume_mounts(
        mounts,
        &device_map,
        volumes,
        ctr,
        &path.child("volumeMounts"),
    ));
    errs.extend(validate_volume_devices(
        devices,
        &mount_map,
        volumes,
        &path.child("volumeDevices"),
    ));
    errs.extend(validate_pull_policy(
        str_of(ctr, "imagePullPolicy"),
        &path.child("imagePullPolicy"),
    ));
    if let Some(r) = obj(ctr, "resources") {
        errs.extend(super::resources::validate_resource_requirements(
            r,
            &path.child("resources"),
        ));
    }
    errs.extend(validate_resize_policy(
        arr(ctr, "resizePolicy"),
        &path.child("resizePolicy"),
        pod_restart_policy,
    ));
    errs.extend(super::security::validate_security_context(
        ctr, host_users, path,
    ));
    errs
}

/// Upstream `GetVolumeMountMap` / `GetVolumeDeviceMap`: name to path, the last one winning.
fn name_map(items: &[Value], path_key: &str) -> BTreeMap<String, String> {
    items
        .iter()
        .map(|m| (str_of(m, "name").to_owned(), str_of(m, path_key).to_owned()))
        .collect()
}

/// Upstream `validateContainerPorts`.
fn validate_container_ports(ports: &[Value], path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let mut names = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let idx = path.index(i);
        let name = str_of(port, "name");
        if !name.is_empty() {
            let msgs = is_valid_port_name(name);
            if !msgs.is_empty() {
                errs.extend(invalid_each(&idx.child("name"), name, msgs));
            } else if !names.insert(name) {
                errs.push(field::duplicate(&idx.child("name"), name));
            }
        }
        let cp = int0(port, "containerPort");
        if cp == 0 {
            errs.push(field::required(&idx.child("containerPort"), ""));
        } else {
            let p = idx.child("containerPort");
            errs.extend(
                is_valid_port_num(cp)
                    .iter()
                    .map(|m| field::invalid(&p, cp, m)),
            );
        }
        let hp = int0(port, "hostPort");
        if hp != 0 {
            let p = idx.child("hostPort");
            errs.extend(
                is_valid_port_num(hp)
                    .iter()
                    .map(|m| field::invalid(&p, hp, m)),
            );
        }
        let protocol = str_of(port, "protocol");
        let protocols = ["SCTP", "TCP", "UDP"];
        if protocol.is_empty() {
            errs.push(field::required(&idx.child("protocol"), ""));
        } else if !protocols.contains(&protocol) {
            errs.push(field::not_supported(
                &idx.child("protocol"),
                protocol,
                &protocols,
            ));
        }
    }
    errs
}

/// Upstream `ValidateEnv` (relaxed names: `RelaxedEnvironmentVariableValidation` is on).
fn validate_env(vars: &[Value], path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    for (i, ev) in vars.iter().enumerate() {
        let idx = path.index(i);
        let name = str_of(ev, "name");
        if name.is_empty() {
            errs.push(field::required(&idx.child("name"), ""));
        } else {
            errs.extend(invalid_each(
                &idx.child("name"),
                name,
                is_relaxed_env_var_name(name),
            ));
        }
        if let Some(vf) = obj(ev, "valueFrom") {
            errs.extend(validate_env_var_value_from(ev, vf, &idx.child("valueFrom")));
        }
    }
    errs
}

/// Upstream `validateEnvVarValueFrom`.
fn validate_env_var_value_from(ev: &Value, vf: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let mut num = 0;
    if let Some(fr) = obj(vf, "fieldRef") {
        num += 1;
        errs.extend(validate_object_field_selector(
            fr,
            &ENV_FIELD_PATHS,
            &path.child("fieldRef"),
        ));
    }
    if let Some(rf) = obj(vf, "resourceFieldRef") {
        num += 1;
        errs.extend(validate_resource_field_selector(
            rf,
            &path.child("resourceFieldRef"),
            false,
        ));
    }
    for key in ["configMapKeyRef", "secretKeyRef"] {
        if let Some(s) = obj(vf, key) {
            num += 1;
            errs.extend(validate_key_selector(s, &path.child(key)));
        }
    }
    if num == 0 {
        let msg = "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`";
        errs.push(field::invalid(path, "", msg));
    } else if !str_of(ev, "value").is_empty() {
        errs.push(field::invalid(
            path,
            "",
            "may not be specified when `value` is not empty",
        ));
    } else if num > 1 {
        let msg = "may not have more than one field specified at a time";
        errs.push(field::invalid(path, "", msg));
    }
    errs
}

/// Upstream `ValidateEnvFrom`.
fn validate_env_from(vars: &[Value], path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    for (i, ev) in vars.iter().enumerate() {
        let idx = path.index(i);
        let prefix = str_of(ev, "prefix");
        if !prefix.is_empty() {
            errs.extend(invalid_each(
                &idx.child("prefix"),
                prefix,
                is_relaxed_env_var_name(prefix),
            ));
        }
        let mut num = 0;
        for key in ["configMapRef", "secretRef"] {
            let Some(r) = obj(ev, key) else { continue };
            num += 1;
            let p = idx.child(key).child("name");
            let name = str_of(r, "name");
            if name.is_empty() {
                errs.push(field::required(&p, ""));
            } else {
                errs.extend(invalid_each(&p, name, name_is_dns_subdomain(name, true)));
            }
        }
        if num == 0 {
            let msg = "must specify one of: `configMapRef` or `secretRef`";
            errs.push(field::invalid(path, "", msg));
        } else if num > 1 {
            let msg = "may not have more than one field specified at a time";
            errs.push(field::invalid(path, "", msg));
        }
    }
    errs
}

/// Upstream `ValidateVolumeMounts`. Upstream names the sub-path, propagation and
/// recursive-read-only errors after the list, not the item; so does this.
fn validate_volume_mounts(
    mounts: &[Value],
    devices: &BTreeMap<String, String>,
    volumes: &Volumes<'_>,
    ctr: &Value,
    path: &Path,
) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let mut mount_points = BTreeSet::new();
    for (i, mnt) in mounts.iter().enumerate() {
        let idx = path.index(i);
        let name = str_of(mnt, "name");
        let mount_path = str_of(mnt, "mountPath");
        if name.is_empty() {
            errs.push(field::required(&idx.child("name"), ""));
        }
        if !volumes.contains_key(name) {
            errs.push(field::not_found(&idx.child("name"), name));
        }
        if mount_path.is_empty() {
            errs.push(field::required(&idx.child("mountPath"), ""));
        }
        if !mount_points.insert(mount_path) {
            errs.push(field::invalid(
                &idx.child("mountPath"),
                mount_path,
                "must be unique",
            ));
        }
        if devices.contains_key(name) {
            let msg = "must not already exist in volumeDevices";
            errs.push(field::invalid(&idx.child("name"), name, msg));
        }
        if devices.values().any(|p| p == mount_path) {
            let msg = "must not already exist as a path in volumeDevices";
            errs.push(field::invalid(&idx.child("mountPath"), mount_path, msg));
        }
        let sub_path = str_of(mnt, "subPath");
        let sub_expr = str_of(mnt, "subPathExpr");
        if !sub_path.is_empty() {
            errs.extend(validate_local_descending_path(
                sub_path,
                &path.child("subPath"),
            ));
        }
        if !sub_expr.is_empty() {
            if !sub_path.is_empty() {
                let msg = "subPathExpr and subPath are mutually exclusive";
                errs.push(field::invalid(&idx.child("subPathExpr"), sub_expr, msg));
            }
            errs.extend(validate_local_descending_path(
                sub_expr,
                &path.child("subPathExpr"),
            ));
        }
        if let Some(mp) = opt_str(mnt, "mountPropagation") {
            errs.extend(validate_mount_propagation(
                mp,
                ctr,
                &path.child("mountPropagation"),
            ));
        }
        errs.extend(validate_recursive_read_only(
            mnt,
            &path.child("recursiveReadOnly"),
        ));
    }
    errs
}

/// Upstream `validateMountPropagation`.
fn validate_mount_propagation(mp: &str, ctr: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let supported = ["Bidirectional", "HostToContainer", "None"];
    if !supported.contains(&mp) {
        errs.push(field::not_supported(path, mp, &supported));
    }
    let privileged =
        obj(ctr, "securityContext").and_then(|sc| opt_bool(sc, "privileged")) == Some(true);
    if mp == "Bidirectional" && !privileged {
        let msg = "Bidirectional mount propagation is available only to privileged containers";
        errs.push(field::forbidden(path, msg));
    }
    errs
}

/// Upstream `validateMountRecursiveReadOnly`.
fn validate_recursive_read_only(mnt: &Value, path: &Path) -> Vec<field::Error> {
    let Some(rro) = opt_str(mnt, "recursiveReadOnly") else {
        return Vec::new();
    };
    let mut errs = Vec::new();
    match rro {
        "Disabled" => {}
        "Enabled" | "IfPossible" => {
            if opt_bool(mnt, "readOnly") != Some(true) {
                errs.push(field::forbidden(
                    path,
                    "may only be specified when readOnly is true",
                ));
            }
            if opt_str(mnt, "mountPropagation").is_some_and(|mp| mp != "None") {
                let msg = "may only be specified when mountPropagation is None or not specified";
                errs.push(field::forbidden(path, msg));
            }
        }
        other => {
            let supported = ["Disabled", "Enabled", "IfPossible"];
            errs.push(field::not_supported(path, other, &supported));
        }
    }
    errs
}

/// Upstream `ValidateVolumeDevices`.
fn validate_volume_devices(
    devices: &[Value],
    mounts: &BTreeMap<String, String>,
    volumes: &Volumes<'_>,
    path: &Path,
) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let mut device_paths = BTreeSet::new();
    let mut device_names = BTreeSet::new();
    for (i, dev) in devices.iter().enumerate() {
        let idx = path.index(i);
        let name = str_of(dev, "name");
        let dev_path = str_of(dev, "devicePath");
        let matched = volumes.get(name);
        let is_pvc =
            matched.is_some_and(|v| has(v, "persistentVolumeClaim") || has(v, "ephemeral"));
        if name.is_empty() {
            errs.push(field::required(&idx.child("name"), ""));
        }
        if device_names.contains(name) {
            errs.push(field::invalid(&idx.child("name"), name, "must be unique"));
        }
        if matched.is_some() && !is_pvc {
            let msg = "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode";
            errs.push(field::invalid(&idx.child("name"), name, msg));
        }
        if matched.is_none() {
            errs.push(field::not_found(&idx.child("name"), name));
        }
        if dev_path.is_empty() {
            errs.push(field::required(&idx.child("devicePath"), ""));
        }
        if device_paths.contains(dev_path) {
            errs.push(field::invalid(
                &idx.child("devicePath"),
                dev_path,
                "must be unique",
            ));
        }
        if !dev_path.is_empty() && !validate_path_no_backsteps(dev_path, path).is_empty() {
            let msg = "can not contain backsteps ('..')";
            errs.push(field::invalid(&idx.child("devicePath"), dev_path, msg));
        } else {
            device_paths.insert(dev_path);
        }
        if mounts.contains_key(name) {
            let msg = "must not already exist in volumeMounts";
            errs.push(field::invalid(&idx.child("name"), name, msg));
        }
        if mounts.values().any(|p| p == dev_path) {
            let msg = "must not already exist as a path in volumeMounts";
            errs.push(field::invalid(&idx.child("devicePath"), dev_path, msg));
        }
        if !name.is_empty() {
            device_names.insert(name);
        }
    }
    errs
}

/// Upstream `validatePullPolicy`.
fn validate_pull_policy(policy: &str, path: &Path) -> Vec<field::Error> {
    match policy {
        "Always" | "IfNotPresent" | "Never" => Vec::new(),
        "" => vec![field::required(path, "")],
        _ => vec![field::not_supported(
            path,
            policy,
            &["Always", "IfNotPresent", "Never"],
        )],
    }
}

/// Upstream `validateResizePolicy`.
fn validate_resize_policy(
    policies: &[Value],
    path: &Path,
    pod_restart_policy: &str,
) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, p) in policies.iter().enumerate() {
        let name = str_of(p, "resourceName");
        if !seen.insert(name) {
            errs.push(field::duplicate(&path.index(i), name));
        }
        match name {
            "cpu" | "memory" => {}
            "" => errs.push(field::required(path, "")),
            _ => errs.push(field::not_supported(path, name, &["cpu", "memory"])),
        }
        let rp = str_of(p, "restartPolicy");
        match rp {
            "NotRequired" | "RestartContainer" => {}
            "" => errs.push(field::required(path, "")),
            _ => errs.push(field::not_supported(
                path,
                rp,
                &["NotRequired", "RestartContainer"],
            )),
        }
        if pod_restart_policy == "Never" && rp != "NotRequired" {
            let msg = "must be 'NotRequired' when `restartPolicy` is 'Never'";
            errs.push(field::invalid(path, rp, msg));
        }
    }
    errs
}

/// Upstream `AccumulateUniqueHostPorts` over `containers` (indexed from 0).
pub fn check_host_port_conflicts(containers: &[&Value], path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let mut seen = BTreeSet::new();
    for (ci, ctr) in containers.iter().enumerate() {
        let ports = path.index(ci).child("ports");
        for (pi, port) in arr(ctr, "ports").iter().enumerate() {
            let hp = int0(port, "hostPort");
            if hp == 0 {
                continue;
            }
            let key = format!(
                "{}/{}/{hp}",
                str_of(port, "protocol"),
                str_of(port, "hostIP")
            );
            if seen.contains(&key) {
                errs.push(field::duplicate(&ports.index(pi).child("hostPort"), key));
            } else {
                seen.insert(key);
            }
        }
    }
    errs
}
