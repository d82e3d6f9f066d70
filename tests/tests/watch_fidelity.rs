//! Watches as upstream ends and fails them, through the aggregator: a watch that allows
//! bookmarks gets one before its `timeoutSeconds` deadline (upstream's cacher schedules it
//! at the deadline minus 2 s), in JSON and in protobuf; a watch from a resourceVersion the
//! server can no longer serve is a 200 whose one event is an ERROR with a 410 `Expired`
//! Status, from the watch cache (configmaps) and from etcd (events, which have no cache);
//! a negative `timeoutSeconds` has already expired: a 200 whose stream ends at once.

use std::time::{Duration, Instant};

use http::Method;
use kas_apimachinery::protobuf;
use kas_e2e::client::{Answer, Proto, Tls, request, request_with_body};
use kas_e2e::{Role, TestCluster, start_cluster};
use serde_json::{Value, json};

const JSON: &str = "application/json";
const PB: &str = "application/vnd.kubernetes.protobuf";

struct Api {
    base: String,
    bearer: String,
    tls: Tls,
}

impl Api {
    fn new(c: &TestCluster) -> Api {
        Api {
            base: format!("{}/api/v1/namespaces/default", c.url(Role::Aggregator, 0)),
            bearer: c.bearer(),
            tls: c.admin_tls(Proto::H2),
        }
    }

    /// Creates `body` in `resource`; its resourceVersion.
    async fn create(&self, resource: &str, body: Value) -> u64 {
        let headers = [
            ("authorization", self.bearer.as_str()),
            ("content-type", JSON),
        ];
        let url = format!("{}/{resource}", self.base);
        let body = body.to_string().into();
        let a = request_with_body(&url, Method::POST, &headers, body, &self.tls, Proto::H2)
            .await
            .unwrap();
        assert_eq!(a.status, 201, "{}", a.text());
        a.json()["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap()
    }

    async fn configmap(&self, name: &str) -> u64 {
        self.create("configmaps", json!({"metadata": {"name": name}}))
            .await
    }

    async fn event(&self, name: &str) -> u64 {
        let event = json!({
            "metadata": {"name": name},
            "involvedObject": {"kind": "Pod", "name": "pod-a", "namespace": "default"},
            "reason": "Pulled",
            "type": "Normal",
        });
        self.create("events", event).await
    }

    /// A watch read to its end; with how long the server kept it open.
    async fn watch(&self, resource: &str, query: &str, accept: &str) -> (Answer, Duration) {
        let url = format!("{}/{resource}?watch=true&{query}", self.base);
        let headers = [("authorization", self.bearer.as_str()), ("accept", accept)];
        let started = Instant::now();
        let answer = tokio::time::timeout(
            Duration::from_secs(30),
            request(&url, Method::GET, &headers, &self.tls, Proto::H2),
        )
        .await
        .expect("the watch ends")
        .unwrap();
        assert_eq!(answer.status, 200, "{}", answer.text());
        (answer, started.elapsed())
    }
}

/// A JSON watch body's events.
fn json_events(a: &Answer) -> Vec<Value> {
    a.body
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).expect("a JSON event"))
        .collect()
}

/// A protobuf watch body's events: type and the envelope of the object.
fn protobuf_events(a: &Answer) -> Vec<(String, protobuf::Unknown)> {
    let mut rest = &a.body[..];
    let mut events = Vec::new();
    while let Some((frame, more)) = protobuf::next_frame(rest) {
        let event = protobuf::decode_watch_event(frame).expect("a WatchEvent");
        let object = protobuf::decode_envelope(&event.object).expect("an envelope");
        events.push((event.event_type, object));
        rest = more;
    }
    assert!(rest.is_empty(), "{} bytes after the last frame", rest.len());
    events
}

fn rv(object: &Value) -> u64 {
    object["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

/// Upstream's cacher schedules a bookmark for each watcher that allows them at the earlier
/// of a minute from now and its deadline minus 2 s: a 3 s watch gets one before it ends,
/// whatever the encoding; a watch that does not allow them gets none.
#[tokio::test(flavor = "multi_thread")]
async fn a_timed_watch_gets_a_bookmark_before_it_ends() {
    let c = start_cluster(|_| {});
    let api = Api::new(&c);
    let created = api.configmap("bm-a").await;
    let query = format!("resourceVersion={created}&timeoutSeconds=3");
    let with_bookmarks = format!("{query}&allowWatchBookmarks=true");
    let (json, pb, plain) = tokio::join!(
        api.watch("configmaps", &with_bookmarks, JSON),
        api.watch("configmaps", &with_bookmarks, PB),
        api.watch("configmaps", &query, JSON),
    );
    for (_, open) in [&json, &pb, &plain] {
        assert!(
            (Duration::from_millis(2900)..Duration::from_secs(6)).contains(open),
            "closed by its timeout: {open:?}"
        );
    }

    let events = json_events(&json.0);
    assert_eq!(events.len(), 1, "{events:?}");
    let bookmark = &events[0];
    assert_eq!(bookmark["type"], "BOOKMARK", "{bookmark}");
    assert_eq!(bookmark["object"]["kind"], "ConfigMap");
    assert!(rv(&bookmark["object"]) >= created, "{bookmark}");

    let events = protobuf_events(&pb.0);
    let kinds: Vec<&str> = events.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(kinds, ["BOOKMARK"]);
    let object = protobuf::decode(&events[0].1.raw, &kas_api::core::v1::CONFIG_MAP).unwrap();
    assert!(rv(&object) >= created, "{object}");

    assert!(
        plain.0.body.is_empty(),
        "no bookmark unless allowed: {}",
        plain.0.text()
    );
}

/// Upstream's handler takes a negative `timeoutSeconds` as it is: the watch's timer fires
/// at once and the stream ends, after the 200, without the initial events.
#[tokio::test(flavor = "multi_thread")]
async fn a_negative_timeout_ends_the_watch_at_once() {
    let c = start_cluster(|_| {});
    let api = Api::new(&c);
    api.configmap("neg-a").await;
    for accept in [JSON, PB] {
        let (a, open) = api.watch("configmaps", "timeoutSeconds=-5", accept).await;
        assert!(open < Duration::from_secs(2), "{accept}: open for {open:?}");
        assert!(a.body.is_empty(), "{accept}: {}", a.text());
    }
    // Events have no watch cache: the same through etcd's watch.
    let (a, open) = api.watch("events", "timeoutSeconds=-1", JSON).await;
    assert!(open < Duration::from_secs(2), "open for {open:?}");
    assert!(a.body.is_empty(), "{}", a.text());
}

/// A watch from a compacted resourceVersion: 200 and one ERROR event holding upstream's
/// 410 Expired Status, then the end; from the watch cache and from etcd alike.
#[tokio::test(flavor = "multi_thread")]
async fn a_watch_from_a_compacted_revision_is_an_expired_error_event() {
    let c = start_cluster(|spec| {
        spec.extra_args
            .insert(Role::Core, vec!["--etcd-compaction-interval=1s".to_owned()]);
    });
    let api = Api::new(&c);
    let old_cm = api.configmap("old").await;
    let old_event = api.event("old").await;
    for name in ["new-1", "new-2", "new-3"] {
        api.configmap(name).await;
    }
    // The compactor compacts to the revision it saw a tick before: within a few seconds
    // both are history, in etcd and in the cache it tells.
    let from_cm = format!("resourceVersion={old_cm}&timeoutSeconds=1");
    let deadline = Instant::now() + Duration::from_secs(30);
    let first = loop {
        let (a, _) = api.watch("configmaps", &from_cm, JSON).await;
        let events = json_events(&a);
        if events.first().is_some_and(|e| e["type"] == "ERROR") {
            assert_eq!(events.len(), 1, "the error ends the watch: {events:?}");
            break events[0].clone();
        }
        assert!(Instant::now() < deadline, "never compacted: {events:?}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert_eq!(first["object"]["kind"], "Status");
    assert_expired(&first["object"]);

    let (a, _) = api.watch("configmaps", &from_cm, PB).await;
    let events = protobuf_events(&a);
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].0, "ERROR");
    assert_eq!(events[0].1.kind, "Status");
    let status = protobuf::decode(&events[0].1.raw, &kas_api::meta::v1::STATUS).unwrap();
    assert_expired(&status);

    // The event was written after the ConfigMap: the compaction that made the ConfigMap
    // history may have stopped right after it, so wait for the one past the event too.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let from_event = format!("resourceVersion={old_event}&timeoutSeconds=1");
        let (a, _) = api.watch("events", &from_event, JSON).await;
        let events = json_events(&a);
        if events.first().is_some_and(|e| e["type"] == "ERROR") {
            break;
        }
        assert!(Instant::now() < deadline, "never compacted: {events:?}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let from_event = format!("resourceVersion={old_event}&timeoutSeconds=5");
    let (a, open) = api.watch("events", &from_event, JSON).await;
    assert!(
        open < Duration::from_secs(4),
        "ended by the error: {open:?}"
    );
    let events = json_events(&a);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["type"], "ERROR");
    assert_eq!(events[0]["object"]["kind"], "Status");
    assert_expired(&events[0]["object"]);
}

/// Upstream's `NewResourceExpired` for a watch (the envelope carries the kind in protobuf).
fn assert_expired(status: &Value) {
    assert_eq!(status["status"], "Failure", "{status}");
    assert_eq!(status["code"], 410, "{status}");
    assert_eq!(status["reason"], "Expired", "{status}");
    assert_eq!(
        status["message"], "The resourceVersion for the provided watch is too old.",
        "{status}"
    );
}
