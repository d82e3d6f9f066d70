//! API Priority and Fairness end to end: requests are classified where they enter (the
//! aggregator), answered with their flow schema's and priority level's UIDs, and queued
//! once (core passes what the aggregator admitted, and classifies what reaches it
//! directly); a `Reject` level full of a user's slow requests answers 429 with
//! `Retry-After`; the FlowSchemas' `Dangling` condition follows their levels; the debug
//! dumps and `apiserver_flowcontrol_*` metrics; `--enable-priority-and-fairness=false`.

use std::time::{Duration, Instant};

use base64::Engine;
use bytes::Bytes;
use http::Method;
use kas_e2e::tls_server::TlsServer;
use kas_e2e::{Role, TestCluster, client, start_cluster};
use serde_json::{Value, json};

const FS_UID: &str = "x-kubernetes-pf-flowschema-uid";
const PL_UID: &str = "x-kubernetes-pf-prioritylevel-uid";

fn apply(c: &TestCluster, obj: &Value) {
    let out = c.kubectl_stdin(&["apply"], &obj.to_string());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn uid(c: &TestCluster, kind: &str, name: &str) -> String {
    let obj = c.kubectl_json(&["get", kind, name]);
    obj["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A GET of `path` as `user` (the admin impersonating it).
async fn get_as(c: &TestCluster, user: &str, path: &str) -> client::Answer {
    c.send(Method::GET, path, &[("impersonate-user", user)], "")
        .await
}

fn header<'a>(answer: &'a client::Answer, name: &str) -> &'a str {
    answer
        .headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

/// Waits until `user`'s requests are classified in the flow schema with `fs_uid` (the
/// aggregator's informer heard of it).
async fn wait_classified(c: &TestCluster, user: &str, fs_uid: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let answer = get_as(c, user, "/api/v1/namespaces/default/configmaps").await;
        if header(&answer, FS_UID) == fs_uid {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{user} never classified in {fs_uid}: {:?}",
            answer.headers
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// One of the role's APF debug dumps, through the aggregator.
async fn dump(c: &TestCluster, name: &str) -> client::Answer {
    let path = format!("/debug/api_priority_and_fairness/{name}");
    c.send(Method::GET, &path, &[], "").await
}

fn metric_value(metrics: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    metrics.lines().find_map(|line| {
        let rest = line.strip_prefix(name)?.strip_prefix('{')?;
        let (set, value) = rest.split_once("} ")?;
        labels
            .iter()
            .all(|(k, v)| set.split(',').any(|kv| kv == format!("{k}=\"{v}\"")))
            .then(|| value.trim().parse().ok())?
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn requests_are_classified_where_they_enter() {
    let c = start_cluster(|_| {});
    // The suggested global-default schema takes authenticated users.
    let fs = uid(&c, "flowschema", "global-default");
    let pl = uid(&c, "prioritylevelconfiguration", "global-default");
    wait_classified(&c, "alice", &fs).await;
    let answer = get_as(&c, "alice", "/api/v1/namespaces/default/configmaps").await;
    // alice may not list: APF runs before authorization, as upstream.
    assert_eq!(answer.status, 403);
    assert_eq!(header(&answer, PL_UID), pl);
    // The admin is exempt.
    let exempt = c.send(Method::GET, "/api/v1/namespaces", &[], "").await;
    assert_eq!(exempt.status, 200);
    assert_eq!(header(&exempt, FS_UID), uid(&c, "flowschema", "exempt"));

    // A client cannot pass for an admitted request: the hand-off header is dropped.
    let forged = c
        .send(
            Method::GET,
            "/api/v1/namespaces/default/configmaps",
            &[
                ("impersonate-user", "alice"),
                ("kas-flow-controlled", "true"),
            ],
            "",
        )
        .await;
    assert_eq!(header(&forged, FS_UID), fs);

    // Queued once: the aggregator dispatched alice's requests, core passed them.
    let labels = [
        ("flow_schema", "global-default"),
        ("priority_level", "global-default"),
    ];
    let aggregator = c.metrics(Role::Aggregator).await;
    let dispatched = metric_value(
        &aggregator,
        "apiserver_flowcontrol_dispatched_requests_total",
        &labels,
    );
    assert!(dispatched.is_some_and(|n| n >= 3.0), "{dispatched:?}");
    let core = c.metrics(Role::Core).await;
    assert_eq!(
        metric_value(
            &core,
            "apiserver_flowcontrol_dispatched_requests_total",
            &labels
        ),
        None
    );
    // Core classifies what reaches it directly (a front proxy without the hand-off).
    let url = format!(
        "{}/api/v1/namespaces/default/configmaps",
        c.url(Role::Core, 0)
    );
    let direct = client::request(
        &url,
        Method::GET,
        &[
            ("x-remote-user", "alice"),
            ("x-remote-group", "system:authenticated"),
        ],
        &c.peer_tls(client::Proto::H2),
        client::Proto::H2,
    )
    .await
    .unwrap();
    assert_eq!(direct.status, 403);
    assert_eq!(header(&direct, FS_UID), fs);
    let core = c.metrics(Role::Core).await;
    assert_eq!(
        metric_value(
            &core,
            "apiserver_flowcontrol_dispatched_requests_total",
            &labels
        ),
        Some(1.0)
    );
    // The executing requests by kind (this scrape is one), as upstream keeps them with APF.
    assert!(
        aggregator.contains("apiserver_current_inflight_requests{request_kind=\"readOnly\"}"),
        "apiserver_current_inflight_requests"
    );
    // Nothing waits: both kinds of queued requests are 0.
    for kind in ["readOnly", "mutating"] {
        assert_eq!(
            metric_value(
                &aggregator,
                "apiserver_current_inqueue_requests",
                &[("request_kind", kind)]
            ),
            Some(0.0),
            "{kind}"
        );
    }
    // Upstream's timing-ratio histograms, one series per level.
    for name in [
        "apiserver_flowcontrol_priority_level_seat_utilization_count{phase=\"executing\",priority_level=\"workload-low\"}",
        "apiserver_flowcontrol_priority_level_request_utilization_count{phase=\"waiting\",priority_level=\"workload-low\"}",
        "apiserver_flowcontrol_read_vs_write_current_requests_count{phase=\"executing\",request_kind=\"readOnly\"}",
        "apiserver_flowcontrol_demand_seats_count{priority_level=\"catch-all\"}",
    ] {
        assert!(aggregator.contains(name), "{name}");
    }
    // Upstream's nominal limits of the default 400 + 200.
    for (level, seats) in [
        ("workload-low", "245"),
        ("catch-all", "13"),
        ("exempt", "0"),
    ] {
        let line = format!(
            "apiserver_flowcontrol_nominal_limit_seats{{priority_level=\"{level}\"}} {seats}"
        );
        assert!(aggregator.contains(&line), "{line}");
    }

    // The debug dumps.
    let levels = dump(&c, "dump_priority_levels").await;
    assert_eq!(levels.status, 200);
    let text = levels.text();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(
        head,
        [
            "PriorityLevelName,",
            "ActiveQueues,",
            "IsIdle,",
            "IsQuiescing,",
            "WaitingRequests,",
            "ExecutingRequests,",
            "DispatchedRequests,",
            "RejectedRequests,",
            "TimedoutRequests,",
            "CancelledRequests"
        ]
    );
    let names: Vec<&str> = lines.map(|l| l.split(',').next().unwrap_or("")).collect();
    assert_eq!(
        names,
        [
            "catch-all",
            "exempt",
            "global-default",
            "leader-election",
            "node-high",
            "system",
            "workload-high",
            "workload-low"
        ]
    );
    let queues = dump(&c, "dump_queues").await;
    // global-default has 128 queues, workload-low 128, ...
    assert!(
        queues
            .text()
            .lines()
            .filter(|l| l.starts_with("global-default,"))
            .count()
            == 128
    );
}

/// A validating webhook that holds each configmap create in namespace "slow" for `hold`.
fn slow_webhook(c: &TestCluster, dir: &std::path::Path, hold: Duration) -> TlsServer {
    let server = TlsServer::start(move |req| {
        std::thread::sleep(hold);
        let review: Value = serde_json::from_slice(req.body()).unwrap_or(Value::Null);
        let out = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "response": {"uid": review["request"]["uid"], "allowed": true}});
        http::Response::builder()
            .header("content-type", "application/json")
            .body(Bytes::from(out.to_string()))
            .unwrap()
    });
    let ca = base64::engine::general_purpose::STANDARD.encode(&server.ca_pem);
    let hook = json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "apf-slow"},
        "webhooks": [{
            "name": "slow.apf.test",
            "clientConfig": {"url": server.url("/validate"), "caBundle": ca},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                "resources": ["configmaps"]}],
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "slow"}},
            "failurePolicy": "Fail",
            "sideEffects": "None",
            "timeoutSeconds": 30,
            "admissionReviewVersions": ["v1"]
        }]
    });
    let file = dir.join("hook.json");
    std::fs::write(&file, hook.to_string()).unwrap();
    c.kubectl_ok(&["apply", "-f", file.to_str().unwrap()]);
    server
}

async fn create_as(c: &TestCluster, user: &str, name: &str) -> client::Answer {
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
    c.send(
        Method::POST,
        "/api/v1/namespaces/slow/configmaps",
        &[
            ("impersonate-user", user),
            ("content-type", "application/json"),
        ],
        &cm.to_string(),
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reject_level_answers_429_with_retry_after() {
    let dir = tempfile::tempdir().unwrap();
    let c = std::sync::Arc::new(start_cluster(|_| {}));
    c.kubectl_ok(&["create", "namespace", "slow"]);
    c.kubectl_ok(&[
        "create",
        "clusterrolebinding",
        "flood-admin",
        "--clusterrole=cluster-admin",
        "--user=flood",
    ]);
    // One share of 246: ceil(600 / 246) = 3 seats, no lending or borrowing.
    apply(
        &c,
        &json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1",
            "kind": "PriorityLevelConfiguration", "metadata": {"name": "strict"},
            "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 1,
                "lendablePercent": 0, "borrowingLimitPercent": 0,
                "limitResponse": {"type": "Reject"}}}}),
    );
    apply(
        &c,
        &json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
            "metadata": {"name": "flood"},
            "spec": {"priorityLevelConfiguration": {"name": "strict"}, "matchingPrecedence": 500,
                "rules": [{"subjects": [{"kind": "User", "user": {"name": "flood"}}],
                    "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                        "namespaces": ["*"], "clusterScope": true}]}]}}),
    );
    let fs = uid(&c, "flowschema", "flood");
    let pl = uid(&c, "prioritylevelconfiguration", "strict");
    wait_classified(&c, "flood", &fs).await;
    let _webhook = slow_webhook(&c, dir.path(), Duration::from_millis(1500));
    // The webhook configuration reaches core's snapshot shortly after it is stored.
    tokio::time::sleep(Duration::from_secs(2)).await;

    // Three slow creates hold the level's three seats.
    let held: Vec<_> = (0..3)
        .map(|i| {
            let c = c.clone();
            tokio::spawn(async move { create_as(&c, "flood", &format!("held-{i}")).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rejected = create_as(&c, "flood", "rejected").await;
    assert_eq!(rejected.status, 429, "{}", rejected.text());
    assert_eq!(
        rejected.text(),
        "Too many requests, please try again later.\n"
    );
    assert_eq!(header(&rejected, "retry-after"), "1");
    assert_eq!(
        header(&rejected, "content-type"),
        "text/plain; charset=utf-8"
    );
    assert_eq!(header(&rejected, FS_UID), fs);
    assert_eq!(header(&rejected, PL_UID), pl);
    // Another user's requests are in another level.
    let other = c
        .send(Method::GET, "/api/v1/namespaces/slow/configmaps", &[], "")
        .await;
    assert_eq!(other.status, 200);
    for h in held {
        let answer = h.await.unwrap();
        assert_eq!(answer.status, 201, "{}", answer.text());
        assert_eq!(header(&answer, FS_UID), fs);
    }

    let metrics = c.metrics(Role::Aggregator).await;
    assert_eq!(
        metric_value(
            &metrics,
            "apiserver_flowcontrol_rejected_requests_total",
            &[
                ("flow_schema", "flood"),
                ("priority_level", "strict"),
                ("reason", "concurrency-limit")
            ]
        ),
        Some(1.0)
    );
    assert!(
        metrics.contains("apiserver_flowcontrol_nominal_limit_seats{priority_level=\"strict\"} 3"),
        "nominal limit"
    );
    // apiserver_request_total counts the 429 as upstream's RecordDroppedRequest does.
    assert!(
        metric_value(
            &metrics,
            "apiserver_request_total",
            &[
                ("code", "429"),
                ("resource", "configmaps"),
                ("verb", "POST")
            ]
        )
        .is_some(),
        "apiserver_request_total 429"
    );
    let dump = dump(&c, "dump_priority_levels").await.text();
    let strict: Vec<&str> = dump
        .lines()
        .find(|l| l.starts_with("strict,"))
        .unwrap_or_else(|| panic!("{dump}"))
        .split(',')
        .map(str::trim)
        .collect();
    // Idle again: 0 waiting, 0 executing; the classification probe and the three creates
    // dispatched, one rejected.
    assert_eq!(
        strict[2..8],
        ["true", "false", "0", "0", "4", "1"],
        "{dump}"
    );
}

#[tokio::test]
async fn dangling_conditions_follow_their_levels() {
    let c = start_cluster(|_| {});
    apply(
        &c,
        &json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
            "metadata": {"name": "orphan"},
            "spec": {"priorityLevelConfiguration": {"name": "nowhere"},
                "rules": [{"subjects": [{"kind": "User", "user": {"name": "orphan"}}],
                    "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/version"]}]}]}}),
    );
    let condition = |want: &str| {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let fs = c.kubectl_json(&["get", "flowschema", "orphan", "--show-managed-fields"]);
            let condition = fs["status"]["conditions"][0].clone();
            if condition["status"] == want {
                return (fs, condition);
            }
            assert!(Instant::now() < deadline, "{fs}");
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    let (fs, dangling) = condition("True");
    assert_eq!(dangling["type"], "Dangling");
    assert_eq!(dangling["reason"], "NotFound");
    assert_eq!(
        dangling["message"],
        r#"This FlowSchema references the PriorityLevelConfiguration object named "nowhere" but there is no such object"#
    );
    let writer = fs["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["manager"] == "api-priority-and-fairness-config-consumer-v1")
        .cloned()
        .unwrap_or_else(|| panic!("{fs}"));
    assert_eq!(writer["operation"], "Apply");
    assert_eq!(writer["subresource"], "status");
    // The level appears: the schema is no longer dangling.
    apply(
        &c,
        &json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1",
            "kind": "PriorityLevelConfiguration", "metadata": {"name": "nowhere"},
            "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 1,
                "limitResponse": {"type": "Reject"}}}}),
    );
    let (_, found) = condition("False");
    assert_eq!(found["reason"], "Found");
}

#[tokio::test]
async fn disabled_priority_and_fairness_uses_max_in_flight() {
    let c = start_cluster(|spec| {
        for role in [Role::Aggregator, Role::Core, Role::Extensions] {
            spec.extra_args
                .entry(role)
                .or_default()
                .push("--enable-priority-and-fairness=false".to_owned());
        }
    });
    let answer = c.send(Method::GET, "/api/v1/namespaces", &[], "").await;
    assert_eq!(answer.status, 200);
    assert!(answer.headers.get(FS_UID).is_none(), "{:?}", answer.headers);
    let dump = dump(&c, "dump_priority_levels").await;
    assert_eq!(dump.status, 404);
    let metrics = c.metrics(Role::Aggregator).await;
    assert!(metrics.contains("apiserver_current_inflight_requests"));
    assert!(!metrics.contains("apiserver_flowcontrol_nominal_limit_seats"));
}

/// The aggregator estimates a LIST of core's objects by the count core reports on the Peer
/// stream: 250 config maps read from etcd are 2 × 250 objects, 5 seats.
#[tokio::test(flavor = "multi_thread")]
async fn lists_cost_seats_by_the_counts_core_reports() {
    let c = start_cluster(|spec| {
        for role in [Role::Aggregator, Role::Core, Role::Extensions] {
            spec.extra_args
                .entry(role)
                .or_default()
                .push("--etcd-count-metric-poll-period=1s".to_owned());
        }
    });
    c.kubectl_ok(&["create", "namespace", "many"]);
    for i in 0..250 {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("cm-{i}")}});
        let answer = c
            .send(
                Method::POST,
                "/api/v1/namespaces/many/configmaps",
                &[("content-type", "application/json")],
                &cm.to_string(),
            )
            .await;
        assert_eq!(answer.status, 201, "{}", answer.text());
    }
    let labels = [
        ("flow_schema", "global-default"),
        ("priority_level", "global-default"),
    ];
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        // alice may not list; the estimate comes first.
        get_as(&c, "alice", "/api/v1/configmaps").await;
        let metrics = c.metrics(Role::Aggregator).await;
        let name = "apiserver_flowcontrol_work_estimated_seats_bucket";
        let upto = |le: &str| {
            let mut with_le = labels.to_vec();
            with_le.push(("le", le));
            metric_value(&metrics, name, &with_le).unwrap_or(0.0)
        };
        // More than 4 seats, at most 10.
        if upto("10") - upto("4") >= 1.0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no wide LIST estimate:\n{metrics}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}
