//! kas-webhook: the calls a role makes out to servers it is configured to trust, as
//! upstream's `k8s.io/apiserver/pkg/util/webhook` and the REST client under it, and the
//! webhook token authenticator and authorizer built on them.
//!
//! - [`client`]: whole requests and answers with a timeout over kas-proxy's `Transport`
//!   (the one client of calls out: pooled connections, HTTP/2 when the server offers it,
//!   else HTTP/1.1), trusting a PEM bundle (a kubeconfig's certificate authority, a
//!   webhook's `caBundle`) or the system's roots, presenting a client certificate;
//!   failures in Go's words (`Post "https://...": dial tcp ...: connect: connection
//!   refused`).
//! - [`kubeconfig`]: a webhook's configuration file (kubeconfig format), as client-go
//!   loads it.
//! - [`generic`]: upstream's `GenericWebhook`: post, read the answer as client-go's REST
//!   client does, retry with backoff.
//! - [`token`]: the webhook token authenticator (TokenReview), behind its cache.
//! - [`authorizer`]: the webhook authorizer (SubjectAccessReview), with its cache.
//! - [`audit`]: the audit webhook backend (kas-audit's `Backend`): batches of events
//!   posted as `EventList`s, every error retried.
//!
//! - [`oidc`]: kas-auth's OIDC provider client (discovery and key sets) over the client.
//!
//! Webhooks and OIDC providers are reached through the client. Nothing here depends on
//! the server: the authenticator and authorizer implement kas-auth's traits, the audit
//! backend kas-audit's.

pub mod audit;
pub mod authorizer;
mod blocking;
pub mod client;
pub mod client_config;
mod error;
pub mod generic;
pub mod kubeconfig;
pub mod oidc;
mod review;
#[cfg(test)]
mod testing;
pub mod token;

pub use blocking::block_on;
pub use client::{Client, Response, TlsConfig};
pub use error::Error;

pub type Result<T, E = Error> = std::result::Result<T, E>;
