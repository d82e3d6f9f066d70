//! The `baseline` checks of upstream's policy package (1.33), each named after its
//! `check_*.go`, with upstream's reasons and details.

use kas_apimachinery::golang::strconv::quote;
use serde_json::Value;

use super::policy::{
    CheckFn, CheckResult, bool_at, containers, containers_phrase, forbidden, join_quote, name,
    pluralize, security_context, set, sorted, str_at,
};

/// The baseline checks every non-privileged level runs, in upstream's registration order.
pub const CHECKS: &[CheckFn] = &[
    app_armor_profile,
    host_namespaces,
    host_ports,
    privileged,
    proc_mount,
    se_linux_options,
    sysctls,
    windows_host_process,
];

const APPARMOR_ANNOTATION_PREFIX: &str = "container.apparmor.security.beta.kubernetes.io/";

/// Upstream `appArmorProfile_1_0`: profile types other than RuntimeDefault and Localhost,
/// and the deprecated annotations with values other than empty, `runtime/default` and
/// `localhost/*`.
fn app_armor_profile(_: u32, metadata: &Value, spec: &Value) -> CheckResult {
    let allowed_type = |p: &Value| matches!(str_at(p, "type"), "RuntimeDefault" | "Localhost");
    let mut setters = Vec::new();
    let mut values = Vec::new();
    if let Some(p) = security_context(spec).and_then(|sc| set(sc, "appArmorProfile"))
        && !allowed_type(p)
    {
        setters.push("pod".to_owned());
        values.push(str_at(p, "type").to_owned());
    }
    let mut bad = Vec::new();
    for c in containers(spec) {
        if let Some(p) = security_context(c).and_then(|sc| set(sc, "appArmorProfile"))
            && !allowed_type(p)
        {
            bad.push(name(c));
            values.push(str_at(p, "type").to_owned());
        }
    }
    if !bad.is_empty() {
        setters.push(containers_phrase(&bad));
    }
    let mut values = sorted(values);
    let mut annotations: Vec<String> = annotations(metadata)
        .filter(|(k, v)| {
            k.starts_with(APPARMOR_ANNOTATION_PREFIX)
                && !(v.is_empty() || *v == "runtime/default" || v.starts_with("localhost/"))
        })
        .map(|(k, v)| format!("{k}={}", quote(v)))
        .collect();
    if !annotations.is_empty() {
        annotations.sort();
        setters.push(pluralize("annotation", "annotations", annotations.len()).to_owned());
        values.extend(annotations);
    }
    if setters.is_empty() {
        return None;
    }
    forbidden(
        pluralize(
            "forbidden AppArmor profile",
            "forbidden AppArmor profiles",
            values.len(),
        ),
        format!(
            "{} must not set AppArmor profile type to {}",
            setters.join(" and "),
            join_quote(&values)
        ),
    )
}

/// The metadata's annotations as (key, value).
fn annotations(metadata: &Value) -> impl Iterator<Item = (&str, &str)> {
    metadata
        .get("annotations")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.as_str(), v.as_str().unwrap_or("")))
}

/// Upstream `hostNamespaces_1_0`.
fn host_namespaces(_: u32, _: &Value, spec: &Value) -> CheckResult {
    let mut used: Vec<String> = ["hostNetwork", "hostPID", "hostIPC"]
        .into_iter()
        .filter(|k| bool_at(spec, k) == Some(true))
        .map(str::to_owned)
        .collect();
    if used.is_empty() {
        return None;
    }
    used.sort();
    forbidden("host namespaces", used.join(", "))
}

/// Upstream `hostPorts_1_0`.
fn host_ports(_: u32, _: &Value, spec: &Value) -> CheckResult {
    let mut bad = Vec::new();
    let mut ports = Vec::new();
    for c in containers(spec) {
        let mut valid = true;
        for port in c
            .get("ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let host = port.get("hostPort").and_then(Value::as_i64).unwrap_or(0);
            if host != 0 {
                valid = false;
                ports.push(host.to_string());
            }
        }
        if !valid {
            bad.push(name(c));
        }
    }
    if bad.is_empty() {
        return None;
    }
    let ports = sorted(ports);
    forbidden(
        "hostPort",
        format!(
            "{} {} {} {}",
            containers_phrase(&bad),
            pluralize("uses", "use", bad.len()),
            pluralize("hostPort", "hostPorts", ports.len()),
            ports.join(", ")
        ),
    )
}

/// Upstream `privileged_1_0`.
fn privileged(_: u32, _: &Value, spec: &Value) -> CheckResult {
    let bad: Vec<&str> = containers(spec)
        .filter(|c| security_context(c).and_then(|sc| bool_at(sc, "privileged")) == Some(true))
        .map(name)
        .collect();
    if bad.is_empty() {
        return None;
    }
    forbidden(
        "privileged",
        format!(
            "{} must not set securityContext.privileged=true",
            containers_phrase(&bad)
        ),
    )
}

/// Upstream `procMount_1_0` (the user-namespace relaxation is behind a gate that is off
/// by default in 1.33).
fn proc_mount(_: u32, _: &Value, spec: &Value) -> CheckResult {
    let mut bad = Vec::new();
    let mut types = Vec::new();
    for c in containers(spec) {
        let Some(mount) = security_context(c)
            .and_then(|sc| sc.get("procMount"))
            .and_then(Value::as_str)
        else {
            continue;
        };
        if mount != "Default" {
            bad.push(name(c));
            types.push(mount.to_owned());
        }
    }
    if bad.is_empty() {
        return None;
    }
    forbidden(
        "procMount",
        format!(
            "{} must not set securityContext.procMount to {}",
            containers_phrase(&bad),
            join_quote(&sorted(types))
        ),
    )
}

/// Upstream `seLinuxOptions_1_0` and `_1_31` (which allows `container_engine_t`).
fn se_linux_options(minor: u32, _: &Value, spec: &Value) -> CheckResult {
    let mut types = Vec::new();
    let (mut user, mut role) = (false, false);
    let mut valid = |opts: &Value| {
        let t = str_at(opts, "type");
        let mut ok = true;
        let engine = minor >= 31 && t == "container_engine_t";
        if !(engine
            || matches!(
                t,
                "" | "container_t" | "container_init_t" | "container_kvm_t"
            ))
        {
            ok = false;
            types.push(t.to_owned());
        }
        if !str_at(opts, "user").is_empty() {
            ok = false;
            user = true;
        }
        if !str_at(opts, "role").is_empty() {
            ok = false;
            role = true;
        }
        ok
    };
    let mut setters = Vec::new();
    if let Some(opts) = security_context(spec).and_then(|sc| set(sc, "seLinuxOptions"))
        && !valid(opts)
    {
        setters.push("pod".to_owned());
    }
    let mut bad = Vec::new();
    for c in containers(spec) {
        if let Some(opts) = security_context(c).and_then(|sc| set(sc, "seLinuxOptions"))
            && !valid(opts)
        {
            bad.push(name(c));
        }
    }
    if !bad.is_empty() {
        setters.push(containers_phrase(&bad));
    }
    if setters.is_empty() {
        return None;
    }
    let types = sorted(types);
    let mut data = Vec::new();
    if !types.is_empty() {
        data.push(format!(
            "{} {}",
            pluralize("type", "types", types.len()),
            join_quote(&types)
        ));
    }
    if user {
        data.push("user may not be set".to_owned());
    }
    if role {
        data.push("role may not be set".to_owned());
    }
    forbidden(
        "seLinuxOptions",
        format!(
            "{} set forbidden securityContext.seLinuxOptions: {}",
            setters.join(" and "),
            data.join("; ")
        ),
    )
}

/// Upstream's allowed sysctls at a version (`sysctlsAllowedV1Dot0` .. `V1Dot32`).
fn sysctl_allowed(minor: u32, sysctl: &str) -> bool {
    match sysctl {
        "kernel.shm_rmid_forced"
        | "net.ipv4.ip_local_port_range"
        | "net.ipv4.tcp_syncookies"
        | "net.ipv4.ping_group_range"
        | "net.ipv4.ip_unprivileged_port_start" => true,
        "net.ipv4.ip_local_reserved_ports" => minor >= 27,
        "net.ipv4.tcp_keepalive_time"
        | "net.ipv4.tcp_fin_timeout"
        | "net.ipv4.tcp_keepalive_intvl"
        | "net.ipv4.tcp_keepalive_probes" => minor >= 29,
        "net.ipv4.tcp_rmem" | "net.ipv4.tcp_wmem" => minor >= 32,
        _ => false,
    }
}

/// Upstream `sysctls_1_0` .. `_1_32`.
fn sysctls(minor: u32, _: &Value, spec: &Value) -> CheckResult {
    let bad: Vec<&str> = security_context(spec)
        .and_then(|sc| sc.get("sysctls"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|s| str_at(s, "name"))
        .filter(|n| !sysctl_allowed(minor, n))
        .collect();
    if bad.is_empty() {
        return None;
    }
    forbidden("forbidden sysctls", bad.join(", "))
}

/// Upstream `windowsHostProcess_1_0`.
fn windows_host_process(_: u32, _: &Value, spec: &Value) -> CheckResult {
    let host_process = |v: &Value| {
        security_context(v)
            .and_then(|sc| set(sc, "windowsOptions"))
            .and_then(|w| bool_at(w, "hostProcess"))
            == Some(true)
    };
    let bad: Vec<&str> = containers(spec)
        .filter(|c| host_process(c))
        .map(name)
        .collect();
    let mut setters = Vec::new();
    if host_process(spec) {
        setters.push("pod".to_owned());
    }
    if !bad.is_empty() {
        setters.push(containers_phrase(&bad));
    }
    if setters.is_empty() {
        return None;
    }
    forbidden(
        "hostProcess",
        format!(
            "{} must not set securityContext.windowsOptions.hostProcess=true",
            setters.join(" and ")
        ),
    )
}
