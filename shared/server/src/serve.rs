//! The TLS accept loop: rustls with ALPN (h2, http/1.1), upstream's HTTP/2 settings, the
//! peer's certificate chain attached to every request, and graceful drain.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use kas_auth::authentication::PeerCertificates;
use kas_endpoints::body;
use tokio::net::TcpListener;
use tokio::sync::{Notify, watch};
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

use crate::Handler;
use crate::peer::PeerRoute;

/// Upstream's `http2.Server` settings: 250 streams, 256 KiB frames and per-stream buffer.
const MAX_CONCURRENT_STREAMS: u32 = 250;
const MAX_FRAME_SIZE: u32 = 256 * 1024;
const STREAM_WINDOW: u32 = 256 * 1024;
const CONNECTION_WINDOW: u32 = MAX_CONCURRENT_STREAMS * STREAM_WINDOW;
const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

pub(crate) fn builder() -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(MAX_CONCURRENT_STREAMS)
        .max_frame_size(MAX_FRAME_SIZE)
        .initial_stream_window_size(STREAM_WINDOW)
        .initial_connection_window_size(CONNECTION_WINDOW)
        .keep_alive_interval(Duration::from_secs(30));
    builder.http1().timer(TokioTimer::new());
    builder
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
    let acceptor = TlsAcceptor::from(tls);
    let builder = Arc::new(builder());
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
        let acceptor = acceptor.clone();
        let builder = builder.clone();
        let handler = handler.clone();
        let peer = peer.clone();
        let watcher = graceful.watcher();
        let inflight = inflight.clone();
        tokio::spawn(async move {
            let tls = match tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await
            {
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
            let certs =
                tls.get_ref().1.peer_certificates().map(|c| {
                    PeerCertificates::new(c.iter().map(|c| c.clone().into_owned()).collect())
                });
            let service = hyper::service::service_fn(move |mut req: http::Request<Incoming>| {
                if let Some(certs) = &certs {
                    req.extensions_mut().insert(certs.clone());
                }
                let req = req.map(body::boxed);
                let handler = handler.clone();
                let peer = peer.clone();
                let guard = inflight.enter();
                async move {
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
        });
    }
    graceful
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
