//! The TLS accept loop: rustls with ALPN (h2, http/1.1), upstream's HTTP/2 settings and
//! header limits (Go's `MaxHeaderBytes` of 1 MiB, 431 above it), the peer's certificate
//! chain attached to every request, and graceful drain.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use kas_auth::authentication::PeerCertificates;
use kas_endpoints::{RemoteAddr, body};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, watch};
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

use crate::Handler;
use crate::header_limits::HeaderLimits;
use crate::peer::PeerRoute;

/// Upstream's `http2.Server` settings: 250 streams, 256 KiB per-stream buffer.
const MAX_CONCURRENT_STREAMS: u32 = 250;
/// Upstream reads frames of up to 256 KiB; here they stay at HTTP/2's 16 KiB. h2 ends a
/// connection whose header block takes more than max(5, 1.25 × header list limit / this)
/// CONTINUATION frames: with 256 KiB that is 5, so a client writing 16 KiB frames (as
/// every client does before it reads our SETTINGS, Go's included) could send only about
/// 96 KiB of headers. With 16 KiB, the 1 MiB Go accepts fits in the 85 allowed. Only
/// request bodies over 16 KiB arrive in more frames; answers follow the client's setting.
const MAX_FRAME_SIZE: u32 = 16 * 1024;
const STREAM_WINDOW: u32 = 256 * 1024;
const CONNECTION_WINDOW: u32 = MAX_CONCURRENT_STREAMS * STREAM_WINDOW;
const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Headroom over the client limits for a peer's connection. A peer forwards a request
/// the front role already held to upstream's limits, plus what the hop adds (the user in
/// `X-Remote-*` headers, `traceparent`, HTTP/2's 32 bytes per field where HTTP/1 counted
/// 4): that must not be refused where upstream, delegating in process, has no second
/// limit.
const PEER_LIMITS: HeaderLimits = HeaderLimits::CLIENT.with_headroom(64 * 1024);

/// The HTTP/1 and HTTP/2 settings, hyper's header limits at `limits`' backstop.
pub(crate) fn builder(limits: HeaderLimits) -> auto::Builder<TokioExecutor> {
    let backstop = limits.backstop();
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(MAX_CONCURRENT_STREAMS)
        .max_frame_size(MAX_FRAME_SIZE)
        .initial_stream_window_size(STREAM_WINDOW)
        .initial_connection_window_size(CONNECTION_WINDOW)
        .max_header_list_size(u32::try_from(backstop.h2_list).unwrap_or(u32::MAX))
        .keep_alive_interval(Duration::from_secs(30));
    builder
        .http1()
        .timer(TokioTimer::new())
        .max_buf_size(backstop.h1_head);
    builder
}

/// What every connection shares.
struct Shared {
    acceptor: TlsAcceptor,
    /// For clients, with upstream's header limits.
    client: auto::Builder<TokioExecutor>,
    /// For front-proxy peers, with `PEER_LIMITS`.
    peer_builder: auto::Builder<TokioExecutor>,
    handler: Handler,
    peer: PeerRoute,
    inflight: Arc<InFlight>,
}

/// Accepts until `stop` turns true, then returns the watcher of open connections.
pub(crate) async fn accept_loop(
    listener: TcpListener,
    tls: Arc<rustls::ServerConfig>,
    handler: Handler,
    peer: PeerRoute,
    inflight: Arc<InFlight>,
    mut stop: watch::Receiver<bool>,
) -> GracefulShutdown {
    let shared = Arc::new(Shared {
        acceptor: TlsAcceptor::from(tls),
        client: builder(HeaderLimits::CLIENT),
        peer_builder: builder(PEER_LIMITS),
        handler,
        peer,
        inflight,
    });
    let graceful = GracefulShutdown::new();
    loop {
        let (tcp, remote) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
            _ = stop.changed() => break,
        };
        let _ = tcp.set_nodelay(true);
        tokio::spawn(serve_connection(
            shared.clone(),
            tcp,
            remote,
            graceful.watcher(),
        ));
    }
    graceful
}

/// Handshakes TLS and serves the connection's requests, each carrying the client's
/// certificate chain.
async fn serve_connection(
    shared: Arc<Shared>,
    tcp: TcpStream,
    remote: SocketAddr,
    watcher: Watcher,
) {
    let tls = match tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, shared.acceptor.accept(tcp)).await {
        Ok(Ok(tls)) => tls,
        Ok(Err(e)) => {
            tracing::debug!(%remote, error = %e, "TLS handshake failed");
            return;
        }
        Err(_) => {
            tracing::debug!(%remote, "TLS handshake timed out");
            return;
        }
    };
    let certs = tls
        .get_ref()
        .1
        .peer_certificates()
        .map(|c| PeerCertificates::new(c.iter().map(|c| c.clone().into_owned()).collect()));
    let from_peer = match &certs {
        Some(certs) => shared.peer.is_peer(certs).await,
        None => false,
    };
    let (builder, limits) = if from_peer {
        (&shared.peer_builder, PEER_LIMITS)
    } else {
        (&shared.client, HeaderLimits::CLIENT)
    };
    let conn_shared = shared.clone();
    let service = hyper::service::service_fn(move |mut req: http::Request<Incoming>| {
        // Before any filter, as Go's server answers it.
        let too_large = limits.check(&req);
        if let Some(certs) = &certs {
            req.extensions_mut().insert(certs.clone());
        }
        req.extensions_mut().insert(RemoteAddr(remote));
        let req = req.map(body::boxed);
        let handler = conn_shared.handler.clone();
        let peer = conn_shared.peer.clone();
        let guard = conn_shared.inflight.enter();
        async move {
            if let Some(resp) = too_large {
                return Ok(resp);
            }
            let _guard = guard;
            if PeerRoute::matches(&req) {
                drop(_guard);
                return peer.call(req).await;
            }
            handler.oneshot(req).await
        }
    });
    let conn = builder.serve_connection_with_upgrades(TokioIo::new(tls), service);
    if let Err(e) = watcher.watch(conn.into_owned()).await {
        tracing::debug!(%remote, error = %e, "connection ended with an error");
    }
}

/// Requests whose handler has not yet returned response headers. Long-running requests
/// (watches, proxied streams) leave this count once their headers are out, so draining
/// waits for ordinary requests only and cuts open watches, as upstream does with its
/// default `--shutdown-watch-termination-grace-period` of 0.
#[derive(Default)]
pub(crate) struct InFlight {
    count: AtomicUsize,
    idle: Notify,
}

struct InFlightGuard(Arc<InFlight>);

impl InFlight {
    fn enter(self: &Arc<Self>) -> InFlightGuard {
        self.count.fetch_add(1, Ordering::AcqRel);
        InFlightGuard(self.clone())
    }

    async fn wait_idle(&self) {
        loop {
            let notified = self.idle.notified();
            if self.count.load(Ordering::Acquire) == 0 {
                return;
            }
            notified.await;
        }
    }
}

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        if self.0.count.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

/// Tells every connection to finish (HTTP/2 GOAWAY, HTTP/1 close after the current
/// request) and waits, at most `limit`, until no request is waiting for its headers.
pub(crate) async fn drain(graceful: GracefulShutdown, inflight: &InFlight, limit: Duration) {
    let connections = graceful.shutdown();
    let wait = async {
        tokio::select! {
            () = connections => {}
            () = inflight.wait_idle() => {}
        }
    };
    if tokio::time::timeout(limit, wait).await.is_err() {
        tracing::warn!(
            ?limit,
            "in-flight requests did not finish in time; exiting anyway"
        );
    }
}
