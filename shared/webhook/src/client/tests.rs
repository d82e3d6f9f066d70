use std::net::SocketAddr;
use std::sync::Arc;

use http_body_util::Full;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use super::*;
use crate::testing::{Pki, pki};

/// A TLS server answering every request with its HTTP version, whether a client
/// certificate came, the bearer token and the body, after `delay`; `require_client` asks
/// for a certificate from the CA.
async fn serve(pki: &Pki, require_client: bool, delay: Duration) -> SocketAddr {
    let provider = kas_tls::provider();
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .unwrap();
    let builder = if require_client {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(CertificateDer::from(pki.ca_der.clone())).unwrap();
        let verifier =
            rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .unwrap();
        builder.with_client_cert_verifier(verifier)
    } else {
        builder.with_no_client_auth()
    };
    let mut config = builder
        .with_single_cert(
            vec![CertificateDer::from(pki.server.0.clone())],
            PrivateKeyDer::from(PrivatePkcs8KeyDer::from(pki.server.1.clone())),
        )
        .unwrap();
    config.alpn_protocols = kas_tls::alpn();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let has_client = tls.get_ref().1.peer_certificates().is_some();
                let service = service_fn(move |req: Request<hyper::body::Incoming>| async move {
                    tokio::time::sleep(delay).await;
                    let version = format!("{:?}", req.version());
                    let auth = req
                        .headers()
                        .get(http::header::AUTHORIZATION)
                        .map(|v| v.to_str().unwrap_or_default().to_owned())
                        .unwrap_or_default();
                    let body = req.into_body().collect().await.unwrap().to_bytes();
                    let text = format!(
                        "{version} client={has_client} auth={auth} body={}",
                        String::from_utf8_lossy(&body)
                    );
                    Ok::<_, std::convert::Infallible>(http::Response::new(Full::new(Bytes::from(
                        text,
                    ))))
                });
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    addr
}

fn trusting(pki: &Pki) -> TlsConfig {
    TlsConfig {
        ca_data: Some(pki.ca_pem.clone().into_bytes()),
        ..TlsConfig::default()
    }
}

#[tokio::test]
async fn posts_over_h2_with_a_client_certificate_and_reuses_the_client() {
    let pki = pki();
    let addr = serve(&pki, true, Duration::ZERO).await;
    let tls = TlsConfig {
        client_cert: Some((
            pki.client_pem.0.clone().into_bytes(),
            pki.client_pem.1.clone().into_bytes(),
        )),
        ..trusting(&pki)
    };
    let client = Client::new(&tls, Duration::from_secs(5)).unwrap();
    let url = format!("https://{addr}/authenticate");
    for _ in 0..2 {
        let answer = client
            .post_json(&url, b"{\"a\":1}".to_vec(), Some("t0ken"))
            .await
            .unwrap();
        assert_eq!(answer.status, StatusCode::OK);
        assert_eq!(
            std::str::from_utf8(&answer.body).unwrap(),
            "HTTP/2.0 client=true auth=Bearer t0ken body={\"a\":1}"
        );
    }
}

#[tokio::test]
async fn failures_read_as_go_writes_them() {
    let pki = pki();
    let addr = serve(&pki, false, Duration::from_millis(400)).await;
    let url = format!("https://{addr}/x");

    let other = crate::testing::pki();
    let untrusted = Client::new(&trusting(&other), Duration::from_secs(5)).unwrap();
    assert_eq!(
        untrusted.get(&url).await.unwrap_err().to_string(),
        format!(
            "Get \"{url}\": tls: failed to verify certificate: x509: certificate signed by unknown authority"
        )
    );

    let insecure = TlsConfig {
        insecure: true,
        ..TlsConfig::default()
    };
    let answer = Client::new(&insecure, Duration::from_secs(5))
        .unwrap()
        .get(&url)
        .await
        .unwrap();
    assert!(answer.body.starts_with(b"HTTP/2.0 client=false"));

    let slow = Client::new(&trusting(&pki), Duration::from_millis(100)).unwrap();
    assert_eq!(
        slow.post_json(&url, Vec::new(), None)
            .await
            .unwrap_err()
            .to_string(),
        format!(
            "Post \"{url}\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
        )
    );

    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let closed_addr = closed.local_addr().unwrap();
    drop(closed);
    let refused = format!("https://{closed_addr}/x");
    assert_eq!(
        slow.get(&refused).await.unwrap_err().to_string(),
        format!("Get \"{refused}\": dial tcp {closed_addr}: connect: connection refused")
    );

    assert!(matches!(
        Client::new(
            &TlsConfig {
                ca_data: Some(b"not pem".to_vec()),
                ..TlsConfig::default()
            },
            Duration::from_secs(1)
        ),
        Err(Error::Config(_))
    ));
}
