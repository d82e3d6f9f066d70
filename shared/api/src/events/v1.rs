//! events.k8s.io/v1: Event, the newer schema of the core group's Event.

use crate::core::v1::{EVENT_SOURCE, OBJECT_REFERENCE};
use crate::meta::v1::{API_VERSION, KIND, OBJECT_METADATA};
use crate::{Field, Kind, Message};

pub static EVENT: Message = Message {
    name: "io.k8s.api.events.v1.Event",
    description: "A report of something that happened in the cluster.",
    fields: &[
        KIND,
        API_VERSION,
        OBJECT_METADATA.always(),
        Field::new("eventTime", 2, Kind::MicroTime)
            .always()
            .describe("When the event was first observed; required."),
        Field::new("series", 3, Kind::Message(&EVENT_SERIES))
            .pointer()
            .describe("Data about the series this event belongs to, if any."),
        Field::new("reportingController", 4, Kind::String)
            .describe("The controller that emitted the event, such as kubernetes.io/kubelet."),
        Field::new("reportingInstance", 5, Kind::String)
            .describe("Which instance of the controller emitted the event."),
        Field::new("action", 6, Kind::String)
            .describe("What was done, or failed, to the regarding object."),
        Field::new("reason", 7, Kind::String).describe("Why the action was taken."),
        Field::new("regarding", 8, Kind::Message(&OBJECT_REFERENCE))
            .describe("The object the event is about."),
        Field::new("related", 9, Kind::Message(&OBJECT_REFERENCE))
            .pointer()
            .describe("A second object involved in the action, if any."),
        Field::new("note", 10, Kind::String).describe("Human-readable description."),
        Field::new("type", 11, Kind::String).describe("Normal or Warning."),
        Field::new("deprecatedSource", 12, Kind::Message(&EVENT_SOURCE))
            .describe("Deprecated: the core Event's source."),
        Field::new("deprecatedFirstTimestamp", 13, Kind::Time)
            .describe("Deprecated: the core Event's firstTimestamp."),
        Field::new("deprecatedLastTimestamp", 14, Kind::Time)
            .describe("Deprecated: the core Event's lastTimestamp."),
        Field::new("deprecatedCount", 15, Kind::Int32)
            .describe("Deprecated: the core Event's count."),
    ],
    required: &["eventTime"],
    atomic: false,
};

pub static EVENT_LIST: Message = list!("io.k8s.api.events.v1.EventList", EVENT, "events");

pub static EVENT_SERIES: Message = Message {
    name: "io.k8s.api.events.v1.EventSeries",
    description: "A run of recurring events, summarized.",
    fields: &[
        Field::new("count", 1, Kind::Int32)
            .always()
            .describe("Number of occurrences in the series so far."),
        Field::new("lastObservedTime", 2, Kind::MicroTime)
            .always()
            .describe("When the last occurrence was observed."),
    ],
    required: &["count", "lastObservedTime"],
    atomic: false,
};
