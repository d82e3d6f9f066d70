//! [`Transport`]: the one client of calls out of a role (Go's `http.Transport` under
//! upstream's proxies and REST clients). One per TLS identity; it keeps its connections:
//! HTTP/2 when the server offers it by ALPN, else HTTP/1.1 keep-alive, bodies streamed
//! both ways. Upgrade requests get a connection of their own ([`Transport::dial`], HTTP/1.1
//! only, as upstream's `DialURL`).

use std::sync::Arc;
use std::time::Duration;

use http::{Request, Response};
use hyper::body::Incoming;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use kas_endpoints::Body;
use kas_tls::TlsConfig;
use rustls_pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

use crate::describe::{describe, describe_io};
use crate::{Error, Location, Result};

/// Go's `net.Dialer` timeout in upstream's proxy transports.
const DIAL_TIMEOUT: Duration = Duration::from_secs(30);
/// Go's `TLSHandshakeTimeout` of the same.
const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Go's `IdleConnTimeout`.
const IDLE_TIMEOUT: Duration = Duration::from_secs(90);
/// Go's http2.Transport windows, as kas-delegate grants its peers: with hyper's defaults
/// a large LIST or watch stalls on window updates.
const STREAM_WINDOW: u32 = 4 << 20;
const CONNECTION_WINDOW: u32 = 1 << 30;
/// Go's http2.Transport limit of an answer's header list.
const MAX_RESPONSE_HEADER_LIST_SIZE: u32 = 10 << 20;

/// A connection a [`Transport`] dialed for an upgrade: TCP, or TLS over it.
pub trait Io: AsyncRead + AsyncWrite + Send + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Io for T {}

/// The client for one TLS identity: what it trusts, what it presents, the name it checks.
/// Cheap to clone; clones share the connections.
#[derive(Clone)]
pub struct Transport {
    inner: Arc<Inner>,
}

struct Inner {
    pooled: HyperClient<HttpsConnector<HttpConnector>, Body>,
    upgrade: TlsConnector,
    server_name: Option<ServerName<'static>>,
    dial_timeout: Duration,
}

impl Transport {
    /// A transport trusting and presenting what `tls` says.
    pub fn new(tls: &TlsConfig) -> Result<Transport> {
        Transport::with_dial_timeout(tls, DIAL_TIMEOUT)
    }

    /// A transport whose dials give up after `dial_timeout` (upstream's kubelet client
    /// takes `--kubelet-timeout` for its dialer) instead of Go's 30 s.
    pub fn with_dial_timeout(tls: &TlsConfig, dial_timeout: Duration) -> Result<Transport> {
        let config = tls
            .client_config(kas_tls::alpn())
            .map_err(|e| Error::Config(e.to_string()))?;
        Transport::build(config, tls.server_name.as_deref(), dial_timeout)
    }

    /// A transport over a rustls config built elsewhere (kas-delegate's, from files); its
    /// ALPN is replaced: h2 and http/1.1 for pooled requests, http/1.1 for upgrades.
    /// `server_name`, when given, is checked instead of each location's host.
    pub fn from_rustls(
        config: rustls::ClientConfig,
        server_name: Option<&str>,
    ) -> Result<Transport> {
        Transport::build(config, server_name, DIAL_TIMEOUT)
    }

    fn build(
        config: rustls::ClientConfig,
        server_name: Option<&str>,
        dial_timeout: Duration,
    ) -> Result<Transport> {
        let server_name = server_name
            .map(|name| {
                ServerName::try_from(name.to_owned())
                    .map_err(|e| Error::Config(format!("tls-server-name {name:?}: {e}")))
            })
            .transpose()?;
        // hyper-rustls writes the ALPN of the versions it enables (h2, http/1.1).
        let mut pooled_tls = config.clone();
        pooled_tls.alpn_protocols = Vec::new();
        let mut upgrade_tls = config;
        upgrade_tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(dial_timeout));
        let builder = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(pooled_tls)
            .https_or_http();
        let builder = match &server_name {
            Some(name) => builder.with_server_name_resolver(
                hyper_rustls::FixedServerNameResolver::new(name.clone()),
            ),
            None => builder,
        };
        let connector = builder.enable_all_versions().wrap_connector(http);
        let pooled = HyperClient::builder(TokioExecutor::new())
            .timer(TokioTimer::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(IDLE_TIMEOUT)
            .http2_initial_stream_window_size(STREAM_WINDOW)
            .http2_initial_connection_window_size(CONNECTION_WINDOW)
            .http2_max_header_list_size(MAX_RESPONSE_HEADER_LIST_SIZE)
            .http2_keep_alive_interval(Duration::from_secs(30))
            .http2_keep_alive_timeout(Duration::from_secs(15))
            .build(connector);
        Ok(Transport {
            inner: Arc::new(Inner {
                pooled,
                upgrade: TlsConnector::from(Arc::new(upgrade_tls)),
                server_name,
                dial_timeout,
            }),
        })
    }

    /// Sends `req` (its URI absolute) on a pooled connection and returns the answer's head,
    /// its body streaming. A failure before the answer is Go's transport error text.
    pub async fn round_trip(&self, req: Request<Body>) -> Result<Response<Incoming>> {
        let uri = req.uri().clone();
        self.inner
            .pooled
            .request(req)
            .await
            .map_err(|e| Error::Backend(describe(&e, &uri)))
    }

    /// Dials `location` for an upgrade: TCP, then TLS for `https` offering only HTTP/1.1.
    /// The error is Go's dial or handshake error text.
    pub async fn dial(&self, location: &Location) -> std::result::Result<Box<dyn Io>, String> {
        let addr = location.dial_address();
        let connect = TcpStream::connect(&addr);
        let tcp = match tokio::time::timeout(self.inner.dial_timeout, connect).await {
            Ok(Ok(tcp)) => tcp,
            Ok(Err(e)) => return Err(kas_apimachinery::golang::net::dial_error(&addr, &e)),
            Err(_) => return Err(format!("dial tcp {addr}: i/o timeout")),
        };
        let _ = tcp.set_nodelay(true);
        if location.scheme() != "https" {
            return Ok(Box::new(tcp));
        }
        let name = match &self.inner.server_name {
            Some(name) => name.clone(),
            None => {
                ServerName::try_from(location.host_name().to_owned()).map_err(|e| e.to_string())?
            }
        };
        let checked = match &name {
            ServerName::DnsName(n) => n.as_ref().to_owned(),
            ServerName::IpAddress(ip) => std::net::IpAddr::from(*ip).to_string(),
            other => format!("{other:?}"),
        };
        let handshake = self.inner.upgrade.connect(name, tcp);
        match tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, handshake).await {
            Ok(Ok(tls)) => Ok(Box::new(tls)),
            Ok(Err(e)) => Err(describe_io(&e, &checked)),
            Err(_) => Err("net/http: TLS handshake timeout".to_owned()),
        }
    }
}
