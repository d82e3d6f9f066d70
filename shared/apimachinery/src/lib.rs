//! kas-apimachinery: the pure machinery every role shares, after upstream's
//! `k8s.io/apimachinery`: `Status` and its constructors (`api/errors`), label and field
//! selectors, validation (name formats, `field.Path`/`field.Error`, object metadata), list
//! continue tokens (from `k8s.io/apiserver/pkg/storage`), and, in [`golang`], the one home
//! of Go-compatible formatting (`strconv`, `encoding/json`, `encoding/base64`, `time`,
//! `fmt`) so that bytes on the wire match upstream's.
//!
//! Must not depend on tokio, hyper, http or any I/O: everything here is a pure function
//! with in-module tests.

pub mod continue_token;
pub mod duration;
pub mod fields;
pub mod golang;
pub mod labels;
pub mod managed_fields;
pub mod patch;
pub mod protobuf;
pub mod resource;
pub mod runtime;
pub mod schema;
pub mod selection;
pub mod status;
pub mod validation;
pub mod version;

pub use status::{ListMeta, Status, StatusCause, StatusDetails, StatusReason};
