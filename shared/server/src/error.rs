//! The one error enum of kas-server: start-up and configuration failures. Request-time
//! failures never reach here; they are `Status` responses.

use std::net::SocketAddr;
use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("invalid flags:\n  {}", .0.join("\n  "))]
    InvalidOptions(Vec<String>),
    #[error("missing configuration: {0}")]
    Incomplete(&'static str),
    #[error("failed to listen on {addr}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("reading {path}")]
    ReadFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    InvalidFile { path: PathBuf, message: String },
    #[error(transparent)]
    Tls(#[from] kas_tls::Error),
    #[error(transparent)]
    Auth(#[from] kas_auth::Error),
    #[error("registering metrics")]
    Metrics(#[from] prometheus::Error),
    #[error("telemetry: {0}")]
    Telemetry(String),
    #[error("API Priority and Fairness: {0}")]
    FlowControl(String),
    #[error("building the delegate: {0}")]
    Delegate(String),
    #[error("{0}")]
    Audit(String),
    #[error("serving")]
    Io(#[from] std::io::Error),
}
