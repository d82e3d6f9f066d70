//! kas-tls: PEM loading and rustls configuration shared by the serving side (kas-server) and
//! the delegating side (kas-delegate): one crypto provider (aws-lc-rs), upstream's ALPN
//! (h2, http/1.1), and the self-signed serving pair upstream writes to `--cert-dir`.
//!
//! No sockets here: only certificates, keys and configs.

mod client;
mod insecure;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::RootCertStore;
use rustls::crypto::CryptoProvider;
use rustls::server::WebPkiClientVerifier;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

pub use client::{TlsConfig, go_tls_error};
pub use insecure::InsecureVerifier;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("reading {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: rustls_pki_types::pem::Error,
    },
    #[error("{what}: {source}")]
    Pem {
        what: &'static str,
        #[source]
        source: rustls_pki_types::pem::Error,
    },
    #[error("{path} holds no {what}")]
    Empty { path: PathBuf, what: &'static str },
    #[error("building the TLS configuration")]
    Rustls(#[from] rustls::Error),
    /// The text holds the cause: a client's configuration errors are reported whole.
    #[error("{what}: {error}")]
    Invalid {
        what: &'static str,
        error: rustls::Error,
    },
    #[error("building the client certificate verifier")]
    Verifier(#[from] rustls::server::VerifierBuilderError),
    #[error("generating a self-signed certificate")]
    Generate(#[from] rcgen::Error),
    #[error("writing {path}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The one crypto provider every TLS config in the project uses.
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

/// Every certificate in a PEM file, in order.
pub fn load_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>> {
    let read_err = |source| Error::Read {
        path: path.to_owned(),
        source,
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(read_err)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(read_err)?;
    if certs.is_empty() {
        return Err(Error::Empty {
            path: path.to_owned(),
            what: "certificate",
        });
    }
    Ok(certs)
}

/// The first private key in a PEM file.
pub fn load_key(path: &Path) -> Result<PrivateKeyDer<'static>> {
    PrivateKeyDer::from_pem_file(path).map_err(|source| Error::Read {
        path: path.to_owned(),
        source,
    })
}

/// Every certificate in PEM data (a kubeconfig's `certificate-authority-data`, a
/// webhook's `caBundle`), in order; `what` names the data in errors.
pub fn certs_from_pem(data: &[u8], what: &'static str) -> Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_slice_iter(data)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|source| Error::Pem { what, source })?;
    if certs.is_empty() {
        return Err(Error::Pem {
            what,
            source: rustls_pki_types::pem::Error::NoItemsFound,
        });
    }
    Ok(certs)
}

/// The first private key in PEM data.
pub fn key_from_pem(data: &[u8], what: &'static str) -> Result<PrivateKeyDer<'static>> {
    PrivateKeyDer::from_pem_slice(data).map_err(|source| Error::Pem { what, source })
}

/// A root store holding every certificate of the given PEM bundles.
pub fn root_store(bundles: &[&Path]) -> Result<RootCertStore> {
    let mut roots = RootCertStore::empty();
    for path in bundles {
        for cert in load_certs(path)? {
            roots.add(cert)?;
        }
    }
    Ok(roots)
}

/// ALPN protocols offered and accepted, in upstream's order of preference.
pub fn alpn() -> Vec<Vec<u8>> {
    vec![b"h2".to_vec(), b"http/1.1".to_vec()]
}

/// A serving config. With client CA bundles, client certificates are requested and, when
/// given, verified against their union (Go's `VerifyClientCertIfGiven`); each authenticator
/// then checks the chain against its own CA.
pub fn server_config(
    cert_file: &Path,
    key_file: &Path,
    client_ca_files: &[&Path],
) -> Result<rustls::ServerConfig> {
    let certs = load_certs(cert_file)?;
    let key = load_key(key_file)?;
    let builder = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?;
    let builder = if client_ca_files.is_empty() {
        builder.with_no_client_auth()
    } else {
        let roots = Arc::new(root_store(client_ca_files)?);
        let verifier = WebPkiClientVerifier::builder_with_provider(roots, provider())
            .allow_unauthenticated()
            .build()?;
        builder.with_client_cert_verifier(verifier)
    };
    let mut config = builder.with_single_cert(certs, key)?;
    config.alpn_protocols = alpn();
    Ok(config)
}

/// A client config that trusts `ca_file` and, when given, presents a client certificate.
pub fn client_config(
    ca_file: Option<&Path>,
    client_cert: Option<(&Path, &Path)>,
    alpn: Vec<Vec<u8>>,
) -> Result<rustls::ClientConfig> {
    let roots = match ca_file {
        Some(path) => root_store(&[path])?,
        None => RootCertStore::empty(),
    };
    let builder = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots);
    let mut config = match client_cert {
        Some((cert, key)) => builder.with_client_auth_cert(load_certs(cert)?, load_key(key)?)?,
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = alpn;
    Ok(config)
}

/// Upstream's `--cert-dir` behaviour: when no serving pair is given, use
/// `<cert_dir>/apiserver.crt` and `apiserver.key`, generating a self-signed pair for
/// localhost and the loopback addresses if they do not exist yet.
pub fn ensure_self_signed(cert_dir: &Path, extra_names: &[String]) -> Result<(PathBuf, PathBuf)> {
    let cert_path = cert_dir.join("apiserver.crt");
    let key_path = cert_dir.join("apiserver.key");
    if cert_path.exists() && key_path.exists() {
        return Ok((cert_path, key_path));
    }
    let mut names = vec![
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        "::1".to_owned(),
    ];
    names.extend(extra_names.iter().cloned());
    let key = rcgen::KeyPair::generate()?;
    let mut params = rcgen::CertificateParams::new(names)?;
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "localhost@kas");
    let cert = params.self_signed(&key)?;
    let write = |path: &Path, text: String| {
        std::fs::create_dir_all(cert_dir)
            .and_then(|()| std::fs::write(path, text))
            .map_err(|source| Error::Write {
                path: path.to_owned(),
                source,
            })
    };
    write(&cert_path, cert.pem())?;
    write(&key_path, key.serialize_pem())?;
    tracing::info!(cert = %cert_path.display(), "generated self-signed serving certificate");
    Ok((cert_path, key_path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn self_signed_pair_is_generated_once_and_serves() {
        let dir = tempfile::tempdir().unwrap();
        let (cert, key) = ensure_self_signed(dir.path(), &[]).unwrap();
        let first = std::fs::read(&cert).unwrap();
        let again = ensure_self_signed(dir.path(), &[]).unwrap();
        assert_eq!(again, (cert.clone(), key.clone()));
        assert_eq!(
            std::fs::read(&cert).unwrap(),
            first,
            "an existing pair is kept"
        );
        let config = server_config(&cert, &key, &[&cert]).unwrap();
        assert_eq!(config.alpn_protocols, alpn());
    }

    #[test]
    fn missing_and_empty_files_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "").unwrap();
        assert!(matches!(load_certs(&empty), Err(Error::Empty { .. })));
        assert!(load_certs(&dir.path().join("missing.pem")).is_err());
        assert!(load_key(&empty).is_err());
    }
}
