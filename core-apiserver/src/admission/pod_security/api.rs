//! Upstream `k8s.io/pod-security-admission/api`: levels, versions, the namespace labels
//! that choose them and `PolicyToEvaluate` with its field errors.

use std::fmt;

use kas_apimachinery::validation::field::{self, Path};
use serde_json::Value;

pub const ENFORCE_LEVEL_LABEL: &str = "pod-security.kubernetes.io/enforce";
pub const ENFORCE_VERSION_LABEL: &str = "pod-security.kubernetes.io/enforce-version";
pub const AUDIT_LEVEL_LABEL: &str = "pod-security.kubernetes.io/audit";
pub const AUDIT_VERSION_LABEL: &str = "pod-security.kubernetes.io/audit-version";
pub const WARN_LEVEL_LABEL: &str = "pod-security.kubernetes.io/warn";
pub const WARN_VERSION_LABEL: &str = "pod-security.kubernetes.io/warn-version";

/// Upstream `api.Level`, ordered by strictness (upstream `CompareLevels`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    Privileged,
    Baseline,
    Restricted,
}

impl Level {
    /// Upstream `ParseLevel`: an unknown level is `restricted` and an error.
    pub fn parse(level: &str) -> Result<Level, String> {
        match level {
            "privileged" => Ok(Level::Privileged),
            "baseline" => Ok(Level::Baseline),
            "restricted" => Ok(Level::Restricted),
            _ => Err("must be one of privileged, baseline, restricted".to_owned()),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Level::Privileged => "privileged",
            Level::Baseline => "baseline",
            Level::Restricted => "restricted",
        }
    }
}

/// Upstream `api.Version`: `latest` or `v1.<minor>` (only major 1 exists).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Version {
    Latest,
    Minor(u32),
}

impl Version {
    /// Upstream `ParseVersion`: `latest` or `v1.x` (`^v1\.([0-9]|[1-9][0-9]*)$`); anything
    /// else is `latest` and an error.
    pub fn parse(version: &str) -> Result<Version, String> {
        if version == "latest" {
            return Ok(Version::Latest);
        }
        let invalid = || Err(r#"must be "latest" or "v1.x""#.to_owned());
        let Some(minor) = version.strip_prefix("v1.") else {
            return invalid();
        };
        let digits = !minor.is_empty() && minor.bytes().all(|b| b.is_ascii_digit());
        if !digits || (minor.len() > 1 && minor.starts_with('0')) {
            return invalid();
        }
        match minor.parse::<u32>() {
            Ok(minor) => Ok(Version::Minor(minor)),
            Err(_) => invalid(),
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Version::Latest => f.write_str("latest"),
            Version::Minor(minor) => write!(f, "v1.{minor}"),
        }
    }
}

/// Upstream `api.LevelVersion`, shown as `level:version`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LevelVersion {
    pub level: Level,
    pub version: Version,
}

impl fmt::Display for LevelVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.level.as_str(), self.version)
    }
}

/// Upstream `api.Policy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    pub enforce: LevelVersion,
    pub audit: LevelVersion,
    pub warn: LevelVersion,
}

impl Policy {
    /// Upstream's default `PodSecurityConfiguration`: everything `privileged:latest`.
    pub const DEFAULT: Policy = Policy {
        enforce: PRIVILEGED_LATEST,
        audit: PRIVILEGED_LATEST,
        warn: PRIVILEGED_LATEST,
    };

    /// Upstream `FullyPrivileged`.
    pub fn fully_privileged(&self) -> bool {
        [self.enforce, self.audit, self.warn]
            .iter()
            .all(|lv| lv.level == Level::Privileged)
    }
}

const PRIVILEGED_LATEST: LevelVersion = LevelVersion {
    level: Level::Privileged,
    version: Version::Latest,
};

/// Upstream `PolicyToEvaluate(labels, defaults)`: the namespace's policy, and one
/// `metadata.labels[<label>]` Invalid error per label that does not parse. A bad enforce
/// level is `restricted`; a bad audit or warn level fails open to `privileged`.
pub fn policy_to_evaluate(labels: Option<&Value>, defaults: Policy) -> (Policy, Vec<field::Error>) {
    let mut policy = defaults;
    let mut errors = Vec::new();
    let Some(labels) = labels.and_then(Value::as_object) else {
        return (policy, errors);
    };
    let path = Path::new("metadata").child("labels");
    let read = |label: &str| labels.get(label).and_then(Value::as_str).map(str::to_owned);
    let level = |label: &str, target: &mut Level, fail_open: bool, errors: &mut Vec<_>| {
        if let Some(value) = read(label) {
            match Level::parse(&value) {
                Ok(level) => *target = level,
                Err(e) => {
                    *target = if fail_open {
                        Level::Privileged
                    } else {
                        Level::Restricted
                    };
                    errors.push(field::invalid(&path.key(label), value.as_str(), &e));
                }
            }
        }
    };
    let version = |label: &str, target: &mut Version, errors: &mut Vec<_>| {
        if let Some(value) = labels.get(label).and_then(Value::as_str) {
            match Version::parse(value) {
                Ok(version) => *target = version,
                Err(e) => {
                    *target = Version::Latest;
                    errors.push(field::invalid(&path.key(label), value, &e));
                }
            }
        }
    };
    level(
        ENFORCE_LEVEL_LABEL,
        &mut policy.enforce.level,
        false,
        &mut errors,
    );
    version(
        ENFORCE_VERSION_LABEL,
        &mut policy.enforce.version,
        &mut errors,
    );
    level(
        AUDIT_LEVEL_LABEL,
        &mut policy.audit.level,
        true,
        &mut errors,
    );
    version(AUDIT_VERSION_LABEL, &mut policy.audit.version, &mut errors);
    level(WARN_LEVEL_LABEL, &mut policy.warn.level, true, &mut errors);
    version(WARN_VERSION_LABEL, &mut policy.warn.version, &mut errors);
    (policy, errors)
}
