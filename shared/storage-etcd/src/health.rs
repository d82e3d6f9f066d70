//! The `etcd` and `etcd-readiness` checks (upstream's `storagefactory.CreateHealthCheck`
//! and `CreateReadyCheck`): the cluster answers a read within `--etcd-healthcheck-timeout`
//! or `--etcd-readycheck-timeout`. [`crate::EtcdOptions::health_checks`] hands them to the
//! server with where they belong; this crate knows nothing of HTTP.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use tokio::sync::Mutex;

/// Cheap to clone; clones share one client, connected on first use and again after a
/// failed read.
#[derive(Clone)]
pub struct EtcdHealthCheck {
    inner: Arc<Inner>,
}

struct Inner {
    options: crate::EtcdOptions,
    /// For connecting and for the read.
    timeout: Duration,
    client: Mutex<Option<etcd_client::Client>>,
}

impl std::fmt::Debug for EtcdHealthCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdHealthCheck")
            .field("endpoints", &self.inner.options.etcd_servers)
            .finish_non_exhaustive()
    }
}

impl EtcdHealthCheck {
    /// The check of the etcd `options` name, with their TLS read again on every connect.
    pub fn new(options: crate::EtcdOptions, timeout: Duration) -> Self {
        EtcdHealthCheck {
            inner: Arc::new(Inner {
                options,
                timeout,
                client: Mutex::new(None),
            }),
        }
    }

    /// `Err` says why etcd is not healthy.
    pub fn check(&self) -> BoxFuture<'static, Result<(), String>> {
        let inner = self.inner.clone();
        Box::pin(async move { inner.probe().await })
    }
}

impl Inner {
    async fn probe(&self) -> Result<(), String> {
        let mut guard = self.client.lock().await;
        if guard.is_none() {
            let mut options = etcd_client::ConnectOptions::new().with_connect_timeout(self.timeout);
            if let Some(tls) = self.options.tls()? {
                options = options.with_tls(tls);
            }
            let client = etcd_client::Client::connect(&self.options.etcd_servers, Some(options))
                .await
                .map_err(|e| e.to_string())?;
            *guard = Some(client);
        }
        let Some(client) = guard.as_mut() else {
            return Err("no etcd client".to_owned());
        };
        // Upstream reads the key "health"; any answer, even an empty one, proves a quorum.
        match tokio::time::timeout(self.timeout, client.get("health", None)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => {
                *guard = None;
                Err(e.to_string())
            }
            Err(_) => Err(format!("etcd did not answer within {:?}", self.timeout)),
        }
    }
}
