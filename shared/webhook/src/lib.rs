//! kas-webhook: the calls a role makes out to servers it is configured to trust, as
//! upstream's `k8s.io/apiserver/pkg/util/webhook` and the REST client under it.
//!
//! - [`client`]: an HTTPS client (pooled connections, HTTP/2 when the server offers it,
//!   else HTTP/1.1), trusting a PEM bundle (a kubeconfig's certificate authority, a
//!   webhook's `caBundle`) or the system's roots, presenting a client certificate, with a
//!   timeout; failures in Go's words (`Post "https://...": dial tcp ...: connect: connection
//!   refused`).
//!
//! - [`oidc`]: kas-auth's OIDC provider client (discovery and key sets) over it.
//!
//! Webhooks and OIDC providers are reached through it. No Kubernetes policy here: what is
//! sent and what an answer means belongs to the authenticator, authorizer or converter.

pub mod client;
mod error;
pub mod oidc;

pub use client::{Client, Response, TlsConfig};
pub use error::Error;

pub type Result<T, E = Error> = std::result::Result<T, E>;
