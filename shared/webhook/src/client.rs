//! The HTTPS client. One [`Client`] per configuration (a webhook, an OIDC issuer) keeps its
//! connections, as Go's `http.Transport` does behind the REST client; requests are whole
//! (a body of bytes out, the answer's body read in full, up to [`MAX_RESPONSE_BYTES`]).

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode, Uri};
use http_body_util::{BodyExt, Full, Limited};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use kas_apimachinery::golang::net::{dial_error, url_error};

use crate::{Error, Result};

/// The largest answer read: webhook and discovery answers are small; a server that sends
/// more is cut off rather than held in memory.
pub const MAX_RESPONSE_BYTES: usize = 32 << 20;

/// What a client trusts and presents (a kubeconfig cluster's and user's TLS fields, or a
/// webhook's `caBundle`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsConfig {
    /// PEM certificates of the authorities to trust; `None`: the system's roots, as Go.
    pub ca_data: Option<Vec<u8>>,
    /// Go's `InsecureSkipVerify` (kubeconfig's `insecure-skip-tls-verify`).
    pub insecure: bool,
    /// PEM client certificate and key to present.
    pub client_cert: Option<(Vec<u8>, Vec<u8>)>,
    /// The name to verify the server's certificate against instead of the URL's host
    /// (kubeconfig's `tls-server-name`).
    pub server_name: Option<String>,
}

/// An answer: its status, headers and whole body.
#[derive(Clone, Debug)]
pub struct Response {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

#[derive(Clone)]
pub struct Client {
    inner: HyperClient<HttpsConnector<HttpConnector>, Full<Bytes>>,
    timeout: Duration,
}

impl Client {
    /// A client for `tls`, whose requests fail after `timeout` (Go's `http.Client.Timeout`:
    /// dialing, the handshake, sending and reading the answer).
    pub fn new(tls: &TlsConfig, timeout: Duration) -> Result<Client> {
        let config = rustls_config(tls)?;
        let builder = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(config)
            .https_or_http();
        let builder = match &tls.server_name {
            Some(name) => {
                let name = rustls_pki_types::ServerName::try_from(name.clone())
                    .map_err(|e| Error::Config(format!("tls-server-name {name:?}: {e}")))?;
                builder.with_server_name_resolver(hyper_rustls::FixedServerNameResolver::new(name))
            }
            None => builder,
        };
        let connector = builder.enable_all_versions().build();
        let inner = HyperClient::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(90))
            .build(connector);
        Ok(Client { inner, timeout })
    }

    /// `GET url`.
    pub async fn get(&self, url: &str) -> Result<Response> {
        self.send(Method::GET, url, HeaderMap::new(), Bytes::new())
            .await
    }

    /// `POST url` with a JSON body (`Content-Type` and `Accept` `application/json`), and a
    /// bearer token when given.
    pub async fn post_json(
        &self,
        url: &str,
        body: Vec<u8>,
        bearer: Option<&str>,
    ) -> Result<Response> {
        let mut headers = HeaderMap::new();
        let json = http::HeaderValue::from_static("application/json");
        headers.insert(http::header::CONTENT_TYPE, json.clone());
        headers.insert(http::header::ACCEPT, json);
        if let Some(token) = bearer {
            let value = http::HeaderValue::from_str(&format!("Bearer {token}"))
                .map_err(|_| Error::InvalidRequest("invalid bearer token".to_owned()))?;
            headers.insert(http::header::AUTHORIZATION, value);
        }
        self.send(Method::POST, url, headers, Bytes::from(body))
            .await
    }

    /// Sends a request to an absolute `url` and reads the whole answer. Failures before an
    /// answer are Go's `url.Error` texts; any status is an answer.
    pub async fn send(
        &self,
        method: Method,
        url: &str,
        headers: HeaderMap,
        body: Bytes,
    ) -> Result<Response> {
        let uri: Uri = url
            .parse()
            .map_err(|e| Error::InvalidRequest(format!("parse {url:?}: {e}")))?;
        if uri.host().is_none() {
            return Err(Error::InvalidRequest(url_error(
                method.as_str(),
                url,
                "http: no Host in request URL",
            )));
        }
        let fail = |err: String| Error::Request(url_error(method.as_str(), url, &err));
        let mut request = Request::builder()
            .method(method.clone())
            .uri(uri.clone())
            .body(Full::new(body))
            .map_err(|e| Error::InvalidRequest(e.to_string()))?;
        *request.headers_mut() = headers;
        let exchange = async {
            let response = self
                .inner
                .request(request)
                .await
                .map_err(|e| fail(describe(&e, &uri)))?;
            let (parts, body) = response.into_parts();
            let body = Limited::new(body, MAX_RESPONSE_BYTES)
                .collect()
                .await
                .map_err(|e| fail(e.to_string()))?
                .to_bytes();
            Ok(Response {
                status: parts.status,
                headers: parts.headers,
                body,
            })
        };
        match tokio::time::timeout(self.timeout, exchange).await {
            Ok(answer) => answer,
            Err(_) => Err(fail(
                "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
                    .to_owned(),
            )),
        }
    }
}

fn rustls_config(tls: &TlsConfig) -> Result<rustls::ClientConfig> {
    let config_err = |e: kas_tls::Error| Error::Config(error_chain(&e));
    let mut roots = rustls::RootCertStore::empty();
    match &tls.ca_data {
        Some(pem) => {
            for cert in kas_tls::certs_from_pem(pem, "certificate authority").map_err(config_err)? {
                roots
                    .add(cert)
                    .map_err(|e| Error::Config(format!("certificate authority: {e}")))?;
            }
        }
        None if !tls.insecure => {
            let native = rustls_native_certs::load_native_certs();
            roots.add_parsable_certificates(native.certs);
        }
        None => {}
    }
    let builder = rustls::ClientConfig::builder_with_provider(kas_tls::provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Config(e.to_string()))?
        .with_root_certificates(roots);
    let mut config = match &tls.client_cert {
        Some((cert, key)) => builder
            .with_client_auth_cert(
                kas_tls::certs_from_pem(cert, "client certificate").map_err(config_err)?,
                kas_tls::key_from_pem(key, "client key").map_err(config_err)?,
            )
            .map_err(|e| Error::Config(format!("client certificate: {e}")))?,
        None => builder.with_no_client_auth(),
    };
    if tls.insecure {
        config
            .dangerous()
            .set_certificate_verifier(kas_tls::InsecureVerifier::new());
    }
    Ok(config)
}

/// What went wrong in Go's words: a refused dial as `net.OpError`, an untrusted
/// certificate as `crypto/x509`'s error, else the error's own text.
fn describe(err: &hyper_util::client::legacy::Error, uri: &Uri) -> String {
    let mut io_error = None;
    let mut next: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(err);
    while let Some(e) = next {
        if let Some(tls) = e.downcast_ref::<rustls::Error>() {
            return tls_error(tls, uri);
        }
        next = e.source();
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            io_error.get_or_insert(io);
            // io::Error::new(kind, inner) reports its inner error as its text, not as
            // its source.
            if let Some(inner) = io.get_ref() {
                next = Some(inner as &(dyn std::error::Error + 'static));
            }
        }
    }
    match io_error {
        Some(io) if err.is_connect() => dial_error(&authority(uri), io),
        Some(io) => kas_apimachinery::golang::net::errno(io),
        None => error_chain(err),
    }
}

fn tls_error(err: &rustls::Error, uri: &Uri) -> String {
    use rustls::CertificateError;
    match err {
        rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer) => {
            "tls: failed to verify certificate: x509: certificate signed by unknown authority"
                .to_owned()
        }
        rustls::Error::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        ) => format!(
            "tls: failed to verify certificate: x509: certificate is not valid for {}",
            uri.host().unwrap_or_default()
        ),
        rustls::Error::InvalidCertificate(
            CertificateError::Expired | CertificateError::ExpiredContext { .. },
        ) => "tls: failed to verify certificate: x509: certificate has expired or is not yet valid"
            .to_owned(),
        other => format!("tls: {other}"),
    }
}

/// `host:port` of a URI, the scheme's port when it names none.
fn authority(uri: &Uri) -> String {
    let host = uri.host().unwrap_or_default();
    let port = uri
        .port_u16()
        .unwrap_or(if uri.scheme_str() == Some("http") {
            80
        } else {
            443
        });
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(e) = source {
        text.push_str(": ");
        text.push_str(&e.to_string());
        source = e.source();
    }
    text
}

#[cfg(test)]
mod tests;
