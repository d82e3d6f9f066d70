//! The front-proxy client certificate (`--proxy-client-cert-file`,
//! `--proxy-client-key-file`), reloaded as upstream's `aggregator-proxy-cert`
//! (dynamiccertificates' `DynamicCertKeyPairContent`): read and checked at start, where a
//! bad pair stops the role; then read again every second (upstream watches the files and
//! re-reads them every minute), and a changed pair that is a valid certificate with its
//! key replaces the one the aggregator presents. A pair that does not load while running
//! is logged and the last good one kept, as upstream's.

use std::path::{Path, PathBuf};
use std::time::Duration;

use kas_delegate::DelegationOptions;
use kas_tls::TlsConfig;

use crate::backend::{Backends, CertKey};

/// The post-start hook that starts the reloading, upstream's name. Registered only with
/// both flags set, as upstream's.
pub const RELOAD_HOOK: &str = "aggregator-reload-proxy-client-cert";

/// How often the files are read again.
pub const RELOAD_INTERVAL: Duration = Duration::from_secs(1);

#[derive(Clone, Debug)]
pub struct ProxyCertFiles {
    cert: PathBuf,
    key: PathBuf,
}

impl ProxyCertFiles {
    /// The pair of files, when both flags are set.
    pub fn from_options(delegation: &DelegationOptions) -> Option<ProxyCertFiles> {
        let cert = delegation.proxy_client_cert_file.clone()?;
        let key = delegation.proxy_client_key_file.clone()?;
        Some(ProxyCertFiles { cert, key })
    }

    pub fn new(cert: PathBuf, key: PathBuf) -> ProxyCertFiles {
        ProxyCertFiles { cert, key }
    }

    /// The pair as PEM, when both files read, are not empty, and hold a certificate with
    /// its key (upstream's `tls.X509KeyPair`).
    pub fn load(&self) -> Result<CertKey, String> {
        let pair = self.read()?;
        self.check(&pair)?;
        Ok(pair)
    }

    /// Both files, neither empty.
    fn read(&self) -> Result<CertKey, String> {
        let read = |p: &Path| match std::fs::read(p) {
            Ok(b) if b.is_empty() => Err(format!("missing content for {}", p.display())),
            Ok(b) => Ok(b),
            Err(e) => Err(format!("{}: {e}", p.display())),
        };
        Ok((read(&self.cert)?, read(&self.key)?))
    }

    /// Whether `pair` is a certificate with its key.
    fn check(&self, pair: &CertKey) -> Result<(), String> {
        let tls = TlsConfig {
            client_cert: Some(pair.clone()),
            insecure: true,
            ..TlsConfig::default()
        };
        match tls.client_config(Vec::new()) {
            Ok(_) => Ok(()),
            Err(e) => Err(format!(
                "aggregator-proxy-cert::{}::{}: {e}",
                self.cert.display(),
                self.key.display()
            )),
        }
    }

    /// Reads the files every `every` and hands a changed valid pair to `backends`.
    pub fn reload_into(self, backends: Backends, every: Duration) {
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut last_error = None;
            // What the files held last time: unchanged bytes are not parsed again.
            let mut last_read = None;
            loop {
                tick.tick().await;
                let read = self.read();
                if let Ok(pair) = &read {
                    if last_read.as_ref() == Some(pair) {
                        continue;
                    }
                    last_read = Some(pair.clone());
                }
                let loaded = read.and_then(|pair| self.check(&pair).map(|()| pair));
                match loaded {
                    Ok(pair) => {
                        last_error = None;
                        if backends.set_proxy_client_cert(pair) {
                            tracing::info!(cert = %self.cert.display(), "loaded a new front-proxy client certificate");
                        }
                    }
                    // Once per distinct failure: a file being rewritten fails for a moment.
                    Err(e) if last_error.as_ref() != Some(&e) => {
                        tracing::error!(error = %e, "reloading the front-proxy client certificate; keeping the last one");
                        last_error = Some(e);
                    }
                    Err(_) => {}
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::services::ServiceIndex;
    use kas_proxy::resolve::Routing;
    use std::sync::Arc;

    fn pair() -> CertKey {
        let key = rcgen::KeyPair::generate().unwrap();
        let params = rcgen::CertificateParams::new(vec!["front-proxy-client".into()]).unwrap();
        let cert = params.self_signed(&key).unwrap();
        (cert.pem().into_bytes(), key.serialize_pem().into_bytes())
    }

    fn write(files: &ProxyCertFiles, cert: &[u8], key: &[u8]) {
        std::fs::write(&files.cert, cert).unwrap();
        std::fs::write(&files.key, key).unwrap();
    }

    #[test]
    fn a_pair_loads_only_as_a_certificate_with_its_key() {
        let dir = tempfile::tempdir().unwrap();
        let files = ProxyCertFiles::new(dir.path().join("c.crt"), dir.path().join("c.key"));
        assert!(files.load().unwrap_err().contains("c.crt"));
        let (a, b) = (pair(), pair());
        write(&files, &a.0, &a.1);
        assert_eq!(files.load().unwrap(), a);
        write(&files, &a.0, &b.1);
        let err = files.load().unwrap_err();
        assert!(err.starts_with("aggregator-proxy-cert::"), "{err}");
        write(&files, &a.0, b"");
        assert!(files.load().unwrap_err().starts_with("missing content for"));
    }

    #[tokio::test]
    async fn a_changed_valid_pair_replaces_the_presented_one_and_a_bad_one_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let files = ProxyCertFiles::new(dir.path().join("c.crt"), dir.path().join("c.key"));
        let (a, b) = (pair(), pair());
        write(&files, &a.0, &a.1);
        let services = Arc::new(ServiceIndex::new());
        let backends = Backends::new(services, Routing::ClusterIp, Some(files.load().unwrap()));
        let mut changes = backends.proxy_client_cert_changes();
        files
            .clone()
            .reload_into(backends.clone(), Duration::from_millis(10));
        // Half rotated: b's certificate with a's key is not a pair; a stays.
        std::fs::write(&files.cert, &b.0).unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(changes.borrow_and_update().as_ref(), Some(&a));
        std::fs::write(&files.key, &b.1).unwrap();
        tokio::time::timeout(Duration::from_secs(5), changes.changed())
            .await
            .expect("the new pair within 5 s")
            .unwrap();
        assert_eq!(changes.borrow().as_ref(), Some(&b));
        assert!(
            !backends.set_proxy_client_cert(b),
            "the same pair is no change"
        );
    }
}
