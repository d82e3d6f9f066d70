//! Every message, and the top-level kinds by group, version and kind (upstream's scheme,
//! for the types described here).

use crate::Message;
use crate::{autoscaling, coordination, core, events, meta};

static ALL: &[&Message] = &[
    // meta/v1
    &meta::v1::OBJECT_META,
    &meta::v1::LIST_META,
    &meta::v1::OWNER_REFERENCE,
    &meta::v1::MANAGED_FIELDS_ENTRY,
    &meta::v1::STATUS,
    &meta::v1::STATUS_DETAILS,
    &meta::v1::STATUS_CAUSE,
    &meta::v1::DELETE_OPTIONS,
    &meta::v1::PRECONDITIONS,
    &meta::v1::WATCH_EVENT,
    &meta::v1::API_RESOURCE,
    &meta::v1::API_RESOURCE_LIST,
    &meta::v1::API_GROUP,
    &meta::v1::API_GROUP_LIST,
    &meta::v1::API_VERSIONS,
    &meta::v1::GROUP_VERSION_FOR_DISCOVERY,
    &meta::v1::SERVER_ADDRESS_BY_CLIENT_CIDR,
    &meta::v1::PARTIAL_OBJECT_METADATA,
    &meta::v1::PARTIAL_OBJECT_METADATA_LIST,
    // meta/v1beta1
    &meta::v1beta1::PARTIAL_OBJECT_METADATA_LIST,
    // core/v1
    &core::v1::CONFIG_MAP,
    &core::v1::CONFIG_MAP_LIST,
    &core::v1::SECRET,
    &core::v1::SECRET_LIST,
    &core::v1::SERVICE_ACCOUNT,
    &core::v1::SERVICE_ACCOUNT_LIST,
    &core::v1::OBJECT_REFERENCE,
    &core::v1::LOCAL_OBJECT_REFERENCE,
    &core::v1::NAMESPACE,
    &core::v1::NAMESPACE_LIST,
    &core::v1::NAMESPACE_SPEC,
    &core::v1::NAMESPACE_STATUS,
    &core::v1::NAMESPACE_CONDITION,
    &core::v1::EVENT,
    &core::v1::EVENT_LIST,
    &core::v1::EVENT_SOURCE,
    &core::v1::EVENT_SERIES,
    // autoscaling/v1
    &autoscaling::v1::SCALE,
    &autoscaling::v1::SCALE_SPEC,
    &autoscaling::v1::SCALE_STATUS,
    // coordination.k8s.io/v1
    &coordination::v1::LEASE,
    &coordination::v1::LEASE_LIST,
    &coordination::v1::LEASE_SPEC,
    // events.k8s.io/v1
    &events::v1::EVENT,
    &events::v1::EVENT_LIST,
    &events::v1::EVENT_SERIES,
];

/// The kinds each group version registers itself, by group, version and kind.
static KINDS: &[(&str, &str, &str, &Message)] = &[
    ("", "v1", "ConfigMap", &core::v1::CONFIG_MAP),
    ("", "v1", "ConfigMapList", &core::v1::CONFIG_MAP_LIST),
    ("", "v1", "Secret", &core::v1::SECRET),
    ("", "v1", "SecretList", &core::v1::SECRET_LIST),
    ("", "v1", "ServiceAccount", &core::v1::SERVICE_ACCOUNT),
    (
        "",
        "v1",
        "ServiceAccountList",
        &core::v1::SERVICE_ACCOUNT_LIST,
    ),
    ("", "v1", "Namespace", &core::v1::NAMESPACE),
    ("", "v1", "NamespaceList", &core::v1::NAMESPACE_LIST),
    ("", "v1", "Event", &core::v1::EVENT),
    ("", "v1", "EventList", &core::v1::EVENT_LIST),
    ("autoscaling", "v1", "Scale", &autoscaling::v1::SCALE),
    (
        "coordination.k8s.io",
        "v1",
        "Lease",
        &coordination::v1::LEASE,
    ),
    (
        "coordination.k8s.io",
        "v1",
        "LeaseList",
        &coordination::v1::LEASE_LIST,
    ),
    ("events.k8s.io", "v1", "Event", &events::v1::EVENT),
    ("events.k8s.io", "v1", "EventList", &events::v1::EVENT_LIST),
    // Upstream registers these "unversioned" under the core group's v1 only.
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

/// The group versions described here, plus `meta.k8s.io/v1`. Upstream's
/// `metav1.AddToGroupVersion` registers `DeleteOptions` and `WatchEvent` in each group
/// version; `meta.k8s.io/v1` has `DeleteOptions` of its own.
static GROUP_VERSIONS: &[(&str, &str)] = &[
    ("", "v1"),
    ("autoscaling", "v1"),
    ("coordination.k8s.io", "v1"),
    ("events.k8s.io", "v1"),
];

/// Every message described here, each once: top-level kinds, lists and the types they
/// nest.
pub fn all() -> &'static [&'static Message] {
    ALL
}

/// The message of a top-level kind or list by group (`""` for core), version and kind;
/// `None` for kinds not described here.
pub fn kind(group: &str, version: &str, kind: &str) -> Option<&'static Message> {
    if let Some((.., message)) = KINDS
        .iter()
        .find(|(g, v, k, _)| (*g, *v, *k) == (group, version, kind))
    {
        return Some(message);
    }
    let served = GROUP_VERSIONS.contains(&(group, version));
    match kind {
        "DeleteOptions" if served || (group, version) == ("meta.k8s.io", "v1") => {
            Some(&meta::v1::DELETE_OPTIONS)
        }
        "WatchEvent" if served => Some(&meta::v1::WATCH_EVENT),
        _ => None,
    }
}
