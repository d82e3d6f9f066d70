//! One delegate endpoint: its address, its readiness, and its HTTP/2 connections. A
//! connection carries many streams; a new one opens when every open one is near the
//! server's 250-stream limit (long-lived watches hold streams), so requests never queue
//! behind the limit.

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper::client::conn::http2::SendRequest;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use kas_endpoints::Body;
use rustls_pki_types::ServerName;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

use crate::{Error, Result};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// What the delegating role knows of an endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum EndpointState {
    /// Not heard from yet: tried, so that start-up does not wait for the first report.
    Unknown = 0,
    /// Its readiness stream says ready.
    Ready = 1,
    /// It answers but says not ready (starting, or shutting down).
    NotReady = 2,
    /// It cannot be reached; the health watcher probes it back in.
    Down = 3,
}

impl EndpointState {
    pub(crate) fn from_u8(v: u8) -> Self {
        match v {
            1 => EndpointState::Ready,
            2 => EndpointState::NotReady,
            3 => EndpointState::Down,
            _ => EndpointState::Unknown,
        }
    }

    pub(crate) fn eligible(self) -> bool {
        matches!(self, EndpointState::Ready | EndpointState::Unknown)
    }
}

/// Below the server's 250 streams, leaving room for the streams a peer opens meanwhile.
const STREAMS_PER_CONNECTION: usize = 200;
/// Flow-control windows the delegate grants its peer (see `connect`).
const STREAM_WINDOW: u32 = 4 << 20;
const CONNECTION_WINDOW: u32 = 1 << 30;
/// The response header list accepted from a peer: Go's http2.Transport default. Upstream
/// delegates in process, so no hop of its own limits an answer's headers; the client's
/// transport does, and this is at least as large as a Go client's. (hyper's 16 KiB would
/// refuse a peer's answer with many Warning headers, and h2 ends the whole connection
/// over four times the limit.)
const MAX_RESPONSE_HEADER_LIST_SIZE: u32 = 10 << 20;

pub(crate) struct Endpoint {
    /// The URL as configured (or the resolved address, for a DNS name).
    pub name: String,
    /// `host:port` to dial.
    pub dial: String,
    pub server_name: ServerName<'static>,
    pub authority: http::uri::Authority,
    state: AtomicU8,
    /// Requests and streams under way, for least-loaded picking.
    pub active: AtomicUsize,
    conns: Mutex<Vec<Conn>>,
    connecting: tokio::sync::Mutex<()>,
    tls: TlsConnector,
    /// Dials the endpoint for upgrade requests (HTTP/1.1, the same identity).
    pub upgrades: kas_proxy::Transport,
    /// The discovery digest its readiness stream last told.
    discovery: Mutex<String>,
    /// Told when `discovery` changes.
    discovery_changed: Arc<tokio::sync::watch::Sender<u64>>,
}

#[derive(Clone)]
struct Conn {
    sender: SendRequest<Body>,
    streams: Arc<AtomicUsize>,
}

/// A stream slot on one connection; released when the response body is done.
pub(crate) struct StreamGuard {
    streams: Arc<AtomicUsize>,
    endpoint: Arc<Endpoint>,
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.streams.fetch_sub(1, Ordering::AcqRel);
        self.endpoint.active.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Endpoint {
    pub fn new(
        name: String,
        dial: String,
        server_name: ServerName<'static>,
        authority: http::uri::Authority,
        tls: TlsConnector,
        upgrades: kas_proxy::Transport,
        discovery_changed: Arc<tokio::sync::watch::Sender<u64>>,
    ) -> Self {
        Endpoint {
            name,
            dial,
            server_name,
            authority,
            state: AtomicU8::new(EndpointState::Unknown as u8),
            active: AtomicUsize::new(0),
            conns: Mutex::new(Vec::new()),
            connecting: tokio::sync::Mutex::new(()),
            tls,
            upgrades,
            discovery: Mutex::new(String::new()),
            discovery_changed,
        }
    }

    /// The discovery digest the endpoint last told (empty: none).
    pub fn discovery(&self) -> String {
        self.discovery
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn set_discovery(&self, digest: &str) {
        let mut current = self.discovery.lock().unwrap_or_else(|p| p.into_inner());
        if *current != digest {
            digest.clone_into(&mut current);
            drop(current);
            self.discovery_changed.send_modify(|n| *n += 1);
        }
    }

    pub fn state(&self) -> EndpointState {
        EndpointState::from_u8(self.state.load(Ordering::Acquire))
    }

    pub fn set_state(&self, state: EndpointState) {
        let old = self.state.swap(state as u8, Ordering::AcqRel);
        if old != state as u8 {
            tracing::info!(endpoint = %self.name, from = ?EndpointState::from_u8(old), to = ?state, "delegate endpoint state changed");
        }
        if state == EndpointState::Down {
            self.conns.lock().unwrap_or_else(|p| p.into_inner()).clear();
        }
    }

    /// Dials, handshakes TLS (ALPN h2) and HTTP/2; the connection is driven by its own task.
    pub async fn connect(&self) -> Result<SendRequest<Body>> {
        let endpoint = || self.name.clone();
        let tcp = tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(&self.dial))
            .await
            .map_err(|_| Error::ConnectTimeout {
                endpoint: endpoint(),
            })?
            .map_err(|source| Error::Connect {
                endpoint: endpoint(),
                source,
            })?;
        let _ = tcp.set_nodelay(true);
        let tls = tokio::time::timeout(
            CONNECT_TIMEOUT,
            self.tls.connect(self.server_name.clone(), tcp),
        )
        .await
        .map_err(|_| Error::ConnectTimeout {
            endpoint: endpoint(),
        })?
        .map_err(|source| Error::Connect {
            endpoint: endpoint(),
            source,
        })?;
        let mut builder = hyper::client::conn::http2::Builder::new(TokioExecutor::new());
        builder
            .timer(TokioTimer::new())
            // Go's http2.Transport, which upstream's proxy uses: 4 MiB per stream, 1 GiB
            // per connection. With 256 KiB a 14 MB LIST stalled on window updates at
            // every hop (p50 through the aggregator 17.5 ms → 14.8 ms with these).
            .initial_stream_window_size(STREAM_WINDOW)
            .initial_connection_window_size(CONNECTION_WINDOW)
            .max_frame_size(256 * 1024)
            .max_header_list_size(MAX_RESPONSE_HEADER_LIST_SIZE)
            .keep_alive_interval(Duration::from_secs(10))
            .keep_alive_timeout(Duration::from_secs(5))
            .keep_alive_while_idle(true);
        let (sender, conn) = builder
            .handshake(TokioIo::new(tls))
            .await
            .map_err(|source| Error::Handshake {
                endpoint: endpoint(),
                source,
            })?;
        let name = self.name.clone();
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(endpoint = %name, error = %e, "delegate connection closed");
            }
        });
        Ok(sender)
    }

    /// A sender with a free stream slot, opening a connection when none has one.
    pub async fn sender(self: &Arc<Self>) -> Result<(SendRequest<Body>, StreamGuard)> {
        if let Some(found) = self.pooled() {
            return Ok(found);
        }
        let _one_dialer = self.connecting.lock().await;
        if let Some(found) = self.pooled() {
            return Ok(found);
        }
        let sender = self.connect().await?;
        let conn = Conn {
            sender,
            streams: Arc::new(AtomicUsize::new(0)),
        };
        let guard = self.claim(&conn);
        let sender = conn.sender.clone();
        self.conns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(conn);
        Ok((sender, guard))
    }

    fn pooled(self: &Arc<Self>) -> Option<(SendRequest<Body>, StreamGuard)> {
        let mut conns = self.conns.lock().unwrap_or_else(|p| p.into_inner());
        conns.retain(|c| !c.sender.is_closed());
        let best = conns
            .iter()
            .filter(|c| c.streams.load(Ordering::Acquire) < STREAMS_PER_CONNECTION)
            .min_by_key(|c| c.streams.load(Ordering::Acquire))?
            .clone();
        drop(conns);
        let guard = self.claim(&best);
        Some((best.sender, guard))
    }

    fn claim(self: &Arc<Self>, conn: &Conn) -> StreamGuard {
        conn.streams.fetch_add(1, Ordering::AcqRel);
        self.active.fetch_add(1, Ordering::AcqRel);
        StreamGuard {
            streams: conn.streams.clone(),
            endpoint: self.clone(),
        }
    }

    /// Forgets a connection that refused a request, so the next one dials afresh.
    pub fn drop_closed(&self) {
        self.conns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|c| !c.sender.is_closed());
    }
}
