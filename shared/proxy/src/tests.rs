//! The proxy against real servers on loopback: a TLS backend (h2 and HTTP/1.1, answering
//! upgrades by echoing) and a front server whose handler forwards through a transport.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use kas_endpoints::Body;
use kas_tls::TlsConfig;
use rustls_pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::{Error, Location, Options, Transport};

struct Pki {
    ca_pem: String,
    server: (Vec<u8>, Vec<u8>),
}

fn pki(names: &[&str]) -> Pki {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    // Distinct names: a chain is looked up by its issuer's name.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, format!("proxy-test-ca-{n}"));
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = rcgen::Issuer::new(ca_params, &ca_key);
    let key = rcgen::KeyPair::generate().unwrap();
    let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    let cert = rcgen::CertificateParams::new(names)
        .unwrap()
        .signed_by(&key, &issuer)
        .unwrap();
    Pki {
        ca_pem: ca.pem(),
        server: (cert.der().to_vec(), key.serialize_der()),
    }
}

/// What the backend does with a request: echo upgrades of protocol `echo`, refuse those of
/// `refuse` with 403, answer 200 to those of `ignore`; describe any other request.
async fn backend_handler(
    mut req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let upgrade = req
        .headers()
        .get("upgrade")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let mut resp = Response::new(Full::new(Bytes::new()));
    match upgrade.as_str() {
        "echo" => {
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
            h.insert(
                "x-stream-protocol-version",
                HeaderValue::from_static("echo.v1"),
            );
        }
        "refuse" => {
            *resp.status_mut() = StatusCode::FORBIDDEN;
            *resp.body_mut() = Full::new(Bytes::from_static(b"no upgrades for you"));
        }
        "ignore" => {}
        _ => {
            let seen = format!(
                "{:?} {} {} te={:?} x-hop={:?} host={:?}",
                req.version(),
                req.method(),
                req.uri(),
                req.headers().get("te"),
                req.headers().get("x-hop"),
                req.headers().get("host"),
            );
            *resp.body_mut() = Full::new(Bytes::from(seen));
            if req.uri().path() == "/redirect" {
                *resp.status_mut() = StatusCode::FOUND;
                resp.headers_mut()
                    .insert("location", HeaderValue::from_static("/elsewhere"));
            }
            let h = resp.headers_mut();
            h.insert("access-control-allow-origin", HeaderValue::from_static("*"));
            h.insert("keep-alive", HeaderValue::from_static("timeout=5"));
            h.insert("x-backend", HeaderValue::from_static("yes"));
        }
    }
    Ok(resp)
}

/// A TLS backend for `names`; returns its address.
async fn backend(pki: &Pki) -> SocketAddr {
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
    addr
}

/// A plain-HTTP front server forwarding every request to `location` (the request's path
/// appended) through `transport`; errors written as core's responder writes them.
async fn front(transport: Transport, location: Location, options: Options) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (transport, location) = (transport.clone(), location.clone());
            tokio::spawn(async move {
                let service = service_fn(move |req: Request<Incoming>| {
                    let (transport, mut location) = (transport.clone(), location.clone());
                    async move {
                        location.path = match req.uri().path() {
                            "/root" => String::new(),
                            p => p.to_owned(),
                        };
                        location.query = req.uri().query().unwrap_or("").to_owned();
                        let req = req.map(Body::new);
                        let resp = match transport.forward(&location, req, &options).await {
                            Ok(resp) => resp,
                            Err(e) => kas_endpoints::write_status(&e.to_status()),
                        };
                        Ok::<_, std::convert::Infallible>(resp)
                    }
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

fn trusting(pki: &Pki) -> TlsConfig {
    TlsConfig {
        ca_data: Some(pki.ca_pem.clone().into_bytes()),
        ..TlsConfig::default()
    }
}

fn location(addr: SocketAddr) -> Location {
    Location {
        scheme: "https".into(),
        host: addr.to_string(),
        ..Location::default()
    }
}

/// Writes `head` to `addr` and reads until the peer closes or `until` is seen.
async fn raw(addr: SocketAddr, head: &str, until: &str) -> (tokio::net::TcpStream, String) {
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tcp.write_all(head.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&got).contains(until) {
        let n = tcp.read(&mut buf).await.unwrap();
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    (tcp, String::from_utf8_lossy(&got).into_owned())
}

#[tokio::test]
async fn plain_requests_are_pooled_over_h2_and_lose_hop_by_hop_headers() {
    let pki = pki(&["127.0.0.1"]);
    let addr = backend(&pki).await;
    let transport = Transport::new(&trusting(&pki)).unwrap();
    let options = Options {
        wrap_transport: true,
        ..Options::default()
    };
    let mut req = Request::get("/a/b/?x=1")
        .body(kas_endpoints::body::empty())
        .unwrap();
    req.headers_mut()
        .insert("connection", HeaderValue::from_static("x-hop"));
    req.headers_mut()
        .insert("x-hop", HeaderValue::from_static("1"));
    req.headers_mut()
        .insert("te", HeaderValue::from_static("trailers"));
    let loc = Location {
        path: "/a/b".into(),
        query: "x=1".into(),
        ..location(addr)
    };
    let resp = transport.forward(&loc, req, &options).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert!(resp.headers().get("access-control-allow-origin").is_none());
    assert!(resp.headers().get("keep-alive").is_none());
    assert_eq!(resp.headers()["x-backend"], "yes");
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(
        String::from_utf8_lossy(&body),
        format!("HTTP/2.0 GET https://{addr}/a/b/?x=1 te=Some(\"trailers\") x-hop=None host=None")
    );
}

#[tokio::test]
async fn the_server_name_is_checked_instead_of_the_dialed_host() {
    let pki = pki(&["backend.ns.svc"]);
    let addr = backend(&pki).await;
    let named = Transport::new(&TlsConfig {
        server_name: Some("backend.ns.svc".into()),
        ..trusting(&pki)
    })
    .unwrap();
    let get = || {
        Request::get("/x")
            .body(kas_endpoints::body::empty())
            .unwrap()
    };
    let loc = Location {
        path: "/x".into(),
        ..location(addr)
    };
    let resp = named
        .forward(&loc, get(), &Options::default())
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let unnamed = Transport::new(&trusting(&pki)).unwrap();
    let err = unnamed
        .forward(&loc, get(), &Options::default())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "tls: failed to verify certificate: x509: certificate is not valid for 127.0.0.1"
    );
    let stranger = Transport::new(&trusting(&crate::tests::pki(&["x"]))).unwrap();
    let err = stranger
        .forward(&loc, get(), &Options::default())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "tls: failed to verify certificate: x509: certificate signed by unknown authority"
    );
}

#[tokio::test]
async fn upgrades_are_spliced_both_ways() {
    let pki = pki(&["127.0.0.1"]);
    let addr = backend(&pki).await;
    let transport = Transport::new(&trusting(&pki)).unwrap();
    let options = Options {
        upgrade_required: true,
        ..Options::default()
    };
    let front = front(transport, location(addr), options).await;
    let head = "POST /exec HTTP/1.1\r\nHost: front\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n";
    let (mut tcp, got) = raw(front, head, "\r\n\r\n").await;
    assert!(
        got.starts_with("HTTP/1.1 101 Switching Protocols\r\n"),
        "{got}"
    );
    let lower = got.to_ascii_lowercase();
    assert!(
        lower.contains("x-stream-protocol-version: echo.v1"),
        "{got}"
    );
    assert!(lower.contains("upgrade: echo"), "{got}");
    for message in ["ping", "and pong"] {
        tcp.write_all(message.as_bytes()).await.unwrap();
        let mut buf = vec![0u8; message.len()];
        tcp.read_exact(&mut buf).await.unwrap();
        assert_eq!(buf, message.as_bytes());
    }
    // A refusal comes back whole, and the connection closes.
    let head =
        "GET /exec HTTP/1.1\r\nHost: front\r\nConnection: Upgrade\r\nUpgrade: refuse\r\n\r\n";
    let (_, got) = raw(front, head, "for you").await;
    assert!(got.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{got}");
    assert!(got.ends_with("no upgrades for you"), "{got}");
    // A success that is no upgrade is upstream's error, written by the responder.
    let head =
        "GET /exec HTTP/1.1\r\nHost: front\r\nConnection: Upgrade\r\nUpgrade: ignore\r\n\r\n";
    let (_, got) = raw(front, head, "}").await;
    assert!(got.starts_with("HTTP/1.1 500"), "{got}");
    assert!(
        got.contains("invalid upgrade response: status code 200"),
        "{got}"
    );
    // No upgrade where one is required.
    let head = "GET /exec HTTP/1.1\r\nHost: front\r\n\r\n";
    let (_, got) = raw(front, head, "}").await;
    assert!(got.starts_with("HTTP/1.1 400"), "{got}");
    assert!(
        got.contains("\"message\":\"Upgrade request required\""),
        "{got}"
    );
}

#[tokio::test]
async fn failures_read_as_upstreams() {
    let pki = pki(&["127.0.0.1"]);
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let transport = Transport::new(&trusting(&pki)).unwrap();
    let upgrade = {
        let mut r = Request::get("/x")
            .body(kas_endpoints::body::empty())
            .unwrap();
        r.headers_mut()
            .insert("connection", HeaderValue::from_static("Upgrade"));
        r
    };
    let err = transport
        .forward(&location(closed), upgrade, &Options::default())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("error dialing backend: dial tcp {closed}: connect: connection refused")
    );
    let plain = Request::get("/x")
        .body(kas_endpoints::body::empty())
        .unwrap();
    let loc = Location {
        path: "/x".into(),
        ..location(closed)
    };
    let err = transport
        .forward(&loc, plain, &Options::default())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("dial tcp {closed}: connect: connection refused")
    );
    let status = err.to_status();
    assert_eq!(status.code, 500);
    let text = err.text_response(StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(text.status(), 503);
    assert_eq!(text.headers()["content-type"], "text/plain; charset=utf-8");
    let plain = Request::get("/x")
        .body(kas_endpoints::body::empty())
        .unwrap();
    let required = Options {
        upgrade_required: true,
        ..Options::default()
    };
    assert!(matches!(
        transport.forward(&loc, plain, &required).await,
        Err(Error::UpgradeRequired)
    ));
}

#[tokio::test]
async fn empty_paths_redirect_and_redirects_may_be_refused() {
    let pki = pki(&["127.0.0.1"]);
    let addr = backend(&pki).await;
    let transport = Transport::new(&trusting(&pki)).unwrap();
    let front_addr = front(transport.clone(), location(addr), Options::default()).await;
    let (_, got) = raw(
        front_addr,
        "GET /root?a=b HTTP/1.1\r\nHost: f\r\n\r\n",
        "\r\n\r\n",
    )
    .await;
    assert!(got.starts_with("HTTP/1.1 301"), "{got}");
    assert!(
        got.to_ascii_lowercase().contains("location: /root/?a=b"),
        "{got}"
    );
    let refusing = Options {
        reject_forwarding_redirects: true,
        ..Options::default()
    };
    let loc = Location {
        path: "/redirect".into(),
        ..location(addr)
    };
    let get = || {
        Request::get("/redirect")
            .body(kas_endpoints::body::empty())
            .unwrap()
    };
    let resp = transport.forward(&loc, get(), &refusing).await.unwrap();
    assert_eq!(resp.status(), 502);
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(
        body,
        "the backend attempted to redirect this request, which is not permitted"
    );
    let resp = transport
        .forward(&loc, get(), &Options::default())
        .await
        .unwrap();
    assert_eq!(resp.status(), 302);
}
