//! The top-level kinds by group, version and kind: upstream's scheme, for the types
//! described here.

use crate::generated::kinds::{ALL, KINDS};
use crate::{Message, meta};

/// Kinds registered outside their own group version: upstream registers the
/// "unversioned" types under the core group's v1 only, and meta.k8s.io's own kinds.
static EXTRA_KINDS: &[(&str, &str, &str, &Message)] = &[
    ("", "v1", "Status", &meta::v1::STATUS),
    ("", "v1", "APIVersions", &meta::v1::API_VERSIONS),
    ("", "v1", "APIGroupList", &meta::v1::API_GROUP_LIST),
    ("", "v1", "APIGroup", &meta::v1::API_GROUP),
    ("", "v1", "APIResourceList", &meta::v1::API_RESOURCE_LIST),
    // meta.k8s.io's own kinds (its Table is not described here).
    (
        "meta.k8s.io",
        "v1",
        "PartialObjectMetadata",
        &meta::v1::PARTIAL_OBJECT_METADATA,
    ),
    (
        "meta.k8s.io",
        "v1",
        "PartialObjectMetadataList",
        &meta::v1::PARTIAL_OBJECT_METADATA_LIST,
    ),
    // v1beta1's PartialObjectMetadata is an alias of v1's.
    (
        "meta.k8s.io",
        "v1beta1",
        "PartialObjectMetadata",
        &meta::v1::PARTIAL_OBJECT_METADATA,
    ),
    (
        "meta.k8s.io",
        "v1beta1",
        "PartialObjectMetadataList",
        &meta::v1beta1::PARTIAL_OBJECT_METADATA_LIST,
    ),
];

/// Every message described here, each once: top-level kinds, lists and the types they
/// nest.
pub fn all() -> &'static [&'static Message] {
    ALL
}

/// The message of a top-level kind or list by group (`""` for core), version and kind;
/// `None` for kinds not described here. Upstream's `metav1.AddToGroupVersion` registers
/// `DeleteOptions` and `WatchEvent` in each group version; `meta.k8s.io/v1` has
/// `DeleteOptions` of its own.
pub fn kind(group: &str, version: &str, kind: &str) -> Option<&'static Message> {
    let mut served = false;
    for k in KINDS
        .iter()
        .filter(|k| (k.group, k.version) == (group, version))
    {
        served = true;
        if k.kind == kind {
            return Some(k.message);
        }
    }
    if let Some((.., message)) = EXTRA_KINDS
        .iter()
        .find(|(g, v, k, _)| (*g, *v, *k) == (group, version, kind))
    {
        return Some(message);
    }
    match kind {
        "DeleteOptions" if served || (group, version) == ("meta.k8s.io", "v1") => {
            Some(&meta::v1::DELETE_OPTIONS)
        }
        "WatchEvent" if served => Some(&meta::v1::WATCH_EVENT),
        _ => None,
    }
}
