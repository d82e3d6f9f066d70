//! An upgrade through the delegate to a TLS backend that echoes what it is sent.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use kas_auth::UserInfo;
use rustls_pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tower::Service;

use crate::Delegate;

/// Echoes an `echo` upgrade after answering with the user it was told and the request's
/// ALPN-chosen version; anything else is a 404.
async fn backend_handler(
    mut req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let mut resp = Response::new(Full::new(Bytes::new()));
    if req.headers().get("upgrade").is_none_or(|u| u != "echo") {
        *resp.status_mut() = StatusCode::NOT_FOUND;
        return Ok(resp);
    }
    let user = req.headers().get("x-remote-user").cloned();
    let host = req.headers().get("host").cloned();
    let on = hyper::upgrade::on(&mut req);
    tokio::spawn(async move {
        let Ok(up) = on.await else { return };
        let mut io = TokioIo::new(up);
        let mut buf = [0u8; 1024];
        while let Ok(n) = io.read(&mut buf).await {
            if n == 0 || io.write_all(&buf[..n]).await.is_err() {
                return;
            }
        }
    });
    *resp.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let h = resp.headers_mut();
    h.insert("connection", HeaderValue::from_static("Upgrade"));
    h.insert("upgrade", HeaderValue::from_static("echo"));
    if let Some(user) = user {
        h.insert("x-seen-user", user);
    }
    if let Some(host) = host {
        h.insert("x-seen-host", host);
    }
    Ok(resp)
}

/// A TLS backend for 127.0.0.1; returns its address and its CA's PEM.
async fn backend() -> (SocketAddr, String) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = rcgen::Issuer::new(ca_params, &ca_key);
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .unwrap()
        .signed_by(&key, &issuer)
        .unwrap();
    let mut config = rustls::ServerConfig::builder_with_provider(kas_tls::provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.der().clone()],
            PrivateKeyDer::from(PrivatePkcs8KeyDer::from(key.serialize_der())),
        )
        .unwrap();
    config.alpn_protocols = kas_tls::alpn();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection_with_upgrades(TokioIo::new(tls), service_fn(backend_handler))
                    .await;
            });
        }
    });
    (addr, ca.pem())
}

/// A plain HTTP/1.1 front whose requests, from user `alice`, go through `delegate`.
async fn front(delegate: Delegate) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let delegate = delegate.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req: Request<Incoming>| {
                    let mut delegate = delegate.clone();
                    let mut req = req.map(kas_endpoints::Body::new);
                    req.extensions_mut().insert(UserInfo {
                        name: "alice".into(),
                        ..UserInfo::default()
                    });
                    delegate.call(req)
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tcp), service)
                    .with_upgrades()
                    .await;
            });
        }
    });
    addr
}

#[tokio::test]
async fn upgrades_cross_the_hop_with_the_identity_and_are_spliced() {
    let (backend, ca) = backend().await;
    let dir = tempfile::tempdir().unwrap();
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, ca).unwrap();
    let tls = kas_tls::client_config(Some(&ca_file), None, vec![b"h2".to_vec()]).unwrap();
    let delegate = Delegate::new(&[format!("https://{backend}")], tls).unwrap();
    let front = front(delegate).await;
    let mut tcp = tokio::net::TcpStream::connect(front).await.unwrap();
    let head = "GET /api/v1/namespaces/d/pods/p/exec HTTP/1.1\r\nHost: front\r\n\
        Connection: Upgrade\r\nUpgrade: echo\r\nX-Remote-User: mallory\r\n\r\n";
    tcp.write_all(head.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tcp.read(&mut buf).await.unwrap();
        assert_ne!(n, 0, "closed after {:?}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    }
    let head = String::from_utf8_lossy(&got).to_ascii_lowercase();
    assert!(
        head.starts_with("http/1.1 101 switching protocols\r\n"),
        "{head}"
    );
    assert!(head.contains("x-seen-user: alice\r\n"), "{head}");
    assert!(
        head.contains(&format!("x-seen-host: {backend}\r\n")),
        "{head}"
    );
    tcp.write_all(b"hello through the hop").await.unwrap();
    let mut echoed = [0u8; 21];
    tcp.read_exact(&mut echoed).await.unwrap();
    assert_eq!(&echoed, b"hello through the hop");
}
