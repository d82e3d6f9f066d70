//! The crate's one error type.

use thiserror::Error;

#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum Error {
    /// Upstream's `RequestInfoFactory` error for `/api/v1/watch` or `/api/v1/proxy` with
    /// nothing after the verb; upstream's filter answers it with a plain-text 500
    /// (`responsewriters::internal_error`).
    #[error("unable to determine kind and namespace from url, {url}")]
    KindAndNamespace { url: String },
    /// Go's `url.EscapeError`: a `%` not followed by two hex digits. Go's HTTP server
    /// rejects such a request line with 400 before any handler runs.
    #[error("invalid URL escape {}", kas_apimachinery::golang::strconv::quote(.0))]
    InvalidEscape(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
