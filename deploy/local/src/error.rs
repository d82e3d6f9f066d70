//! The crate's one error type.

use std::path::PathBuf;
use std::time::Duration;

use crate::role::Role;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{action} {}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("invalid user name {0:?}: it names a file of the PKI")]
    InvalidUserName(String),

    #[error("cannot pick a free loopback port")]
    FreePort(#[source] std::io::Error),

    #[error("generating {name}")]
    Certificate {
        name: String,
        #[source]
        source: rcgen::Error,
    },

    #[error("invalid PEM in {what}")]
    Pem {
        what: String,
        #[source]
        source: rustls_pki_types::pem::Error,
    },

    #[error("TLS setup: {what}")]
    Tls {
        what: &'static str,
        #[source]
        source: rustls::Error,
    },

    #[error("malformed token file {}: {reason}", path.display())]
    TokenFile { path: PathBuf, reason: &'static str },

    #[error("invalid URL {url:?}: {reason}")]
    Url { url: String, reason: &'static str },

    #[error("request to {url} failed")]
    Request {
        url: String,
        #[source]
        source: std::io::Error,
    },

    #[error("malformed HTTP response from {url}: {reason}")]
    Response { url: String, reason: String },

    #[error("invalid cluster spec: {0}")]
    Spec(String),

    #[error("binary {} not found (build it with `cargo build --bins`, or pass --bin-dir)", path.display())]
    BinaryNotFound { path: PathBuf },

    /// A tool (etcd, the Python client) is not on the machine, and obtaining it failed.
    #[error("{tool} is not on this machine and could not be obtained: {reason}")]
    ToolUnavailable { tool: &'static str, reason: String },

    /// The way to stop it depends on how the launcher was run, so its front end says it.
    #[error("a cluster is already running from {} (pids {pids:?})", state_dir.display())]
    AlreadyRunning { state_dir: PathBuf, pids: Vec<u32> },

    #[error(
        "{name} is not ready after {timeout:?}: {reason}\n--- last lines of {} ---\n{tail}",
        log.display()
    )]
    NotReady {
        name: String,
        timeout: Duration,
        reason: String,
        log: PathBuf,
        tail: String,
    },

    #[error("state file {}", path.display())]
    State {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },

    #[error("no replica {index} of {role}")]
    NoSuchReplica { role: Role, index: usize },

    #[error("{name} (pid {pid}) is not running")]
    NotRunning { name: String, pid: u32 },

    #[error("sending {signal} to pid {pid}")]
    Signal {
        pid: u32,
        signal: nix::sys::signal::Signal,
        #[source]
        source: nix::errno::Errno,
    },
}

impl Error {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io {
            action,
            path,
            source,
        }
    }
}
