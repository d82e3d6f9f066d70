//! Streaming lists (`sendInitialEvents=true`, KEP 3157) through the aggregator, as
//! client-go's WatchList and kube-rs's `streaming_lists` ask for them: the current state as
//! ADDED events in key order, the bookmark annotated `k8s.io/initial-events-end` (with the
//! list blueprint client-go requires), then live events; in JSON and in protobuf. Like
//! upstream, the server serves them only over an etcd whose watch progress answers can be
//! trusted (3.4.31+, 3.5.13+); over an older etcd the stream is upstream's single ERROR
//! event, after which clients fall back to a LIST. Also upstream's 422s for bad options.

use std::time::Duration;

use base64::Engine;
use bytes::{Bytes, BytesMut};
use http::{Method, Request};
use http_body_util::{BodyExt, Full};
use kas_apimachinery::protobuf;
use kas_e2e::client::{Proto, Tls, connect_h2, request, request_with_body};
use kas_e2e::{Role, TestCluster, start_cluster};
use serde_json::{Value, json};

/// A cluster whose core-apiserver has the WatchList gate on (off by default in 1.33).
fn watch_list_cluster() -> TestCluster {
    start_cluster(|spec| {
        spec.extra_args.insert(
            Role::Core,
            vec!["--feature-gates=WatchList=true".to_owned()],
        );
    })
}

const WATCH_LIST: &str =
    "watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan";
const DISABLED: &str = "a watch stream was requested by the client but the required storage feature RequestWatchProgress is disabled";
const END: &str = "k8s.io/initial-events-end";
const BLUEPRINT: &str = "kubernetes.io/initial-events-list-blueprint";
const PB: &str = "application/vnd.kubernetes.protobuf";
const TIMEOUT: Duration = Duration::from_secs(20);

struct Api {
    base: String,
    bearer: String,
    tls: Tls,
}

impl Api {
    fn new(c: &TestCluster) -> Api {
        Api {
            base: format!(
                "{}/api/v1/namespaces/default/configmaps",
                c.url(Role::Aggregator, 0)
            ),
            bearer: c.bearer(),
            tls: c.admin_tls(Proto::H2),
        }
    }

    async fn create(&self, name: &str) -> u64 {
        let body = json!({"metadata": {"name": name}, "data": {"k": "v"}}).to_string();
        let headers = [
            ("authorization", self.bearer.as_str()),
            ("content-type", "application/json"),
        ];
        let a = request_with_body(
            &self.base,
            Method::POST,
            &headers,
            body.into(),
            &self.tls,
            Proto::H2,
        )
        .await
        .unwrap();
        assert_eq!(a.status, 201, "{}", a.text());
        rv(&a.json()["metadata"])
    }

    async fn get(&self, query: &str) -> kas_e2e::client::Answer {
        let headers = [("authorization", self.bearer.as_str())];
        let url = format!("{}?{query}", self.base);
        request(&url, Method::GET, &headers, &self.tls, Proto::H2)
            .await
            .unwrap()
    }

    /// Opens a watch and hands back its body as it streams.
    async fn watch(&self, query: &str, accept: &str) -> Stream {
        let url: http::Uri = format!("{}?{query}", self.base).parse().unwrap();
        let mut sender = connect_h2(&url, &self.tls).await.unwrap();
        let req = Request::get(url)
            .header("authorization", &self.bearer)
            .header("accept", accept)
            .body(Full::new(Bytes::new()))
            .unwrap();
        let resp = sender.send_request(req).await.unwrap();
        assert_eq!(resp.status(), 200);
        Stream {
            body: resp.into_body(),
            buf: BytesMut::new(),
            _sender: sender,
        }
    }
}

struct Stream {
    body: hyper::body::Incoming,
    buf: BytesMut,
    _sender: kas_e2e::client::Sender,
}

impl Stream {
    async fn more(&mut self) {
        loop {
            let frame = tokio::time::timeout(TIMEOUT, self.body.frame())
                .await
                .expect("the watch sends in time")
                .expect("the watch stays open")
                .expect("the body reads");
            if let Ok(data) = frame.into_data() {
                self.buf.extend_from_slice(&data);
                return;
            }
        }
    }

    /// The next JSON event line.
    async fn json_event(&mut self) -> Value {
        loop {
            if let Some(end) = self.buf.iter().position(|&b| b == b'\n') {
                let line = self.buf.split_to(end + 1);
                return serde_json::from_slice(&line).unwrap();
            }
            self.more().await;
        }
    }

    /// The next protobuf frame: its type and the object's envelope.
    async fn protobuf_event(&mut self) -> (String, protobuf::Unknown) {
        loop {
            if let Some((frame, rest)) = protobuf::next_frame(&self.buf) {
                let event = protobuf::decode_watch_event(frame).unwrap();
                let unknown = protobuf::decode_envelope(&event.object).unwrap();
                let used = self.buf.len() - rest.len();
                let _ = self.buf.split_to(used);
                return (event.event_type, unknown);
            }
            self.more().await;
        }
    }
}

fn rv(meta: &Value) -> u64 {
    meta["resourceVersion"].as_str().unwrap().parse().unwrap()
}

/// Whether the cluster's etcd answers progress requests reliably (upstream's rule).
async fn progress_supported(c: &TestCluster) -> bool {
    let mut client = etcd_client::Client::connect([c.etcd_url()], None)
        .await
        .unwrap();
    let status = client.status().await.unwrap();
    let v: Vec<u64> = status
        .version()
        .split(['.', '-'])
        .take(3)
        .map(|p| p.parse().unwrap_or(0))
        .collect();
    let v = (v[0], v[1], v[2]);
    !(v < (3, 4, 31) || ((3, 5, 0)..(3, 5, 13)).contains(&v))
}

fn assert_refused(event: &Value) {
    assert_eq!(event["type"], "ERROR", "{event}");
    let status = &event["object"];
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["code"], 500);
    assert_eq!(status["reason"], "InternalError");
    assert_eq!(status["message"], DISABLED);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_streaming_list_over_json() {
    let c = watch_list_cluster();
    let api = Api::new(&c);
    let b = api.create("wl-b").await;
    let a = api.create("wl-a").await;
    let supported = progress_supported(&c).await;
    let mut w = api.watch(WATCH_LIST, "application/json").await;
    if !supported {
        return assert_refused(&w.json_event().await);
    }
    let mut names = Vec::new();
    let bookmark = loop {
        let e = w.json_event().await;
        match e["type"].as_str() {
            Some("ADDED") => names.push(e["object"]["metadata"]["name"].clone()),
            Some("BOOKMARK") => break e["object"].clone(),
            _ => panic!("unexpected {e}"),
        }
    };
    let ours: Vec<_> = names
        .iter()
        .filter(|n| n.as_str().unwrap_or("").starts_with("wl-"))
        .collect();
    assert_eq!(ours, ["wl-a", "wl-b"], "in key order");
    let meta = &bookmark["metadata"];
    assert_eq!(bookmark["kind"], "ConfigMap");
    assert_eq!(meta["annotations"][END], "true");
    assert!(rv(meta) >= a.max(b), "consistent: {meta}");
    let blueprint = base64::engine::general_purpose::STANDARD
        .decode(meta["annotations"][BLUEPRINT].as_str().unwrap())
        .unwrap();
    assert_eq!(
        String::from_utf8(blueprint).unwrap(),
        "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":{},\"items\":null}\n"
    );
    let live = api.create("wl-live").await;
    let e = w.json_event().await;
    assert_eq!(e["type"], "ADDED", "{e}");
    assert_eq!(e["object"]["metadata"]["name"], "wl-live");
    assert_eq!(rv(&e["object"]["metadata"]), live);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_streaming_list_over_protobuf() {
    let c = watch_list_cluster();
    let api = Api::new(&c);
    api.create("pb-a").await;
    let supported = progress_supported(&c).await;
    let mut w = api.watch(WATCH_LIST, PB).await;
    let (kind, unknown) = w.protobuf_event().await;
    if !supported {
        assert_eq!(kind, "ERROR");
        let status = protobuf::decode(&unknown.raw, &kas_api::meta::v1::STATUS).unwrap();
        assert_eq!(status["message"], DISABLED);
        return;
    }
    let (mut kind, mut unknown) = (kind, unknown);
    while kind == "ADDED" {
        (kind, unknown) = w.protobuf_event().await;
    }
    assert_eq!(kind, "BOOKMARK");
    let object = protobuf::decode(&unknown.raw, &kas_api::core::v1::CONFIG_MAP).unwrap();
    let annotations = &object["metadata"]["annotations"];
    assert_eq!(annotations[END], "true");
    let blueprint = base64::engine::general_purpose::STANDARD
        .decode(annotations[BLUEPRINT].as_str().unwrap())
        .unwrap();
    let list = protobuf::decode_envelope(&blueprint).unwrap();
    assert_eq!(
        (list.api_version.as_str(), list.kind.as_str()),
        ("v1", "ConfigMapList")
    );
    api.create("pb-live").await;
    let (kind, unknown) = w.protobuf_event().await;
    assert_eq!(kind, "ADDED");
    let object = protobuf::decode(&unknown.raw, &kas_api::core::v1::CONFIG_MAP).unwrap();
    assert_eq!(object["metadata"]["name"], "pb-live");
}

#[tokio::test(flavor = "multi_thread")]
async fn kube_rs_streaming_lists() {
    use futures_util::{StreamExt, TryStreamExt};
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{WatchEvent, WatchParams};

    let c = watch_list_cluster();
    let api = Api::new(&c);
    api.create("rs-a").await;
    let supported = progress_supported(&c).await;
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let kubeconfig = kube::config::Kubeconfig::read_from(c.kubeconfig_path()).unwrap();
    let options = kube::config::KubeConfigOptions::default();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .unwrap();
    let client = kube::Client::try_from(config).unwrap();
    let cms: kube::Api<ConfigMap> = kube::Api::namespaced(client, "default");
    let mut events = cms
        .watch(&WatchParams::streaming_lists(), "")
        .await
        .unwrap()
        .boxed();
    let next = |e: Option<WatchEvent<ConfigMap>>| e.expect("an event");
    let mut first = next(
        tokio::time::timeout(TIMEOUT, events.try_next())
            .await
            .unwrap()
            .unwrap(),
    );
    if !supported {
        match first {
            WatchEvent::Error(e) => assert_eq!((e.code, e.message.as_str()), (500, DISABLED)),
            _ => panic!("expected upstream's refusal"),
        }
        return;
    }
    while let WatchEvent::Added(_) = first {
        first = next(
            tokio::time::timeout(TIMEOUT, events.try_next())
                .await
                .unwrap()
                .unwrap(),
        );
    }
    match first {
        WatchEvent::Bookmark(b) => {
            assert_eq!(
                b.metadata.annotations.get(END).map(String::as_str),
                Some("true")
            )
        }
        _ => panic!("expected the initial-events-end bookmark"),
    }
}

/// 1.33's default: the WatchList gate is off and a streaming list is refused up front.
#[tokio::test(flavor = "multi_thread")]
async fn streaming_lists_are_refused_with_the_gate_off() {
    let c = start_cluster(|_| {});
    let api = Api::new(&c);
    let a = api
        .get("watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true")
        .await;
    assert_eq!(a.status, 422, "{}", a.text());
    assert_eq!(
        a.json()["message"],
        "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn invalid_streaming_list_options_are_upstreams_422s() {
    let c = watch_list_cluster();
    let api = Api::new(&c);
    let prefix = "ListOptions.meta.k8s.io \"\" is invalid: ";
    let cases = [
        (
            "watch=true&sendInitialEvents=true&allowWatchBookmarks=true",
            "resourceVersionMatch",
            "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ),
        (
            "watch=true&resourceVersionMatch=NotOlderThan",
            "resourceVersionMatch",
            "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
        ),
        (
            "sendInitialEvents=true",
            "sendInitialEvents",
            "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list",
        ),
    ];
    for (query, field, message) in cases {
        let a = api.get(query).await;
        assert_eq!(a.status, 422, "{query}: {}", a.text());
        let status = a.json();
        assert_eq!(status["reason"], "Invalid");
        assert_eq!(status["message"], format!("{prefix}{message}"), "{query}");
        assert_eq!(status["details"]["kind"], "ListOptions");
        assert_eq!(status["details"]["group"], "meta.k8s.io");
        let cause = &status["details"]["causes"][0];
        assert_eq!(cause["reason"], "FieldValueForbidden");
        assert_eq!(cause["field"], field);
    }
    let a = api
        .get(
            "watch=true&sendInitialEvents=true&resourceVersionMatch=Exact&allowWatchBookmarks=true",
        )
        .await;
    assert_eq!(a.status, 422);
    let causes = a.json()["details"]["causes"].clone();
    assert_eq!(causes[1]["reason"], "FieldValueNotSupported");
    assert_eq!(
        causes[1]["message"],
        "Unsupported value: \"Exact\": supported values: \"NotOlderThan\""
    );
}
