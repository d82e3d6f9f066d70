//! kas-proxy: the one client of the calls a role makes out, and upstream's upgrade-aware
//! proxy over it (`k8s.io/apimachinery/pkg/util/proxy`'s `UpgradeAwareHandler` and the
//! transports of `k8s.io/apiserver/pkg/util/proxy`).
//!
//! - [`Transport`]: one per TLS identity ([`kas_tls::TlsConfig`]: a CA bundle or the
//!   system's roots or none checked, a client certificate, a server name checked instead
//!   of the dialed host). It pools its connections (HTTP/2 when the server offers it by
//!   ALPN, else HTTP/1.1 keep-alive) and streams bodies both ways. Build it once per
//!   identity (an APIService's `caBundle` and service name, the kubelet client flags, a
//!   webhook's configuration) and keep it: its pool lives in it. Clones share it.
//! - [`Transport::forward`]`(&location, request, &options) -> Result<Response<Body>>`:
//!   the proxy. A plain request is sent as Go's reverse proxy sends it (hop-by-hop headers
//!   dropped both ways, the root path redirect, optionally CORS headers dropped and
//!   redirects refused); an upgrade request (`Connection: Upgrade`) goes over an HTTP/1.1
//!   connection of its own, and on `101` the client's upgraded connection and the
//!   backend's are spliced until either closes (the request must carry hyper's
//!   `OnUpgrade`, which a server built with `serve_connection_with_upgrades` puts there).
//!   Headers are the caller's business: strip credentials, add the front-proxy identity
//!   (`X-Remote-*`) before calling.
//! - [`Error`]: what goes wrong before an answer, in Go's words; the caller's responder
//!   writes it: [`Error::to_status`] as core's connecters do, [`Error::text_response`] as
//!   the aggregator's proxy does (`http.Error` with 503).
//! - [`resolve`]: where a request for a Service goes (upstream's `ResolveEndpoint` and
//!   `ResolveCluster`, `findServicePort`), pure functions over the Service and its
//!   Endpoints: the aggregator's routing to APIServices and core's `services/proxy`.
//! - [`Transport::round_trip`] and [`Transport::dial`]: the pooled request and the
//!   upgrade connection under them, for clients that are no proxy (kas-webhook's whole-body
//!   client); [`upgrade_over`]: the upgrade on a connection the caller dialed (kas-delegate
//!   tries its endpoints in turn).
//! - [`translate`]: upstream 1.33's stream translator and tunnel
//!   ([`Transport::translate_stream`], [`Transport::tunnel`]) for kubectl's WebSocket exec,
//!   attach and port-forward toward SPDY kubelets, over [`spdy`] (SPDY/3.1 frames and
//!   connections) and [`websocket`] (RFC 6455's server side).
//!
//! The aggregator's proxy to an aggregated API server keeps one `Transport` per APIService
//! (its `caBundle` or `insecureSkipTLSVerify`, the front-proxy client pair, the server name
//! `<service>.<namespace>.svc`), rebuilt when the APIService changes, as upstream's
//! `proxyHandler.updateAPIService` rebuilds its round tripper; per request, with the user
//! already in `X-Remote-*` (kas-delegate's `rewrite_headers` is the model):
//!
//! ```ignore
//! let transport = kas_proxy::Transport::new(&TlsConfig { ca_data, client_cert, server_name, .. })?;
//! let options = kas_proxy::Options { wrap_transport: true, reject_forwarding_redirects: true, ..Default::default() };
//! let answer = match transport.forward(&location, req, &options).await {
//!     Ok(resp) => resp,
//!     Err(e) => e.text_response(StatusCode::SERVICE_UNAVAILABLE),
//! };
//! ```
//!
//! Depends on kas-endpoints for its `Body` only; knows nothing of the server, the
//! registry or any role.

mod describe;
mod error;
pub mod headers;
mod location;
pub mod resolve;
pub mod spdy;
mod splice;
pub mod translate;
mod transport;
mod upgradeaware;
pub mod websocket;

pub use describe::error_chain;
pub use error::{Error, text_response};
pub use location::Location;
pub use splice::splice;
pub use transport::{Io, Transport};
pub use upgradeaware::{Options, upgrade_over};

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests;
