//! The delegate against real HTTP/2 servers over mTLS: streaming without buffering, the
//! identity headers, failover between endpoints, and DNS names that resolve to several.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper_util::rt::{TokioExecutor, TokioIo};
use kas_auth::UserInfo;
use kas_delegate::{Delegate, EndpointState};
use kas_endpoints::{Body, body};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tower::ServiceExt;

struct Pki {
    dir: tempfile::TempDir,
}

impl Pki {
    fn new() -> Pki {
        let dir = tempfile::tempdir().unwrap();
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca.distinguished_name
            .push(rcgen::DnType::CommonName, "test-ca");
        let ca_cert = ca.self_signed(&ca_key).unwrap();
        let issuer = rcgen::Issuer::new(ca, ca_key);
        let write = |name: &str, text: String| std::fs::write(dir.path().join(name), text).unwrap();
        write("ca.crt", ca_cert.pem());
        for (name, sans, client) in [
            (
                "server",
                vec!["localhost".to_owned(), "127.0.0.1".to_owned()],
                false,
            ),
            ("client", vec![], true),
        ] {
            let key = rcgen::KeyPair::generate().unwrap();
            let mut params = rcgen::CertificateParams::new(sans).unwrap();
            params
                .distinguished_name
                .push(rcgen::DnType::CommonName, name);
            if client {
                params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
            }
            let cert = params.signed_by(&key, &issuer).unwrap();
            write(&format!("{name}.crt"), cert.pem());
            write(&format!("{name}.key"), key.serialize_pem());
        }
        Pki { dir }
    }

    fn path(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join(name)
    }

    fn delegate(&self, urls: &[String]) -> Delegate {
        let tls = kas_tls::client_config(
            Some(&self.path("ca.crt")),
            Some((&self.path("client.crt"), &self.path("client.key"))),
            vec![b"h2".to_vec()],
        )
        .unwrap();
        Delegate::new(urls, tls).unwrap()
    }
}

/// Serves over TLS (client certificate required) until dropped. `/stream` sends "first",
/// then waits for the test's go-ahead before "second"; anything else echoes the request
/// head as text.
async fn upstream(pki: &Pki, go: Option<mpsc::Receiver<()>>) -> (u16, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    serve(pki, go, listener)
}

/// [`upstream`] on a listener of the caller's.
fn serve(
    pki: &Pki,
    go: Option<mpsc::Receiver<()>>,
    listener: TcpListener,
) -> (u16, tokio::task::JoinHandle<()>) {
    let port = listener.local_addr().unwrap().port();
    let config = kas_tls::server_config(
        &pki.path("server.crt"),
        &pki.path("server.key"),
        &[&pki.path("ca.crt")],
    )
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let go = Arc::new(tokio::sync::Mutex::new(go));
    let task = tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            let go = go.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let svc = hyper::service::service_fn(move |req: Request<Incoming>| {
                    let go = go.clone();
                    async move { Ok::<_, Infallible>(answer(req, go).await) }
                });
                let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(tls), svc)
                    .await;
            });
        }
    });
    (port, task)
}

async fn answer(
    req: Request<Incoming>,
    go: Arc<tokio::sync::Mutex<Option<mpsc::Receiver<()>>>>,
) -> Response<Body> {
    if req.uri().path() == "/stream" {
        let (tx, rx) = mpsc::channel::<Result<Frame<Bytes>, Infallible>>(4);
        tokio::spawn(async move {
            let _ = tx
                .send(Ok(Frame::data(Bytes::from_static(b"first\n"))))
                .await;
            if let Some(go) = go.lock().await.as_mut() {
                go.recv().await;
            }
            let _ = tx
                .send(Ok(Frame::data(Bytes::from_static(b"second\n"))))
                .await;
        });
        let stream =
            futures_util::stream::unfold(
                rx,
                |mut rx| async move { rx.recv().await.map(|f| (f, rx)) },
            );
        return Response::new(body::boxed(StreamBody::new(stream)));
    }
    if req.uri().path() == "/warnings" {
        // 300 Warning headers of 500 bytes: an answer's headers may be large.
        let mut resp = Response::new(body::empty());
        let warning = format!("299 - \"{}\"", "w".repeat(490));
        for _ in 0..300 {
            resp.headers_mut()
                .append("warning", warning.parse().unwrap());
        }
        return resp;
    }
    let mut text = format!("{} {}\n", req.method(), req.uri().path());
    for (k, v) in req.headers() {
        text.push_str(&format!("{k}: {}\n", v.to_str().unwrap_or("?")));
    }
    Response::new(body::full(text))
}

fn get(path: &str) -> Request<Body> {
    let mut req = Request::builder().uri(path).body(body::empty()).unwrap();
    req.extensions_mut().insert(UserInfo {
        name: "alice".into(),
        uid: String::new(),
        groups: vec!["devs".into()],
        extra: BTreeMap::new(),
    });
    req
}

async fn text(resp: Response<Body>) -> String {
    String::from_utf8(
        resp.into_body()
            .collect()
            .await
            .unwrap()
            .to_bytes()
            .to_vec(),
    )
    .unwrap()
}

#[tokio::test]
async fn response_bodies_stream_frame_by_frame() {
    let pki = Pki::new();
    let (go_tx, go_rx) = mpsc::channel(1);
    let (port, _server) = upstream(&pki, Some(go_rx)).await;
    let delegate = pki.delegate(&[format!("https://127.0.0.1:{port}")]);
    let resp = delegate.oneshot(get("/stream")).await.unwrap();
    assert_eq!(resp.status(), 200);
    let mut body = resp.into_body();
    // The first frame arrives while the upstream still holds the second back.
    let first = tokio::time::timeout(Duration::from_secs(5), body.frame())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(first.into_data().unwrap(), "first\n");
    go_tx.send(()).await.unwrap();
    let second = tokio::time::timeout(Duration::from_secs(5), body.frame())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(second.into_data().unwrap(), "second\n");
}

#[tokio::test]
async fn large_answer_headers_cross_the_hop() {
    let pki = Pki::new();
    let (port, _server) = upstream(&pki, None).await;
    let delegate = pki.delegate(&[format!("https://127.0.0.1:{port}")]);
    let resp = delegate.oneshot(get("/warnings")).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers().get_all("warning").iter().count(), 300);
}

#[tokio::test]
async fn identity_and_trace_context_cross_the_hop_and_credentials_do_not() {
    let pki = Pki::new();
    let (port, _server) = upstream(&pki, None).await;
    let delegate = pki.delegate(&[format!("https://127.0.0.1:{port}")]);
    let mut req = get("/apis/x/v1/y?watch=1");
    let traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    req.headers_mut()
        .insert("traceparent", traceparent.parse().unwrap());
    req.headers_mut()
        .insert("authorization", "Bearer secret".parse().unwrap());
    req.headers_mut()
        .insert("x-remote-user", "mallory".parse().unwrap());
    let echoed = text(delegate.oneshot(req).await.unwrap()).await;
    assert!(echoed.starts_with("GET /apis/x/v1/y\n"), "{echoed}");
    assert!(echoed.contains("x-remote-user: alice\n"), "{echoed}");
    assert!(echoed.contains("x-remote-group: devs\n"), "{echoed}");
    assert!(!echoed.contains("mallory"), "{echoed}");
    assert!(!echoed.contains("authorization"), "{echoed}");
    assert!(
        echoed.contains(&format!("traceparent: {traceparent}\n")),
        "{echoed}"
    );
}

#[tokio::test]
async fn a_dead_endpoint_is_skipped_and_ejected() {
    let pki = Pki::new();
    let (port, _server) = upstream(&pki, None).await;
    let dead = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let delegate = pki.delegate(&[
        format!("https://127.0.0.1:{dead}"),
        format!("https://127.0.0.1:{port}"),
    ]);
    for i in 0..10 {
        let resp = delegate.clone().oneshot(get("/ok")).await.unwrap();
        let code = resp.status();
        assert_eq!(code, 200, "request {i}: {}", text(resp).await);
    }
    let states = delegate.endpoint_states();
    assert_eq!(states[0].1, EndpointState::Down, "{states:?}");
}

#[tokio::test]
async fn an_endpoint_marked_down_is_still_tried_when_it_is_the_last() {
    let pki = Pki::new();
    let port = free_port().await;
    let delegate = pki.delegate(&[format!("https://127.0.0.1:{port}")]);
    let resp = delegate.clone().oneshot(get("/x")).await.unwrap();
    assert_eq!(resp.status(), 503);
    // Long enough for the prober's backoff to reach its 2 s ceiling.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(delegate.endpoint_states()[0].1, EndpointState::Down);
    // It comes back; the next request reaches it before the prober does.
    let listener = TcpListener::bind(("127.0.0.1", port)).await.unwrap();
    let _server = serve(&pki, None, listener);
    let resp = delegate.clone().oneshot(get("/ok")).await.unwrap();
    assert_eq!(resp.status(), 200, "{}", text(resp).await);
}

async fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    listener.local_addr().unwrap().port()
}

#[tokio::test]
async fn no_reachable_endpoint_is_a_503_status() {
    let pki = Pki::new();
    let dead = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let delegate = pki.delegate(&[format!("https://127.0.0.1:{dead}")]);
    let resp = delegate.oneshot(get("/x")).await.unwrap();
    assert_eq!(resp.status(), 503);
    let status: serde_json::Value = serde_json::from_str(&text(resp).await).unwrap();
    assert_eq!(status["reason"], "ServiceUnavailable");
}

#[tokio::test]
async fn one_dns_name_becomes_one_endpoint_per_address() {
    let pki = Pki::new();
    let (port, _server) = upstream(&pki, None).await;
    let delegate = pki.delegate(&[format!("https://localhost:{port}")]);
    let mut answered = false;
    for _ in 0..50 {
        if delegate.endpoint_states().is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        }
        let resp = delegate.clone().oneshot(get("/ok")).await.unwrap();
        assert_eq!(resp.status(), 200);
        answered = true;
        break;
    }
    assert!(answered, "localhost never resolved");
    let names: Vec<String> = delegate
        .endpoint_states()
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert!(names.iter().any(|n| n.contains("127.0.0.1")), "{names:?}");
}
