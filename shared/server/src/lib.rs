//! kas-server: the generic API server every role is built on, after upstream's
//! `k8s.io/apiserver/pkg/server`: options, `Config` → `CompletedConfig` →
//! `GenericApiServer`, TLS serving over HTTP/1.1 and HTTP/2, the filter chain, health,
//! version, metrics, the Peer service and graceful shutdown.
//!
//! Knows nothing of any role's resources, of etcd or of how delegation reaches a peer: a
//! role hands in its delegate as a `Handler` and its own health checks by name.

pub mod allocator;
pub mod chain;
pub mod config;
pub mod error;
mod flowcontrol;
mod header_limits;
pub mod healthz;
pub mod options;
pub mod peer;
pub mod routes;
pub mod run;
mod serve;
mod server;
pub mod telemetry;
pub mod version;

use std::convert::Infallible;

use http::{Request, Response};
use kas_endpoints::Body;

pub use config::{CompletedConfig, Config};
pub use error::{Error, Result};
pub use server::{GenericApiServer, PreparedServer, shutdown_signal};

/// Any request handler: a filter chain, a router, a delegate, or the final 404.
pub type Handler = tower::util::BoxCloneSyncService<Request<Body>, Response<Body>, Infallible>;
