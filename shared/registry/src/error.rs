//! The one error enum of kas-registry, turned into a `Status` once, at the HTTP boundary.

use kas_apimachinery::Status;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A failure that already has its API form (bad input, validation, conflicts found by
    /// the handlers).
    #[error("{}", .0.message.as_deref().unwrap_or("error"))]
    Api(Box<Status>),
    /// A storage failure with no resource context, in practice a stored object that does
    /// not decode. Failures of a store call go through `Store::storage_error` instead.
    #[error("{0}")]
    Storage(#[from] kas_storage::Error),
}

impl From<Status> for Error {
    fn from(status: Status) -> Self {
        Error::Api(Box::new(status))
    }
}

impl Error {
    /// The `Status` the client receives.
    pub fn to_status(&self) -> Status {
        match self {
            Error::Api(status) => (**status).clone(),
            Error::Storage(e) => Status::internal_error(&e.to_string()),
        }
    }
}
