//! The REST handlers, after upstream's `pkg/endpoints/handlers`.

pub mod object_meta;
pub mod options;
