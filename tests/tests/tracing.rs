//! Tracing end to end: every role configured with upstream's documented endpoint form
//! (`endpoint: 127.0.0.1:<port>`, no scheme, plain gRPC) starts, and a sampled request's
//! spans from all three roles reach a small OTLP gRPC collector under one trace.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Method, Request, Response};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper_util::rt::{TokioExecutor, TokioIo};
use kas_e2e::client::{Proto, request};
use kas_e2e::{Role, start_cluster};

const EXPORT_PATH: &str = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";

/// The bodies of the OTLP `Export` calls received, as gRPC framed them.
type Received = Arc<Mutex<Vec<Bytes>>>;

/// An OTLP trace collector over HTTP/2 without TLS: it keeps every `Export` request and
/// answers each with an empty `ExportTraceServiceResponse` and `grpc-status: 0`.
async fn collector() -> (u16, Received) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let received = Received::default();
    let store = received.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let store = store.clone();
            let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                let store = store.clone();
                async move { Ok::<_, Infallible>(export(req, &store).await) }
            });
            tokio::spawn(
                hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(tcp), service),
            );
        }
    });
    (port, received)
}

type GrpcBody =
    StreamBody<futures_util::stream::Iter<std::vec::IntoIter<Result<Frame<Bytes>, Infallible>>>>;

async fn export(req: Request<Incoming>, store: &Received) -> Response<GrpcBody> {
    let path_ok = req.uri().path() == EXPORT_PATH;
    if let Ok(body) = req.into_body().collect().await
        && path_ok
    {
        store.lock().unwrap().push(body.to_bytes());
    }
    let mut trailers = http::HeaderMap::new();
    let status = if path_ok { "0" } else { "12" };
    trailers.insert("grpc-status", status.parse().unwrap());
    // One uncompressed, empty message: the response has no fields to set.
    let frames = vec![
        Ok(Frame::data(Bytes::from_static(&[0, 0, 0, 0, 0]))),
        Ok(Frame::trailers(trailers)),
    ];
    Response::builder()
        .header("content-type", "application/grpc")
        .body(StreamBody::new(futures_util::stream::iter(frames)))
        .unwrap()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[tokio::test]
async fn upstreams_endpoint_form_exports_one_trace_across_all_three_roles() {
    let (port, received) = collector().await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("tracing.yaml");
    // Upstream's documented file; no sampling rate: only sampled parents are traced.
    std::fs::write(
        &config,
        format!(
            "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: TracingConfiguration\nendpoint: 127.0.0.1:{port}\n"
        ),
    )
    .unwrap();
    let c = start_cluster(|s| {
        for role in [Role::Aggregator, Role::Core, Role::Extensions] {
            s.extra_args.insert(
                role,
                vec!["--tracing-config-file".into(), config.display().to_string()],
            );
        }
    });

    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let parent_id = "00f067aa0ba902b7";
    let traceparent = format!("00-{trace_id}-{parent_id}-01");
    let bearer = c.bearer();
    // A path nobody serves crosses aggregator, core and extensions.
    let url = format!(
        "{}/apis/nope.example.com/v1/things",
        c.url(Role::Aggregator, 0)
    );
    let headers = [
        ("authorization", bearer.as_str()),
        ("traceparent", traceparent.as_str()),
    ];
    let a = request(
        &url,
        Method::GET,
        &headers,
        &c.admin_tls(Proto::H2),
        Proto::H2,
    )
    .await
    .unwrap();
    assert_eq!(a.status, 404, "{}", a.text());

    // The exporters send in batches (every 5 s by default).
    let (trace_id, parent_id) = (hex(trace_id), hex(parent_id));
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut missing: Vec<&str> = vec!["aggregator", "core-apiserver", "extensions-apiserver"];
    while !missing.is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let bodies = received.lock().unwrap().clone();
        missing.retain(|role| {
            !bodies.iter().any(|b| {
                contains(b, &trace_id) && contains(b, role.as_bytes()) && {
                    // The aggregator's span is the child of the client's.
                    *role != "aggregator" || contains(b, &parent_id)
                }
            })
        });
    }
    assert!(
        missing.is_empty(),
        "no span of trace {trace_id:02x?} from {missing:?}; {} export calls received",
        received.lock().unwrap().len()
    );
}
