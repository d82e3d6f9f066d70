//! The served API: one group/version, its two resources, and the annotations that record
//! who created an object.

/// The creating user's name.
pub const ANNOTATION_USER: &str = "kas.test/user";
/// The creating user's uid (absent when the proxy sent none).
pub const ANNOTATION_UID: &str = "kas.test/uid";
/// The creating user's groups, a JSON array.
pub const ANNOTATION_GROUPS: &str = "kas.test/groups";
/// The creating user's extra, a JSON object of arrays, keys as decoded (lowercase).
pub const ANNOTATION_EXTRA: &str = "kas.test/extra";
/// The name of the user of the last update or patch.
pub const ANNOTATION_UPDATED_BY: &str = "kas.test/updated-by";

/// The subresource that answers upgrades by echoing.
pub const ECHO: &str = "echo";

/// A served resource.
#[derive(Debug, PartialEq, Eq)]
pub struct Resource {
    pub plural: &'static str,
    pub singular: &'static str,
    pub kind: &'static str,
    pub namespaced: bool,
    pub short_names: &'static [&'static str],
}

pub const FLUNDERS: Resource = Resource {
    plural: "flunders",
    singular: "flunder",
    kind: "Flunder",
    namespaced: true,
    short_names: &["fl"],
};

pub const FISCHERS: Resource = Resource {
    plural: "fischers",
    singular: "fischer",
    kind: "Fischer",
    namespaced: false,
    short_names: &[],
};

pub const RESOURCES: [&Resource; 2] = [&FISCHERS, &FLUNDERS];

/// The verbs of both resources, as discovery lists them (sorted).
pub const VERBS: [&str; 7] = [
    "create", "delete", "get", "list", "patch", "update", "watch",
];

/// The echo subresource's verbs: a connect subresource's.
pub const ECHO_VERBS: [&str; 2] = ["create", "get"];

/// The served group/version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupVersion {
    pub group: String,
    pub version: String,
}

impl Default for GroupVersion {
    /// sample-apiserver's: `wardle.example.com/v1alpha1`.
    fn default() -> Self {
        GroupVersion {
            group: "wardle.example.com".into(),
            version: "v1alpha1".into(),
        }
    }
}

impl GroupVersion {
    /// `group/version`.
    pub fn api_version(&self) -> String {
        format!("{}/{}", self.group, self.version)
    }

    pub fn resource(&self, plural: &str) -> Option<&'static Resource> {
        RESOURCES.iter().copied().find(|r| r.plural == plural)
    }

    /// The OpenAPI definition name of `kind`: the group reversed, as Go's package paths
    /// name upstream's (`com.example.wardle.v1alpha1.Flunder`).
    pub fn definition(&self, kind: &str) -> String {
        let mut parts: Vec<&str> = self.group.split('.').collect();
        parts.reverse();
        format!("{}.{}.{kind}", parts.join("."), self.version)
    }
}
