//! DeleteOptions with its Preconditions, and WatchEvent.

use crate::{Field, Kind, ListType, Message};

use super::{API_VERSION, KIND};

pub static DELETE_OPTIONS: Message = Message {
    name: "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
    description: "The body of a DELETE: grace period, preconditions, fate of dependents.",
    fields: &[
        KIND,
        API_VERSION,
        Field::new("gracePeriodSeconds", 1, Kind::Int64)
            .pointer()
            .describe("Seconds before the object is removed; 0 means at once."),
        Field::new("preconditions", 2, Kind::Message(&PRECONDITIONS))
            .pointer()
            .describe("Conditions the object must meet for the deletion to go ahead."),
        Field::new("orphanDependents", 3, Kind::Bool)
            .pointer()
            .describe("Deprecated in favour of propagationPolicy."),
        Field::new("propagationPolicy", 4, Kind::String)
            .pointer()
            .describe("Orphan, Background or Foreground: how dependents are garbage collected."),
        Field::new("dryRun", 5, Kind::Array(&Kind::String))
            .list_type(ListType::Atomic)
            .describe("All: run every stage of the request without persisting anything."),
        Field::new(
            "ignoreStoreReadErrorWithClusterBreakingPotential",
            6,
            Kind::Bool,
        )
        .pointer()
        .describe("Unsafe: delete an object that cannot be read from storage."),
    ],
    required: &[],
    atomic: false,
};

pub static PRECONDITIONS: Message = Message {
    name: "io.k8s.apimachinery.pkg.apis.meta.v1.Preconditions",
    description: "What the object must match for an operation to proceed.",
    fields: &[
        Field::new("uid", 1, Kind::String)
            .pointer()
            .describe("The UID the object must have."),
        Field::new("resourceVersion", 2, Kind::String)
            .pointer()
            .describe("The resourceVersion the object must have."),
    ],
    required: &[],
    atomic: false,
};

pub static WATCH_EVENT: Message = Message {
    name: "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent",
    description: "One event of a watch stream.",
    fields: &[
        Field::new("type", 1, Kind::String)
            .always()
            .describe("ADDED, MODIFIED, DELETED, BOOKMARK or ERROR."),
        Field::new("object", 2, Kind::RawExtension)
            .always()
            .describe("The object as of the event; a Status for ERROR."),
    ],
    required: &["type", "object"],
    atomic: false,
};
