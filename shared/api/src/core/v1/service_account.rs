//! ServiceAccount, and the object references it holds.

use kas_apimachinery::patch::PatchMeta;

use crate::meta::v1::{API_VERSION, KIND, OBJECT_METADATA};
use crate::{Field, Kind, ListType, Message};

pub static SERVICE_ACCOUNT: Message = Message {
    name: "io.k8s.api.core.v1.ServiceAccount",
    description: "An identity for processes in pods, with the secrets it may use.",
    fields: &[
        KIND,
        API_VERSION,
        OBJECT_METADATA,
        Field::new("secrets", 2, Kind::Array(&Kind::Message(&OBJECT_REFERENCE)))
            .patch(PatchMeta::merge_by("name"))
            .list_type(ListType::Map(&["name"]))
            .describe("Deprecated: secrets in the namespace that pods of this account may use."),
        Field::new(
            "imagePullSecrets",
            3,
            Kind::Array(&Kind::Message(&LOCAL_OBJECT_REFERENCE)),
        )
        .list_type(ListType::Atomic)
        .describe("Registry credentials added to pods that use this account."),
        Field::new("automountServiceAccountToken", 4, Kind::Bool)
            .pointer()
            .describe("Whether pods get an API token mounted; a pod's own setting wins."),
    ],
    required: &[],
    atomic: false,
};

pub static SERVICE_ACCOUNT_LIST: Message = list!(
    "io.k8s.api.core.v1.ServiceAccountList",
    SERVICE_ACCOUNT,
    "service accounts"
);

pub static OBJECT_REFERENCE: Message = Message {
    name: "io.k8s.api.core.v1.ObjectReference",
    description: "Enough to find an object, or a field of one.",
    fields: &[
        Field::new("kind", 1, Kind::String).describe("Kind of the referent."),
        Field::new("namespace", 2, Kind::String).describe("Namespace of the referent."),
        Field::new("name", 3, Kind::String).describe("Name of the referent."),
        Field::new("uid", 4, Kind::String).describe("UID of the referent."),
        Field::new("apiVersion", 5, Kind::String).describe("API version of the referent."),
        Field::new("resourceVersion", 6, Kind::String)
            .describe("The referent's resourceVersion this reference was made from."),
        Field::new("fieldPath", 7, Kind::String)
            .describe("A part of the referent, such as spec.containers{name}."),
    ],
    required: &[],
    atomic: true,
};

pub static LOCAL_OBJECT_REFERENCE: Message = Message {
    name: "io.k8s.api.core.v1.LocalObjectReference",
    description: "Names an object in the same namespace.",
    fields: &[Field::new("name", 1, Kind::String).describe("Name of the referent.")],
    required: &[],
    atomic: true,
};
