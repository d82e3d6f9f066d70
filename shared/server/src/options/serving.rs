//! `--secure-port`, `--bind-address`, `--tls-cert-file`, `--tls-private-key-file`, `--cert-dir`.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use clap::Args;

use crate::config::Config;
use crate::{Error, Result};

#[derive(Args, Clone, Debug)]
pub struct SecureServingOptions {
    /// The port on which to serve HTTPS with authentication and authorization.
    #[arg(long, default_value_t = 6443)]
    pub secure_port: u16,
    /// The IP address on which to listen for the --secure-port port.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::UNSPECIFIED))]
    pub bind_address: IpAddr,
    /// File containing the default x509 certificate for HTTPS (CA cert, if any,
    /// concatenated after server cert).
    #[arg(long)]
    pub tls_cert_file: Option<PathBuf>,
    /// File containing the default x509 private key matching --tls-cert-file.
    #[arg(long)]
    pub tls_private_key_file: Option<PathBuf>,
    /// The directory where the TLS certs are located. If --tls-cert-file and
    /// --tls-private-key-file are provided, this flag will be ignored.
    #[arg(long, default_value = "/var/run/kubernetes")]
    pub cert_dir: PathBuf,
}

impl SecureServingOptions {
    pub fn validate(&self) -> Vec<String> {
        let mut errs = Vec::new();
        if self.tls_cert_file.is_some() != self.tls_private_key_file.is_some() {
            errs.push(
                "--tls-cert-file and --tls-private-key-file must be given together".to_owned(),
            );
        }
        errs
    }

    /// Binds the listener now, as upstream does, so a port conflict fails at start-up.
    pub fn apply_to(&self, config: &mut Config, client_ca_files: &[PathBuf]) -> Result<()> {
        let (cert, key) = match (&self.tls_cert_file, &self.tls_private_key_file) {
            (Some(cert), Some(key)) => (cert.clone(), key.clone()),
            _ => kas_tls::ensure_self_signed(&self.cert_dir, &[])?,
        };
        let cas: Vec<&std::path::Path> = client_ca_files.iter().map(PathBuf::as_path).collect();
        config.tls = Some(std::sync::Arc::new(kas_tls::server_config(
            &cert, &key, &cas,
        )?));
        let addr = SocketAddr::new(self.bind_address, self.secure_port);
        let listener =
            std::net::TcpListener::bind(addr).map_err(|source| Error::Bind { addr, source })?;
        listener
            .set_nonblocking(true)
            .map_err(|source| Error::Bind { addr, source })?;
        config.listener = Some(listener);
        Ok(())
    }
}
