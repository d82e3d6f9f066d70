//! The aggregation layer end to end: `kas-test-apiserver` in a network namespace of its own,
//! behind a Service whose EndpointSlice names its address, registered with an APIService;
//! reached through the aggregator with the user's identity, its availability followed, and
//! its group degraded alone when it dies.

use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Method, StatusCode};
use http_body_util::{BodyExt, Full};
use kas_e2e::aggregated::{TestApiserver, TestApiserverSpec};
use kas_e2e::client::{self, Proto};
use kas_e2e::{Role, TestCluster, start_cluster};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const FLUNDERS: &str = "/apis/wardle.example.com/v1alpha1/namespaces/wardle/flunders";

fn apply(c: &TestCluster, manifests: &str) {
    let out = c.kubectl_stdin(&["apply"], manifests);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Waits until the APIService's Available condition has `status` and `reason`; the
/// condition.
fn available(c: &TestCluster, name: &str, status: &str, reason: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let api_service = c.kubectl_json(&["get", "apiservice", name]);
        let condition = api_service["status"]["conditions"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["type"] == "Available"))
            .cloned()
            .unwrap_or(Value::Null);
        if condition["status"] == status && condition["reason"] == reason {
            return condition;
        }
        assert!(
            Instant::now() < deadline,
            "{name}: want {status} {reason}: {condition}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A backend registered behind its Service and APIService, Available.
fn registered(c: &TestCluster, spec: TestApiserverSpec) -> TestApiserver {
    let backend = TestApiserver::start(spec);
    apply(c, &backend.service_manifests());
    apply(c, &backend.apiservice_manifest());
    let condition = available(c, &backend.apiservice_name(), "True", "Passed");
    assert_eq!(condition["message"], "all checks passed");
    backend
}

async fn send(c: &TestCluster, method: Method, path: &str, body: Value) -> client::Answer {
    let body = if body.is_null() {
        String::new()
    } else {
        body.to_string()
    };
    c.send(method, path, &[("content-type", "application/json")], &body)
        .await
}

/// Opens a watch through the aggregator on a connection of its own.
async fn watch(c: &TestCluster, path: &str) -> hyper::body::Incoming {
    let uri: http::Uri = format!("{}{path}", c.url(Role::Aggregator, 0))
        .parse()
        .unwrap();
    let mut sender = client::connect_h2(&uri, &c.admin_tls(Proto::H2))
        .await
        .unwrap();
    let req = http::Request::get(uri)
        .header("authorization", c.bearer())
        .body(Full::new(Bytes::new()))
        .unwrap();
    let resp = sender.send_request(req).await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    resp.into_body()
}

async fn next_event(body: &mut hyper::body::Incoming) -> Value {
    let frame = tokio::time::timeout(Duration::from_secs(10), body.frame())
        .await
        .expect("an event within 10s")
        .expect("the watch is open")
        .expect("a frame");
    serde_json::from_slice(&frame.into_data().expect("data")).expect("one JSON event per frame")
}

/// create, get, list and watch through the aggregator reach the backend as the user.
async fn objects_reach_the_backend(c: &TestCluster) {
    let created = send(
        c,
        Method::POST,
        FLUNDERS,
        json!({"metadata": {"name": "f1"}}),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    let annotations = &created.json()["metadata"]["annotations"];
    assert_eq!(annotations["kas.test/user"], "admin", "{annotations}");
    assert_eq!(annotations["kas.test/uid"], "admin-uid", "{annotations}");
    let groups: Vec<String> =
        serde_json::from_str(annotations["kas.test/groups"].as_str().unwrap()).unwrap();
    assert!(groups.contains(&"system:masters".to_owned()), "{groups:?}");
    assert!(
        groups.contains(&"system:authenticated".to_owned()),
        "{groups:?}"
    );

    let got = send(c, Method::GET, &format!("{FLUNDERS}/f1"), Value::Null).await;
    assert_eq!(
        got.json()["metadata"]["uid"],
        created.json()["metadata"]["uid"]
    );
    let missing = send(c, Method::GET, &format!("{FLUNDERS}/nope"), Value::Null).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert_eq!(
        missing.json()["message"],
        r#"flunders.wardle.example.com "nope" not found"#
    );

    let list = send(c, Method::GET, FLUNDERS, Value::Null).await;
    assert_eq!(list.json()["kind"], "FlunderList");
    let rv = list.json()["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut events = watch(c, &format!("{FLUNDERS}?watch=true&resourceVersion={rv}")).await;
    let f2 = send(
        c,
        Method::POST,
        FLUNDERS,
        json!({"metadata": {"name": "f2"}}),
    )
    .await;
    assert_eq!(f2.status, StatusCode::CREATED);
    let event = next_event(&mut events).await;
    assert_eq!(
        (&event["type"], &event["object"]["metadata"]["name"]),
        (&json!("ADDED"), &json!("f2"))
    );
}

/// A connection upgrade crosses the aggregator to the backend and back.
async fn upgrades_pass_through(c: &TestCluster) {
    let url = format!("{}{FLUNDERS}/f1/echo", c.url(Role::Aggregator, 0));
    let bearer = c.bearer();
    let headers = [("authorization", bearer.as_str())];
    let (head, stream) = client::upgrade(
        &url,
        Method::POST,
        "kas-echo",
        &headers,
        &c.admin_tls(Proto::H1),
    )
    .await
    .unwrap();
    assert_eq!(
        head.status,
        StatusCode::SWITCHING_PROTOCOLS,
        "{}",
        head.text()
    );
    let mut stream = stream.expect("the upgraded connection");
    stream.write_all(b"through the aggregator").await.unwrap();
    let mut back = [0u8; 22];
    tokio::time::timeout(Duration::from_secs(10), stream.read_exact(&mut back))
        .await
        .expect("the echo within 10s")
        .unwrap();
    assert_eq!(&back, b"through the aggregator");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_aggregated_server_is_reached_through_its_cluster_ip() {
    let c = start_cluster(|_| {});
    let mut backend = registered(&c, TestApiserverSpec::for_cluster(&c));
    objects_reach_the_backend(&c).await;
    upgrades_pass_through(&c).await;

    // Killed: the check fails with upstream's words, its group answers upstream's 503,
    // the built-in groups keep working.
    backend.kill();
    let name = backend.apiservice_name();
    let condition = available(&c, &name, "False", "FailedDiscoveryCheck");
    let message = condition["message"].as_str().unwrap();
    let ip = backend.cluster_ip().unwrap();
    let url = format!("https://{ip}:443/apis/wardle.example.com/v1alpha1");
    assert!(
        message.starts_with(&format!("failing or missing response from {url}: Get \"{url}\": dial tcp {ip}:443: connect: connection refused")),
        "{message}"
    );
    let down = send(&c, Method::GET, FLUNDERS, Value::Null).await;
    assert_eq!(down.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(down.text(), "service unavailable\n");
    assert_eq!(down.headers["content-type"], "text/plain; charset=utf-8");
    let table = c.kubectl_ok(&["get", "apiservice", &name]);
    assert!(table.contains("False (FailedDiscoveryCheck)"), "{table}");
    c.kubectl_ok(&["get", "configmaps", "-A"]);

    // Back: available again, and served.
    backend.restart();
    available(&c, &name, "True", "Passed");
    let created = send(
        &c,
        Method::POST,
        FLUNDERS,
        json!({"metadata": {"name": "again"}}),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
}

#[tokio::test(flavor = "multi_thread")]
async fn aggregator_routing_reaches_the_endpoints_and_a_failing_discovery_is_unavailable() {
    let c = start_cluster(|spec| {
        spec.extra_args.insert(
            Role::Aggregator,
            vec!["--enable-aggregator-routing=true".to_owned()],
        );
    });
    // No ClusterIP route: only the endpoint's address reaches the server.
    let mut spec = TestApiserverSpec::for_cluster(&c);
    spec.cluster_ip_range = None;
    let backend = registered(&c, spec);
    objects_reach_the_backend(&c).await;

    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = kas_e2e::pki::sign_client(
        &c.pki().front_proxy_ca,
        kas_local::pki::FRONT_PROXY_CLIENT_COMMON_NAME,
        dir.path(),
    )
    .unwrap();
    backend
        .set_discovery_failure(
            (&cert, &key),
            kas_e2e::test_apiserver::DiscoveryFailure::Error,
        )
        .await;
    let name = backend.apiservice_name();
    let condition = available(&c, &name, "False", "FailedDiscoveryCheck");
    let url = format!(
        "https://{}:443/apis/wardle.example.com/v1alpha1",
        backend.ip()
    );
    assert_eq!(
        condition["message"],
        format!("failing or missing response from {url}: bad status from {url}: 500")
    );
    let down = send(&c, Method::GET, FLUNDERS, Value::Null).await;
    assert_eq!(down.status, StatusCode::SERVICE_UNAVAILABLE);
}
