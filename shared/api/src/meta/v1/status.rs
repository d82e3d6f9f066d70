//! Status: the answer of an operation that returns no object, and of every failure.

use crate::{Field, Kind, ListType, Message};

use super::{API_VERSION, KIND, LIST_METADATA};

pub static STATUS: Message = Message {
    name: "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
    description: "The outcome of a call that returns no object, or of a failure.",
    fields: &[
        KIND,
        API_VERSION,
        LIST_METADATA,
        Field::new("status", 2, Kind::String).describe("Success or Failure."),
        Field::new("message", 3, Kind::String).describe("Human-readable account of the outcome."),
        Field::new("reason", 4, Kind::String)
            .describe("Machine-readable cause of a failure; empty when none is known."),
        Field::new("details", 5, Kind::Message(&STATUS_DETAILS))
            .pointer()
            .describe("More data about the reason, shaped by the reason."),
        Field::new("code", 6, Kind::Int32).describe("Suggested HTTP status code; 0 if unset."),
    ],
    required: &[],
    atomic: false,
};

pub static STATUS_DETAILS: Message = Message {
    name: "io.k8s.apimachinery.pkg.apis.meta.v1.StatusDetails",
    description: "The object a Status is about, and the causes of a failure.",
    fields: &[
        Field::new("name", 1, Kind::String).describe("Name of the object concerned, if any."),
        Field::new("group", 2, Kind::String).describe("API group of the object concerned."),
        Field::new("kind", 3, Kind::String).describe("Kind of the object concerned."),
        Field::new("uid", 6, Kind::String).describe("UID of the object concerned, if known."),
        Field::new("causes", 4, Kind::Array(&Kind::Message(&STATUS_CAUSE)))
            .list_type(ListType::Atomic)
            .describe("What went wrong, field by field."),
        Field::new("retryAfterSeconds", 5, Kind::Int32)
            .describe("How long the client should wait before trying again."),
    ],
    required: &[],
    atomic: false,
};

pub static STATUS_CAUSE: Message = Message {
    name: "io.k8s.apimachinery.pkg.apis.meta.v1.StatusCause",
    description: "One cause of a failure, usually tied to one field.",
    fields: &[
        Field::new("reason", 1, Kind::String).describe("Machine-readable kind of the cause."),
        Field::new("message", 2, Kind::String).describe("Human-readable account of the cause."),
        Field::new("field", 3, Kind::String)
            .describe("Path of the offending field, such as spec.containers[0].name."),
    ],
    required: &[],
    atomic: false,
};
