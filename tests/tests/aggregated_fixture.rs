//! The fixture of the aggregation tests, without any aggregation: `kas-test-apiserver` in a
//! network namespace of its own, reached from the host at its endpoint address and at a
//! claimed ClusterIP with the cluster's front-proxy client certificate, as the aggregator
//! will reach it; its Service, Endpoints and EndpointSlice accepted by the cluster.

use std::time::Duration;

use bytes::Bytes;
use http::{Method, StatusCode};
use http_body_util::{BodyExt, Full};
use kas_e2e::aggregated::{TestApiserver, TestApiserverSpec};
use kas_e2e::client::{self, Answer, Proto, Tls};
use kas_e2e::test_apiserver::DiscoveryFailure;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const GV: &str = "/apis/wardle.example.com/v1alpha1";

/// What the aggregator sends for user alice.
const ALICE: [(&str, &str); 6] = [
    ("x-remote-user", "alice"),
    ("x-remote-uid", "alice-uid"),
    ("x-remote-group", "wardlers"),
    ("x-remote-group", "system:authenticated"),
    ("x-remote-extra-scopes", "read"),
    ("x-remote-extra-example.com%2fteam", "blue"),
];

async fn call(
    url: &str,
    method: Method,
    headers: &[(&str, &str)],
    body: Value,
    tls: &Tls,
) -> Answer {
    let body = match body {
        Value::Null => Bytes::new(),
        v => Bytes::from(v.to_string()),
    };
    let mut all = vec![("content-type", "application/json")];
    all.extend_from_slice(headers);
    client::request_with_body(url, method, &all, body, tls, Proto::H2)
        .await
        .unwrap_or_else(|e| panic!("{url}: {e}"))
}

/// GET as alice.
async fn get(url: &str, tls: &Tls) -> Answer {
    call(url, Method::GET, &ALICE, Value::Null, tls).await
}

/// POST `body` as alice.
async fn post(url: &str, body: Value, tls: &Tls) -> Answer {
    call(url, Method::POST, &ALICE, body, tls).await
}

async fn discovery(backend: &TestApiserver, base: std::net::Ipv4Addr, tls: &Tls) {
    let groups = get(&backend.url_at(base, "/apis"), tls).await;
    assert_eq!(groups.status, StatusCode::OK, "{}", groups.text());
    assert_eq!(groups.json()["kind"], "APIGroupList");
    assert_eq!(
        groups.json()["groups"][0]["preferredVersion"]["groupVersion"],
        "wardle.example.com/v1alpha1"
    );

    let accept =
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
    let mut headers = ALICE.to_vec();
    headers.push(("accept", accept));
    let aggregated = call(
        &backend.url_at(base, "/apis"),
        Method::GET,
        &headers,
        Value::Null,
        tls,
    )
    .await;
    assert_eq!(
        aggregated.headers["content-type"],
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    );
    let resources = &aggregated.json()["items"][0]["versions"][0]["resources"];
    assert_eq!(resources[1]["resource"], "flunders");
    assert_eq!(resources[0]["scope"], "Cluster");

    let list = get(&backend.url_at(base, GV), tls).await;
    assert_eq!(list.json()["kind"], "APIResourceList");
}

async fn openapi(backend: &TestApiserver, tls: &Tls) {
    let v2 = get(&backend.url("/openapi/v2"), tls).await;
    let flunder = &v2.json()["definitions"]["com.example.wardle.v1alpha1.Flunder"];
    assert_eq!(
        flunder["x-kubernetes-group-version-kind"][0]["kind"],
        "Flunder"
    );
    let index = get(&backend.url("/openapi/v3"), tls).await;
    let url = index.json()["paths"]["apis/wardle.example.com/v1alpha1"]["serverRelativeURL"]
        .as_str()
        .expect("the group-version in the v3 index")
        .to_owned();
    let v3 = get(&backend.url(&url), tls).await;
    assert!(v3.json()["components"]["schemas"]["com.example.wardle.v1alpha1.Fischer"].is_object());
}

/// Opens a watch on a connection of its own and returns its response body.
async fn watch(url: &str, tls: &Tls) -> hyper::body::Incoming {
    let uri: http::Uri = url.parse().unwrap();
    let mut sender = client::connect_h2(&uri, tls).await.unwrap();
    let mut req = http::Request::get(uri)
        .body(Full::new(Bytes::new()))
        .unwrap();
    for (k, v) in ALICE {
        req.headers_mut().append(k, v.parse().unwrap());
    }
    let resp = sender.send_request(req).await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    resp.into_body()
}

/// The next watch event.
async fn next_event(body: &mut hyper::body::Incoming) -> Value {
    let frame = tokio::time::timeout(Duration::from_secs(10), body.frame())
        .await
        .expect("an event within 10s")
        .expect("the watch is open")
        .expect("a frame");
    let data = frame.into_data().expect("data");
    serde_json::from_slice(&data).expect("one JSON event per frame")
}

async fn objects(backend: &TestApiserver, tls: &Tls) {
    let flunders = format!("{GV}/namespaces/wardle/flunders");
    let created = post(
        &backend.url(&flunders),
        json!({"metadata": {"name": "f1"}}),
        tls,
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    let annotations = &created.json()["metadata"]["annotations"];
    assert_eq!(annotations["kas.test/user"], "alice");
    assert_eq!(annotations["kas.test/uid"], "alice-uid");
    assert_eq!(
        annotations["kas.test/groups"],
        r#"["wardlers","system:authenticated"]"#
    );
    assert_eq!(
        annotations["kas.test/extra"],
        r#"{"example.com/team":["blue"],"scopes":["read"]}"#
    );

    let again = post(
        &backend.url(&flunders),
        json!({"metadata": {"name": "f1"}}),
        tls,
    )
    .await;
    assert_eq!(again.status, StatusCode::CONFLICT);
    assert_eq!(again.json()["reason"], "AlreadyExists");
    let missing = get(&backend.url(&format!("{flunders}/nope")), tls).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert_eq!(
        missing.json()["message"],
        r#"flunders.wardle.example.com "nope" not found"#
    );
    let got = get(&backend.url(&format!("{flunders}/f1")), tls).await;
    assert_eq!(
        got.json()["metadata"]["uid"],
        created.json()["metadata"]["uid"]
    );

    let list = get(&backend.url(&flunders), tls).await;
    assert_eq!(list.json()["kind"], "FlunderList");
    let rv = list.json()["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut events = watch(
        &backend.url(&format!("{flunders}?watch=true&resourceVersion={rv}")),
        tls,
    )
    .await;
    let f2 = json!({"metadata": {"generateName": "f-"}});
    let f2 = post(&backend.url(&flunders), f2, tls).await.json();
    let event = next_event(&mut events).await;
    assert_eq!(event["type"], "ADDED", "{event}");
    assert_eq!(
        event["object"]["metadata"]["name"], f2["metadata"]["name"],
        "only what came after the list"
    );
}

async fn echo(backend: &TestApiserver, proxy: (&std::path::Path, &std::path::Path)) {
    let tls = backend.tls(Some(proxy), Proto::H1);
    let url = backend.url(&format!("{GV}/namespaces/wardle/flunders/f1/echo"));
    let (head, stream) = client::upgrade(&url, Method::POST, "kas-echo", &ALICE, &tls)
        .await
        .unwrap();
    assert_eq!(
        head.status,
        StatusCode::SWITCHING_PROTOCOLS,
        "{}",
        head.text()
    );
    let mut stream = stream.expect("the upgraded connection");
    stream.write_all(b"ping through").await.unwrap();
    let mut back = [0u8; 12];
    tokio::time::timeout(Duration::from_secs(10), stream.read_exact(&mut back))
        .await
        .expect("the echo within 10s")
        .unwrap();
    assert_eq!(&back, b"ping through");
}

async fn authentication(cluster: &kas_e2e::TestCluster, backend: &TestApiserver) {
    let anonymous = backend.tls(None, Proto::H2);
    let refused = call(
        &backend.url("/apis"),
        Method::GET,
        &ALICE,
        Value::Null,
        &anonymous,
    )
    .await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    assert_eq!(refused.json()["reason"], "Unauthorized");
    let health = call(
        &backend.url("/healthz"),
        Method::GET,
        &[],
        Value::Null,
        &anonymous,
    )
    .await;
    assert_eq!(health.status, StatusCode::OK);

    let dir = tempfile::tempdir().unwrap();
    let (cert, key) =
        kas_e2e::pki::sign_client(&cluster.pki().front_proxy_ca, "intruder", dir.path()).unwrap();
    let intruder = backend.tls(Some((&cert, &key)), Proto::H2);
    let refused = call(
        &backend.url("/apis"),
        Method::GET,
        &ALICE,
        Value::Null,
        &intruder,
    )
    .await;
    assert_eq!(
        refused.status,
        StatusCode::UNAUTHORIZED,
        "a CN not in --requestheader-allowed-names"
    );

    let admin = &cluster.pki().admin;
    let stranger = backend.tls(Some((&admin.cert, &admin.key)), Proto::H2);
    let url = backend.url("/apis");
    let handshake = client::request(&url, Method::GET, &ALICE, &stranger, Proto::H2).await;
    assert!(
        handshake.is_err(),
        "a certificate of another CA is refused: {handshake:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_test_apiserver_serves_the_front_proxy_from_its_namespace() {
    let cluster = kas_e2e::start_cluster(|_| {});
    let mut backend = TestApiserver::start(TestApiserverSpec::for_cluster(&cluster));
    let cluster_ip = backend.cluster_ip().expect("a ClusterIP");
    let applied = cluster.kubectl_stdin(&["apply"], &backend.service_manifests());
    assert!(
        applied.status.success(),
        "{}",
        String::from_utf8_lossy(&applied.stderr)
    );
    let service = cluster.kubectl_json(&["get", "service", "-n", "wardle", "api"]);
    assert_eq!(service["spec"]["clusterIP"], cluster_ip.to_string());

    let fp = &cluster.pki().front_proxy_client;
    let proxy = (fp.cert.as_path(), fp.key.as_path());
    let tls = backend.tls(Some(proxy), Proto::H2);
    discovery(&backend, backend.ip(), &tls).await;
    discovery(&backend, cluster_ip, &tls).await;
    openapi(&backend, &tls).await;
    objects(&backend, &tls).await;
    echo(&backend, proxy).await;
    authentication(&cluster, &backend).await;

    backend
        .set_discovery_failure(proxy, DiscoveryFailure::Error)
        .await;
    let failing = get(&backend.url(GV), &tls).await;
    assert_eq!(failing.status, StatusCode::INTERNAL_SERVER_ERROR);
    backend
        .set_discovery_failure(proxy, DiscoveryFailure::None)
        .await;

    backend.kill();
    let dead = client::request(&backend.url("/healthz"), Method::GET, &[], &tls, Proto::H2).await;
    assert!(dead.is_err(), "killed, yet it answers");
    backend.restart();
    let back = get(&backend.url_at(cluster_ip, GV), &tls).await;
    assert_eq!(
        back.status,
        StatusCode::OK,
        "restarted at the same addresses"
    );
}
