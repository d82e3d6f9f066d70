use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use kas_audit::event::{Stage, UserInfo};
use serde_json::{Value, json};
use tokio::runtime::Runtime;

use super::*;
use crate::testing::{self, Answer};

/// The backend's runtime, as the server's: a worker besides the test's own thread.
fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

struct Setup {
    runtime: Runtime,
    server: testing::Server,
    backend: AuditWebhookBackend,
    _dir: tempfile::TempDir,
}

fn setup(backoff: Duration, handler: impl Fn(&Value) -> Answer + Send + Sync + 'static) -> Setup {
    let runtime = runtime();
    let pki = testing::pki();
    let server = runtime.block_on(testing::serve(&pki, handler));
    let dir = tempfile::tempdir().unwrap();
    let path = testing::kubeconfig(dir.path(), &pki, &server.url, "audit-t0ken");
    let backend = AuditWebhookBackend::new(
        &path,
        DEFAULT_GROUP_VERSION,
        backoff,
        runtime.handle().clone(),
    )
    .unwrap();
    Setup {
        runtime,
        server,
        backend,
        _dir: dir,
    }
}

fn event(id: &str) -> Event {
    let mut ev = Event::new();
    ev.audit_id = id.to_owned();
    ev.stage = Stage::ResponseComplete;
    ev.verb = "create".to_owned();
    ev.request_uri = "/api/v1/namespaces/ns/configmaps".to_owned();
    ev.user = UserInfo {
        username: "alice".to_owned(),
        groups: vec!["system:authenticated".to_owned()],
        ..UserInfo::default()
    };
    ev.request_object = Some(
        serde_json::value::RawValue::from_string(r#"{"kind":"ConfigMap"}"#.to_owned()).unwrap(),
    );
    ev.request_received_timestamp = "2025-01-02T03:04:05.000001Z".to_owned();
    ev.stage_timestamp = "2025-01-02T03:04:05.000002Z".to_owned();
    ev
}

#[test]
fn a_batch_is_one_event_list_posted_to_the_server() {
    let s = setup(Duration::from_millis(5), |_| {
        (200, "text/plain", String::new())
    });
    assert!(s.backend.process_events(&[event("a"), event("b")]));
    assert_eq!(s.server.calls(), 1);
    let (auth, body) = s.server.last();
    assert_eq!(auth, "Bearer audit-t0ken");
    let head = (
        "POST".to_owned(),
        "/webhook".to_owned(),
        "application/json".to_owned(),
    );
    assert_eq!(s.server.head(), head);
    assert_eq!(body["kind"], "EventList");
    assert_eq!(body["apiVersion"], "audit.k8s.io/v1");
    assert_eq!(body["metadata"], json!({}));
    let items = body["items"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(
        items[0],
        json!({
            "kind": "Event",
            "apiVersion": "audit.k8s.io/v1",
            "level": "None",
            "auditID": "a",
            "stage": "ResponseComplete",
            "requestURI": "/api/v1/namespaces/ns/configmaps",
            "verb": "create",
            "user": {"username": "alice", "groups": ["system:authenticated"]},
            "requestObject": {"kind": "ConfigMap"},
            "requestReceivedTimestamp": "2025-01-02T03:04:05.000001Z",
            "stageTimestamp": "2025-01-02T03:04:05.000002Z",
        })
    );
    assert_eq!(items[1]["auditID"], "b");
    assert_eq!(s.backend.name(), "webhook");
}

#[test]
fn every_error_is_retried_until_the_server_accepts() {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    // 500, then a 400 that the default ShouldRetry would not retry, then 200.
    let s = setup(Duration::from_millis(5), move |_| {
        match seen.fetch_add(1, Ordering::SeqCst) {
            0 => (500, "text/plain", "broken".to_owned()),
            1 => testing::json(400, json!({"kind": "Status", "status": "Failure"})),
            _ => (200, "application/json", "{}".to_owned()),
        }
    });
    assert!(s.backend.process_events(&[event("a")]));
    assert_eq!(s.server.calls(), 3);
    assert_eq!(s.server.last().1["items"][0]["auditID"], "a");
}

#[test]
fn a_dead_server_fails_the_batch_after_the_backoff() {
    let runtime = runtime();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = closed.local_addr().unwrap();
    drop(closed);
    let dir = tempfile::tempdir().unwrap();
    let pki = testing::pki();
    let path = testing::kubeconfig(dir.path(), &pki, &format!("https://{addr}/"), "t");
    let initial = Duration::from_millis(20);
    let backend =
        AuditWebhookBackend::new(&path, "audit.k8s.io/v1", initial, runtime.handle().clone())
            .unwrap();
    let start = Instant::now();
    assert!(!backend.process_events(&[event("a")]));
    let elapsed = start.elapsed();
    // Five tries, four waits of 20 ms × 1.5^n (+ up to 20 % jitter): 162.5 ms to 195 ms.
    assert!(elapsed >= initial.mul_f64(8.125), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(2), "{elapsed:?}");
}

#[test]
fn inside_a_runtime_it_waits_or_refuses_but_never_panics() {
    let s = setup(Duration::from_millis(5), |_| {
        (200, "text/plain", String::new())
    });
    let backend = Arc::new(s.backend);
    // On a worker of a multi-threaded runtime: block_in_place.
    let on_worker = backend.clone();
    let task = s
        .runtime
        .spawn(async move { on_worker.process_events(&[event("w")]) });
    let posted = s.runtime.block_on(task).unwrap();
    assert!(posted);
    assert_eq!(s.server.calls(), 1);
    // On a current-thread runtime's thread: refused, nothing posted.
    let current = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    assert!(!current.block_on(async { backend.process_events(&[event("c")]) }));
    assert_eq!(s.server.calls(), 0);
}

#[test]
fn a_stopped_runtime_fails_the_batch() {
    let s = setup(Duration::from_millis(5), |_| {
        (200, "text/plain", String::new())
    });
    s.runtime.shutdown_background();
    assert!(!s.backend.process_events(&[event("a")]));
}

#[test]
fn versions_as_the_options_check_them() {
    assert_eq!(validate_group_version("audit.k8s.io/v1"), Ok(()));
    let invalid = r#"invalid group version, allowed versions are ["audit.k8s.io/v1"]"#;
    for gv in ["audit.k8s.io/v1beta1", "v1", ""] {
        assert_eq!(validate_group_version(gv).unwrap_err(), invalid, "{gv}");
    }
    assert_eq!(
        validate_group_version("a/b/c").unwrap_err(),
        "unexpected GroupVersion string: a/b/c"
    );
    let dir = tempfile::tempdir().unwrap();
    let pki = testing::pki();
    let path = testing::kubeconfig(dir.path(), &pki, "https://127.0.0.1:1/", "t");
    let handle = runtime().handle().clone();
    let new = |gv: &str| AuditWebhookBackend::new(&path, gv, Duration::ZERO, handle.clone());
    assert_eq!(
        new("audit.k8s.io/v1beta1").err().unwrap().to_string(),
        "webhook plugin requires enabling extension resource: audit.k8s.io/v1beta1"
    );
    let missing = dir.path().join("missing");
    let err = AuditWebhookBackend::new(&missing, "audit.k8s.io/v1", Duration::ZERO, handle)
        .err()
        .unwrap();
    assert_eq!(
        err.to_string(),
        format!("stat {}: no such file or directory", missing.display())
    );
}
