//! What a client of a server outside the role trusts and presents, as client-go's
//! `rest.TLSClientConfig` holds it (a kubeconfig cluster's and user's TLS fields, a
//! webhook's `caBundle`, an APIService's `caBundle` and `insecureSkipTLSVerify`, the
//! kubelet client flags), and the rustls config built from it. kas-webhook's and
//! kas-proxy's clients both build theirs here.

use rustls::RootCertStore;

use crate::{Error, Result};

/// What a client trusts and presents.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TlsConfig {
    /// PEM certificates of the authorities to trust; `None`: the system's roots, as Go.
    pub ca_data: Option<Vec<u8>>,
    /// Go's `InsecureSkipVerify` (kubeconfig's `insecure-skip-tls-verify`).
    pub insecure: bool,
    /// PEM client certificate and key to present.
    pub client_cert: Option<(Vec<u8>, Vec<u8>)>,
    /// The name to verify the server's certificate against instead of the URL's host
    /// (kubeconfig's `tls-server-name`; the aggregator dials an endpoint's IP and verifies
    /// `<service>.<namespace>.svc`).
    pub server_name: Option<String>,
}

impl TlsConfig {
    /// The rustls config: the trusted roots (the bundle, else the system's unless
    /// insecure), the client pair when given, Go's `InsecureSkipVerify` verifier when
    /// insecure, and `alpn` offered. `server_name` is the caller's to apply per connection.
    pub fn client_config(&self, alpn: Vec<Vec<u8>>) -> Result<rustls::ClientConfig> {
        let mut roots = RootCertStore::empty();
        match &self.ca_data {
            Some(pem) => {
                for cert in crate::certs_from_pem(pem, "certificate authority")? {
                    roots.add(cert).map_err(|error| Error::Invalid {
                        what: "certificate authority",
                        error,
                    })?;
                }
            }
            None if !self.insecure => {
                let native = rustls_native_certs::load_native_certs();
                roots.add_parsable_certificates(native.certs);
            }
            None => {}
        }
        let builder = rustls::ClientConfig::builder_with_provider(crate::provider())
            .with_safe_default_protocol_versions()?
            .with_root_certificates(roots);
        let mut config = match &self.client_cert {
            Some((cert, key)) => builder
                .with_client_auth_cert(
                    crate::certs_from_pem(cert, "client certificate")?,
                    crate::key_from_pem(key, "client key")?,
                )
                .map_err(|error| Error::Invalid {
                    what: "client certificate",
                    error,
                })?,
            None => builder.with_no_client_auth(),
        };
        if self.insecure {
            config
                .dangerous()
                .set_certificate_verifier(crate::InsecureVerifier::new());
        }
        config.alpn_protocols = alpn;
        Ok(config)
    }
}

/// A rustls failure in Go's `crypto/tls` and `crypto/x509` words, as a Go client reports
/// it (`tls: failed to verify certificate: x509: certificate signed by unknown authority`);
/// `host` is the name the certificate was checked against.
pub fn go_tls_error(err: &rustls::Error, host: &str) -> String {
    use rustls::CertificateError;
    match err {
        rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer) => {
            "tls: failed to verify certificate: x509: certificate signed by unknown authority"
                .to_owned()
        }
        rustls::Error::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        ) => {
            format!("tls: failed to verify certificate: x509: certificate is not valid for {host}")
        }
        rustls::Error::InvalidCertificate(
            CertificateError::Expired | CertificateError::ExpiredContext { .. },
        ) => "tls: failed to verify certificate: x509: certificate has expired or is not yet valid"
            .to_owned(),
        other => format!("tls: {other}"),
    }
}
