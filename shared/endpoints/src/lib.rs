//! kas-endpoints: the HTTP side of the API, after upstream's `k8s.io/apiserver/pkg/endpoints`:
//! what a request is about (`RequestInfo` and its factory), the verb handlers built around a
//! per-request scope (`handlers`), content negotiation (`negotiation`), the writing of answers
//! in JSON, YAML, protobuf, Table and PartialObjectMetadata form and of `Status` errors
//! (`responsewriters`), discovery and OpenAPI documents, and the `installer` that lays out a
//! role's resources as routes, serves them, and hands everything else to the next role.
//!
//! Depends on kas-registry (the store and the resource descriptors) and on `http` types; no
//! hyper server, no storage implementation.

pub mod body;
pub mod discovery;
pub mod error;
pub mod handlers;
pub mod installer;
pub mod negotiation;
pub mod openapi;
pub mod request_body;
pub mod request_info;
pub mod responsewriters;
pub mod url;

pub use body::{Body, BoxError};
pub use error::{Error, Result};
pub use negotiation::{MediaType, MediaTypeOptions, PatchType};
pub use request_body::read_body;
pub use request_info::{RemoteAddr, RequestInfo, RequestInfoFactory};
pub use responsewriters::write_status;
