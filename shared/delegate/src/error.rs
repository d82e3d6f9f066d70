//! The one error enum of kas-delegate.

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("invalid delegate endpoint {url:?}: {reason}")]
    InvalidEndpoint { url: String, reason: String },
    #[error(transparent)]
    Tls(#[from] kas_tls::Error),
    #[error(transparent)]
    Proxy(#[from] kas_proxy::Error),
    #[error("connecting to {endpoint}")]
    Connect {
        endpoint: String,
        #[source]
        source: std::io::Error,
    },
    #[error("connecting to {endpoint}: timed out")]
    ConnectTimeout { endpoint: String },
    #[error("HTTP/2 handshake with {endpoint}")]
    Handshake {
        endpoint: String,
        #[source]
        source: hyper::Error,
    },
}
