//! After upstream's `pkg/registry/rest`: what the server owns in an object's metadata on
//! create and update (`BeforeCreate`, `BeforeUpdate`), and the options of the verbs.

pub mod object_meta;
pub mod options;
