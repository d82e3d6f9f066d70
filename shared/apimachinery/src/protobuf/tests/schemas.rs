//! Test descriptions of upstream types, with upstream's field numbers (`generated.proto`)
//! and JSON tags (`types.go`) at API level 1.33, so golden bytes and upstream's round-trip
//! fixtures mean something. The real descriptions live in `kas-api`.

use crate::schema::{Field, Kind, Message};

const fn msg(name: &'static str, fields: &'static [Field]) -> Message {
    Message {
        name,
        description: "",
        fields,
        required: &[],
        atomic: false,
    }
}

const fn string(name: &'static str, tag: u32) -> Field {
    Field::new(name, tag, Kind::String)
}

const fn object(name: &'static str, tag: u32, m: &'static Message) -> Field {
    Field::new(name, tag, Kind::Message(m))
}

/// `apiVersion` and `kind` of a top-level type: JSON only.
const TYPE_META: [Field; 2] = [string("kind", 0), string("apiVersion", 0)];

pub static OWNER_REFERENCE: Message = msg(
    "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference",
    &[
        string("apiVersion", 5).always(),
        string("kind", 1).always(),
        string("name", 3).always(),
        string("uid", 4).always(),
        Field::new("controller", 6, Kind::Bool).pointer(),
        Field::new("blockOwnerDeletion", 7, Kind::Bool).pointer(),
    ],
);

pub static MANAGED_FIELDS_ENTRY: Message = msg(
    "io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry",
    &[
        string("manager", 1),
        string("operation", 2),
        string("apiVersion", 3),
        Field::new("time", 4, Kind::Time).pointer(),
        string("fieldsType", 6),
        Field::new("fieldsV1", 7, Kind::FieldsV1).pointer(),
        string("subresource", 8),
    ],
);

pub static OBJECT_META: Message = msg(
    "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
    &[
        string("name", 1),
        string("generateName", 2),
        string("namespace", 3),
        string("selfLink", 4),
        string("uid", 5),
        string("resourceVersion", 6),
        Field::new("generation", 7, Kind::Int64),
        Field::new("creationTimestamp", 8, Kind::Time),
        Field::new("deletionTimestamp", 9, Kind::Time).pointer(),
        Field::new("deletionGracePeriodSeconds", 10, Kind::Int64).pointer(),
        Field::new("labels", 11, Kind::Map(&Kind::String)),
        Field::new("annotations", 12, Kind::Map(&Kind::String)),
        Field::new(
            "ownerReferences",
            13,
            Kind::Array(&Kind::Message(&OWNER_REFERENCE)),
        ),
        Field::new("finalizers", 14, Kind::Array(&Kind::String)),
        Field::new(
            "managedFields",
            17,
            Kind::Array(&Kind::Message(&MANAGED_FIELDS_ENTRY)),
        ),
    ],
);

pub static LIST_META: Message = msg(
    "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta",
    &[
        string("selfLink", 1),
        string("resourceVersion", 2),
        string("continue", 3),
        Field::new("remainingItemCount", 4, Kind::Int64).pointer(),
    ],
);

/// Go's field order (immutable before data), not tag order: the encoder must sort.
pub static CONFIG_MAP: Message = msg(
    "io.k8s.api.core.v1.ConfigMap",
    &[
        TYPE_META[0],
        TYPE_META[1],
        object("metadata", 1, &OBJECT_META),
        Field::new("immutable", 4, Kind::Bool).pointer(),
        Field::new("data", 2, Kind::Map(&Kind::String)),
        Field::new("binaryData", 3, Kind::Map(&Kind::Bytes)),
    ],
);

pub static CONFIG_MAP_LIST: Message = msg(
    "io.k8s.api.core.v1.ConfigMapList",
    &[
        TYPE_META[0],
        TYPE_META[1],
        object("metadata", 1, &LIST_META),
        Field::new("items", 2, Kind::Array(&Kind::Message(&CONFIG_MAP))).always(),
    ],
);

pub static SECRET: Message = msg(
    "io.k8s.api.core.v1.Secret",
    &[
        TYPE_META[0],
        TYPE_META[1],
        object("metadata", 1, &OBJECT_META),
        Field::new("immutable", 5, Kind::Bool).pointer(),
        Field::new("data", 2, Kind::Map(&Kind::Bytes)),
        Field::new("stringData", 4, Kind::Map(&Kind::String)),
        string("type", 3),
    ],
);

pub static OBJECT_REFERENCE: Message = msg(
    "io.k8s.api.core.v1.ObjectReference",
    &[
        string("kind", 1),
        string("namespace", 2),
        string("name", 3),
        string("uid", 4),
        string("apiVersion", 5),
        string("resourceVersion", 6),
        string("fieldPath", 7),
    ],
);

pub static EVENT_SOURCE: Message = msg(
    "io.k8s.api.core.v1.EventSource",
    &[string("component", 1), string("host", 2)],
);

pub static EVENT_SERIES: Message = msg(
    "io.k8s.api.core.v1.EventSeries",
    &[
        Field::new("count", 1, Kind::Int32),
        Field::new("lastObservedTime", 2, Kind::MicroTime),
    ],
);

pub static EVENT: Message = msg(
    "io.k8s.api.core.v1.Event",
    &[
        TYPE_META[0],
        TYPE_META[1],
        object("metadata", 1, &OBJECT_META),
        object("involvedObject", 2, &OBJECT_REFERENCE).always(),
        string("reason", 3),
        string("message", 4),
        object("source", 5, &EVENT_SOURCE),
        Field::new("firstTimestamp", 6, Kind::Time),
        Field::new("lastTimestamp", 7, Kind::Time),
        Field::new("count", 8, Kind::Int32),
        string("type", 9),
        Field::new("eventTime", 10, Kind::MicroTime),
        object("series", 11, &EVENT_SERIES).pointer(),
        string("action", 12),
        object("related", 13, &OBJECT_REFERENCE).pointer(),
        string("reportingComponent", 14).always(),
        string("reportingInstance", 15).always(),
    ],
);

pub static LEASE_SPEC: Message = msg(
    "io.k8s.api.coordination.v1.LeaseSpec",
    &[
        string("holderIdentity", 1).pointer(),
        Field::new("leaseDurationSeconds", 2, Kind::Int32).pointer(),
        Field::new("acquireTime", 3, Kind::MicroTime).pointer(),
        Field::new("renewTime", 4, Kind::MicroTime).pointer(),
        Field::new("leaseTransitions", 5, Kind::Int32).pointer(),
        string("strategy", 6).pointer(),
        string("preferredHolder", 7).pointer(),
    ],
);

pub static LEASE: Message = msg(
    "io.k8s.api.coordination.v1.Lease",
    &[
        TYPE_META[0],
        TYPE_META[1],
        object("metadata", 1, &OBJECT_META),
        object("spec", 2, &LEASE_SPEC),
    ],
);

pub static LABEL_SELECTOR_REQUIREMENT: Message = msg(
    "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement",
    &[
        string("key", 1).always(),
        string("operator", 2).always(),
        Field::new("values", 3, Kind::Array(&Kind::String)),
    ],
);

pub static LABEL_SELECTOR: Message = msg(
    "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector",
    &[
        Field::new("matchLabels", 1, Kind::Map(&Kind::String)),
        Field::new(
            "matchExpressions",
            2,
            Kind::Array(&Kind::Message(&LABEL_SELECTOR_REQUIREMENT)),
        ),
    ],
);

pub static CONDITION: Message = msg(
    "io.k8s.apimachinery.pkg.apis.meta.v1.Condition",
    &[
        string("type", 1).always(),
        string("status", 2).always(),
        Field::new("observedGeneration", 3, Kind::Int64),
        Field::new("lastTransitionTime", 4, Kind::Time).always(),
        string("reason", 5).always(),
        string("message", 6).always(),
    ],
);

pub static PDB_SPEC: Message = msg(
    "io.k8s.api.policy.v1.PodDisruptionBudgetSpec",
    &[
        Field::new("minAvailable", 1, Kind::IntOrString).pointer(),
        object("selector", 2, &LABEL_SELECTOR).pointer(),
        Field::new("maxUnavailable", 3, Kind::IntOrString).pointer(),
        string("unhealthyPodEvictionPolicy", 4).pointer(),
    ],
);

pub static PDB_STATUS: Message = msg(
    "io.k8s.api.policy.v1.PodDisruptionBudgetStatus",
    &[
        Field::new("observedGeneration", 1, Kind::Int64),
        Field::new("disruptedPods", 2, Kind::Map(&Kind::Time)),
        Field::new("disruptionsAllowed", 3, Kind::Int32).always(),
        Field::new("currentHealthy", 4, Kind::Int32).always(),
        Field::new("desiredHealthy", 5, Kind::Int32).always(),
        Field::new("expectedPods", 6, Kind::Int32).always(),
        Field::new("conditions", 7, Kind::Array(&Kind::Message(&CONDITION))),
    ],
);

pub static PDB: Message = msg(
    "io.k8s.api.policy.v1.PodDisruptionBudget",
    &[
        TYPE_META[0],
        TYPE_META[1],
        object("metadata", 1, &OBJECT_META),
        object("spec", 2, &PDB_SPEC),
        object("status", 3, &PDB_STATUS),
    ],
);

pub static SCOPED_REQUIREMENT: Message = msg(
    "io.k8s.api.core.v1.ScopedResourceSelectorRequirement",
    &[
        string("scopeName", 1).always(),
        string("operator", 2).always(),
        Field::new("values", 3, Kind::Array(&Kind::String)),
    ],
);

pub static SCOPE_SELECTOR: Message = msg(
    "io.k8s.api.core.v1.ScopeSelector",
    &[Field::new(
        "matchExpressions",
        1,
        Kind::Array(&Kind::Message(&SCOPED_REQUIREMENT)),
    )],
);

pub static RESOURCE_QUOTA_SPEC: Message = msg(
    "io.k8s.api.core.v1.ResourceQuotaSpec",
    &[
        Field::new("hard", 1, Kind::Map(&Kind::Quantity)),
        Field::new("scopes", 2, Kind::Array(&Kind::String)),
        object("scopeSelector", 3, &SCOPE_SELECTOR).pointer(),
    ],
);

pub static RESOURCE_QUOTA_STATUS: Message = msg(
    "io.k8s.api.core.v1.ResourceQuotaStatus",
    &[
        Field::new("hard", 1, Kind::Map(&Kind::Quantity)),
        Field::new("used", 2, Kind::Map(&Kind::Quantity)),
    ],
);

pub static RESOURCE_QUOTA: Message = msg(
    "io.k8s.api.core.v1.ResourceQuota",
    &[
        TYPE_META[0],
        TYPE_META[1],
        object("metadata", 1, &OBJECT_META),
        object("spec", 2, &RESOURCE_QUOTA_SPEC),
        object("status", 3, &RESOURCE_QUOTA_STATUS),
    ],
);

/// A small struct for the kitchen sink.
pub static CHILD: Message = msg(
    "test.Child",
    &[
        string("name", 1),
        Field::new("value", 2, Kind::Int32).always(),
    ],
);

/// One field of every kind, with and without `omitempty` and pointers; not an upstream
/// type.
pub static KITCHEN: Message = msg(
    "test.Kitchen",
    &[
        string("str", 1),
        string("ptrStr", 2).pointer(),
        string("alwaysStr", 3).always(),
        Field::new("flag", 4, Kind::Bool),
        Field::new("small", 5, Kind::Int32),
        Field::new("big", 6, Kind::Int64),
        Field::new("blob", 7, Kind::Bytes),
        Field::new("when", 8, Kind::Time),
        Field::new("micro", 9, Kind::MicroTime),
        Field::new("qty", 10, Kind::Quantity),
        Field::new("port", 11, Kind::IntOrString),
        Field::new("fields", 12, Kind::FieldsV1).pointer(),
        Field::new("raw", 13, Kind::RawExtension),
        object("child", 14, &CHILD),
        object("ptrChild", 15, &CHILD).pointer(),
        Field::new("ints", 16, Kind::Array(&Kind::Int32)),
        Field::new("strs", 17, Kind::Array(&Kind::String)).always(),
        Field::new("children", 18, Kind::Array(&Kind::Message(&CHILD))),
        Field::new("blobs", 19, Kind::Array(&Kind::Bytes)),
        Field::new("labels", 20, Kind::Map(&Kind::String)).always(),
        Field::new("quantities", 21, Kind::Map(&Kind::Quantity)),
        Field::new("extra", 22, Kind::Map(&Kind::Array(&Kind::String))),
        Field::new("matrix", 23, Kind::Array(&Kind::Array(&Kind::Int64))),
        Field::new("blobMap", 24, Kind::Map(&Kind::Bytes)),
        Field::new("ptrInt", 25, Kind::Int64).pointer(),
        Field::new("alwaysPtr", 26, Kind::Bool).pointer().always(),
        Field::new("alwaysBlob", 27, Kind::Bytes).always(),
        Field::new("flags", 28, Kind::Array(&Kind::Bool)),
        Field::new("ptrPort", 29, Kind::IntOrString).pointer(),
        Field::new("ptrQty", 30, Kind::Quantity).pointer(),
    ],
);

/// A recursive message, as `JSONSchemaProps` is.
pub static NODE: Message = msg(
    "test.Node",
    &[string("name", 1), object("next", 2, &NODE).pointer()],
);
