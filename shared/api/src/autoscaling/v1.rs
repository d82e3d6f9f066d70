//! autoscaling/v1: Scale, the body of every `scale` subresource.

use crate::meta::v1::{API_VERSION, KIND, OBJECT_METADATA};
use crate::{Field, Kind, Message};

pub static SCALE: Message = Message {
    name: "io.k8s.api.autoscaling.v1.Scale",
    description: "The replica count of a scalable resource, as its scale subresource shows it.",
    fields: &[
        KIND,
        API_VERSION,
        OBJECT_METADATA,
        Field::new("spec", 2, Kind::Message(&SCALE_SPEC)).describe("The desired scale."),
        Field::new("status", 3, Kind::Message(&SCALE_STATUS))
            .describe("The observed scale; read-only."),
    ],
    required: &[],
    atomic: false,
};

pub static SCALE_SPEC: Message = Message {
    name: "io.k8s.api.autoscaling.v1.ScaleSpec",
    description: "The desired scale.",
    fields: &[Field::new("replicas", 1, Kind::Int32).describe("Desired number of instances.")],
    required: &[],
    atomic: false,
};

pub static SCALE_STATUS: Message = Message {
    name: "io.k8s.api.autoscaling.v1.ScaleStatus",
    description: "The observed scale.",
    fields: &[
        Field::new("replicas", 1, Kind::Int32)
            .always()
            .describe("Observed number of instances."),
        Field::new("selector", 2, Kind::String)
            .describe("Label selector of the pods counted, in string form."),
    ],
    required: &["replicas"],
    atomic: false,
};
