//! kas-endpoints: the HTTP edge shared by every role, after upstream's `pkg/endpoints`:
//! the body type, `RequestInfo` and its factory, Go-compatible URL decoding, and the one
//! place a `Status` (or upstream's plain-text errors) becomes an HTTP response.
//!
//! Depends on `http` types only: no tokio, no hyper server, no I/O.

pub mod body;
pub mod codec;
pub mod error;
pub mod negotiation;
pub mod request_body;
pub mod request_info;
pub mod responsewriters;
pub mod url;

pub use body::{Body, BoxError};
pub use codec::{DecodeError, decode_json, decode_yaml, encode_json, encode_yaml};
pub use error::{Error, Result};
pub use negotiation::{MediaType, MediaTypeOptions, PatchType};
pub use request_body::read_body;
pub use request_info::{RequestInfo, RequestInfoFactory};
pub use responsewriters::write_status;
