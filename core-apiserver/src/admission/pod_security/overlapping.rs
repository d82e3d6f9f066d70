//! The `baseline` checks that `restricted` replaces with its own (upstream's
//! `Overlap: true`): capabilities, hostPath volumes and seccomp, with the helpers the
//! restricted versions share.

use kas_apimachinery::golang::strconv::quote;
use serde_json::Value;

use super::policy::{
    CheckFn, CheckResult, containers, containers_phrase, forbidden, join_quote, name, pluralize,
    security_context, set, sorted, str_at,
};

/// The overlapping checks, in upstream's registration order.
pub const OVERLAPPING: &[CheckFn] = &[
    capabilities_baseline,
    host_path_volumes,
    seccomp_profile_baseline,
];

/// Upstream `capabilities_allowed_1_0`.
const DEFAULT_CAPABILITIES: &[&str] = &[
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
];

/// A container's `securityContext.capabilities.<key>` entries.
pub fn capabilities<'a>(c: &'a Value, key: &str) -> Vec<&'a str> {
    security_context(c)
        .and_then(|sc| set(sc, "capabilities"))
        .and_then(|caps| caps.get(key))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|v| v.as_str().unwrap_or(""))
        .collect()
}

/// Upstream `capabilitiesBaseline_1_0`.
fn capabilities_baseline(_: u32, _: &Value, spec: &Value) -> CheckResult {
    let mut bad = Vec::new();
    let mut added = Vec::new();
    for c in containers(spec) {
        let extra: Vec<&str> = capabilities(c, "add")
            .into_iter()
            .filter(|cap| !DEFAULT_CAPABILITIES.contains(cap))
            .collect();
        if !extra.is_empty() {
            bad.push(name(c));
            added.extend(extra.into_iter().map(str::to_owned));
        }
    }
    if bad.is_empty() {
        return None;
    }
    forbidden(
        "non-default capabilities",
        format!(
            "{} must not include {} in securityContext.capabilities.add",
            containers_phrase(&bad),
            join_quote(&sorted(added))
        ),
    )
}

/// Upstream `hostPathVolumes_1_0`.
fn host_path_volumes(_: u32, _: &Value, spec: &Value) -> CheckResult {
    let bad: Vec<&str> = spec
        .get("volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|v| set(v, "hostPath").is_some())
        .map(name)
        .collect();
    if bad.is_empty() {
        return None;
    }
    forbidden(
        "hostPath volumes",
        format!(
            "{} {}",
            pluralize("volume", "volumes", bad.len()),
            join_quote(&bad)
        ),
    )
}

const SECCOMP_POD_ANNOTATION: &str = "seccomp.security.alpha.kubernetes.io/pod";
const SECCOMP_CONTAINER_ANNOTATION_PREFIX: &str = "container.seccomp.security.alpha.kubernetes.io/";

/// Upstream `validSeccomp`: RuntimeDefault or Localhost.
pub fn valid_seccomp(profile: &Value) -> bool {
    matches!(str_at(profile, "type"), "RuntimeDefault" | "Localhost")
}

/// A pod's or container's `securityContext.seccompProfile`, when set.
pub fn seccomp_profile(v: &Value) -> Option<&Value> {
    security_context(v).and_then(|sc| set(sc, "seccompProfile"))
}

/// Upstream `seccompProfileBaseline_1_0` (the alpha annotations, before 1.19) and
/// `_1_19` (the fields).
fn seccomp_profile_baseline(minor: u32, metadata: &Value, spec: &Value) -> CheckResult {
    if minor < 19 {
        return seccomp_annotations(metadata, spec);
    }
    let mut setters = Vec::new();
    let mut values = Vec::new();
    if let Some(p) = seccomp_profile(spec)
        && !valid_seccomp(p)
    {
        setters.push("pod".to_owned());
        values.push(str_at(p, "type").to_owned());
    }
    let mut bad = Vec::new();
    for c in containers(spec) {
        if let Some(p) = seccomp_profile(c)
            && !valid_seccomp(p)
        {
            bad.push(name(c));
            values.push(str_at(p, "type").to_owned());
        }
    }
    if !bad.is_empty() {
        setters.push(containers_phrase(&bad));
    }
    if setters.is_empty() {
        return None;
    }
    forbidden(
        "seccompProfile",
        format!(
            "{} must not set securityContext.seccompProfile.type to {}",
            setters.join(" and "),
            join_quote(&sorted(values))
        ),
    )
}

fn seccomp_annotations(metadata: &Value, spec: &Value) -> CheckResult {
    let valid =
        |v: &str| v == "runtime/default" || v == "docker/default" || v.starts_with("localhost/");
    let annotation = |key: &str| {
        metadata
            .get("annotations")
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
    };
    let mut bad = Vec::new();
    if let Some(v) = annotation(SECCOMP_POD_ANNOTATION)
        && !valid(v)
    {
        bad.push(format!("{SECCOMP_POD_ANNOTATION}={}", quote(v)));
    }
    for c in containers(spec) {
        let key = format!("{SECCOMP_CONTAINER_ANNOTATION_PREFIX}{}", name(c));
        if let Some(v) = annotation(&key)
            && !valid(v)
        {
            bad.push(format!("{key}={}", quote(v)));
        }
    }
    if bad.is_empty() {
        return None;
    }
    let bad = sorted(bad);
    forbidden(
        "seccompProfile",
        format!(
            "forbidden {} {}",
            pluralize("annotation", "annotations", bad.len()),
            bad.join(", ")
        ),
    )
}
