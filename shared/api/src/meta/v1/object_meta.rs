//! ObjectMeta and its parts, and ListMeta.

use kas_apimachinery::patch::PatchMeta;

use crate::{Field, Kind, ListType, Message};

pub static OBJECT_META: Message = Message {
    name: "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
    description: "Metadata that every persisted object carries.",
    fields: &[
        Field::new("name", 1, Kind::String).describe(
            "Unique in its namespace (or the cluster, if cluster-scoped); cannot be changed.",
        ),
        Field::new("generateName", 2, Kind::String)
            .describe("A prefix the server completes with a random suffix when name is empty."),
        Field::new("namespace", 3, Kind::String)
            .describe("The namespace the object lives in; empty for cluster-scoped objects."),
        Field::new("selfLink", 4, Kind::String)
            .describe("Deprecated; the server no longer sets it."),
        Field::new("uid", 5, Kind::String)
            .describe("Unique across time and space; assigned by the server on create."),
        Field::new("resourceVersion", 6, Kind::String).describe(
            "Opaque version changed on every write; for optimistic concurrency and watches.",
        ),
        Field::new("generation", 7, Kind::Int64)
            .describe("Sequence number of the desired state, set by the system."),
        Field::new("creationTimestamp", 8, Kind::Time)
            .describe("When the server created the object; read-only."),
        Field::new("deletionTimestamp", 9, Kind::Time)
            .pointer()
            .describe("Set when deletion was requested: the time the object is due to be gone."),
        Field::new("deletionGracePeriodSeconds", 10, Kind::Int64)
            .pointer()
            .describe("The grace period granted for the deletion; set with deletionTimestamp."),
        Field::new("labels", 11, Kind::Map(&Kind::String))
            .describe("Key/value pairs for organizing and selecting objects."),
        Field::new("annotations", 12, Kind::Map(&Kind::String))
            .describe("Arbitrary non-identifying key/value data for tools and extensions."),
        Field::new(
            "ownerReferences",
            13,
            Kind::Array(&Kind::Message(&OWNER_REFERENCE)),
        )
        .patch(PatchMeta::merge_by("uid"))
        .list_type(ListType::Map(&["uid"]))
        .describe("The objects this one depends on; at most one of them is its controller."),
        Field::new("finalizers", 14, Kind::Array(&Kind::String))
            .patch(PatchMeta::MERGE)
            .list_type(ListType::Set)
            .describe("Keys that must all be removed before the object leaves storage."),
        Field::new(
            "managedFields",
            17,
            Kind::Array(&Kind::Message(&MANAGED_FIELDS_ENTRY)),
        )
        .list_type(ListType::Atomic)
        .describe("Which field manager owns which fields; maintained by the server."),
    ],
    required: &[],
    atomic: false,
};

pub static LIST_META: Message = Message {
    name: "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta",
    description: "Metadata of a list or other synthetic collection.",
    fields: &[
        Field::new("selfLink", 1, Kind::String)
            .describe("Deprecated; the server no longer sets it."),
        Field::new("resourceVersion", 2, Kind::String)
            .describe("The version of the collection the list was read at."),
        Field::new("continue", 3, Kind::String)
            .describe("Token for the next page of a paged list; empty on the last page."),
        Field::new("remainingItemCount", 4, Kind::Int64)
            .pointer()
            .describe("Estimated number of items after this page, when the server can tell."),
    ],
    required: &[],
    atomic: false,
};

pub static OWNER_REFERENCE: Message = Message {
    name: "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference",
    description: "Points at an owner of the object, in the same namespace or cluster-scoped.",
    fields: &[
        Field::new("apiVersion", 5, Kind::String)
            .always()
            .describe("API version of the owner."),
        Field::new("kind", 1, Kind::String)
            .always()
            .describe("Kind of the owner."),
        Field::new("name", 3, Kind::String)
            .always()
            .describe("Name of the owner."),
        Field::new("uid", 4, Kind::String)
            .always()
            .describe("UID of the owner."),
        Field::new("controller", 6, Kind::Bool)
            .pointer()
            .describe("Whether the owner is the object's managing controller."),
        Field::new("blockOwnerDeletion", 7, Kind::Bool)
            .pointer()
            .describe("In foreground deletion, the owner is kept until this object is gone."),
    ],
    required: &["apiVersion", "kind", "name", "uid"],
    atomic: true,
};

pub static MANAGED_FIELDS_ENTRY: Message = Message {
    name: "io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry",
    description: "The set of fields one manager owns, and how it came to own them.",
    fields: &[
        Field::new("manager", 1, Kind::String).describe("Name of the field manager."),
        Field::new("operation", 2, Kind::String)
            .describe("Apply or Update: the kind of write that set these fields."),
        Field::new("apiVersion", 3, Kind::String)
            .describe("The API version the field set is expressed in."),
        Field::new("time", 4, Kind::Time)
            .pointer()
            .describe("When the manager last changed its fields."),
        Field::new("fieldsType", 6, Kind::String)
            .describe("Format of the field set; only FieldsV1 exists."),
        Field::new("fieldsV1", 7, Kind::FieldsV1)
            .pointer()
            .describe("The field set, as a trie of JSON keys."),
        Field::new("subresource", 8, Kind::String)
            .describe("The subresource written through; empty for the main resource."),
    ],
    required: &[],
    atomic: false,
};
