//! The core group's Event (the older event schema; events.k8s.io/v1 has the newer one).

use crate::meta::v1::{API_VERSION, KIND, OBJECT_METADATA};
use crate::{Field, Kind, Message};

use super::OBJECT_REFERENCE;

pub static EVENT: Message = Message {
    name: "io.k8s.api.core.v1.Event",
    description: "A report of something that happened in the cluster.",
    fields: &[
        KIND,
        API_VERSION,
        OBJECT_METADATA.always(),
        Field::new("involvedObject", 2, Kind::Message(&OBJECT_REFERENCE))
            .always()
            .describe("The object the event is about."),
        Field::new("reason", 3, Kind::String)
            .describe("Short machine-readable reason for the transition."),
        Field::new("message", 4, Kind::String).describe("Human-readable description."),
        Field::new("source", 5, Kind::Message(&EVENT_SOURCE))
            .describe("The component that reported the event."),
        Field::new("firstTimestamp", 6, Kind::Time).describe("When the event was first recorded."),
        Field::new("lastTimestamp", 7, Kind::Time).describe("When the event last recurred."),
        Field::new("count", 8, Kind::Int32).describe("How many times the event has occurred."),
        Field::new("type", 9, Kind::String).describe("Normal or Warning."),
        Field::new("eventTime", 10, Kind::MicroTime)
            .describe("When the event was first observed, in microseconds."),
        Field::new("series", 11, Kind::Message(&EVENT_SERIES))
            .pointer()
            .describe("Data about the series this event belongs to, if any."),
        Field::new("action", 12, Kind::String).describe("What was done, or failed, to the object."),
        Field::new("related", 13, Kind::Message(&OBJECT_REFERENCE))
            .pointer()
            .describe("A second object involved in the action, if any."),
        Field::new("reportingComponent", 14, Kind::String)
            .always()
            .describe("The controller that emitted the event, such as kubernetes.io/kubelet."),
        Field::new("reportingInstance", 15, Kind::String)
            .always()
            .describe("Which instance of the controller emitted the event."),
    ],
    required: &["metadata", "involvedObject"],
    atomic: false,
};

pub static EVENT_LIST: Message = list!("io.k8s.api.core.v1.EventList", EVENT, "events");

pub static EVENT_SOURCE: Message = Message {
    name: "io.k8s.api.core.v1.EventSource",
    description: "The component that produced an event.",
    fields: &[
        Field::new("component", 1, Kind::String).describe("Component name."),
        Field::new("host", 2, Kind::String).describe("Node the component runs on."),
    ],
    required: &[],
    atomic: false,
};

pub static EVENT_SERIES: Message = Message {
    name: "io.k8s.api.core.v1.EventSeries",
    description: "A run of recurring events, summarized.",
    fields: &[
        Field::new("count", 1, Kind::Int32).describe("Number of occurrences in the series so far."),
        Field::new("lastObservedTime", 2, Kind::MicroTime)
            .describe("When the last occurrence was observed."),
    ],
    required: &[],
    atomic: false,
};
