//! Test fixtures: patch schemas of a few built-in types, from the `patchStrategy` and
//! `patchMergeKey` tags of upstream's Go structs (k8s.io/api core/v1, events/v1,
//! coordination/v1, meta/v1), for this crate's own tests, which cannot use kas-api's
//! generated tables. The server reads those. A field without a row has no strategy: its lists are atomic
//! (e.g. `tolerations`, `managedFields`, ServiceAccount `imagePullSecrets`, Namespace
//! `spec.finalizers`).

use std::sync::LazyLock;

use super::schema::{PatchMeta, SchemaTable};

const OBJECT_META: &[(&str, PatchMeta)] = &[
    ("finalizers", PatchMeta::MERGE),
    ("ownerReferences", PatchMeta::merge_by("uid")),
];

const OBJECT_META_FIELDS: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

const OWNER_REFERENCE_FIELDS: &[&str] = &[
    "apiVersion",
    "kind",
    "name",
    "uid",
    "controller",
    "blockOwnerDeletion",
];

const POD_SPEC: &[(&str, PatchMeta)] = &[
    ("volumes", PatchMeta::merge_retain_keys_by("name")),
    ("initContainers", PatchMeta::merge_by("name")),
    ("containers", PatchMeta::merge_by("name")),
    ("ephemeralContainers", PatchMeta::merge_by("name")),
    ("imagePullSecrets", PatchMeta::merge_by("name")),
    ("hostAliases", PatchMeta::merge_by("ip")),
    (
        "topologySpreadConstraints",
        PatchMeta::merge_by("topologyKey"),
    ),
    ("schedulingGates", PatchMeta::merge_by("name")),
    ("resourceClaims", PatchMeta::merge_retain_keys_by("name")),
];

/// Container, and EphemeralContainerCommon, which repeats its tags.
const CONTAINER: &[(&str, PatchMeta)] = &[
    ("ports", PatchMeta::merge_by("containerPort")),
    ("env", PatchMeta::merge_by("name")),
    ("volumeMounts", PatchMeta::merge_by("mountPath")),
    ("volumeDevices", PatchMeta::merge_by("devicePath")),
];

const POD_STATUS: &[(&str, PatchMeta)] = &[
    ("conditions", PatchMeta::merge_by("type")),
    ("podIPs", PatchMeta::merge_by("ip")),
    ("hostIPs", PatchMeta::merge_by("ip")),
];

/// A root type: TypeMeta inline, `metadata` an ObjectMeta, plus `fields`.
fn object(go_name: &'static str, fields: &[&str]) -> SchemaTable {
    let mut all = vec!["kind", "apiVersion", "metadata"];
    all.extend_from_slice(fields);
    SchemaTable::default()
        .with_struct("", go_name, &all)
        .with_fields("metadata", OBJECT_META)
        .with_struct("metadata", "ObjectMeta", OBJECT_META_FIELDS)
        .with_struct(
            "metadata.ownerReferences[]",
            "OwnerReference",
            OWNER_REFERENCE_FIELDS,
        )
}

/// Adds a PodSpec's rows at `prefix` (`spec` of a Pod, `spec.template.spec` of a workload).
fn with_pod_spec(table: SchemaTable, prefix: &str) -> SchemaTable {
    let mut table = table.with_fields(prefix, POD_SPEC);
    for list in ["containers", "initContainers", "ephemeralContainers"] {
        table = table.with_fields(&format!("{prefix}.{list}[]"), CONTAINER);
    }
    table
}

static CONFIG_MAP: LazyLock<SchemaTable> =
    LazyLock::new(|| object("ConfigMap", &["immutable", "data", "binaryData"]));
static SECRET: LazyLock<SchemaTable> =
    LazyLock::new(|| object("Secret", &["immutable", "data", "stringData", "type"]));
static SERVICE_ACCOUNT: LazyLock<SchemaTable> = LazyLock::new(|| {
    object(
        "ServiceAccount",
        &[
            "secrets",
            "imagePullSecrets",
            "automountServiceAccountToken",
        ],
    )
    .with_fields("", &[("secrets", PatchMeta::merge_by("name"))])
});
static NAMESPACE: LazyLock<SchemaTable> = LazyLock::new(|| {
    object("Namespace", &["spec", "status"])
        .with_struct("spec", "NamespaceSpec", &["finalizers"])
        .with_struct("status", "NamespaceStatus", &["phase", "conditions"])
        .with_fields("status", &[("conditions", PatchMeta::merge_by("type"))])
});
static CORE_EVENT: LazyLock<SchemaTable> = LazyLock::new(|| {
    object(
        "Event",
        &[
            "involvedObject",
            "reason",
            "message",
            "source",
            "firstTimestamp",
            "lastTimestamp",
            "count",
            "type",
            "eventTime",
            "series",
            "action",
            "related",
            "reportingComponent",
            "reportingInstance",
        ],
    )
});
static EVENTS_EVENT: LazyLock<SchemaTable> = LazyLock::new(|| {
    object(
        "Event",
        &[
            "eventTime",
            "series",
            "reportingController",
            "reportingInstance",
            "action",
            "reason",
            "regarding",
            "related",
            "note",
            "type",
            "deprecatedSource",
            "deprecatedFirstTimestamp",
            "deprecatedLastTimestamp",
            "deprecatedCount",
        ],
    )
});
static LEASE: LazyLock<SchemaTable> = LazyLock::new(|| {
    object("Lease", &["spec"]).with_struct(
        "spec",
        "LeaseSpec",
        &[
            "holderIdentity",
            "leaseDurationSeconds",
            "acquireTime",
            "renewTime",
            "leaseTransitions",
            "strategy",
            "preferredHolder",
        ],
    )
});
static POD: LazyLock<SchemaTable> = LazyLock::new(|| {
    with_pod_spec(object("Pod", &["spec", "status"]), "spec").with_fields("status", POD_STATUS)
});

/// The schema of a built-in kind, by group, version and kind; `None` for kinds without one
/// (custom resources: upstream answers their strategic merge patches with 415).
pub fn builtin_schema(group: &str, version: &str, kind: &str) -> Option<&'static SchemaTable> {
    let table: &'static LazyLock<SchemaTable> = match (group, version, kind) {
        ("", "v1", "ConfigMap") => &CONFIG_MAP,
        ("", "v1", "Secret") => &SECRET,
        ("", "v1", "ServiceAccount") => &SERVICE_ACCOUNT,
        ("", "v1", "Namespace") => &NAMESPACE,
        ("", "v1", "Event") => &CORE_EVENT,
        ("", "v1", "Pod") => &POD,
        ("events.k8s.io", "v1", "Event") => &EVENTS_EVENT,
        ("coordination.k8s.io", "v1", "Lease") => &LEASE,
        _ => return None,
    };
    Some(LazyLock::force(table))
}
