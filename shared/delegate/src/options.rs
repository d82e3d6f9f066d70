//! `--delegate-endpoints`, `--delegate-ca-file`, `--proxy-client-cert-file`,
//! `--proxy-client-key-file`.

use std::path::PathBuf;

use clap::Args;

use crate::{Delegate, Result};

#[derive(Args, Clone, Debug)]
pub struct DelegationOptions {
    /// The next role in the delegation chain: several https URLs (comma separated), or one
    /// URL whose DNS name resolves to every replica (re-resolved periodically).
    #[arg(long, value_delimiter = ',')]
    pub delegate_endpoints: Vec<String>,
    /// CA bundle that verifies the serving certificates of the delegate endpoints.
    #[arg(long)]
    pub delegate_ca_file: Option<PathBuf>,
    /// Client certificate used to prove the identity of this role when it proxies a
    /// request, with the user in the request headers (front-proxy client certificate).
    #[arg(long)]
    pub proxy_client_cert_file: Option<PathBuf>,
    /// Private key for the client certificate in --proxy-client-cert-file.
    #[arg(long)]
    pub proxy_client_key_file: Option<PathBuf>,
}

impl DelegationOptions {
    pub fn validate(&self, required: bool) -> Vec<String> {
        let mut errs = Vec::new();
        if required && self.delegate_endpoints.is_empty() {
            errs.push("--delegate-endpoints is required".to_owned());
        }
        if !self.delegate_endpoints.is_empty() {
            if self.proxy_client_cert_file.is_none() || self.proxy_client_key_file.is_none() {
                errs.push(
                    "--delegate-endpoints requires --proxy-client-cert-file and --proxy-client-key-file"
                        .to_owned(),
                );
            }
            if self.delegate_ca_file.is_none() {
                errs.push("--delegate-endpoints requires --delegate-ca-file".to_owned());
            }
        }
        for url in &self.delegate_endpoints {
            if let Err(e) = crate::pool::parse_endpoint(url) {
                errs.push(e.to_string());
            }
        }
        errs
    }

    /// Builds the delegate and starts watching its endpoints. Needs a tokio runtime.
    pub fn build(&self) -> Result<Delegate> {
        let client_cert = match (&self.proxy_client_cert_file, &self.proxy_client_key_file) {
            (Some(cert), Some(key)) => Some((cert.as_path(), key.as_path())),
            _ => None,
        };
        let tls = kas_tls::client_config(
            self.delegate_ca_file.as_deref(),
            client_cert,
            vec![b"h2".to_vec()],
        )?;
        Delegate::new(&self.delegate_endpoints, tls)
    }
}
