//! PartialObjectMetadata and its list: an object reduced to its metadata, which the server
//! answers when a client asks for `as=PartialObjectMetadata` (client-go's metadata client,
//! the garbage collector, the namespace controller).

use crate::Message;

use super::{API_VERSION, KIND, OBJECT_METADATA};

pub static PARTIAL_OBJECT_METADATA: Message = Message {
    name: "io.k8s.apimachinery.pkg.apis.meta.v1.PartialObjectMetadata",
    description: "Any object with ObjectMeta, reduced to that metadata.",
    fields: &[KIND, API_VERSION, OBJECT_METADATA],
    required: &[],
    atomic: false,
};

pub static PARTIAL_OBJECT_METADATA_LIST: Message = list!(
    "io.k8s.apimachinery.pkg.apis.meta.v1.PartialObjectMetadataList",
    PARTIAL_OBJECT_METADATA,
    "objects reduced to their metadata"
);
