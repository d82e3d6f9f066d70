//! kas-delegate: how a role reaches the next one in the delegation chain (upstream's
//! `DelegationTarget`, but across processes): a pool of mTLS HTTP/2 connections per
//! endpoint, endpoints chosen by their `Peer` readiness stream, failed endpoints ejected and
//! probed back in, requests that never reached a peer retried elsewhere, bodies streamed
//! both ways, connection upgrades carried over HTTP/1.1 connections of their own, and the
//! user forwarded in the front-proxy headers.
//!
//! Knows nothing of the generic server: it is a `tower::Service` the role hands to it.

pub mod discovery;
mod endpoint;
mod error;
mod health;
mod options;
mod pool;
mod proxy;
mod trace;
mod upgrade;

pub use endpoint::EndpointState;
pub use error::{Error, Result};
pub use options::DelegationOptions;
pub use proxy::{Delegate, set_auth_proxy_headers};
