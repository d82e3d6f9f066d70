#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The client could not be built (its certificate authority or client pair).
    #[error("{0}")]
    Config(String),
    /// A request failed before an answer came, in Go's `url.Error` words.
    #[error("{0}")]
    Request(String),
    /// The request could not be formed (a URL that does not parse).
    #[error("{0}")]
    InvalidRequest(String),
}
