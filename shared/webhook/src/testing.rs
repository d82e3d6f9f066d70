//! A webhook server for the tests: TLS from a throwaway CA, each request handed to a
//! closure that answers with a status, a content type and a body; calls are counted and
//! the last request's body, `Authorization` header, method, path and content type kept.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls_pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::Value;

/// What a handler answers: status, content type, body.
pub type Answer = (u16, &'static str, String);

pub struct Pki {
    pub ca_pem: String,
    pub ca_der: Vec<u8>,
    /// The serving certificate (for 127.0.0.1) and its PKCS#8 key, DER.
    pub server: (Vec<u8>, Vec<u8>),
    /// A client certificate of the CA and its key, PEM.
    pub client_pem: (String, String),
}

pub fn pki() -> Pki {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let name = format!("webhook-ca-{}", NEXT.fetch_add(1, Ordering::Relaxed));
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, name);
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = rcgen::Issuer::new(ca_params, &ca_key);
    let server_key = rcgen::KeyPair::generate().unwrap();
    let server = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .unwrap()
        .signed_by(&server_key, &issuer)
        .unwrap();
    let client_key = rcgen::KeyPair::generate().unwrap();
    let client = rcgen::CertificateParams::new(Vec::<String>::new())
        .unwrap()
        .signed_by(&client_key, &issuer)
        .unwrap();
    Pki {
        ca_pem: ca.pem(),
        ca_der: ca.der().to_vec(),
        server: (server.der().to_vec(), server_key.serialize_der()),
        client_pem: (client.pem(), client_key.serialize_pem()),
    }
}

/// A running server: its URL (path `/webhook`) and what it saw.
pub struct Server {
    pub url: String,
    calls: Arc<AtomicUsize>,
    last: Arc<Mutex<(String, Value)>>,
    head: Arc<Mutex<Head>>,
}

/// A request's method, path and `Content-Type`.
pub type Head = (String, String, String);

impl Server {
    pub fn calls(&self) -> usize {
        self.calls.swap(0, Ordering::SeqCst)
    }

    /// The last request's `Authorization` header and JSON body.
    pub fn last(&self) -> (String, Value) {
        self.last.lock().unwrap().clone()
    }

    /// The last request's method, path and `Content-Type`.
    pub fn head(&self) -> Head {
        self.head.lock().unwrap().clone()
    }
}

pub async fn serve<F>(pki: &Pki, handler: F) -> Server
where
    F: Fn(&Value) -> Answer + Send + Sync + 'static,
{
    let mut config = rustls::ServerConfig::builder_with_provider(kas_tls::provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![pki.server.0.clone().into()],
            PrivateKeyDer::from(PrivatePkcs8KeyDer::from(pki.server.1.clone())),
        )
        .unwrap();
    config.alpn_protocols = kas_tls::alpn();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let last = Arc::new(Mutex::new((String::new(), Value::Null)));
    let head = Arc::new(Mutex::new(Head::default()));
    let handler = Arc::new(handler);
    let seen = (calls.clone(), last.clone(), head.clone());
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let seen = (seen.0.clone(), seen.1.clone(), seen.2.clone());
            let handler = handler.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let service = service_fn(move |req: http::Request<hyper::body::Incoming>| {
                    let (calls, last, head) = (seen.0.clone(), seen.1.clone(), seen.2.clone());
                    let handler = handler.clone();
                    async move {
                        calls.fetch_add(1, Ordering::SeqCst);
                        let content_type = req
                            .headers()
                            .get(http::header::CONTENT_TYPE)
                            .map(|v| v.to_str().unwrap_or_default().to_owned())
                            .unwrap_or_default();
                        *head.lock().unwrap() = (
                            req.method().to_string(),
                            req.uri().path().to_owned(),
                            content_type,
                        );
                        let auth = req
                            .headers()
                            .get(http::header::AUTHORIZATION)
                            .map(|v| v.to_str().unwrap_or_default().to_owned())
                            .unwrap_or_default();
                        let body = req.into_body().collect().await.unwrap().to_bytes();
                        let json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                        let (status, content_type, text) = handler(&json);
                        *last.lock().unwrap() = (auth, json);
                        let response = http::Response::builder()
                            .status(status)
                            .header(http::header::CONTENT_TYPE, content_type)
                            .body(Full::new(Bytes::from(text)))
                            .unwrap();
                        Ok::<_, std::convert::Infallible>(response)
                    }
                });
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    Server {
        url: format!("https://{addr}/webhook"),
        calls,
        last,
        head,
    }
}

/// A kubeconfig in `dir` naming `url`, trusting `pki`'s CA (a file beside it, by a
/// relative path), presenting `token`.
pub fn kubeconfig(dir: &std::path::Path, pki: &Pki, url: &str, token: &str) -> std::path::PathBuf {
    std::fs::write(dir.join("ca.pem"), &pki.ca_pem).unwrap();
    let path = dir.join("webhook.kubeconfig");
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: hook\n  cluster:\n    server: {url}\n    certificate-authority: ca.pem\nusers:\n- name: apiserver\n  user:\n    token: {token}\ncontexts:\n- name: hook\n  context:\n    cluster: hook\n    user: apiserver\ncurrent-context: hook\n"
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// A JSON answer.
pub fn json(status: u16, body: Value) -> Answer {
    (status, "application/json", body.to_string())
}
