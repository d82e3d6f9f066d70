//! meta/v1beta1: only what differs from meta/v1. Its PartialObjectMetadata is v1's; its
//! PartialObjectMetadataList is a type of its own because ListMeta was left out of it
//! before 1.15 and added later under a new number, so its protobuf numbers are swapped
//! (items 1, metadata 2) and must stay that way.

use crate::{Field, Kind, Message};

use super::v1::{API_VERSION, KIND, LIST_META, PARTIAL_OBJECT_METADATA};

pub static PARTIAL_OBJECT_METADATA_LIST: Message = Message {
    name: "io.k8s.apimachinery.pkg.apis.meta.v1beta1.PartialObjectMetadataList",
    description: "A list of objects reduced to their metadata.",
    fields: &[
        KIND,
        API_VERSION,
        Field::new("metadata", 2, Kind::Message(&LIST_META))
            .describe("The list's metadata: resourceVersion and paging."),
        Field::new(
            "items",
            1,
            Kind::Array(&Kind::Message(&PARTIAL_OBJECT_METADATA)),
        )
        .always()
        .describe("The objects reduced to their metadata."),
    ],
    required: &["items"],
    atomic: false,
};
