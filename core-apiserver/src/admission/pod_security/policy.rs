//! Upstream `k8s.io/pod-security-admission/policy`: the check registry that picks the
//! checks of a level at a version, the aggregation of their results into the messages the
//! plugin returns, and the helpers the checks share. Objects are the stored JSON forms of
//! a pod's (or pod template's) metadata and spec.

use serde_json::Value;

use super::api::{Level, LevelVersion, Version};
use super::{baseline, overlapping, restricted};

/// The newest `MinimumVersion` among 1.33's checks (sysctls at 1.32): `latest` and any
/// newer version evaluate as this one (upstream `checkRegistry.maxVersion`).
pub const MAX_MINOR: u32 = 32;

/// A failed check: upstream `CheckResult{Allowed: false, ...}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Forbidden {
    pub reason: String,
    pub detail: String,
}

/// A check's answer: `None` allows.
pub type CheckResult = Option<Forbidden>;

pub fn forbidden(reason: impl Into<String>, detail: impl Into<String>) -> CheckResult {
    Some(Forbidden {
        reason: reason.into(),
        detail: detail.into(),
    })
}

/// One check at an (effective) minor version: upstream `CheckPodFn` chosen by version.
pub type CheckFn = fn(minor: u32, metadata: &Value, spec: &Value) -> CheckResult;

/// Upstream `EvaluatePod`: the results of the level's checks in upstream's order (the
/// baseline checks, then the overlapping baseline checks for `baseline` or the restricted
/// checks for `restricted`); nothing for `privileged`.
pub fn evaluate_pod(lv: LevelVersion, metadata: &Value, spec: &Value) -> Vec<Forbidden> {
    let minor = match lv.version {
        Version::Latest => MAX_MINOR,
        Version::Minor(minor) => minor.min(MAX_MINOR),
    };
    let checks: Vec<CheckFn> = match lv.level {
        Level::Privileged => return Vec::new(),
        Level::Baseline => [baseline::CHECKS, overlapping::OVERLAPPING].concat(),
        Level::Restricted => [baseline::CHECKS, restricted::CHECKS].concat(),
    };
    checks
        .iter()
        .filter_map(|check| check(minor, metadata, spec))
        .collect()
}

/// Upstream `AggregateCheckResult`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Aggregate {
    pub failed: Vec<Forbidden>,
}

impl Aggregate {
    pub fn of(failed: Vec<Forbidden>) -> Aggregate {
        Aggregate { failed }
    }

    pub fn allowed(&self) -> bool {
        self.failed.is_empty()
    }

    /// Upstream `ForbiddenReason`: the reasons, comma-separated (an empty reason is
    /// upstream's `unknown forbidden reason`).
    pub fn reason(&self) -> String {
        self.failed
            .iter()
            .map(|f| reason_or_unknown(&f.reason))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Upstream `ForbiddenDetail`: each reason with its detail in parentheses.
    pub fn detail(&self) -> String {
        self.failed
            .iter()
            .map(|f| {
                let reason = reason_or_unknown(&f.reason);
                if f.detail.is_empty() {
                    reason.to_owned()
                } else {
                    format!("{reason} ({})", f.detail)
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn reason_or_unknown(reason: &str) -> &str {
    if reason.is_empty() {
        "unknown forbidden reason"
    } else {
        reason
    }
}

/// Upstream `joinQuote`: `"a", "b"` (plain quotes, no escaping).
pub fn join_quote<S: AsRef<str>>(items: &[S]) -> String {
    if items.is_empty() {
        return String::new();
    }
    let items: Vec<&str> = items.iter().map(AsRef::as_ref).collect();
    format!("\"{}\"", items.join("\", \""))
}

/// Upstream `pluralize`.
pub fn pluralize<'a>(singular: &'a str, plural: &'a str, count: usize) -> &'a str {
    if count == 1 { singular } else { plural }
}

/// `"container \"a\""` or `"containers \"a\", \"b\""`.
pub fn containers_phrase<S: AsRef<str>>(names: &[S]) -> String {
    format!(
        "{} {}",
        pluralize("container", "containers", names.len()),
        join_quote(names)
    )
}

/// Upstream `visitContainers`: init containers, containers, then ephemeral containers.
pub fn containers(spec: &Value) -> impl Iterator<Item = &Value> {
    ["initContainers", "containers", "ephemeralContainers"]
        .into_iter()
        .flat_map(move |key| {
            spec.get(key)
                .and_then(Value::as_array)
                .map(|a| a.as_slice())
                .unwrap_or_default()
        })
}

/// A container's name.
pub fn name(container: &Value) -> &str {
    container.get("name").and_then(Value::as_str).unwrap_or("")
}

/// The object at `key` of `v`, when it is set (not null).
pub fn set<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|x| !x.is_null())
}

/// The string at `key`, "" when unset.
pub fn str_at<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The boolean at `key`, `None` when unset.
pub fn bool_at(v: &Value, key: &str) -> Option<bool> {
    v.get(key).and_then(Value::as_bool)
}

/// The security context of a container or pod spec, when set.
pub fn security_context(v: &Value) -> Option<&Value> {
    set(v, "securityContext")
}

/// The pod's `spec.os.name` is `windows`.
pub fn is_windows(spec: &Value) -> bool {
    spec.pointer("/os/name").and_then(Value::as_str) == Some("windows")
}

/// Sorted, deduplicated strings (upstream `sets.String.List()`).
pub fn sorted(mut items: Vec<String>) -> Vec<String> {
    items.sort();
    items.dedup();
    items
}
