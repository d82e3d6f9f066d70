//! `--etcd-servers`, `--etcd-prefix` and etcd's TLS flags. Storage itself comes with the
//! storage crate; here etcd is what the `etcd` readiness check watches.

use std::path::PathBuf;

use clap::Args;

use crate::config::Config;

#[derive(Args, Clone, Debug)]
pub struct EtcdOptions {
    /// List of etcd servers to connect with (scheme://ip:port), comma separated.
    #[arg(long, value_delimiter = ',')]
    pub etcd_servers: Vec<String>,
    /// The prefix to prepend to all resource paths in etcd.
    #[arg(long, default_value = "/registry")]
    pub etcd_prefix: String,
    /// The interval of compaction requests. If 0, the compaction request from apiserver is
    /// disabled.
    #[arg(long, default_value = "5m0s")]
    pub etcd_compaction_interval: super::GoDuration,
    /// SSL Certificate Authority file used to secure etcd communication.
    #[arg(long)]
    pub etcd_cafile: Option<PathBuf>,
    /// SSL certification file used to secure etcd communication.
    #[arg(long)]
    pub etcd_certfile: Option<PathBuf>,
    /// SSL key file used to secure etcd communication.
    #[arg(long)]
    pub etcd_keyfile: Option<PathBuf>,
}

impl EtcdOptions {
    pub fn validate(&self) -> Vec<String> {
        let mut errs = Vec::new();
        if self.etcd_certfile.is_some() != self.etcd_keyfile.is_some() {
            errs.push("--etcd-certfile and --etcd-keyfile must be given together".to_owned());
        }
        if self.etcd_cafile.is_some() || self.etcd_certfile.is_some() {
            errs.push(
                "etcd over TLS (--etcd-cafile, --etcd-certfile) is not supported yet".to_owned(),
            );
        }
        errs
    }

    pub fn apply_to(&self, config: &mut Config) {
        if !self.etcd_servers.is_empty() {
            config
                .health
                .add_readyz(crate::healthz::EtcdCheck::new(self.etcd_servers.clone()));
        }
    }
}
