//! An HTTP(S) GET as upstream's HTTP prober (`pkg/probe/http`) makes it for component
//! statuses: TLS without verifying the server (its `InsecureSkipVerify`), a timeout, the
//! body up to 10 KiB, and Go's `net/http` error text for what fails
//! (`Get "https://127.0.0.1:10259/healthz": dial tcp 127.0.0.1:10259: connect: connection
//! refused`).

use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Empty, Limited};
use hyper::body::Bytes;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

/// Upstream's `maxRespBodyLength`.
const MAX_BODY: usize = 10 * 1024;

/// A verifier that accepts any server (Go's `InsecureSkipVerify`); signatures are still
/// checked so the handshake itself is sound.
#[derive(Debug)]
struct SkipVerify(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for SkipVerify {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// A client configuration that does not verify the server (Go's `InsecureSkipVerify`).
pub fn insecure_tls() -> Result<rustls::ClientConfig, String> {
    let provider = kas_tls::provider();
    let config = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(SkipVerify(provider)))
        .with_no_client_auth();
    Ok(config)
}

/// Go's text for a failed dial (`dial tcp <addr>: connect: connection refused`).
fn dial_error(addr: &str, e: &std::io::Error) -> String {
    let reason = match e.kind() {
        std::io::ErrorKind::ConnectionRefused => "connect: connection refused".to_owned(),
        std::io::ErrorKind::TimedOut => "i/o timeout".to_owned(),
        _ => {
            let text = e.to_string();
            let text = text.split(" (os error").next().unwrap_or(&text).to_owned();
            format!("connect: {}", text.to_lowercase())
        }
    };
    format!("dial tcp {addr}: {reason}")
}

/// GET `https://host:port/path` (or `http://`), answering the status code and the body (at
/// most 10 KiB), or Go's error text, prefixed as `net/http` prefixes it.
pub async fn get(
    https: bool,
    host: &str,
    port: u16,
    path: &str,
    timeout: Duration,
) -> Result<(u16, Bytes), String> {
    let scheme = if https { "https" } else { "http" };
    let addr = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    let url = format!("{scheme}://{addr}{path}");
    let attempt = async {
        let tcp = tokio::net::TcpStream::connect(&addr)
            .await
            .map_err(|e| dial_error(&addr, &e))?;
        let req = hyper::Request::get(path)
            .header(hyper::header::HOST, &addr)
            .header(hyper::header::USER_AGENT, "kube-probe/1.33")
            .header(hyper::header::ACCEPT, "*/*")
            .body(Empty::<Bytes>::new())
            .map_err(|e| e.to_string())?;
        let resp = if https {
            let config = Arc::new(insecure_tls()?);
            let name = ServerName::try_from(host.to_owned()).map_err(|e| e.to_string())?;
            let tls = tokio_rustls::TlsConnector::from(config)
                .connect(name, tcp)
                .await
                .map_err(|e| e.to_string())?;
            send(hyper_util::rt::TokioIo::new(tls), req).await?
        } else {
            send(hyper_util::rt::TokioIo::new(tcp), req).await?
        };
        let code = resp.status().as_u16();
        let body = Limited::new(resp.into_body(), MAX_BODY)
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        Ok::<_, String>((code, body))
    };
    match tokio::time::timeout(timeout, attempt).await {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(e)) => Err(format!("Get \"{url}\": {e}")),
        Err(_) => Err(format!(
            "Get \"{url}\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
        )),
    }
}

async fn send<T>(
    io: hyper_util::rt::TokioIo<T>,
    req: hyper::Request<Empty<Bytes>>,
) -> Result<hyper::Response<hyper::body::Incoming>, String>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, conn) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(conn);
    sender.send_request(req).await.map_err(|e| e.to_string())
}
