//! Events through both APIs, as users and controllers drive them: an events.k8s.io/v1
//! Event is a core/v1 Event under other field names, and every write of either expires
//! after core-apiserver's `--event-ttl`.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use kas_e2e::{Role, TestCluster, start_cluster};
use serde_json::Value;

const V1: &str = "events.v1.events.k8s.io";

fn kubectl(c: &TestCluster, args: &[&str]) -> (bool, String, String) {
    let out = c.kubectl(args);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ok(c: &TestCluster, args: &[&str]) -> String {
    let (success, stdout, stderr) = kubectl(c, args);
    assert!(success, "kubectl {args:?} failed: {stderr}");
    stdout
}

fn json(c: &TestCluster, args: &[&str]) -> Value {
    serde_json::from_str(&ok(c, args)).unwrap()
}

/// `kubectl create -f -`; the answer's stdout, or its stderr when it failed.
fn create(c: &TestCluster, manifest: &str) -> Result<String, String> {
    let mut child = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(c.kubeconfig_path())
        .args(["create", "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(manifest.as_bytes()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// An events.k8s.io/v1 Event as a controller reports it (client-go's events recorder).
fn new_style(name: &str) -> String {
    format!(
        "apiVersion: events.k8s.io/v1
kind: Event
metadata:
  name: {name}
  namespace: default
eventTime: \"2024-05-01T10:00:00.000000Z\"
reportingController: example.com/scheduler
reportingInstance: scheduler-1
action: Binding
reason: Scheduled
note: Successfully assigned default/pod-a to node-1
type: Normal
regarding:
  apiVersion: v1
  kind: Pod
  name: pod-a
  namespace: default
"
    )
}

/// A core/v1 Event as kubelet and client-go's old recorder write it.
fn old_style(name: &str) -> String {
    format!(
        "apiVersion: v1
kind: Event
metadata:
  name: {name}
  namespace: default
involvedObject:
  kind: Pod
  name: pod-a
  namespace: default
reason: Pulled
message: Container image already present
type: Normal
source:
  component: kubelet
  host: node-1
count: 3
"
    )
}

/// The keys of a JSON object, in order.
fn keys(v: &Value) -> Vec<&str> {
    v.as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

/// The fields of a new-style event read through events.k8s.io/v1: what it was created
/// with, the server's metadata, and the core fields Go writes when unset.
const V1_KEYS: [&str; 14] = [
    "action",
    "apiVersion",
    "deprecatedFirstTimestamp",
    "deprecatedLastTimestamp",
    "deprecatedSource",
    "eventTime",
    "kind",
    "metadata",
    "note",
    "reason",
    "regarding",
    "reportingController",
    "reportingInstance",
    "type",
];

/// The lease etcd keeps `/registry/events/default/<name>` under, and its remaining TTL.
async fn etcd_lease(c: &TestCluster, name: &str) -> (i64, i64) {
    let client = etcd_client::Client::connect([c.etcd_url()], None)
        .await
        .unwrap();
    let key = format!("/registry/events/default/{name}");
    let resp = client.kv_client().get(key.as_str(), None).await.unwrap();
    let lease = resp.kvs().first().map_or(0, |kv| kv.lease());
    if lease == 0 {
        return (0, 0);
    }
    let ttl = client
        .lease_client()
        .time_to_live(lease, None)
        .await
        .unwrap();
    (lease, ttl.ttl())
}

#[tokio::test]
async fn events_k8s_io_events_are_core_events_renamed() {
    let c = start_cluster(|_| {});

    let resources = ok(
        &c,
        &["api-resources", "--api-group=events.k8s.io", "--no-headers"],
    );
    let fields: Vec<&str> = resources.split_whitespace().collect();
    assert_eq!(
        fields,
        ["events", "ev", "events.k8s.io/v1", "true", "Event"]
    );

    assert_eq!(
        create(&c, &new_style("scheduled")).unwrap(),
        "event.events.k8s.io/scheduled created\n"
    );
    let v1 = json(&c, &["get", V1, "scheduled", "-o", "json"]);
    assert_eq!(v1["apiVersion"], "events.k8s.io/v1");
    assert_eq!(v1["note"], "Successfully assigned default/pod-a to node-1");
    assert_eq!(v1["regarding"]["name"], "pod-a");
    assert_eq!(v1["reportingController"], "example.com/scheduler");
    assert!(v1.get("message").is_none(), "{v1}");

    // The same object through core/v1, under the older names.
    let core = json(&c, &["get", "events", "scheduled", "-o", "json"]);
    assert_eq!(core["apiVersion"], "v1");
    assert_eq!(
        core["message"],
        "Successfully assigned default/pod-a to node-1"
    );
    assert_eq!(core["involvedObject"]["name"], "pod-a");
    assert_eq!(core["reportingComponent"], "example.com/scheduler");
    assert_eq!(core["metadata"]["uid"], v1["metadata"]["uid"]);
    assert_eq!(
        core["metadata"]["resourceVersion"],
        v1["metadata"]["resourceVersion"]
    );
    // What the Go types write for the fields the event left unset: core/v1's structs and
    // times are never omitted.
    assert_eq!(core["source"], serde_json::json!({}), "{core}");
    assert!(core["firstTimestamp"].is_null() && core.get("firstTimestamp").is_some());
    assert!(core["lastTimestamp"].is_null() && core.get("lastTimestamp").is_some());
    assert!(core.get("count").is_none(), "{core}");
    assert_eq!(keys(&v1), V1_KEYS, "{v1}");

    // And the other way round: a core event reads as events.k8s.io/v1.
    create(&c, &old_style("pulled")).unwrap();
    let v1 = json(&c, &["get", V1, "pulled", "-o", "json"]);
    assert_eq!(v1["deprecatedSource"]["component"], "kubelet");
    assert_eq!(v1["deprecatedCount"], 3);
    assert_eq!(v1["note"], "Container image already present");
    // events.k8s.io/v1's reportingController and reportingInstance are omitempty; its
    // eventTime is not, nor are the deprecated times.
    assert_eq!(
        keys(&v1),
        [
            "apiVersion",
            "deprecatedCount",
            "deprecatedFirstTimestamp",
            "deprecatedLastTimestamp",
            "deprecatedSource",
            "eventTime",
            "kind",
            "metadata",
            "note",
            "reason",
            "regarding",
            "type"
        ],
        "{v1}"
    );
    assert!(v1["eventTime"].is_null(), "{v1}");
    let core = json(&c, &["get", "events", "pulled", "-o", "json"]);
    assert_eq!(core["reportingComponent"], "", "{core}");
    assert_eq!(core["reportingInstance"], "", "{core}");
    assert!(core["eventTime"].is_null() && core.get("eventTime").is_some());

    // Core's printer, columns and all.
    let table = ok(&c, &["get", V1]);
    let header = table.lines().next().unwrap();
    let columns = |header: &str| -> Vec<String> {
        header
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(str::to_owned)
            .collect()
    };
    // Upstream's event printer: no NAME or AGE column, Name last among the wide ones.
    assert_eq!(
        columns(header),
        ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
        "{table}"
    );
    let wide = ok(&c, &["get", V1, "-o", "wide"]);
    assert_eq!(
        columns(wide.lines().next().unwrap()),
        [
            "LAST SEEN",
            "TYPE",
            "REASON",
            "OBJECT",
            "SUBOBJECT",
            "SOURCE",
            "MESSAGE",
            "FIRST SEEN",
            "COUNT",
            "NAME"
        ],
        "{wide}"
    );
    assert!(table.contains("Scheduled"), "{table}");
    assert!(table.contains("pod/pod-a"), "{table}");
    assert_eq!(table.lines().count(), 3, "{table}");

    // This group's field labels, not core's.
    let selected = ok(
        &c,
        &[
            "get",
            V1,
            "--field-selector",
            "reportingController=example.com/scheduler,regarding.name=pod-a",
            "-o",
            "name",
        ],
    );
    assert_eq!(selected, "event.events.k8s.io/scheduled\n");
    let (success, _, stderr) = kubectl(
        &c,
        &["get", V1, "--field-selector", "involvedObject.name=pod-a"],
    );
    assert!(!success);
    assert!(
        stderr.contains("field label not supported: involvedObject.name"),
        "{stderr}"
    );

    // Upstream's strict validation of this group, naming the internal kind and fields.
    let bad = "apiVersion: events.k8s.io/v1\nkind: Event\nmetadata:\n  name: bad\n  namespace: default\nreason: R\ntype: Odd\n";
    let err = create(&c, bad).unwrap_err();
    assert!(err.contains("The Event \"bad\" is invalid"), "{err}");
    assert!(err.contains("eventTime: Required value"), "{err}");
    assert!(
        err.contains("type: Invalid value: \"\": has invalid value: Odd"),
        "{err}"
    );

    // A series update is allowed; rewriting what was reported is not.
    ok(
        &c,
        &[
            "patch",
            V1,
            "scheduled",
            "--type=merge",
            "-p",
            r#"{"series":{"count":2,"lastObservedTime":"2024-05-01T10:05:00.000000Z"}}"#,
        ],
    );
    let core = json(&c, &["get", "events", "scheduled", "-o", "json"]);
    assert_eq!(core["series"]["count"], 2);
    let (success, _, stderr) = kubectl(
        &c,
        &[
            "patch",
            V1,
            "scheduled",
            "--type=merge",
            "-p",
            r#"{"note":"edited"}"#,
        ],
    );
    assert!(!success);
    assert!(
        stderr.contains("message: Invalid value: \"edited\": field is immutable"),
        "{stderr}"
    );

    // Written under the default --event-ttl of an hour (and upstream's minute of reuse),
    // updates included.
    let (lease, ttl) = etcd_lease(&c, "scheduled").await;
    assert_ne!(lease, 0);
    assert!((3500..=3660).contains(&ttl), "{ttl}");
    assert_ne!(etcd_lease(&c, "pulled").await.0, 0);

    ok(&c, &["delete", V1, "pulled"]);
    let (success, _, stderr) = kubectl(&c, &["get", "events", "pulled"]);
    assert!(!success && stderr.contains("NotFound"), "{stderr}");
}

#[tokio::test]
async fn events_expire_after_the_event_ttl() {
    let c = start_cluster(|spec| {
        spec.extra_args
            .insert(Role::Core, vec!["--event-ttl=2s".to_owned()]);
    });
    create(&c, &new_style("short-lived")).unwrap();
    create(&c, &old_style("also-short")).unwrap();
    let (lease, ttl) = etcd_lease(&c, "short-lived").await;
    assert_ne!(lease, 0);
    assert!(ttl <= 2, "{ttl}");

    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let names = ok(&c, &["get", "events", "-o", "name"]);
        if names.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "events outlived --event-ttl: {names}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    assert_eq!(ok(&c, &["get", V1, "-o", "name"]), "");
}

const PB: &str = "application/vnd.kubernetes.protobuf";

/// client-go's events recorder writes events.k8s.io/v1 in protobuf; watchers read JSON.
#[tokio::test(flavor = "multi_thread")]
async fn events_k8s_io_speaks_protobuf_and_watches_in_its_shape() {
    use http::Method;
    use kas_apimachinery::protobuf;
    use kas_e2e::client::{Proto, request, request_with_body};

    let c = start_cluster(|_| {});
    let base = format!(
        "{}/apis/events.k8s.io/v1/namespaces/default/events",
        c.url(Role::Aggregator, 0)
    );
    let bearer = c.bearer();
    let tls = c.admin_tls(Proto::H2);
    let event = serde_json::json!({
        "metadata": {"name": "pb"},
        "eventTime": "2024-05-01T10:00:00.123456Z",
        "reportingController": "example.com/ctl",
        "reportingInstance": "ctl-1",
        "action": "Sync",
        "reason": "Synced",
        "note": "in protobuf",
        "type": "Warning",
        "regarding": {"kind": "Node", "name": "node-1"},
    });
    let schema = &kas_api::events::v1::EVENT;
    let body = protobuf::encode_object(&event, schema, "events.k8s.io/v1", "Event").unwrap();
    let headers = [
        ("authorization", bearer.as_str()),
        ("content-type", PB),
        ("accept", PB),
    ];
    let a = request_with_body(&base, Method::POST, &headers, body.into(), &tls, Proto::H2)
        .await
        .unwrap();
    assert_eq!(a.status, 201, "{}", a.text());
    let unknown = protobuf::decode_envelope(&a.body).expect("an envelope");
    assert_eq!(unknown.kind, "Event");
    let created = protobuf::decode(&unknown.raw, schema).unwrap();
    assert_eq!(created["note"], "in protobuf");
    assert_eq!(created["eventTime"], "2024-05-01T10:00:00.123456Z");
    assert_eq!(created["regarding"]["name"], "node-1");

    let core = json(&c, &["get", "events", "pb", "-o", "json"]);
    assert_eq!(core["message"], "in protobuf");
    assert_eq!(core["reportingComponent"], "example.com/ctl");

    let headers = [("authorization", bearer.as_str())];
    let url = format!("{base}?watch=true&resourceVersion=0&timeoutSeconds=1");
    let a = request(&url, Method::GET, &headers, &tls, Proto::H2)
        .await
        .unwrap();
    let first: Value = serde_json::from_str(a.text().lines().next().unwrap()).unwrap();
    assert_eq!(first["type"], "ADDED");
    assert_eq!(first["object"]["apiVersion"], "events.k8s.io/v1");
    assert_eq!(first["object"]["note"], "in protobuf");
    assert!(first["object"].get("message").is_none(), "{first}");
}
