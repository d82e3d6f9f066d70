//! meta/v1: the metadata every object carries, `Status`, the delete options, the watch
//! event, the legacy discovery documents and PartialObjectMetadata.

mod discovery;
mod object_meta;
mod options;
mod partial;
mod status;

use crate::{Field, Kind};

pub use discovery::{
    API_GROUP, API_GROUP_LIST, API_RESOURCE, API_RESOURCE_LIST, API_VERSIONS,
    GROUP_VERSION_FOR_DISCOVERY, SERVER_ADDRESS_BY_CLIENT_CIDR,
};
pub use object_meta::{LIST_META, MANAGED_FIELDS_ENTRY, OBJECT_META, OWNER_REFERENCE};
pub use options::{DELETE_OPTIONS, PRECONDITIONS, WATCH_EVENT};
pub use partial::{PARTIAL_OBJECT_METADATA, PARTIAL_OBJECT_METADATA_LIST};
pub use status::{STATUS, STATUS_CAUSE, STATUS_DETAILS};

/// `TypeMeta.kind`, inlined into every top-level type.
pub const KIND: Field = Field::new("kind", 0, Kind::String)
    .describe("The object's type in CamelCase; the server may infer it from the endpoint.");

/// `TypeMeta.apiVersion`, inlined into every top-level type.
pub const API_VERSION: Field = Field::new("apiVersion", 0, Kind::String).describe(
    "The versioned schema of this object: group/version, or the version alone for the core group.",
);

/// `metadata` of a top-level object.
pub const OBJECT_METADATA: Field = Field::new("metadata", 1, Kind::Message(&OBJECT_META))
    .describe("The object's metadata: name, namespace, labels and the rest.");

/// `metadata` of a list.
pub const LIST_METADATA: Field = Field::new("metadata", 1, Kind::Message(&LIST_META))
    .describe("The list's metadata: resourceVersion and paging.");
