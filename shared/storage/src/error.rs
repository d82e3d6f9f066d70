//! The crate's one error type, mirroring upstream's `storage.StorageError` codes plus the
//! few `apierrors` the etcd3 store returns directly (expired, bad request).

/// A cause carried through from a backend or a caller's callback.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What a storage operation can fail with. Not HTTP: the registry maps each variant to a
/// `Status` once (NotFound → 404, KeyExists → 409 AlreadyExists, conflicts → 409,
/// TooLargeResourceVersion → 504 with Retry-After, Expired → 410, BadRequest → 400).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Upstream `ErrCodeKeyNotFound`.
    #[error("StorageError: key not found, Code: 1, Key: {key}")]
    NotFound {
        /// The key as the caller gave it.
        key: String,
    },

    /// Upstream `ErrCodeKeyExists`: create of a key that is there.
    #[error("StorageError: key exists, Code: 2, Key: {key}")]
    KeyExists {
        /// The key as the caller gave it.
        key: String,
    },

    /// A precondition (uid or resourceVersion) did not hold. Upstream reports these as
    /// `ErrCodeInvalidObj` with the message kept here verbatim ("Precondition failed: UID in
    /// precondition: ..."); both become 409 Conflict.
    #[error("{message}")]
    ResourceVersionConflicts {
        /// The key as the caller gave it.
        key: String,
        /// Upstream's text, shown to the user inside the Conflict status.
        message: String,
    },

    /// Upstream `ErrCodeInvalidObj`: a value that cannot be stored or decoded.
    #[error("StorageError: invalid object, Code: 4, Key: {key}, AdditionalErrorMsg: {message}")]
    InvalidObj {
        /// The key as the caller gave it.
        key: String,
        /// What is wrong.
        message: String,
    },

    /// Upstream `ErrCodeUnreachable`: the backend did not answer.
    #[error("StorageError: unreachable, Code: 5, Key: {key}")]
    Unreachable {
        /// The key (or prefix) of the failed request.
        key: String,
        /// The transport error.
        #[source]
        source: BoxError,
    },

    /// Upstream `NewTooLargeResourceVersionError`: the caller asked for a revision newer than
    /// storage has; clients retry after `retry_after_seconds`.
    #[error("Too large resource version: {requested}, current: {current}")]
    TooLargeResourceVersion {
        /// The resourceVersion asked for.
        requested: u64,
        /// The newest revision storage had.
        current: u64,
        /// Upstream's suggested retry delay.
        retry_after_seconds: u32,
    },

    /// Upstream `NewResourceExpired` (410 Gone): the revision asked for was compacted.
    /// `message` is upstream's text for the case (watch, list, continue).
    #[error("{message}")]
    Expired {
        /// Upstream's text, shown to the user.
        message: String,
        /// The resourceVersion asked for, when known.
        requested: Option<u64>,
        /// The compacted revision, when the backend said.
        compacted: Option<u64>,
        /// For an expired continue token: a token that continues inconsistently at the
        /// latest revision (upstream puts it in the Status's `metadata.continue`).
        continue_token: Option<String>,
    },

    /// A malformed request parameter (resourceVersion, continue token, match mode).
    #[error("{0}")]
    BadRequest(String),

    /// An error returned by a caller's `try_update` or `validate_deletion` callback, passed
    /// back unchanged (the registry downcasts it).
    #[error(transparent)]
    Callback(BoxError),

    /// The write was too large for etcd: the request exceeds the client's 2 MiB send limit,
    /// or etcd refused it (`--max-request-bytes`). Upstream's `isTooLargeError`: the
    /// handlers retry once without `managedFields`; the client gets a 500 with the gRPC
    /// error's text and no reason, as upstream's plain-error answer.
    #[error("{message}")]
    RequestTooLarge {
        /// Upstream's text for the same failure.
        message: String,
    },

    /// Anything else; becomes 500.
    #[error("{message}")]
    Internal {
        /// What failed.
        message: String,
        /// The cause, where there is one.
        #[source]
        source: Option<BoxError>,
    },
}

impl Error {
    /// An internal error without a cause.
    pub fn internal(message: impl Into<String>) -> Self {
        Error::Internal {
            message: message.into(),
            source: None,
        }
    }

    /// Upstream's expired error for a watch from a compacted revision.
    pub fn watch_expired(requested: Option<u64>, compacted: Option<u64>) -> Self {
        Error::Expired {
            message: "The resourceVersion for the provided watch is too old.".into(),
            requested,
            compacted,
            continue_token: None,
        }
    }

    /// Whether this is [`Error::NotFound`].
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::NotFound { .. })
    }
}
