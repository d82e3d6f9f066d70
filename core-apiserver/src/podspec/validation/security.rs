//! Upstream `ValidateSecurityContext`, `validatePodSpecSecurityContext` and the profile
//! checks they share.

use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::{is_dns1123_subdomain, is_valid_group_id, is_valid_user_id};
use serde_json::Value;

use super::json::{arr, bool_of, int_of, obj, opt_bool, opt_str, raw, str_of};
use super::paths::validate_local_descending_path;

fn id_check(
    sc: &Value,
    key: &str,
    check: fn(i64) -> Vec<String>,
    path: &Path,
) -> Vec<field::Error> {
    let Some(id) = int_of(sc, key) else {
        return Vec::new();
    };
    check(id)
        .iter()
        .map(|m| field::invalid(&path.child(key), id, m))
        .collect()
}

/// Upstream `validateSeccompProfileField`.
fn seccomp_profile(sc: &Value, path: &Path) -> Vec<field::Error> {
    let Some(sp) = obj(sc, "seccompProfile") else {
        return Vec::new();
    };
    let path = path.child("seccompProfile");
    let mut errs = Vec::new();
    let t = str_of(sp, "type");
    let types = ["Localhost", "RuntimeDefault", "Unconfined"];
    if t.is_empty() {
        let msg = "type is required when seccompProfile is set";
        errs.push(field::required(&path.child("type"), msg));
    } else if !types.contains(&t) {
        errs.push(field::not_supported(&path.child("type"), t, &types));
    }
    let lp = path.child("localhostProfile");
    match (t, opt_str(sp, "localhostProfile")) {
        ("Localhost", None) => {
            let msg = "must be set when seccomp type is Localhost";
            errs.push(field::required(&lp, msg));
        }
        ("Localhost", Some(p)) => errs.extend(validate_local_descending_path(p, &lp)),
        (_, Some(_)) => {
            let value = format!(
                "core.SeccompProfile{{Type:\"{t}\", LocalhostProfile:(*string)(0xc000000000)}}"
            );
            let msg = "can only be set when seccomp type is Localhost";
            errs.push(field::invalid(&lp, raw(value), msg));
        }
        _ => {}
    }
    errs
}

/// Upstream `ValidateAppArmorProfileField`.
fn app_armor_profile(sc: &Value, path: &Path) -> Vec<field::Error> {
    let Some(profile) = obj(sc, "appArmorProfile") else {
        return Vec::new();
    };
    let path = path.child("appArmorProfile");
    let lp = path.child("localhostProfile");
    let mut errs = Vec::new();
    match str_of(profile, "type") {
        "Localhost" => match opt_str(profile, "localhostProfile") {
            None => {
                let msg = "must be set when AppArmor type is Localhost";
                errs.push(field::required(&lp, msg));
            }
            Some(p) => {
                if p.trim() != p {
                    errs.push(field::invalid(&lp, p, "must not be padded with whitespace"));
                } else if p.is_empty() {
                    let msg = "must be set when AppArmor type is Localhost";
                    errs.push(field::required(&lp, msg));
                }
                if p.len() > 4095 {
                    errs.push(field::too_long(&lp, 4095));
                }
            }
        },
        "RuntimeDefault" | "Unconfined" => {
            if let Some(p) = opt_str(profile, "localhostProfile") {
                let msg = "can only be set when AppArmor type is Localhost";
                errs.push(field::invalid(&lp, p, msg));
            }
        }
        "" => {
            let msg = "type is required when appArmorProfile is set";
            errs.push(field::required(&path.child("type"), msg));
        }
        other => {
            let types = ["Localhost", "RuntimeDefault", "Unconfined"];
            errs.push(field::not_supported(&path.child("type"), other, &types));
        }
    }
    errs
}

/// Upstream `validateWindowsSecurityContextOptions` (the runAsUserName domain formats
/// aside).
fn windows_options(sc: &Value, path: &Path) -> Vec<field::Error> {
    let Some(w) = obj(sc, "windowsOptions") else {
        return Vec::new();
    };
    let path = path.child("windowsOptions");
    let mut errs = Vec::new();
    if let Some(name) = opt_str(w, "gmsaCredentialSpecName") {
        let p = path.child("gmsaCredentialSpecName");
        errs.extend(
            is_dns1123_subdomain(name)
                .iter()
                .map(|m| field::invalid(&p, name, m)),
        );
    }
    if let Some(spec) = opt_str(w, "gmsaCredentialSpec") {
        let p = path.child("gmsaCredentialSpec");
        if spec.is_empty() {
            let msg = "gmsaCredentialSpec cannot be an empty string";
            errs.push(field::invalid(&p, spec, msg));
        } else if spec.len() > 64 * 1024 {
            errs.push(field::invalid(
                &p,
                spec,
                "gmsaCredentialSpec size must be under 64 KiB",
            ));
        }
    }
    if let Some(user) = opt_str(w, "runAsUserName") {
        errs.extend(run_as_user_name(user, &path.child("runAsUserName")));
    }
    errs
}

fn run_as_user_name(name: &str, p: &Path) -> Vec<field::Error> {
    let bad = |msg: &str| vec![field::invalid(p, name, msg)];
    if name.is_empty() {
        return bad("runAsUserName cannot be an empty string");
    }
    if name.chars().any(char::is_control) {
        return bad("runAsUserName cannot contain control characters");
    }
    let parts: Vec<&str> = name.split('\\').collect();
    if parts.len() > 2 {
        return bad("runAsUserName cannot contain more than one backslash");
    }
    let (domain, user) = match parts.as_slice() {
        [d, u] => (*d, *u),
        _ => ("", name),
    };
    let mut errs = Vec::new();
    if domain.len() >= 256 {
        let msg = "runAsUserName's Domain length must be under 256 characters";
        errs.push(field::invalid(p, name, msg));
    }
    if user.is_empty() {
        errs.push(field::invalid(
            p,
            name,
            "runAsUserName's User cannot be empty",
        ));
    } else if user.len() > 104 {
        let msg = "runAsUserName's User length must not be longer than 104 characters";
        errs.push(field::invalid(p, name, msg));
    }
    if !user.is_empty() && user.chars().all(|c| c == '.' || c == ' ') {
        let msg = "runAsUserName's User cannot contain only periods or spaces";
        errs.push(field::invalid(p, name, msg));
    }
    if user.chars().any(|c| "\"/\\:;|=,+*?<>@[]".contains(c)) {
        let msg =
            "runAsUserName's User cannot contain the following characters: \"/\\:;|=,+*?<>@[]";
        errs.push(field::invalid(p, name, msg));
    }
    errs
}

/// Upstream `ValidateSecurityContext` of a container (privileged containers are taken as
/// allowed, as with `--allow-privileged=true`).
pub fn validate_security_context(ctr: &Value, host_users: bool, path: &Path) -> Vec<field::Error> {
    let Some(sc) = obj(ctr, "securityContext") else {
        return Vec::new();
    };
    let path = path.child("securityContext");
    let mut errs = id_check(sc, "runAsUser", is_valid_user_id, &path);
    errs.extend(id_check(sc, "runAsGroup", is_valid_group_id, &path));
    if let Some(pm) = opt_str(sc, "procMount") {
        let p = path.child("procMount");
        if !["Default", "Unmasked"].contains(&pm) {
            errs.push(field::not_supported(&p, pm, &["Default", "Unmasked"]));
        }
        if host_users && pm == "Unmasked" {
            errs.push(field::invalid(
                &p,
                pm,
                "`hostUsers` must be false to use `Unmasked`",
            ));
        }
    }
    errs.extend(seccomp_profile(sc, &path));
    if opt_bool(sc, "allowPrivilegeEscalation") == Some(false) {
        if opt_bool(sc, "privileged") == Some(true) {
            let msg = "cannot set `allowPrivilegeEscalation` to false and `privileged` to true";
            errs.push(field::invalid(&path, BadValue::Omit, msg));
        }
        let caps = obj(sc, "capabilities")
            .map(|c| arr(c, "add"))
            .unwrap_or(&[]);
        for cap in caps {
            if cap.as_str() == Some("CAP_SYS_ADMIN") {
                let msg = "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN";
                errs.push(field::invalid(&path, BadValue::Omit, msg));
            }
        }
    }
    errs.extend(windows_options(sc, &path));
    errs.extend(app_armor_profile(sc, &path));
    errs
}

/// The sysctl namespace of `utilsysctl.GetNamespace`: `Some("net")` or `Some("ipc")`.
fn sysctl_namespace(name: &str) -> Option<&'static str> {
    // NormalizeName: a name whose first separator is '/' uses '/' for '.'.
    let normalized: String = match name.find(['.', '/']) {
        Some(i) if name.as_bytes()[i] == b'/' => name
            .chars()
            .map(|c| match c {
                '/' => '.',
                '.' => '/',
                c => c,
            })
            .collect(),
        _ => name.to_owned(),
    };
    let n = normalized.as_str();
    if n == "kernel.sem"
        || n.starts_with("kernel.shm")
        || n.starts_with("kernel.msg")
        || n.starts_with("fs.mqueue.")
    {
        Some("ipc")
    } else if n.starts_with("net.") {
        Some("net")
    } else {
        None
    }
}

/// `[a-z0-9]([-_a-z0-9]*[a-z0-9])?` segments joined by `.` or `/`, at most 253 long.
fn is_valid_sysctl_name(name: &str) -> bool {
    let seg_ok = |s: &str| {
        let b = s.as_bytes();
        let edge = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
        b.first().is_some_and(edge)
            && b.last().is_some_and(edge)
            && b.iter().all(|c| edge(c) || *c == b'-' || *c == b'_')
    };
    name.len() <= 253 && name.split(['.', '/']).all(seg_ok)
}

/// Upstream `validateSysctls` (with `ValidateHostSysctl`).
fn sysctls(spec: &Value, sc: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let mut names = std::collections::BTreeSet::new();
    let regex = "^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$";
    for (i, s) in arr(sc, "sysctls").iter().enumerate() {
        let p = path.index(i).child("name");
        let name = str_of(s, "name");
        if name.is_empty() {
            errs.push(field::required(&p, ""));
        } else if !is_valid_sysctl_name(name) {
            let msg = format!("must have at most 253 characters and match regex {regex}");
            errs.push(field::invalid(&p, name, &msg));
        } else if names.contains(name) {
            errs.push(field::duplicate(&p, name));
        }
        match sysctl_namespace(name) {
            Some("net") if bool_of(spec, "hostNetwork") => {
                let msg = "may not be specified when 'hostNetwork' is true";
                errs.push(field::invalid(&p, name, msg));
            }
            Some("ipc") if bool_of(spec, "hostIPC") => {
                let msg = "may not be specified when 'hostIPC' is true";
                errs.push(field::invalid(&p, name, msg));
            }
            _ => {}
        }
        names.insert(name);
    }
    errs
}

fn one_of(sc: &Value, key: &str, valid: &[&str], path: &Path) -> Vec<field::Error> {
    match opt_str(sc, key) {
        Some(v) if !valid.contains(&v) => vec![field::not_supported(&path.child(key), v, valid)],
        _ => Vec::new(),
    }
}

/// Upstream `validatePodSpecSecurityContext`.
pub fn validate_pod_security_context(spec: &Value, path: &Path) -> Vec<field::Error> {
    let Some(sc) = obj(spec, "securityContext") else {
        return Vec::new();
    };
    let mut errs = id_check(sc, "fsGroup", is_valid_group_id, path);
    errs.extend(id_check(sc, "runAsUser", is_valid_user_id, path));
    errs.extend(id_check(sc, "runAsGroup", is_valid_group_id, path));
    for (g, gid) in arr(sc, "supplementalGroups").iter().enumerate() {
        let gid = gid.as_i64().unwrap_or(0);
        let p = path.child("supplementalGroups").index(g);
        errs.extend(
            is_valid_group_id(gid)
                .iter()
                .map(|m| field::invalid(&p, gid, m)),
        );
    }
    if opt_bool(spec, "shareProcessNamespace") == Some(true) && bool_of(spec, "hostPID") {
        let msg = "ShareProcessNamespace and HostPID cannot both be enabled";
        errs.push(field::invalid(
            &path.child("shareProcessNamespace"),
            true,
            msg,
        ));
    }
    errs.extend(sysctls(spec, sc, &path.child("sysctls")));
    errs.extend(one_of(
        sc,
        "fsGroupChangePolicy",
        &["Always", "OnRootMismatch"],
        path,
    ));
    errs.extend(seccomp_profile(sc, path));
    errs.extend(windows_options(sc, path));
    errs.extend(app_armor_profile(sc, path));
    errs.extend(one_of(
        sc,
        "supplementalGroupsPolicy",
        &["Merge", "Strict"],
        path,
    ));
    errs.extend(one_of(
        sc,
        "seLinuxChangePolicy",
        &["MountOption", "Recursive"],
        path,
    ));
    errs
}
