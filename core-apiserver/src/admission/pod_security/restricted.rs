//! The `restricted` checks of upstream's policy package (1.33), each named after its
//! `check_*.go`, with upstream's reasons, details and versions. A Windows pod
//! (`spec.os.name: windows`) skips the Linux-only ones from policy version 1.25.

use kas_apimachinery::golang::strconv::quote;
use serde_json::Value;

use super::overlapping::{capabilities, seccomp_profile, valid_seccomp};
use super::policy::{
    CheckFn, CheckResult, bool_at, containers, containers_phrase, forbidden, is_windows,
    join_quote, name, security_context, set, sorted, str_at,
};

/// The restricted checks, in upstream's registration order.
pub const CHECKS: &[CheckFn] = &[
    allow_privilege_escalation,
    capabilities_restricted,
    restricted_volumes,
    run_as_non_root,
    run_as_user,
    seccomp_profile_restricted,
];

/// Upstream `allowPrivilegeEscalation_1_8` and `_1_25` (Windows pods exempt).
fn allow_privilege_escalation(minor: u32, _: &Value, spec: &Value) -> CheckResult {
    if minor < 8 || (minor >= 25 && is_windows(spec)) {
        return None;
    }
    let bad: Vec<&str> = containers(spec)
        .filter(|c| {
            security_context(c).and_then(|sc| bool_at(sc, "allowPrivilegeEscalation"))
                != Some(false)
        })
        .map(name)
        .collect();
    if bad.is_empty() {
        return None;
    }
    forbidden(
        "allowPrivilegeEscalation != false",
        format!(
            "{} must set securityContext.allowPrivilegeEscalation=false",
            containers_phrase(&bad)
        ),
    )
}

/// Upstream `capabilitiesRestricted_1_22` and `_1_25` (Windows pods exempt): drop ALL,
/// add nothing but NET_BIND_SERVICE.
fn capabilities_restricted(minor: u32, _: &Value, spec: &Value) -> CheckResult {
    if minor < 22 || (minor >= 25 && is_windows(spec)) {
        return None;
    }
    let mut missing_drop = Vec::new();
    let mut adding = Vec::new();
    let mut added = Vec::new();
    for c in containers(spec) {
        if security_context(c)
            .and_then(|sc| set(sc, "capabilities"))
            .is_none()
        {
            missing_drop.push(name(c));
            continue;
        }
        if !capabilities(c, "drop").contains(&"ALL") {
            missing_drop.push(name(c));
        }
        let extra: Vec<&str> = capabilities(c, "add")
            .into_iter()
            .filter(|cap| *cap != "NET_BIND_SERVICE")
            .collect();
        if !extra.is_empty() {
            adding.push(name(c));
            added.extend(extra.into_iter().map(str::to_owned));
        }
    }
    let mut details = Vec::new();
    if !missing_drop.is_empty() {
        details.push(format!(
            "{} must set securityContext.capabilities.drop=[\"ALL\"]",
            containers_phrase(&missing_drop)
        ));
    }
    if !adding.is_empty() {
        details.push(format!(
            "{} must not include {} in securityContext.capabilities.add",
            containers_phrase(&adding),
            join_quote(&sorted(added))
        ));
    }
    if details.is_empty() {
        return None;
    }
    forbidden("unrestricted capabilities", details.join("; "))
}

/// The volume sources restricted pods may use.
const ALLOWED_VOLUME_SOURCES: &[&str] = &[
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
];

/// Upstream `restrictedVolumes_1_0`.
fn restricted_volumes(_: u32, _: &Value, spec: &Value) -> CheckResult {
    let bad: Vec<String> = spec
        .get("volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|v| !ALLOWED_VOLUME_SOURCES.iter().any(|s| set(v, s).is_some()))
        .map(|v| name(v).to_owned())
        .collect();
    if bad.is_empty() {
        return None;
    }
    // Go's `%q` of a []string: `["a" "b"]`.
    let quoted: Vec<String> = sorted(bad).iter().map(|n| quote(n)).collect();
    forbidden(
        "restricted volume types",
        format!("volumes [{}] have restricted types", quoted.join(" ")),
    )
}

/// Upstream `runAsNonRoot_1_0` (the user-namespace relaxation is behind a gate that is off
/// by default in 1.33).
fn run_as_non_root(_: u32, _: &Value, spec: &Value) -> CheckResult {
    let mut setters = Vec::new();
    let mut pod_non_root = false;
    match security_context(spec).and_then(|sc| bool_at(sc, "runAsNonRoot")) {
        Some(false) => setters.push("pod".to_owned()),
        Some(true) => pod_non_root = true,
        None => {}
    }
    let mut explicit = Vec::new();
    let mut implicit = Vec::new();
    for c in containers(spec) {
        match security_context(c).and_then(|sc| bool_at(sc, "runAsNonRoot")) {
            Some(false) => explicit.push(name(c)),
            Some(true) => {}
            None if !pod_non_root => implicit.push(name(c)),
            None => {}
        }
    }
    if !explicit.is_empty() {
        setters.push(containers_phrase(&explicit));
    }
    if !setters.is_empty() {
        return forbidden(
            "runAsNonRoot != true",
            format!(
                "{} must not set securityContext.runAsNonRoot=false",
                setters.join(" and ")
            ),
        );
    }
    if !implicit.is_empty() {
        return forbidden(
            "runAsNonRoot != true",
            format!(
                "pod or {} must set securityContext.runAsNonRoot=true",
                containers_phrase(&implicit)
            ),
        );
    }
    None
}

/// Upstream `runAsUser_1_23`.
fn run_as_user(minor: u32, _: &Value, spec: &Value) -> CheckResult {
    if minor < 23 {
        return None;
    }
    let root = |v: &Value| {
        security_context(v)
            .and_then(|sc| sc.get("runAsUser"))
            .and_then(Value::as_i64)
            == Some(0)
    };
    let mut setters = Vec::new();
    if root(spec) {
        setters.push("pod".to_owned());
    }
    let bad: Vec<&str> = containers(spec).filter(|c| root(c)).map(name).collect();
    if !bad.is_empty() {
        setters.push(containers_phrase(&bad));
    }
    if setters.is_empty() {
        return None;
    }
    forbidden(
        "runAsUser=0",
        format!("{} must not set runAsUser=0", setters.join(" and ")),
    )
}

/// Upstream `seccompProfileRestricted_1_19` and `_1_25` (Windows pods exempt).
fn seccomp_profile_restricted(minor: u32, _: &Value, spec: &Value) -> CheckResult {
    if minor < 19 || (minor >= 25 && is_windows(spec)) {
        return None;
    }
    let mut setters = Vec::new();
    let mut values = Vec::new();
    let mut pod_set = false;
    if let Some(p) = seccomp_profile(spec) {
        if valid_seccomp(p) {
            pod_set = true;
        } else {
            setters.push("pod".to_owned());
            values.push(str_at(p, "type").to_owned());
        }
    }
    let mut explicit = Vec::new();
    let mut implicit = Vec::new();
    for c in containers(spec) {
        match seccomp_profile(c) {
            Some(p) if !valid_seccomp(p) => {
                explicit.push(name(c));
                values.push(str_at(p, "type").to_owned());
            }
            Some(_) => {}
            None if !pod_set => implicit.push(name(c)),
            None => {}
        }
    }
    if !explicit.is_empty() {
        setters.push(containers_phrase(&explicit));
    }
    if !setters.is_empty() {
        return forbidden(
            "seccompProfile",
            format!(
                "{} must not set securityContext.seccompProfile.type to {}",
                setters.join(" and "),
                join_quote(&sorted(values))
            ),
        );
    }
    if !implicit.is_empty() {
        return forbidden(
            "seccompProfile",
            format!(
                "pod or {} must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\"",
                containers_phrase(&implicit)
            ),
        );
    }
    None
}
