//! `kas-test-apiserver`: a small aggregated API server for the tests of the aggregation
//! layer, speaking what upstream's aggregator expects of a backend (and no more):
//!
//! - HTTPS with h2 and http/1.1; upstream's delegated request-header authentication: the
//!   `X-Remote-*` headers count only on a connection whose client certificate verifies
//!   against `--requestheader-client-ca-file` and whose CN is allowed; anything else is
//!   401 but `/healthz`, `/livez`, `/readyz`. No authorization.
//! - One group/version (`--group`, `--version`, default `wardle.example.com/v1alpha1`)
//!   with `flunders` (namespaced, kind Flunder) and `fischers` (cluster-scoped, Fischer):
//!   legacy and aggregated discovery, OpenAPI v2 and v3, objects in memory with create,
//!   get, list, watch, update, merge patch and delete. Each object records who created it
//!   in annotations ([`api::ANNOTATION_USER`] and friends).
//! - `…/flunders/<name>/echo`: `101 Switching Protocols` to `Connection: Upgrade`, then
//!   every byte is echoed, for upgrades through a proxy.
//! - `--discovery-failure` (and `PUT /kas-test/discovery-failure` with `none`, `error` or
//!   `hang`, authenticated) makes discovery answer 500 or never answer, for availability.
//!
//! Test code only: it depends on kas-apimachinery for `Status`, selectors and merge
//! patch, and on nothing of the servers.

pub mod api;
pub mod auth;
pub mod discovery;
pub mod openapi;
mod reply;
mod rest;
mod serve;
mod state;
pub mod store;
mod table;
mod upgrade;
mod watch;

use std::net::IpAddr;
use std::path::PathBuf;

/// What discovery does, to test availability.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum DiscoveryFailure {
    #[default]
    None,
    /// 500 with an InternalError `Status`.
    Error,
    /// Never answers (the connection stays open).
    Hang,
}

impl DiscoveryFailure {
    pub fn parse(s: &str) -> Option<DiscoveryFailure> {
        match s.trim() {
            "none" => Some(DiscoveryFailure::None),
            "error" => Some(DiscoveryFailure::Error),
            "hang" => Some(DiscoveryFailure::Hang),
            _ => None,
        }
    }
}

/// The flags; names follow upstream's generic apiserver options where they exist.
#[derive(Clone, Debug, clap::Parser)]
#[command(
    name = "kas-test-apiserver",
    about = "A small aggregated API server for tests"
)]
pub struct Options {
    #[arg(long, default_value = "0.0.0.0")]
    pub bind_address: IpAddr,
    #[arg(long, default_value_t = 443)]
    pub secure_port: u16,
    #[arg(long)]
    pub tls_cert_file: PathBuf,
    #[arg(long)]
    pub tls_private_key_file: PathBuf,
    /// The CA that signs the front proxy's client certificate.
    #[arg(long)]
    pub requestheader_client_ca_file: PathBuf,
    /// Common names allowed to assert identities; empty allows any the CA signed.
    #[arg(long, value_delimiter = ',')]
    pub requestheader_allowed_names: Vec<String>,
    #[arg(long, value_delimiter = ',', default_value = "X-Remote-User")]
    pub requestheader_username_headers: Vec<String>,
    #[arg(long, value_delimiter = ',', default_value = "X-Remote-Uid")]
    pub requestheader_uid_headers: Vec<String>,
    #[arg(long, value_delimiter = ',', default_value = "X-Remote-Group")]
    pub requestheader_group_headers: Vec<String>,
    #[arg(long, value_delimiter = ',', default_value = "X-Remote-Extra-")]
    pub requestheader_extra_headers_prefix: Vec<String>,
    #[arg(long, default_value = "wardle.example.com")]
    pub group: String,
    #[arg(long, default_value = "v1alpha1")]
    pub version: String,
    #[arg(long, value_enum, default_value_t = DiscoveryFailure::None)]
    pub discovery_failure: DiscoveryFailure,
    /// Serve only the legacy discovery documents, as servers before aggregated discovery
    /// (`/apis` is an APIGroupList whatever the `Accept`).
    #[arg(long)]
    pub legacy_discovery_only: bool,
}

/// Serves until the process is killed (or fails to start).
pub async fn run(options: Options) -> anyhow::Result<()> {
    serve::serve(options).await
}
