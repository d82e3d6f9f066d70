//! A small HTTPS server for tests that need one the roles call out to (conversion,
//! authentication and authorization webhooks, OIDC providers): its own CA, a serving
//! certificate for 127.0.0.1 and localhost, HTTP/2 and HTTP/1.1, and a handler called with
//! each whole request. It runs on its own thread and stops when dropped.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls_pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};

/// What the server answers a request with.
pub type Handler = Arc<dyn Fn(http::Request<Bytes>) -> http::Response<Bytes> + Send + Sync>;

pub struct TlsServer {
    pub addr: SocketAddr,
    /// The PEM certificate of the CA that signed the serving certificate.
    pub ca_pem: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TlsServer {
    pub fn start(
        handler: impl Fn(http::Request<Bytes>) -> http::Response<Bytes> + Send + Sync + 'static,
    ) -> TlsServer {
        let handler: Handler = Arc::new(handler);
        let ca_key = rcgen::KeyPair::generate().expect("CA key");
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA");
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "kas-e2e test server CA");
        let ca = ca_params.self_signed(&ca_key).expect("CA certificate");
        let issuer = rcgen::Issuer::new(ca_params, &ca_key);
        let key = rcgen::KeyPair::generate().expect("serving key");
        let cert =
            rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
                .expect("serving params")
                .signed_by(&key, &issuer)
                .expect("serving certificate");
        let mut config = rustls::ServerConfig::builder_with_provider(kas_tls::provider())
            .with_safe_default_protocol_versions()
            .expect("TLS versions")
            .with_no_client_auth()
            .with_single_cert(
                vec![cert.der().clone()],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
            )
            .expect("TLS config");
        config.alpn_protocols = kas_tls::alpn();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("address");
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                loop {
                    let tcp = tokio::select! {
                        _ = &mut stopped => return,
                        accepted = listener.accept() => match accepted {
                            Ok((tcp, _)) => tcp,
                            Err(_) => continue,
                        },
                    };
                    let (acceptor, handler) = (acceptor.clone(), handler.clone());
                    tokio::spawn(async move {
                        let Ok(tls) = acceptor.accept(tcp).await else {
                            return;
                        };
                        let service = hyper::service::service_fn(
                            move |req: http::Request<hyper::body::Incoming>| {
                                let handler = handler.clone();
                                async move {
                                    let (parts, body) = req.into_parts();
                                    let body = body
                                        .collect()
                                        .await
                                        .map(|b| b.to_bytes())
                                        .unwrap_or_default();
                                    let answer = handler(http::Request::from_parts(parts, body));
                                    Ok::<_, std::convert::Infallible>(answer.map(Full::new))
                                }
                            },
                        );
                        let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                            .serve_connection(TokioIo::new(tls), service)
                            .await;
                    });
                }
            });
        });
        TlsServer {
            addr,
            ca_pem: ca.pem(),
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// `https://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("https://{}{path}", self.addr)
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
