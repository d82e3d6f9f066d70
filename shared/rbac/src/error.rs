//! The crate's one error type. Decisions never fail: resolution errors (a missing role)
//! are upstream's strings, reported in a decision's reason. These are the errors of
//! feeding the index.

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An RBAC object that does not decode as its kind.
    #[error("decoding {kind} {key:?}: {message}")]
    Decode {
        kind: &'static str,
        key: String,
        message: String,
    },

    /// A policy rule that does not decode.
    #[error("decoding policy rule: {0}")]
    InvalidRule(String),

    /// Listing or watching storage failed.
    #[error(transparent)]
    Storage(#[from] kas_storage::Error),
}
