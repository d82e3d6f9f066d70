//! Patch application, as upstream's PATCH handler does it
//! (`k8s.io/apiserver/pkg/endpoints/handlers/patch.go`):
//!
//! - [`json_patch`]: RFC 6902 with the semantics of `gopkg.in/evanphx/json-patch.v4`
//!   (v4.12), which upstream links, quirks included (negative array indexes, `replace` of a
//!   missing object key adds it, `copy` of a missing key copies `null`).
//! - [`merge_patch`]: RFC 7386 as evanphx's `MergePatch` does it (nulls pruned from added
//!   objects, kept in arrays; an array patch replaces the document).
//! - [`strategic_merge_patch`]: `k8s.io/apimachinery/pkg/util/strategicpatch`, driven by a
//!   [`PatchSchema`] that stands in for upstream's Go struct tags (a built-in kind's is its
//!   generated `kas-api` message; the tests here use small hand-made tables).
//!
//! Errors carry upstream's texts; [`PatchError::to_status`] turns one into the `Status`
//! upstream answers with (400, 413, 422 or 500).
//!
//! Why not the `json-patch` crate: it implements RFC 6902 strictly, and upstream does not
//! (see the quirks above); matching upstream byte for byte needs evanphx's rules.
//!
//! Pure: no I/O, no async.

#[cfg(test)]
mod builtin;
mod json_patch;
mod merge_patch;
mod order;
mod schema;
mod strategic;

#[cfg(test)]
pub use builtin::builtin_schema;
pub use json_patch::{MAX_JSON_PATCH_OPERATIONS, json_patch, json_patch_with};
pub use merge_patch::{merge_patch, merge_patch_with};
pub use schema::{FieldMeta, NoSchema, PatchMeta, PatchSchema, PatchStrategy, SchemaTable};
pub use strategic::{strategic_merge_patch, strategic_merge_patch_bytes};

use crate::status::{Status, StatusDetails, StatusReason};

/// The result type of this module.
pub type Result<T, E = PatchError> = std::result::Result<T, E>;

/// Why a patch could not be applied, classed by the status upstream answers with.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    /// Upstream `NewBadRequest(msg)`: undecodable patch bodies and malformed SMP directives.
    #[error("{0}")]
    BadRequest(String),
    /// More operations than [`MAX_JSON_PATCH_OPERATIONS`] in one JSON patch (413).
    #[error("The allowed maximum operations in a JSON patch is {max}, got {got}")]
    TooManyOperations { max: usize, got: usize },
    /// Upstream `NewGenericServerResponse(422, ...)`: the detail here (the library's error
    /// text) is not sent; the Status carries only the generic message.
    #[error("{0}")]
    Unprocessable(String),
    /// A plain Go error that reaches `ErrorToAPIStatus`: 500, no reason, the text as message.
    #[error("{0}")]
    Other(String),
}

impl PatchError {
    /// The `Status` upstream's handler writes for this error.
    pub fn to_status(&self) -> Status {
        match self {
            PatchError::BadRequest(msg) => Status::bad_request(msg),
            PatchError::TooManyOperations { .. } => {
                Status::request_entity_too_large(&self.to_string())
            }
            PatchError::Unprocessable(_) => {
                let mut status = Status::failure(
                    422,
                    StatusReason::Invalid,
                    "the server rejected our request due to an error in our request",
                );
                status.details = Some(StatusDetails::default());
                status
            }
            PatchError::Other(msg) => Status::failure(500, StatusReason::Unknown, msg.as_str()),
        }
    }
}

/// `fieldValidation` of the request's PatchOptions. Upstream decodes JSON and merge patch
/// bodies strictly first under `Warn` (the default for an empty directive) and `Strict`,
/// which changes the text of decoding errors.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FieldValidation {
    Ignore,
    #[default]
    Warn,
    Strict,
}

#[cfg(test)]
mod tests;
