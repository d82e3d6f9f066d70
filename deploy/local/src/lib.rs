//! kas-local: the local launcher.
//!
//! Starts etcd and N replicas of each role (`extensions-apiserver`, `core-apiserver`,
//! `aggregator`) on loopback, with a throw-away PKI, a static token file and a kubeconfig,
//! and stops exactly what it started. It is a synchronous library (std::process, std::net
//! and a blocking rustls client) so that integration tests reuse it; the `kas-local` binary
//! is a thin clap front end over it.
//!
//! It must not depend on tokio, hyper or any of the project's server crates: it drives the
//! binaries from the outside, as an operator would.

pub mod deploy_pki;
mod error;
pub mod etcd;
pub mod kubeconfig;
pub mod pki;
mod ports;
pub mod probe;
mod process;
pub mod role;
mod state;
pub mod tools;

pub mod cluster;

pub use cluster::{Cluster, ClusterSpec, Role};
pub use error::{Error, Result};
pub use pki::{CertPaths, Pki};
pub use process::{StopOutcome, Stopped};
pub use state::{ClusterState, ProcessRecord, ServerRecord};
pub use tools::Tools;

/// The repository this crate was built from: where the launcher keeps its state
/// (`.local-cluster`) and obtained tools (`target/kas-tools`) by default.
pub fn repo_root() -> &'static std::path::Path {
    // deploy/local is two levels below the root.
    let manifest_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir.ancestors().nth(2).unwrap_or(manifest_dir)
}
