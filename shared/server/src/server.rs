//! `GenericApiServer`: a role's server once configured; `prepare_run()` then `run(shutdown)`
//! with upstream's graceful termination.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::watch;

use crate::chain::build_handler_chain;
use crate::config::CompletedConfig;
use crate::healthz::ShutdownCheck;
use crate::peer::{PeerRoute, spawn_publisher};
use crate::routes::Router;
use crate::serve::{InFlight, accept_loop, drain};
use crate::{Handler, Result};

pub struct GenericApiServer {
    config: CompletedConfig,
    handler: Handler,
    shutting_down: Arc<AtomicBool>,
}

impl GenericApiServer {
    pub(crate) fn new(mut config: CompletedConfig, delegate: Handler) -> Result<Self> {
        let shutting_down = Arc::new(AtomicBool::new(false));
        config
            .health
            .add_readyz(Arc::new(ShutdownCheck(shutting_down.clone())));
        let router = Router::new(
            config.health.clone(),
            config.registry.clone(),
            config.flow_control.clone(),
            delegate,
        );
        let handler = build_handler_chain(&config, Handler::new(router))?;
        Ok(GenericApiServer {
            config,
            handler,
            shutting_down,
        })
    }

    /// The port actually bound (useful with `--secure-port 0`).
    pub fn local_addr(&self) -> std::io::Result<std::net::SocketAddr> {
        self.config.listener.local_addr()
    }

    pub fn prepare_run(self) -> Result<PreparedServer> {
        Ok(PreparedServer { server: self })
    }
}

pub struct PreparedServer {
    server: GenericApiServer,
}

impl PreparedServer {
    /// Serves until `shutdown` resolves, then: /readyz fails at once (and peers are told),
    /// requests are still served for `--shutdown-delay-duration`, the listener closes, and
    /// in-flight requests drain (bounded by `--request-timeout`).
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> Result<()> {
        let GenericApiServer {
            config,
            handler,
            shutting_down,
        } = self.server;
        let (changed_tx, changed_rx) = watch::channel(false);
        let readiness = spawn_publisher(
            config.component,
            config.health.clone(),
            shutting_down.clone(),
            changed_rx,
        );
        let peer = PeerRoute::new(
            readiness,
            config
                .request_header
                .as_ref()
                .map(|(ca, names)| (ca.as_path(), names.as_slice())),
        )?;
        let listener = tokio::net::TcpListener::from_std(config.listener)?;
        let addr = listener.local_addr()?;
        let (stop_tx, stop_rx) = watch::channel(false);
        let inflight = Arc::new(InFlight::default());
        let accept = tokio::spawn(accept_loop(
            listener,
            config.tls.clone(),
            handler,
            peer,
            inflight.clone(),
            stop_rx,
        ));
        tracing::info!(component = config.component, %addr, "serving securely");

        shutdown.await;
        tracing::info!(delay = ?config.shutdown_delay, "shutdown initiated: /readyz now fails");
        shutting_down.store(true, Ordering::Release);
        let _ = changed_tx.send(true);
        tokio::time::sleep(config.shutdown_delay).await;

        let _ = stop_tx.send(true);
        let graceful = accept
            .await
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        tracing::info!("listener closed; draining in-flight requests");
        drain(
            graceful,
            &inflight,
            config.request_timeout.max(Duration::from_secs(1)),
        )
        .await;
        tracing::info!("shutdown complete");
        Ok(())
    }
}

/// Resolves on SIGTERM or SIGINT.
pub async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        tracing::error!("cannot install signal handlers; shutdown only by SIGKILL");
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => tracing::info!("received SIGTERM"),
        _ = int.recv() => tracing::info!("received SIGINT"),
    }
}
