use super::*;
use crate::config::{FlowSchema, PriorityLevelConfiguration};
use crate::metrics::Metrics;
use crate::metrics::timing_ratio::{TimingRatioHistogramVec, bucket_count};
use kas_auth::UserInfo;
use prometheus::proto::Histogram;
use serde_json::json;

fn apf(levels: serde_json::Value, schemas: serde_json::Value) -> PriorityAndFairness {
    apf_with(10, None, levels, schemas)
}

fn apf_with(
    server_limit: usize,
    metrics: Option<Arc<Metrics>>,
    levels: serde_json::Value,
    schemas: serde_json::Value,
) -> PriorityAndFairness {
    let controller = Arc::new(Controller::new(server_limit, metrics));
    let levels: Vec<PriorityLevelConfiguration> = serde_json::from_value(levels).unwrap();
    let schemas: Vec<FlowSchema> = serde_json::from_value(schemas).unwrap();
    controller.digest(levels, schemas);
    PriorityAndFairness::new(
        controller,
        WorkEstimator::default(),
        Arc::new(ObjectCountTracker::default()),
        Duration::from_secs(60),
    )
}

fn level(name: &str, limit_response: serde_json::Value) -> serde_json::Value {
    json!({"metadata": {"name": name, "uid": format!("{name}-uid")},
        "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 5,
            "lendablePercent": 0, "limitResponse": limit_response}}})
}

fn schema_for(user: &str, pl: &str) -> serde_json::Value {
    json!({"metadata": {"name": format!("{user}-fs"), "uid": format!("{user}-fs-uid")},
        "spec": {"priorityLevelConfiguration": {"name": pl}, "matchingPrecedence": 100,
            "distinguisherMethod": {"type": "ByUser"},
            "rules": [{"subjects": [{"kind": "User", "user": {"name": user}}],
                "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                    "namespaces": ["*"], "clusterScope": true}]}]}})
}

fn request<'a>(user: &'a UserInfo, deadline: Option<Instant>) -> ApfRequest<'a> {
    ApfRequest {
        digest: RequestDigest {
            is_resource_request: true,
            verb: "get",
            api_group: "",
            api_version: "v1",
            resource: "pods",
            subresource: "",
            namespace: "default",
            name: "p",
            path: "/api/v1/namespaces/default/pods/p",
            user,
        },
        query: "",
        field_selector: None,
        deadline,
    }
}

fn user(name: &str, groups: &[&str]) -> UserInfo {
    UserInfo {
        name: name.into(),
        groups: groups.iter().map(|g| g.to_string()).collect(),
        ..Default::default()
    }
}

#[tokio::test]
async fn reject_level_rejects_when_full() {
    // 10 seats shared by catch-all (5 shares) and "strict" (5 shares): 5 each.
    let apf = apf(
        json!([level("strict", json!({"type": "Reject"}))]),
        json!([schema_for("flood", "strict")]),
    );
    let flood = user("flood", &["system:authenticated"]);
    let mut held = Vec::new();
    for _ in 0..5 {
        held.push(
            apf.admit(&request(&flood, None))
                .await
                .unwrap()
                .ok()
                .unwrap(),
        );
    }
    let rejected = match apf.admit(&request(&flood, None)).await.unwrap() {
        Err(rejected) => rejected,
        Ok(_) => panic!("admitted past the limit"),
    };
    assert_eq!(rejected.reason, RejectReason::ConcurrencyLimit);
    assert_eq!(rejected.retry_after, 1);
    assert_eq!(
        rejected.classification.flow_schema.metadata.uid,
        "flood-fs-uid"
    );
    assert_eq!(
        rejected.classification.level.config().metadata.uid,
        "strict-uid"
    );
    // Another user is in another schema and level.
    let other = user("other", &["system:authenticated"]);
    let admitted = apf
        .admit(&request(&other, None))
        .await
        .unwrap()
        .ok()
        .unwrap();
    assert_eq!(
        admitted.classification.flow_schema.metadata.name,
        "catch-all"
    );
    // A finished request frees its seat.
    held.pop();
    assert!(apf.admit(&request(&flood, None)).await.unwrap().is_ok());
}

#[tokio::test(start_paused = true)]
async fn queued_requests_wait_then_time_out() {
    let apf = apf(
        json!([level(
            "queued",
            json!({"type": "Queue",
            "queuing": {"queues": 1, "handSize": 1, "queueLengthLimit": 1}})
        )]),
        json!([schema_for("flood", "queued")]),
    );
    let flood = user("flood", &["system:authenticated"]);
    let held: Vec<_> = admit_n(&apf, &flood, 5).await;
    assert_eq!(held.len(), 5);
    // The sixth waits; 60 s to its deadline gives it 15 s in the queue.
    let deadline = Instant::now() + Duration::from_secs(60);
    let started = Instant::now();
    let waited = apf.admit(&request(&flood, Some(deadline))).await.unwrap();
    let Err(rejected) = waited else {
        panic!("admitted past the limit")
    };
    assert_eq!(rejected.reason, RejectReason::TimeOut);
    assert_eq!(Instant::now() - started, Duration::from_secs(15));
}

async fn admit_n(apf: &PriorityAndFairness, user: &UserInfo, n: usize) -> Vec<Admitted> {
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(apf.admit(&request(user, None)).await.unwrap().ok().unwrap());
    }
    out
}

#[tokio::test]
async fn exempt_requests_always_run() {
    let apf = apf(json!([]), json!([]));
    let admin = user("admin", &["system:masters"]);
    let mut held = Vec::new();
    for _ in 0..50 {
        let admitted = apf
            .admit(&request(&admin, None))
            .await
            .unwrap()
            .ok()
            .unwrap();
        assert_eq!(admitted.classification.level.name(), "exempt");
        held.push(admitted);
    }
    let exempt = &apf.controller().levels()[1].exempt;
    assert_eq!(exempt.executing(), 50);
    assert_eq!(exempt.seats_in_use(), 50);
    drop(held);
    assert_eq!(exempt.executing(), 0);
    assert_eq!(exempt.seats_in_use(), 0);
    assert_eq!(exempt.dispatched(), 50);
    // The dump of the exempt level counts them as upstream's queue set without queues.
    let dump = crate::debug::render(
        apf.controller(),
        "/debug/api_priority_and_fairness/dump_priority_levels",
        "",
    )
    .expect("a dump");
    let row = dump
        .lines()
        .find(|l| l.starts_with("exempt"))
        .expect("the exempt row");
    let cells: Vec<&str> = row.split(',').map(str::trim).collect();
    assert_eq!(cells[6], "50", "{dump}");
}

/// Upstream's timing-ratio histograms as APF feeds them: the queue set (requests and seats
/// waiting and executing), the controller (the denominators) and the admission (the
/// read/write kinds).
#[tokio::test(start_paused = true)]
async fn timing_ratio_histograms_follow_the_requests() {
    let metrics = Arc::new(Metrics::new().unwrap());
    // 30 seats: 15 nominal for "queued" (lending none) and catch-all, 0 for exempt.
    let queuing = json!({"type": "Queue",
        "queuing": {"queues": 1, "handSize": 1, "queueLengthLimit": 1}});
    let apf = apf_with(
        30,
        Some(metrics.clone()),
        json!([level("queued", queuing)]),
        json!([schema_for("flood", "queued")]),
    );
    let flood = user("flood", &["system:authenticated"]);
    let mut held = admit_n(&apf, &flood, 15).await;
    let admin = user("admin", &["system:masters"]);
    let exempt = apf.admit(&request(&admin, None)).await.unwrap();
    tokio::time::advance(Duration::from_secs(1)).await;
    // A write waits 2 s for a read to finish, then runs for 1 s.
    let mut write = request(&flood, None);
    write.digest.verb = "create";
    let driver = async {
        tokio::time::advance(Duration::from_secs(2)).await;
        held.pop();
    };
    let (written, ()) = tokio::join!(apf.admit(&write), driver);
    let written = written.unwrap().ok().unwrap();
    tokio::time::advance(Duration::from_secs(1)).await;

    let t = &metrics.timing;
    let secs = |n: u64| Some(n * 1_000_000_000);
    let buckets = |h: &Histogram, les: &[f64]| -> Vec<Option<u64>> {
        les.iter().map(|&le| bucket_count(h, le)).collect()
    };
    let scrape = |v: &TimingRatioHistogramVec, labels: &[&str]| v.scrape(labels).expect("member");
    // "queued": 1 waiting of a capacity of 1 × 1 for 2 s.
    let h = scrape(
        &t.priority_level_request_utilization,
        &["waiting", "queued"],
    );
    assert_eq!(buckets(&h, &[0.0, 0.75, 1.0]), [secs(2), secs(2), secs(4)]);
    // 15 requests and seats executing of a limit of 15 all along.
    let h = scrape(
        &t.priority_level_request_utilization,
        &["executing", "queued"],
    );
    assert_eq!(buckets(&h, &[0.75, 1.0]), [secs(0), secs(4)]);
    let h = scrape(&t.priority_level_seat_utilization, &["queued"]);
    assert_eq!(buckets(&h, &[0.99, 1.0]), [secs(0), secs(4)]);
    // Demand: 15 seats, 16 while the write waits.
    let h = scrape(&t.demand_seats, &["queued"]);
    assert_eq!(buckets(&h, &[0.8, 1.0, 1.2]), [secs(0), secs(2), secs(4)]);
    // Exempt: 1 seat of a denominator of round(30 / 10) = 3 (its current limit is 0).
    let h = scrape(
        &t.priority_level_request_utilization,
        &["executing", "exempt"],
    );
    assert_eq!(buckets(&h, &[0.25, 0.5]), [secs(0), secs(4)]);
    let h = scrape(&t.priority_level_seat_utilization, &["exempt"]);
    assert_eq!(buckets(&h, &[0.3, 0.4]), [secs(0), secs(4)]);
    let h = scrape(&t.demand_seats, &["exempt"]);
    assert_eq!(buckets(&h, &[0.2, 0.4]), [secs(0), secs(4)]);
    // Read/write: waiting over the total capacity (1), executing over the sum of the
    // nominal limits (30): 16 reads, then 15 and the write.
    let rw = &t.read_vs_write_current_requests;
    let h = scrape(rw, &["waiting", "mutating"]);
    assert_eq!(buckets(&h, &[0.0, 0.99, 1.0]), [secs(2), secs(2), secs(4)]);
    let h = scrape(rw, &["waiting", "readOnly"]);
    assert_eq!(buckets(&h, &[0.0]), [secs(4)]);
    let h = scrape(rw, &["executing", "readOnly"]);
    assert_eq!(buckets(&h, &[0.4, 0.5, 0.6]), [secs(0), secs(1), secs(4)]);
    let h = scrape(rw, &["executing", "mutating"]);
    assert_eq!(buckets(&h, &[0.0, 0.01, 0.1]), [secs(3), secs(3), secs(4)]);

    // Finished requests leave the numerators.
    drop((held, exempt, written));
    tokio::time::advance(Duration::from_secs(1)).await;
    let h = scrape(rw, &["executing", "readOnly"]);
    assert_eq!(buckets(&h, &[0.0, 0.6]), [secs(1), secs(5)]);
    let h = scrape(&t.priority_level_seat_utilization, &["queued"]);
    assert_eq!(buckets(&h, &[0.0, 1.0]), [secs(1), secs(5)]);
}
