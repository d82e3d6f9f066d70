//! Upstream's etcd flags that this crate honours.

use std::time::Duration;

use kas_storage::{Error, Result};

/// `--etcd-servers`, `--etcd-prefix`, `--etcd-compaction-interval`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EtcdOptions {
    /// Client URLs of the etcd members.
    pub servers: Vec<String>,
    /// Prepended to every key (upstream default `/registry`).
    pub prefix: String,
    /// How often the compactor runs; zero disables it (upstream default 5m).
    pub compaction_interval: Duration,
}

impl Default for EtcdOptions {
    fn default() -> Self {
        EtcdOptions {
            servers: Vec::new(),
            prefix: "/registry".into(),
            compaction_interval: Duration::from_secs(300),
        }
    }
}

impl EtcdOptions {
    /// Checks what upstream checks: at least one server.
    pub fn validate(&self) -> Result<()> {
        if self.servers.is_empty() {
            return Err(Error::BadRequest("--etcd-servers must be specified".into()));
        }
        Ok(())
    }

    /// Connects a client to `servers`.
    pub async fn connect(&self) -> Result<etcd_client::Client> {
        self.validate()?;
        etcd_client::Client::connect(&self.servers, None)
            .await
            .map_err(|e| crate::errors::from_etcd(&self.servers.join(","), e))
    }
}
