//! Auditing end to end (`--audit-policy-file`, `--audit-log-*`, `--audit-webhook-*`), with
//! the three roles given the same flags and each its own log: a request's events are
//! written once, by the role that answers it, with upstream's event shape (levels, stages,
//! object references, request and response objects, response status, source IPs, the
//! user before and after impersonation); 401s and 403s are the aggregator's; annotations
//! from authorization, PodSecurity and an admission webhook land in one event; the log
//! rotates by size; the webhook backend posts `EventList` batches, and a dead one does not
//! hold requests up.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use bytes::Bytes;
use http::Method;
use kas_e2e::tls_server::TlsServer;
use kas_e2e::{Role, TestCluster, client, start_cluster};
use serde_json::{Value, json};

#[path = "audit/legacy_token.rs"]
mod legacy_token;
use legacy_token::legacy_token;

const ROLES: [Role; 3] = [Role::Aggregator, Role::Core, Role::Extensions];

const POLICY: &str = r#"apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: None
  users: ["system:apiserver"]
- level: None
  nonResourceURLs: ["/healthz*", "/readyz*", "/livez*", "/metrics", "/version", "/openapi/*"]
- level: RequestResponse
  resources: [{group: "", resources: ["configmaps"]}]
- level: Request
  resources: [{group: "", resources: ["secrets"]}]
  omitStages: ["RequestReceived"]
- level: Metadata
"#;

/// Each role's audit log.
struct Logs(BTreeMap<Role, PathBuf>);

impl Logs {
    fn new(dir: &Path) -> Logs {
        Logs(
            ROLES
                .iter()
                .map(|r| (*r, dir.join(format!("audit-{r}.log"))))
                .collect(),
        )
    }

    fn events(&self, role: Role) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.0[&role]).unwrap_or_default();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{role}: {e}: {l}")))
            .collect()
    }

    /// The events of `audit_id`, by role, once `stages` of them were written.
    fn of(&self, audit_id: &str, stages: usize) -> BTreeMap<Role, Vec<Value>> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let found: BTreeMap<Role, Vec<Value>> = ROLES
                .iter()
                .map(|r| {
                    let events = self.events(*r);
                    let mine = events
                        .into_iter()
                        .filter(|e| e["auditID"] == audit_id)
                        .collect::<Vec<_>>();
                    (*r, mine)
                })
                .filter(|(_, e)| !e.is_empty())
                .collect();
            if found.values().map(Vec::len).sum::<usize>() >= stages {
                return found;
            }
            assert!(Instant::now() < deadline, "{audit_id}: {found:#?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The events of `audit_id`, which one role wrote: that role and the events.
    fn one_writer(&self, audit_id: &str, stages: usize) -> (Role, Vec<Value>) {
        let found = self.of(audit_id, stages);
        assert_eq!(
            found.len(),
            1,
            "{audit_id} written by several roles: {found:#?}"
        );
        let (role, events) = found.into_iter().next().expect("one");
        assert_eq!(events.len(), stages, "{audit_id}: {events:#?}");
        (role, events)
    }
}

fn audited_cluster(dir: &Path, extra: &[String]) -> (TestCluster, Logs) {
    audited_cluster_with(dir, extra, true)
}

/// `route_extensions`: whether the aggregator sends custom resources to extensions
/// straight, or through core.
fn audited_cluster_with(
    dir: &Path,
    extra: &[String],
    route_extensions: bool,
) -> (TestCluster, Logs) {
    let policy = dir.join("policy.yaml");
    std::fs::write(&policy, POLICY).unwrap();
    let logs = Logs::new(dir);
    let c = start_cluster(|spec| {
        spec.route_extensions = route_extensions;
        for role in ROLES {
            let args = spec.extra_args.entry(role).or_default();
            args.push(format!("--audit-policy-file={}", policy.display()));
            args.push(format!("--audit-log-path={}", logs.0[&role].display()));
            args.extend(extra.iter().cloned());
        }
    });
    (c, logs)
}

fn stages(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .map(|e| e["stage"].as_str().unwrap_or(""))
        .collect()
}

async fn raw(
    c: &TestCluster,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> client::Answer {
    let url = format!("{}{path}", c.url(Role::Aggregator, 0));
    let tls = c.admin_tls(client::Proto::H2);
    client::request_with_body(
        &url,
        method,
        headers,
        Bytes::from(body.to_owned()),
        &tls,
        client::Proto::H2,
    )
    .await
    .unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn each_request_is_one_record_with_upstreams_fields() {
    let dir = tempfile::tempdir().unwrap();
    let (c, logs) = audited_cluster(dir.path(), &[]);

    // A create at RequestResponse, answered by core; the client's Audit-ID is kept.
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
                      "metadata": {"name": "audited"}, "data": {"k": "v"}})
    .to_string();
    let created = c
        .send(
            Method::POST,
            "/api/v1/namespaces/default/configmaps",
            &[
                ("audit-id", "e2e-create"),
                ("content-type", "application/json"),
                ("user-agent", "kas-e2e/audit"),
            ],
            &body,
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.text());
    assert_eq!(created.headers["audit-id"], "e2e-create");
    let (role, events) = logs.one_writer("e2e-create", 2);
    assert_eq!(role, Role::Core);
    assert_eq!(stages(&events), ["RequestReceived", "ResponseComplete"]);
    let (received, complete) = (&events[0], &events[1]);
    for e in &events {
        assert_eq!(e["kind"], "Event");
        assert_eq!(e["apiVersion"], "audit.k8s.io/v1");
        assert_eq!(e["level"], "RequestResponse");
        assert_eq!(e["verb"], "create");
        assert_eq!(e["requestURI"], "/api/v1/namespaces/default/configmaps");
        assert_eq!(e["user"]["username"], "admin");
        assert!(
            e["user"]["groups"]
                .as_array()
                .unwrap()
                .contains(&json!("system:masters")),
            "{e}"
        );
        assert_eq!(e["sourceIPs"], json!(["127.0.0.1"]));
        assert_eq!(e["userAgent"], "kas-e2e/audit");
        assert!(e.get("impersonatedUser").is_none(), "{e}");
    }
    // RequestReceived is the event as the request arrived: before authorization and the
    // handler.
    assert_eq!(
        received["stageTimestamp"],
        received["requestReceivedTimestamp"]
    );
    for later in [
        "requestObject",
        "responseObject",
        "responseStatus",
        "annotations",
    ] {
        assert!(received.get(later).is_none(), "{later}: {received}");
    }
    assert_eq!(
        complete["annotations"]["authorization.k8s.io/decision"],
        "allow"
    );
    assert!(
        complete["annotations"]
            .get("authorization.k8s.io/reason")
            .is_some(),
        "{complete}"
    );
    let ts = complete["requestReceivedTimestamp"].as_str().unwrap();
    assert_eq!(ts.len(), "2006-01-02T15:04:05.000000Z".len(), "{ts}");
    assert!(complete["stageTimestamp"].as_str().unwrap() >= ts);
    assert_eq!(
        complete["objectRef"],
        json!({"resource": "configmaps", "namespace": "default", "name": "audited", "apiVersion": "v1"})
    );
    assert_eq!(complete["requestObject"]["kind"], "ConfigMap");
    assert_eq!(complete["requestObject"]["data"], json!({"k": "v"}));
    assert_eq!(complete["responseObject"]["metadata"]["name"], "audited");
    assert!(complete["responseObject"]["metadata"]["uid"].is_string());
    assert_eq!(
        complete["responseStatus"],
        json!({"metadata": {}, "code": 201})
    );

    // Without a client's ID, one is made (a UUID), answered and logged.
    let got = c
        .send(
            Method::GET,
            "/api/v1/namespaces/default/configmaps/audited",
            &[],
            "",
        )
        .await;
    assert_eq!(got.status, 200);
    let id = got.headers["audit-id"].to_str().unwrap().to_owned();
    assert!(uuid::Uuid::parse_str(&id).is_ok(), "{id}");
    let (_, events) = logs.one_writer(&id, 2);
    assert_eq!(events[1]["verb"], "get");
    assert_eq!(events[1]["responseObject"]["data"], json!({"k": "v"}));

    // Request level, RequestReceived omitted: no objects; a 404's status is kept.
    let missing = c
        .send(
            Method::GET,
            "/api/v1/namespaces/default/secrets/nope",
            &[("audit-id", "e2e-404")],
            "",
        )
        .await;
    assert_eq!(missing.status, 404);
    let (_, events) = logs.one_writer("e2e-404", 1);
    assert_eq!(stages(&events), ["ResponseComplete"]);
    let e = &events[0];
    assert_eq!(e["level"], "Request");
    assert!(
        e.get("responseObject").is_none() && e.get("requestObject").is_none(),
        "{e}"
    );
    assert_eq!(e["responseStatus"]["code"], 404);
    assert_eq!(e["responseStatus"]["reason"], "NotFound");
    assert_eq!(e["responseStatus"]["status"], "Failure");
    assert_eq!(e["responseStatus"]["message"], "secrets \"nope\" not found");

    // A watch is long-running: ResponseStarted when its head is out.
    let watched = c
        .send(
            Method::GET,
            "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1",
            &[("audit-id", "e2e-watch")],
            "",
        )
        .await;
    assert_eq!(watched.status, 200);
    let (_, events) = logs.one_writer("e2e-watch", 3);
    assert_eq!(
        stages(&events),
        ["RequestReceived", "ResponseStarted", "ResponseComplete"]
    );
    assert_eq!(events[2]["verb"], "watch");
    assert!(events[2].get("responseObject").is_none());

    // What the aggregator answers itself is its to write.
    let own = c
        .send(
            Method::GET,
            "/apis/apiregistration.k8s.io/v1/apiservices",
            &[("audit-id", "e2e-own")],
            "",
        )
        .await;
    assert_eq!(own.status, 200);
    let (role, events) = logs.one_writer("e2e-own", 2);
    assert_eq!(role, Role::Aggregator);
    assert_eq!(events[1]["level"], "Metadata");
    assert_eq!(events[1]["objectRef"]["apiGroup"], "apiregistration.k8s.io");

    // A 401: one event at ResponseStarted, with the Unauthorized status, no user.
    let denied = raw(
        &c,
        Method::GET,
        "/api/v1/namespaces",
        &[("authorization", "Bearer wrong"), ("audit-id", "e2e-401")],
        "",
    )
    .await;
    assert_eq!(denied.status, 401);
    let (role, events) = logs.one_writer("e2e-401", 1);
    assert_eq!(role, Role::Aggregator);
    assert_eq!(stages(&events), ["ResponseStarted"]);
    assert_eq!(events[0]["user"], json!({}));
    assert_eq!(
        events[0]["responseStatus"],
        json!({"metadata": {}, "status": "Failure", "message": "Unauthorized", "reason": "Unauthorized", "code": 401})
    );

    // Impersonation: the user as authenticated, the impersonated one beside it.
    let as_nobody = c
        .send(
            Method::GET,
            "/api/v1/namespaces/default/pods",
            &[("impersonate-user", "nobody"), ("audit-id", "e2e-403")],
            "",
        )
        .await;
    assert_eq!(as_nobody.status, 403);
    let (role, events) = logs.one_writer("e2e-403", 2);
    assert_eq!(role, Role::Aggregator);
    let e = &events[1];
    assert_eq!(e["user"]["username"], "admin");
    assert_eq!(e["impersonatedUser"]["username"], "nobody");
    assert_eq!(e["annotations"]["authorization.k8s.io/decision"], "forbid");
    assert_eq!(e["responseStatus"]["code"], 403);
    assert_eq!(e["responseStatus"]["reason"], "Forbidden");
    let as_admin = c
        .send(
            Method::GET,
            "/api/v1/namespaces/default/configmaps",
            &[
                ("impersonate-user", "someone"),
                ("impersonate-group", "system:masters"),
                ("audit-id", "e2e-as"),
            ],
            "",
        )
        .await;
    assert_eq!(as_admin.status, 200);
    let (role, events) = logs.one_writer("e2e-as", 2);
    assert_eq!(role, Role::Core);
    assert_eq!(events[1]["user"]["username"], "admin");
    assert_eq!(events[1]["impersonatedUser"]["username"], "someone");
    assert_eq!(
        events[1]["impersonatedUser"]["groups"],
        json!(["system:masters", "system:authenticated"])
    );

    // A deprecated API's request says so.
    let endpoints = c
        .send(
            Method::GET,
            "/api/v1/namespaces/default/endpoints",
            &[("audit-id", "e2e-deprecated")],
            "",
        )
        .await;
    assert_eq!(endpoints.status, 200);
    let (_, events) = logs.one_writer("e2e-deprecated", 2);
    assert_eq!(
        events[1]["annotations"]["k8s.io/deprecated"], "true",
        "{}",
        events[1]
    );

    // kubectl's requests too, and the counters.
    c.kubectl_ok(&["get", "configmaps", "audited"]);
    let metrics = c.metrics(Role::Core).await;
    let total = kas_e2e::metric_value(&metrics, "apiserver_audit_event_total", &[]).unwrap_or(0.0);
    assert!(total >= 6.0, "{total}");
}

const WIDGETS: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
"#;

/// A custom resource's request crosses two hops (aggregator, core, extensions) and is
/// still written once, by extensions, with the aggregator's authorization annotations.
#[tokio::test(flavor = "multi_thread")]
async fn a_request_through_two_hops_is_written_once_by_the_last() {
    let dir = tempfile::tempdir().unwrap();
    let (c, logs) = audited_cluster_with(dir.path(), &[], false);
    c.apply_and_wait_served(WIDGETS, "/apis/example.com/v1/namespaces/default/widgets")
        .await;
    let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget",
                        "metadata": {"name": "w"}, "spec": {"size": 1}});
    let created = c
        .send(
            Method::POST,
            "/apis/example.com/v1/namespaces/default/widgets",
            &[
                ("content-type", "application/json"),
                ("audit-id", "e2e-widget"),
            ],
            &widget.to_string(),
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.text());
    assert!(
        created.headers.get("kas-audited").is_none(),
        "the mark stays between roles"
    );
    let (role, events) = logs.one_writer("e2e-widget", 2);
    assert_eq!(role, Role::Extensions);
    let e = &events[1];
    assert_eq!(e["level"], "Metadata");
    assert_eq!(e["objectRef"]["apiGroup"], "example.com");
    assert_eq!(e["objectRef"]["name"], "w");
    assert_eq!(e["user"]["username"], "admin");
    assert_eq!(e["annotations"]["authorization.k8s.io/decision"], "allow");
}

/// A pod the webhook annotates, in a namespace whose PodSecurity levels enforce baseline
/// and audit restricted.
#[tokio::test(flavor = "multi_thread")]
async fn authorization_pod_security_and_webhook_annotations_share_one_event() {
    let dir = tempfile::tempdir().unwrap();
    let (c, logs) = audited_cluster(dir.path(), &[]);
    let server = TlsServer::start(|req| {
        let review: Value = serde_json::from_slice(req.body()).unwrap_or(Value::Null);
        // The real create is slow: its event carries the latency annotations.
        if review["request"]["dryRun"] == false {
            std::thread::sleep(Duration::from_millis(600));
        }
        let patch = json!([{"op": "add", "path": "/metadata/labels", "value": {"hooked": "yes"}}]);
        let response = json!({
            "uid": review["request"]["uid"],
            "allowed": true,
            "patch": base64::engine::general_purpose::STANDARD.encode(patch.to_string()),
            "patchType": "JSONPatch",
            "auditAnnotations": {"checked": "yes"},
        });
        let out = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response});
        http::Response::builder()
            .header("content-type", "application/json")
            .body(Bytes::from(out.to_string()))
            .unwrap()
    });
    let ca = base64::engine::general_purpose::STANDARD.encode(&server.ca_pem);
    let hook = json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "audit-e2e"},
        "webhooks": [{
            "name": "label.audit.test",
            "clientConfig": {"url": server.url("/mutate"), "caBundle": ca},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}],
            "namespaceSelector": {"matchLabels": {"webhooks": "on"}},
            "failurePolicy": "Fail",
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"]
        }]
    });
    let hook_file = dir.path().join("hook.json");
    std::fs::write(&hook_file, hook.to_string()).unwrap();
    c.kubectl_ok(&["apply", "-f", hook_file.to_str().unwrap()]);
    c.kubectl_ok(&["create", "namespace", "guarded"]);
    c.kubectl_ok(&[
        "label",
        "namespace",
        "guarded",
        "webhooks=on",
        "pod-security.kubernetes.io/enforce=baseline",
        "pod-security.kubernetes.io/audit=restricted",
    ]);
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                     "spec": {"containers": [{"name": "c", "image": "busybox"}]}});
    // The webhook configuration reaches core's snapshot shortly after it is stored.
    let deadline = Instant::now() + Duration::from_secs(20);
    let created = loop {
        let answer = c
            .send(
                Method::POST,
                "/api/v1/namespaces/guarded/pods?dryRun=All",
                &[("content-type", "application/json")],
                &pod.to_string(),
            )
            .await;
        if answer.json()["metadata"]["labels"]["hooked"] == "yes" {
            break c
                .send(
                    Method::POST,
                    "/api/v1/namespaces/guarded/pods",
                    &[
                        ("content-type", "application/json"),
                        ("audit-id", "e2e-pod"),
                    ],
                    &pod.to_string(),
                )
                .await;
        }
        assert!(
            Instant::now() < deadline,
            "the webhook never mutated: {}",
            answer.text()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(created.status, 201, "{}", created.text());
    let (role, events) = logs.one_writer("e2e-pod", 2);
    assert_eq!(role, Role::Core);
    let a = &events[1]["annotations"];
    assert_eq!(a["authorization.k8s.io/decision"], "allow", "{a}");
    assert_eq!(
        a["pod-security.kubernetes.io/enforce-policy"], "baseline:latest",
        "{a}"
    );
    let violations = a["pod-security.kubernetes.io/audit-violations"]
        .as_str()
        .unwrap_or("");
    assert!(
        violations.starts_with(
            "would violate PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false"
        ),
        "{a}"
    );
    assert_eq!(a["label.audit.test/checked"], "yes", "{a}");
    assert_eq!(
        a["mutation.webhook.admission.k8s.io/round_0_index_0"],
        r#"{"configuration":"audit-e2e","webhook":"label.audit.test","mutated":true}"#,
        "{a}"
    );
    // Metadata level: the patch is not kept.
    assert!(
        a.get("patch.webhook.admission.k8s.io/round_0_index_0")
            .is_none(),
        "{a}"
    );
    // Slower than 500 ms: each layer's latency and the total, as Go prints durations.
    let go_duration = |key: &str| -> f64 {
        let text = a[key].as_str().unwrap_or_else(|| panic!("{key}: {a}"));
        let (number, scale) = if let Some(n) = text.strip_suffix("ms") {
            (n, 1e-3)
        } else if let Some(n) = text.strip_suffix("µs") {
            (n, 1e-6)
        } else if let Some(n) = text.strip_suffix("ns") {
            (n, 1e-9)
        } else {
            (text.strip_suffix('s').unwrap_or(text), 1.0)
        };
        number
            .parse::<f64>()
            .unwrap_or_else(|_| panic!("{key}: {text}"))
            * scale
    };
    assert!(
        go_duration("apiserver.latency.k8s.io/mutating-webhook") >= 0.6,
        "{a}"
    );
    assert!(go_duration("apiserver.latency.k8s.io/total") >= 0.6, "{a}");
    assert!(go_duration("apiserver.latency.k8s.io/etcd") > 0.0, "{a}");
    assert!(
        go_duration("apiserver.latency.k8s.io/response-write") > 0.0,
        "{a}"
    );
    assert!(
        go_duration("apiserver.latency.k8s.io/serialize-response-object") > 0.0,
        "{a}"
    );
    let received = &events[0]["annotations"];
    assert!(
        received
            .as_object()
            .is_none_or(|m| m.keys().all(|k| !k.starts_with("apiserver.latency"))),
        "{received}"
    );

    // A secret-based token the service account lists: authentication's annotations in
    // the event, and upstream's warning on the answer.
    let applied = c.kubectl_stdin(
        &["apply"],
        r#"{"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": "legacy", "namespace": "default"},
            "secrets": [{"name": "legacy-token"}]}"#,
    );
    assert!(applied.status.success(), "{applied:?}");
    let uid = c.kubectl_ok(&[
        "get",
        "serviceaccount",
        "legacy",
        "-o",
        "jsonpath={.metadata.uid}",
    ]);
    let token = legacy_token(&c, uid.trim());
    let secret = json!({
        "apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
        "metadata": {"name": "legacy-token", "namespace": "default",
                     "annotations": {"kubernetes.io/service-account.name": "legacy",
                                     "kubernetes.io/service-account.uid": uid.trim()}},
        "data": {"token": base64::engine::general_purpose::STANDARD.encode(&token)},
    });
    let applied = c.kubectl_stdin(&["apply"], &secret.to_string());
    assert!(applied.status.success(), "{applied:?}");
    let url = format!("{}/api", c.url(Role::Aggregator, 0));
    let tls = c.admin_tls(client::Proto::H2);
    let bearer = format!("Bearer {token}");
    let headers = [
        ("authorization", bearer.as_str()),
        ("audit-id", "e2e-legacy"),
    ];
    let answer = client::request_with_body(
        &url,
        Method::GET,
        &headers,
        Bytes::new(),
        &tls,
        client::Proto::H2,
    )
    .await
    .expect("GET /api");
    assert_eq!(answer.status, 200, "{}", answer.text());
    let warnings: Vec<&str> = answer
        .headers
        .get_all("warning")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    assert_eq!(
        warnings,
        [
            "299 - \"Use tokens from the TokenRequest API or manually created secret-based tokens instead of auto-generated secret-based tokens.\""
        ]
    );
    // Core answers /api: the annotations travel with the hand-off.
    let (role, events) = logs.one_writer("e2e-legacy", 2);
    assert_eq!(role, Role::Core);
    for e in &events {
        let a = &e["annotations"];
        assert_eq!(
            a["authentication.k8s.io/legacy-token"], "system:serviceaccount:default:legacy",
            "{a}"
        );
        assert_eq!(
            a["authentication.k8s.io/legacy-token-autogenerated-secret"], "legacy-token",
            "{a}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_log_rotates_and_the_webhook_gets_batches_without_holding_requests() {
    let dir = tempfile::tempdir().unwrap();
    let received: Arc<Mutex<Vec<Value>>> = Arc::default();
    let seen = received.clone();
    let server = TlsServer::start(move |req| {
        seen.lock().unwrap().push(json!({
            "path": req.uri().path(),
            "contentType": req.headers().get("content-type").and_then(|v| v.to_str().ok()),
            "body": serde_json::from_slice::<Value>(req.body()).unwrap_or(Value::Null),
        }));
        http::Response::builder().body(Bytes::new()).unwrap()
    });
    let kubeconfig = dir.path().join("audit-webhook.kubeconfig");
    let ca = base64::engine::general_purpose::STANDARD.encode(&server.ca_pem);
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: sink\n  cluster:\n    server: {}\n    certificate-authority-data: {ca}\ncontexts:\n- name: sink\n  context: {{cluster: sink, user: sink}}\ncurrent-context: sink\nusers:\n- name: sink\n  user: {{}}\n",
            server.url("/audit")
        ),
    )
    .unwrap();
    let (c, logs) = audited_cluster(
        dir.path(),
        &[
            "--audit-log-maxsize=1".to_owned(),
            "--audit-log-maxbackup=2".to_owned(),
            "--audit-log-mode=batch".to_owned(),
            format!("--audit-webhook-config-file={}", kubeconfig.display()),
            "--audit-webhook-batch-max-wait=1s".to_owned(),
        ],
    );
    // ~200 KiB per configmap, twice per ResponseComplete (request and response objects):
    // past 1 MiB every few writes.
    let big = "x".repeat(200 * 1024);
    for i in 0..12 {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": format!("big-{i}")}, "data": {"k": big}});
        let file = dir.path().join(format!("big-{i}.json"));
        std::fs::write(&file, cm.to_string()).unwrap();
        c.kubectl_ok(&["create", "-f", file.to_str().unwrap()]);
    }
    let core_log = &logs.0[&Role::Core];
    let name = core_log.file_stem().unwrap().to_str().unwrap().to_owned();
    let backups = || -> Vec<String> {
        std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.starts_with(&format!("{name}-")) && n.ends_with(".log"))
            .collect()
    };
    // Old backups are removed after the rotation, as lumberjack's mill does.
    let deadline = Instant::now() + Duration::from_secs(10);
    while backups().len() != 2 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let backups = backups();
    assert_eq!(
        backups.len(),
        2,
        "at most --audit-log-maxbackup backups: {backups:?}"
    );
    for b in &backups {
        // lumberjack's name: <name>-2006-01-02T15-04-05.000.log
        let stamp = &b[name.len() + 1..b.len() - 4];
        assert_eq!(stamp.len(), "2006-01-02T15-04-05.000".len(), "{b}");
    }
    assert!(std::fs::metadata(core_log).unwrap().len() <= 1024 * 1024 + 512 * 1024);

    // The webhook got EventLists, in batches, with the writes' events.
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let got = received.lock().unwrap().clone();
        let creates = got
            .iter()
            .flat_map(|r| r["body"]["items"].as_array().cloned().unwrap_or_default())
            .filter(|e| {
                e["verb"] == "create"
                    && e["objectRef"]["resource"] == "configmaps"
                    && e["stage"] == "ResponseComplete"
            })
            .count();
        if creates >= 12 {
            let first = &got[0];
            assert_eq!(first["path"], "/audit");
            assert_eq!(first["contentType"], "application/json");
            assert_eq!(first["body"]["kind"], "EventList");
            assert_eq!(first["body"]["apiVersion"], "audit.k8s.io/v1");
            assert!(
                got.len() < 24 * 2,
                "events come batched: {} posts",
                got.len()
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "webhook got {creates} creates in {} posts",
            got.len()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // A dead webhook: requests go on at their pace (batch mode buffers and drops).
    drop(server);
    let started = Instant::now();
    for i in 0..20 {
        c.kubectl_ok(&["create", "configmap", &format!("after-{i}")]);
    }
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    let metrics = c.metrics(Role::Core).await;
    assert!(
        kas_e2e::metric_value(&metrics, "apiserver_audit_event_total", &[]).unwrap_or(0.0) > 40.0
    );
}
