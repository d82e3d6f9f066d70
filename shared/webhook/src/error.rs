use kas_apimachinery::Status;

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
    /// A webhook's kubeconfig file could not be loaded, in client-go's `clientcmd` words.
    #[error("{0}")]
    Kubeconfig(String),
    /// The webhook answered with an error status, as client-go's REST client makes it a
    /// `StatusError` (its message is the error's text).
    #[error("{}", .0.message.as_deref().unwrap_or_default())]
    Status(Box<Status>),
    /// The webhook's answer could not be decoded (client-go's `Result.Into` errors).
    #[error("{0}")]
    Decode(String),
}
