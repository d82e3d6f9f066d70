//! Namespace: a scope for names, with its finalizers and conditions.

use kas_apimachinery::patch::PatchMeta;

use crate::meta::v1::{API_VERSION, KIND, OBJECT_METADATA};
use crate::{Field, Kind, ListType, Message};

pub static NAMESPACE: Message = Message {
    name: "io.k8s.api.core.v1.Namespace",
    description: "A scope for names of namespaced objects.",
    fields: &[
        KIND,
        API_VERSION,
        OBJECT_METADATA,
        Field::new("spec", 2, Kind::Message(&NAMESPACE_SPEC))
            .describe("What the namespace should be."),
        Field::new("status", 3, Kind::Message(&NAMESPACE_STATUS))
            .describe("What the namespace is, as last observed."),
    ],
    required: &[],
    atomic: false,
};

pub static NAMESPACE_LIST: Message =
    list!("io.k8s.api.core.v1.NamespaceList", NAMESPACE, "namespaces");

pub static NAMESPACE_SPEC: Message = Message {
    name: "io.k8s.api.core.v1.NamespaceSpec",
    description: "The desired state of a namespace.",
    fields: &[Field::new("finalizers", 1, Kind::Array(&Kind::String))
        .list_type(ListType::Atomic)
        .describe("Must be empty before the namespace is removed from storage.")],
    required: &[],
    atomic: false,
};

pub static NAMESPACE_STATUS: Message = Message {
    name: "io.k8s.api.core.v1.NamespaceStatus",
    description: "The observed state of a namespace.",
    fields: &[
        Field::new("phase", 1, Kind::String).describe("Active or Terminating."),
        Field::new(
            "conditions",
            2,
            Kind::Array(&Kind::Message(&NAMESPACE_CONDITION)),
        )
        .patch(PatchMeta::merge_by("type"))
        .list_type(ListType::Map(&["type"]))
        .describe("The latest observations of the namespace's state."),
    ],
    required: &[],
    atomic: false,
};

pub static NAMESPACE_CONDITION: Message = Message {
    name: "io.k8s.api.core.v1.NamespaceCondition",
    description: "One observed aspect of a namespace's state.",
    fields: &[
        Field::new("type", 1, Kind::String)
            .always()
            .describe("Which aspect the condition describes."),
        Field::new("status", 2, Kind::String)
            .always()
            .describe("True, False or Unknown."),
        Field::new("lastTransitionTime", 4, Kind::Time).describe("When the status last changed."),
        Field::new("reason", 5, Kind::String)
            .describe("Machine-readable cause of the last change."),
        Field::new("message", 6, Kind::String).describe("Human-readable details."),
    ],
    required: &["type", "status"],
    atomic: false,
};
