//! Client-certificate authentication, after upstream's `request/x509`.
//!
//! The TLS layer accepts a client certificate signed by any configured CA (client CA and
//! front-proxy CA alike), so each authenticator verifies the chain again against its own
//! bundle before trusting anything in it.

use std::path::Path;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use rustls::RootCertStore;
use rustls::server::WebPkiClientVerifier;
use rustls::server::danger::ClientCertVerifier;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, UnixTime};
use x509_parser::prelude::{FromDer, ParsedExtension, X509Certificate};

use super::{AuthRequest, Authenticator, PeerCertificates, Response};
use crate::user::CREDENTIAL_ID_KEY;
use crate::{Error, Result, UserInfo};

/// A CA bundle that verifies client certificate chains (upstream's `x509.VerifyOptions`
/// with `ExtKeyUsageClientAuth`).
#[derive(Clone)]
pub(crate) struct CaVerifier {
    verifier: Arc<dyn ClientCertVerifier>,
}

impl std::fmt::Debug for CaVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CaVerifier").finish_non_exhaustive()
    }
}

impl CaVerifier {
    pub(crate) fn from_file(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|source| Error::Io {
            path: path.display().to_string(),
            source,
        })?;
        Self::from_pem(&bytes, &path.display().to_string())
    }

    /// Like upstream's `cert.ParseCertsPEM`: every CERTIFICATE block must parse, and there
    /// must be at least one.
    pub(crate) fn from_pem(pem: &[u8], origin: &str) -> Result<Self> {
        let config_err = |message: String| Error::Config {
            what: "client CA bundle",
            path: origin.to_owned(),
            message,
        };
        let mut roots = RootCertStore::empty();
        for der in CertificateDer::pem_slice_iter(pem) {
            let der = der.map_err(|e| config_err(format!("parsing PEM: {e}")))?;
            roots
                .add(der)
                .map_err(|e| config_err(format!("parsing certificate: {e}")))?;
        }
        if roots.is_empty() {
            return Err(config_err(
                "data does not contain any valid RSA or ECDSA certificates".to_owned(),
            ));
        }
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .map_err(|e| config_err(e.to_string()))?;
        Ok(CaVerifier { verifier })
    }

    /// Verifies the leaf of `peer` (with the rest of the chain as intermediates) and returns
    /// it. `Ok(None)` when the connection carried no client certificate; the error carries
    /// upstream's wording for a chain that does not verify.
    pub(crate) fn verify<'c>(
        &self,
        peer: Option<&'c PeerCertificates>,
    ) -> Result<Option<&'c CertificateDer<'static>>, String> {
        let Some((leaf, intermediates)) = peer.and_then(|p| p.chain().split_first()) else {
            return Ok(None);
        };
        self.verifier
            .verify_client_cert(leaf, intermediates, UnixTime::now())
            .map_err(|e| go_verify_message(&e))?;
        Ok(Some(leaf))
    }
}

/// The messages Go's `x509.Certificate.Verify` gives for the same failures, so logs read
/// as upstream's do.
fn go_verify_message(err: &rustls::Error) -> String {
    use rustls::CertificateError as C;
    match err {
        rustls::Error::InvalidCertificate(c) => match c {
            C::UnknownIssuer | C::BadSignature => {
                "x509: certificate signed by unknown authority".to_owned()
            }
            C::Expired
            | C::ExpiredContext { .. }
            | C::NotValidYet
            | C::NotValidYetContext { .. } => {
                "x509: certificate has expired or is not yet valid".to_owned()
            }
            C::InvalidPurpose | C::InvalidPurposeContext { .. } => {
                "x509: certificate specifies an incompatible key usage".to_owned()
            }
            C::BadEncoding => "x509: malformed certificate".to_owned(),
            other => format!("x509: {other:?}"),
        },
        other => format!("x509: {other}"),
    }
}

/// The parts of a certificate authenticators look at, as Go's `x509.Certificate` has them.
pub(crate) struct CertInfo {
    /// The last CommonName attribute of the subject (Go's `pkix.Name` keeps the last).
    pub(crate) common_name: String,
    pub(crate) organizations: Vec<String>,
    serial: String,
    subject_key_id: Vec<u8>,
    authority_key_id: Vec<u8>,
}

impl CertInfo {
    pub(crate) fn parse(der: &CertificateDer<'_>) -> Result<Self, String> {
        let (_, cert) = X509Certificate::from_der(der.as_ref())
            .map_err(|e| format!("x509: malformed certificate: {e}"))?;
        let subject = cert.subject();
        // Go keeps only string-typed attribute values; so do we.
        let common_name = subject
            .iter_common_name()
            .filter_map(|a| a.as_str().ok())
            .last()
            .unwrap_or_default()
            .to_owned();
        let organizations = subject
            .iter_organization()
            .filter_map(|a| a.as_str().ok().map(str::to_owned))
            .collect();
        let mut info = CertInfo {
            common_name,
            organizations,
            serial: cert.tbs_certificate.serial.to_string(),
            subject_key_id: Vec::new(),
            authority_key_id: Vec::new(),
        };
        for ext in cert.extensions() {
            match ext.parsed_extension() {
                ParsedExtension::SubjectKeyIdentifier(kid) => info.subject_key_id = kid.0.to_vec(),
                ParsedExtension::AuthorityKeyIdentifier(aki) => {
                    if let Some(kid) = &aki.key_identifier {
                        info.authority_key_id = kid.0.to_vec();
                    }
                }
                _ => {}
            }
        }
        Ok(info)
    }

    /// Upstream's `certificateIdentifier`, used in verification errors.
    pub(crate) fn identifier(&self) -> String {
        format!(
            "SN={}, SKID={}, AKID={}",
            self.serial,
            column_separated_hex(&self.subject_key_id),
            column_separated_hex(&self.authority_key_id)
        )
    }
}

fn column_separated_hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// Upstream's `x509.Authenticator` with `CommonNameUserConversion`.
#[derive(Clone, Debug)]
pub struct X509Authenticator {
    ca: CaVerifier,
    memo_key: usize,
}

impl X509Authenticator {
    /// Reads a PEM bundle of CA certificates (`--client-ca-file`).
    pub fn from_ca_file(path: impl AsRef<Path>) -> Result<Self> {
        Ok(X509Authenticator {
            memo_key: super::peer::next_memo_key(),
            ca: CaVerifier::from_file(path.as_ref())?,
        })
    }

    /// A PEM bundle already in memory.
    pub fn from_pem(pem: &[u8]) -> Result<Self> {
        Ok(X509Authenticator {
            memo_key: super::peer::next_memo_key(),
            ca: CaVerifier::from_pem(pem, "<in memory>")?,
        })
    }

    /// The answer for a connection is the same for all its requests: computed once.
    fn authenticate_sync(&self, req: &AuthRequest<'_>) -> Result<Option<Response>> {
        let Some(peer) = req.peer_certificates else {
            return Ok(None);
        };
        peer.memoize(self.memo_key, || {
            self.authenticate_chain(req).map_err(|e| match e {
                Error::InvalidCredentials(message) => message,
                other => other.to_string(),
            })
        })
        .map_err(Error::InvalidCredentials)
    }

    fn authenticate_chain(&self, req: &AuthRequest<'_>) -> Result<Option<Response>> {
        let leaf = match self.ca.verify(req.peer_certificates) {
            Ok(Some(leaf)) => leaf,
            Ok(None) => return Ok(None),
            Err(cause) => {
                let id = req
                    .peer_certificates
                    .and_then(|p| p.chain().first())
                    .and_then(|leaf| CertInfo::parse(leaf).ok())
                    .map(|info| info.identifier())
                    .unwrap_or_default();
                return Err(Error::InvalidCredentials(format!(
                    "verifying certificate {id} failed: {cause}"
                )));
            }
        };
        let info = CertInfo::parse(leaf).map_err(Error::InvalidCredentials)?;
        Ok(common_name_user(leaf, info))
    }
}

/// Upstream's `CommonNameUserConversion`: no CommonName, no opinion. The UID stays empty:
/// parsing it from the subject is behind the alpha `AllowParsingUserUIDFromCertAuth` gate,
/// off by default in 1.33.
fn common_name_user(leaf: &CertificateDer<'_>, info: CertInfo) -> Option<Response> {
    if info.common_name.is_empty() {
        return None;
    }
    let credential_id = format!("X509SHA256={}", sha256_hex(leaf.as_ref()));
    Some(Response {
        user: UserInfo {
            name: info.common_name,
            uid: String::new(),
            groups: info.organizations,
            extra: [(CREDENTIAL_ID_KEY.to_owned(), vec![credential_id])].into(),
        },
        consumed_headers: Vec::new(),
        proxied: false,
        audiences: Vec::new(),
        notes: Default::default(),
    })
}

/// SHA-256 through the TLS crypto provider already linked, rather than another crate.
fn sha256_hex(data: &[u8]) -> String {
    let suite = rustls::crypto::aws_lc_rs::cipher_suite::TLS13_AES_128_GCM_SHA256;
    let Some(tls13) = suite.tls13() else {
        unreachable!("TLS13_AES_128_GCM_SHA256 is a TLS 1.3 suite")
    };
    tls13
        .common
        .hash_provider
        .hash(data)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Authenticator for X509Authenticator {
    fn authenticate<'a>(
        &'a self,
        req: &'a AuthRequest<'a>,
    ) -> BoxFuture<'a, Result<Option<Response>>> {
        Box::pin(std::future::ready(self.authenticate_sync(req)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authentication::testing::{Pki, request};

    #[tokio::test]
    async fn no_peer_certificate_is_no_opinion() {
        let pki = Pki::new();
        let auth = X509Authenticator::from_pem(pki.ca_pem.as_bytes()).unwrap();
        let headers = http::HeaderMap::new();
        let req = request("/api", &headers, None);
        assert_eq!(auth.authenticate(&req).await.unwrap(), None);
    }

    #[tokio::test]
    async fn verified_certificate_yields_cn_and_organizations() {
        let pki = Pki::new();
        let auth = X509Authenticator::from_pem(pki.ca_pem.as_bytes()).unwrap();
        let chain = pki.client("alice", &["dev", "ops"]);
        let headers = http::HeaderMap::new();
        let req = request("/api", &headers, Some(&chain));
        let resp = auth.authenticate(&req).await.unwrap().unwrap();
        assert_eq!(resp.user.name, "alice");
        assert_eq!(resp.user.groups, vec!["dev".to_owned(), "ops".to_owned()]);
        assert_eq!(resp.user.uid, "");
        let id = &resp.user.extra[CREDENTIAL_ID_KEY];
        assert_eq!(id.len(), 1);
        assert!(id[0].starts_with("X509SHA256="));
        assert_eq!(id[0].len(), "X509SHA256=".len() + 64);
        assert!(resp.consumed_headers.is_empty());
    }

    #[tokio::test]
    async fn certificate_from_another_ca_is_an_error() {
        let pki = Pki::new();
        let other = Pki::new();
        let auth = X509Authenticator::from_pem(pki.ca_pem.as_bytes()).unwrap();
        let chain = other.client("mallory", &[]);
        let headers = http::HeaderMap::new();
        let req = request("/api", &headers, Some(&chain));
        let err = auth.authenticate(&req).await.unwrap_err().to_string();
        assert!(err.starts_with("verifying certificate SN="), "{err}");
        assert!(
            err.ends_with("failed: x509: certificate signed by unknown authority"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn server_only_certificate_is_an_error() {
        let pki = Pki::new();
        let auth = X509Authenticator::from_pem(pki.ca_pem.as_bytes()).unwrap();
        let chain = pki.server_only("alice");
        let headers = http::HeaderMap::new();
        let req = request("/api", &headers, Some(&chain));
        let err = auth.authenticate(&req).await.unwrap_err().to_string();
        assert!(err.ends_with("incompatible key usage"), "{err}");
    }

    #[tokio::test]
    async fn chain_through_sent_intermediate_verifies() {
        let root = Pki::new();
        let auth = X509Authenticator::from_pem(root.ca_pem.as_bytes()).unwrap();
        let chain = root.intermediate().client("ivan", &[]);
        let headers = http::HeaderMap::new();
        let req = request("/", &headers, Some(&chain));
        assert_eq!(
            auth.authenticate(&req).await.unwrap().unwrap().user.name,
            "ivan"
        );
        // Without the intermediate the leaf cannot be tied to the root.
        let chain = PeerCertificates::new(chain.chain()[..1].to_vec());
        let req = request("/", &headers, Some(&chain));
        assert!(auth.authenticate(&req).await.is_err());
    }

    #[tokio::test]
    async fn certificate_without_common_name_is_no_opinion() {
        let pki = Pki::new();
        let auth = X509Authenticator::from_pem(pki.ca_pem.as_bytes()).unwrap();
        let chain = pki.client("", &["dev"]);
        let headers = http::HeaderMap::new();
        let req = request("/api", &headers, Some(&chain));
        assert_eq!(auth.authenticate(&req).await.unwrap(), None);
    }

    #[tokio::test]
    async fn bundle_with_two_cas_accepts_both() {
        let a = Pki::new();
        let b = Pki::new();
        let bundle = format!("{}{}", a.ca_pem, b.ca_pem);
        let auth = X509Authenticator::from_pem(bundle.as_bytes()).unwrap();
        let headers = http::HeaderMap::new();
        for (pki, name) in [(&a, "from-a"), (&b, "from-b")] {
            let chain = pki.client(name, &[]);
            let req = request("/", &headers, Some(&chain));
            let resp = auth.authenticate(&req).await.unwrap().unwrap();
            assert_eq!(resp.user.name, name);
        }
    }

    #[test]
    fn bundle_without_certificates_is_rejected() {
        let err = X509Authenticator::from_pem(b"not pem at all").unwrap_err();
        assert!(
            err.to_string().contains("does not contain any valid"),
            "{err}"
        );
    }

    #[test]
    fn missing_file_is_an_io_error() {
        let err = X509Authenticator::from_ca_file("/nonexistent/ca.crt").unwrap_err();
        assert!(matches!(err, Error::Io { .. }));
    }

    #[test]
    fn identifier_matches_upstream_format() {
        assert_eq!(column_separated_hex(&[0xab, 0x01, 0xff]), "AB:01:FF");
        assert_eq!(column_separated_hex(&[]), "");
    }

    #[test]
    fn sha256_is_correct() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
