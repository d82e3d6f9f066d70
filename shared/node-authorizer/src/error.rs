//! The crate's one error type. Decisions never fail; these are the errors of feeding the
//! graph.

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An object that does not decode as its kind.
    #[error("decoding {kind}: {message}")]
    Decode { kind: &'static str, message: String },

    /// Listing or watching storage failed.
    #[error(transparent)]
    Storage(#[from] kas_storage::Error),
}
