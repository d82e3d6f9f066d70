//! `/version`: upstream's `version.Info` fields, reporting API level 1.33.

use serde::Serialize;

pub const MAJOR: &str = "1";
pub const MINOR: &str = "33";
pub const GIT_VERSION: &str = "v1.33.0";

/// Upstream's `k8s.io/apimachinery/pkg/version.Info`, field for field.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Info {
    pub major: &'static str,
    pub minor: &'static str,
    pub emulation_major: &'static str,
    pub emulation_minor: &'static str,
    pub min_compatibility_major: &'static str,
    pub min_compatibility_minor: &'static str,
    pub git_version: &'static str,
    pub git_commit: &'static str,
    pub git_tree_state: &'static str,
    pub build_date: &'static str,
    pub go_version: &'static str,
    pub compiler: &'static str,
    pub platform: String,
}

impl Info {
    pub fn get() -> Info {
        Info {
            major: MAJOR,
            minor: MINOR,
            emulation_major: MAJOR,
            emulation_minor: MINOR,
            min_compatibility_major: MAJOR,
            min_compatibility_minor: "32",
            git_version: GIT_VERSION,
            git_commit: env!("KAS_GIT_COMMIT"),
            git_tree_state: "clean",
            build_date: env!("KAS_BUILD_DATE"),
            // Clients print this field but never parse it; it names our toolchain.
            go_version: env!("KAS_RUSTC_VERSION"),
            compiler: "rustc",
            platform: format!("{}/{}", std::env::consts::OS, go_arch()),
        }
    }

    /// Pretty-printed like upstream's handler (2-space indent).
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec_pretty(self).unwrap_or_default()
    }
}

fn go_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_match_upstream_names() {
        let v: serde_json::Value = serde_json::from_slice(&Info::get().to_json()).unwrap();
        for key in [
            "major",
            "minor",
            "emulationMajor",
            "emulationMinor",
            "minCompatibilityMajor",
            "minCompatibilityMinor",
            "gitVersion",
            "gitCommit",
            "gitTreeState",
            "buildDate",
            "goVersion",
            "compiler",
            "platform",
        ] {
            assert!(v.get(key).is_some(), "missing {key}");
        }
        assert_eq!(v["gitVersion"], "v1.33.0");
        assert_eq!(v["minor"], "33");
    }
}
