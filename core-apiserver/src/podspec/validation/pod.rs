//! Upstream's pod-level checks called by `ValidatePodSpec`: policies, DNS, gates, host
//! namespaces, and the OS-specific field rules.

use std::collections::BTreeSet;

use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::{
    is_dns1123_subdomain, is_dns1123_subdomain_with_underscore, is_ip_sloppy, is_qualified_name,
};
use serde_json::Value;

use super::json::{arr, bool_of, has, invalid_each, obj, opt_bool, opt_str, str_of, strings};

/// Upstream `validateRestartPolicy`.
pub fn validate_restart_policy(policy: &str, path: &Path) -> Vec<field::Error> {
    match policy {
        "Always" | "OnFailure" | "Never" => Vec::new(),
        "" => vec![field::required(path, "")],
        _ => vec![field::not_supported(
            path,
            policy,
            &["Always", "OnFailure", "Never"],
        )],
    }
}

/// Upstream `validateDNSPolicy`.
pub fn validate_dns_policy(policy: &str, path: &Path) -> Vec<field::Error> {
    let valid = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"];
    match policy {
        "" => vec![field::required(path, "")],
        p if valid.contains(&p) => Vec::new(),
        p => vec![field::not_supported(path, p, &valid)],
    }
}

/// Upstream `IsValidIP`.
fn validate_ip(value: &str, path: &Path) -> Vec<field::Error> {
    if is_ip_sloppy(value) {
        return Vec::new();
    }
    let msg = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";
    vec![field::invalid(path, value, msg)]
}

fn strings_value(list: &[&str]) -> field::BadValue {
    field::BadValue::Strings(Some(list.iter().map(|s| (*s).to_owned()).collect()))
}

/// Upstream `validatePodDNSConfig` (relaxed search names: `RelaxedDNSSearchValidation` is on).
pub fn validate_dns_config(spec: &Value, path: &Path) -> Vec<field::Error> {
    let config = obj(spec, "dnsConfig");
    if str_of(spec, "dnsPolicy") == "None" {
        let Some(c) = config else {
            let msg = "must provide `dnsConfig` when `dnsPolicy` is None";
            return vec![field::required(path, msg)];
        };
        if arr(c, "nameservers").is_empty() {
            let msg = "must provide at least one DNS nameserver when `dnsPolicy` is None";
            return vec![field::required(&path.child("nameservers"), msg)];
        }
    }
    let Some(c) = config else {
        return Vec::new();
    };
    let mut errs = Vec::new();
    let ns = strings(c, "nameservers");
    if ns.len() > 3 {
        let msg = "must not have more than 3 nameservers";
        errs.push(field::invalid(
            &path.child("nameservers"),
            strings_value(&ns),
            msg,
        ));
    }
    for (i, n) in ns.iter().enumerate() {
        errs.extend(validate_ip(n, &path.child("nameservers").index(i)));
    }
    let searches = strings(c, "searches");
    let sp = path.child("searches");
    if searches.len() > 32 {
        let msg = "must not have more than 32 search paths";
        errs.push(field::invalid(&sp, strings_value(&searches), msg));
    }
    if searches.join(" ").len() > 2048 {
        let msg = "must not have more than 2048 characters (including spaces) in the search list";
        errs.push(field::invalid(&sp, strings_value(&searches), msg));
    }
    for (i, s) in searches.iter().enumerate() {
        if *s != "." {
            let s = s.strip_suffix('.').unwrap_or(s);
            errs.extend(invalid_each(
                &sp.index(i),
                s,
                is_dns1123_subdomain_with_underscore(s),
            ));
        }
    }
    for (i, o) in arr(c, "options").iter().enumerate() {
        if str_of(o, "name").is_empty() {
            errs.push(field::required(
                &path.child("options").index(i),
                "must not be empty",
            ));
        }
    }
    errs
}

/// Upstream `validatePodHostNetworkDeps`, as for specs outside pods (a pod's host ports
/// are defaulted to its container ports first, which makes both rules agree).
pub fn validate_host_network_deps(spec: &Value, path: &Path) -> Vec<field::Error> {
    if !bool_of(spec, "hostNetwork") {
        return Vec::new();
    }
    let mut errs = Vec::new();
    for (i, ctr) in arr(spec, "containers").iter().enumerate() {
        let ports = path.child("containers").index(i).child("ports");
        for (j, port) in arr(ctr, "ports").iter().enumerate() {
            let hp = super::json::int0(port, "hostPort");
            let cp = super::json::int0(port, "containerPort");
            if hp != 0 && hp != cp {
                let msg = "must match `containerPort` when `hostNetwork` is true";
                errs.push(field::invalid(&ports.index(j).child("hostPort"), hp, msg));
            }
        }
    }
    errs
}

/// Upstream `validateReadinessGates`.
pub fn validate_readiness_gates(gates: &[Value], path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    for (i, g) in gates.iter().enumerate() {
        let ct = str_of(g, "conditionType");
        let p = path.index(i).child("conditionType");
        errs.extend(invalid_each(&p, ct, is_qualified_name(ct)));
    }
    errs
}

/// Upstream `validateSchedulingGates`.
pub fn validate_scheduling_gates(gates: &[Value], path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, g) in gates.iter().enumerate() {
        let name = str_of(g, "name");
        errs.extend(invalid_each(&path.index(i), name, is_qualified_name(name)));
        if !seen.insert(name) {
            errs.push(field::duplicate(&path.index(i), name));
        }
    }
    errs
}

/// Upstream `ValidateHostAliases`.
pub fn validate_host_aliases(aliases: &[Value], path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    for (i, a) in aliases.iter().enumerate() {
        let p = path.index(i);
        errs.extend(validate_ip(str_of(a, "ip"), &p.child("ip")));
        for (j, h) in strings(a, "hostnames").iter().enumerate() {
            let hp = p.child("hostnames").index(j);
            errs.extend(invalid_each(&hp, h, is_dns1123_subdomain(h)));
        }
    }
    errs
}

/// Upstream `podshelper.VisitContainersWithPath`: init, regular, then ephemeral containers.
pub fn all_containers<'a>(spec: &'a Value, path: &Path) -> Vec<(&'a Value, Path)> {
    ["initContainers", "containers", "ephemeralContainers"]
        .iter()
        .flat_map(|key| {
            let p = path.child(key);
            arr(spec, key)
                .iter()
                .enumerate()
                .map(move |(i, c)| (c, p.index(i)))
        })
        .collect()
}

fn host_process(sc: Option<&Value>) -> Option<bool> {
    sc.and_then(|sc| obj(sc, "windowsOptions"))
        .and_then(|w| opt_bool(w, "hostProcess"))
}

/// Upstream `validateWindowsHostProcessPod` (privileged containers are allowed).
pub fn validate_windows_host_process(spec: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let pod_hp = host_process(obj(spec, "securityContext"));
    let containers = all_containers(spec, path);
    let mut count = 0;
    for (c, cp) in &containers {
        let chp = host_process(obj(c, "securityContext"));
        if let (Some(p), Some(c)) = (pod_hp, chp)
            && p != c
        {
            let msg =
                format!("pod hostProcess value must be identical if both are specified, was {p}");
            let hp = cp
                .child("securityContext")
                .child("windowsOptions")
                .child("hostProcess");
            errs.push(field::invalid(&hp, c, &msg));
        }
        if chp.or(pod_hp) == Some(true) {
            count += 1;
        }
    }
    if count > 0 {
        if count != containers.len() {
            let msg = "If pod contains any hostProcess containers then all containers must be HostProcess containers";
            errs.push(field::invalid(path, "", msg));
        }
        if !bool_of(spec, "hostNetwork") {
            let msg = "hostNetwork must be true if pod contains any hostProcess containers";
            errs.push(field::invalid(&path.child("hostNetwork"), false, msg));
        }
    }
    errs
}

/// Upstream `validateHostUsers`.
pub fn validate_host_users(spec: &Value, path: &Path) -> Vec<field::Error> {
    if opt_bool(spec, "hostUsers") != Some(false) {
        return Vec::new();
    }
    let mut errs = Vec::new();
    let msg = "when `pod.Spec.HostUsers` is false";
    for (key, child) in [
        ("hostNetwork", "hostNetwork"),
        ("hostPID", "HostPID"),
        ("hostIPC", "HostIPC"),
    ] {
        if bool_of(spec, key) {
            errs.push(field::forbidden(&path.child(child), msg));
        }
    }
    errs
}

/// Upstream `validateOS`, then `validateLinux` or `validateWindows`.
pub fn validate_os(spec: &Value, path: &Path) -> Vec<field::Error> {
    let Some(os) = obj(spec, "os") else {
        return Vec::new();
    };
    let name = str_of(os, "name");
    if name.is_empty() {
        return vec![field::required(
            &path.child("os").child("name"),
            "cannot be empty",
        )];
    }
    match name {
        "linux" => validate_linux(spec, path),
        "windows" => validate_windows(spec, path),
        _ => vec![field::not_supported(
            &path.child("os"),
            name,
            &["linux", "windows"],
        )],
    }
}

fn validate_linux(spec: &Value, path: &Path) -> Vec<field::Error> {
    let msg = "windows options cannot be set for a linux pod";
    let mut errs = Vec::new();
    if obj(spec, "securityContext").is_some_and(|sc| has(sc, "windowsOptions")) {
        errs.push(field::forbidden(
            &path.child("securityContext").child("windowsOptions"),
            msg,
        ));
    }
    for (c, cp) in all_containers(spec, path) {
        if obj(c, "securityContext").is_some_and(|sc| has(sc, "windowsOptions")) {
            errs.push(field::forbidden(
                &cp.child("securityContext").child("windowsOptions"),
                msg,
            ));
        }
    }
    errs
}

fn validate_windows(spec: &Value, path: &Path) -> Vec<field::Error> {
    let msg = "cannot be set for a windows pod";
    let mut errs = Vec::new();
    let scp = path.child("securityContext");
    if let Some(sc) = obj(spec, "securityContext") {
        let pod_fields: [(&str, bool); 14] = [
            ("appArmorProfile", true),
            ("seLinuxOptions", true),
            ("hostUsers", false),
            ("hostPID", false),
            ("hostIPC", false),
            ("seccompProfile", true),
            ("fsGroup", true),
            ("fsGroupChangePolicy", true),
            ("sysctls", true),
            ("shareProcessNamespace", false),
            ("runAsUser", true),
            ("runAsGroup", true),
            ("supplementalGroups", true),
            ("supplementalGroupsPolicy", true),
        ];
        for (key, in_sc) in pod_fields {
            let set = match key {
                "hostPID" | "hostIPC" => bool_of(spec, key),
                "hostUsers" | "shareProcessNamespace" => has(spec, key),
                "sysctls" => !arr(sc, key).is_empty(),
                _ => has(sc, key),
            };
            if set {
                let p = if in_sc {
                    scp.child(key)
                } else {
                    path.child(key)
                };
                errs.push(field::forbidden(&p, msg));
            }
        }
        if opt_str(sc, "seLinuxChangePolicy").is_some() {
            errs.push(field::forbidden(&scp.child("seLinuxChangePolicy"), msg));
        }
    }
    let ctr_fields = [
        "appArmorProfile",
        "seLinuxOptions",
        "seccompProfile",
        "capabilities",
        "readOnlyRootFilesystem",
        "privileged",
        "allowPrivilegeEscalation",
        "procMount",
        "runAsUser",
        "runAsGroup",
    ];
    for (c, cp) in all_containers(spec, path) {
        let Some(sc) = obj(c, "securityContext") else {
            continue;
        };
        for key in ctr_fields {
            if has(sc, key) {
                errs.push(field::forbidden(
                    &cp.child("securityContext").child(key),
                    msg,
                ));
            }
        }
    }
    errs
}
