//! CPU per proxied request: kas-delegate's HTTP/2 pool against kas-proxy's
//! `Transport::forward`, to the same TLS backend (a separate process, so only the
//! forwarding side is measured). Process CPU time (user + system, from /proc) over a
//! closed-loop run of GETs with 32 in flight.
//!
//! `cargo run --release -p kas-delegate --example forward_cpu [requests]`

use std::io::{BufRead, BufReader, Write};
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::{TokioExecutor, TokioIo};
use kas_endpoints::{Body, body};
use rustls_pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use tower::Service;

const IN_FLIGHT: usize = 32;
const ANSWER: &[u8] = &[b'x'; 1024];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    if args.get(1).map(String::as_str) == Some("backend") {
        rt.block_on(backend());
        return;
    }
    let requests: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let mut child = std::process::Command::new(std::env::current_exe().expect("exe"))
        .arg("backend")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("backend");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let port = lines.next().expect("port line").expect("port");
    let ca = lines
        .next()
        .expect("ca line")
        .expect("ca")
        .replace("\\n", "\n");
    rt.block_on(async {
        let dir = tempfile::tempdir().expect("tempdir");
        let ca_file = dir.path().join("ca.pem");
        std::fs::write(&ca_file, &ca).expect("ca");
        let tls = kas_tls::client_config(Some(&ca_file), None, vec![b"h2".to_vec()]).expect("tls");
        let delegate = kas_delegate::Delegate::new(&[format!("https://127.0.0.1:{port}")], tls)
            .expect("delegate");
        let transport = kas_proxy::Transport::new(&kas_tls::TlsConfig {
            ca_data: Some(ca.into_bytes()),
            ..kas_tls::TlsConfig::default()
        })
        .expect("transport");
        let location = kas_proxy::Location {
            scheme: "https".into(),
            host: format!("127.0.0.1:{port}"),
            path: "/apis/example.com/v1/things".into(),
            query: String::new(),
        };
        let options = kas_proxy::Options {
            wrap_transport: true,
            reject_forwarding_redirects: true,
            ..kas_proxy::Options::default()
        };
        for round in 0..4 {
            let d = delegate.clone();
            let delegated = run(requests, move || {
                let mut d = d.clone();
                async move { d.call(get()).await.expect("infallible") }
            })
            .await;
            let (t, l) = (transport.clone(), location.clone());
            let proxied = run(requests, move || {
                let (t, l) = (t.clone(), l.clone());
                async move { t.forward(&l, get(), &options).await.expect("forward") }
            })
            .await;
            let t = transport.clone();
            let uri: http::Uri = format!("https://127.0.0.1:{port}/apis/example.com/v1/things")
                .parse()
                .expect("uri");
            let raw = run(requests, move || {
                let (t, uri) = (t.clone(), uri.clone());
                async move {
                    let mut req = get();
                    *req.uri_mut() = uri;
                    t.round_trip(req).await.expect("round trip").map(Body::new)
                }
            })
            .await;
            println!(
                "round {round}: kas-delegate {delegated:.1} µs CPU/request, kas-proxy forward {proxied:.1}, its pooled round trip alone {raw:.1}"
            );
        }
    });
    let _ = child.kill();
    let _ = child.wait();
}

fn get() -> Request<Body> {
    Request::get("/apis/example.com/v1/things")
        .header("accept", "application/json")
        .body(body::empty())
        .expect("request")
}

/// Runs `requests` requests with `IN_FLIGHT` in flight; returns CPU µs per request.
async fn run<F, Fut>(requests: usize, send: F) -> f64
where
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = Response<Body>> + Send,
{
    // Warm the connections.
    for _ in 0..100 {
        drain(send().await).await;
    }
    let cpu = cpu_ticks();
    let start = Instant::now();
    let mut tasks = Vec::new();
    for i in 0..IN_FLIGHT {
        let send = send.clone();
        let share = requests / IN_FLIGHT + usize::from(i < requests % IN_FLIGHT);
        tasks.push(tokio::spawn(async move {
            for _ in 0..share {
                drain(send().await).await;
            }
        }));
    }
    for t in tasks {
        t.await.expect("task");
    }
    let ticks = cpu_ticks() - cpu;
    let elapsed = start.elapsed();
    eprintln!("  {requests} requests in {elapsed:?}");
    ticks as f64 * 10_000.0 / requests as f64
}

async fn drain(resp: Response<Body>) {
    assert_eq!(resp.status(), 200);
    let body = resp.into_body().collect().await.expect("body").to_bytes();
    assert_eq!(body.len(), ANSWER.len());
}

/// utime + stime of this process, in clock ticks (10 ms).
fn cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("stat");
    let after = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    fields[11].parse::<u64>().unwrap_or(0) + fields[12].parse::<u64>().unwrap_or(0)
}

/// A TLS h2 server answering 1 KiB to every request; prints its port and CA.
async fn backend() {
    let ca_key = rcgen::KeyPair::generate().expect("key");
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("ca");
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).expect("ca");
    let issuer = rcgen::Issuer::new(ca_params, &ca_key);
    let key = rcgen::KeyPair::generate().expect("key");
    let cert = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .expect("params")
        .signed_by(&key, &issuer)
        .expect("cert");
    let mut config = rustls::ServerConfig::builder_with_provider(kas_tls::provider())
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.der().clone()],
            PrivateKeyDer::from(PrivatePkcs8KeyDer::from(key.serialize_der())),
        )
        .expect("config");
    config.alpn_protocols = kas_tls::alpn();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    println!("{port}\n{}", ca.pem().replace('\n', "\\n"));
    std::io::stdout().flush().expect("flush");
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            continue;
        };
        let acceptor = acceptor.clone();
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(tcp).await else {
                return;
            };
            let service = hyper::service::service_fn(|_req| async {
                Ok::<_, std::convert::Infallible>(Response::new(Full::new(Bytes::from_static(
                    ANSWER,
                ))))
            });
            let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(tls), service)
                .await;
        });
    }
}
