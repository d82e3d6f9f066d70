use super::*;
use crate::config::{FlowSchema, PriorityLevelConfiguration};
use kas_auth::UserInfo;
use serde_json::json;

fn apf(levels: serde_json::Value, schemas: serde_json::Value) -> PriorityAndFairness {
    let controller = Arc::new(Controller::new(10, None));
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
    assert_eq!(apf.controller().levels()[1].exempt.executing(), 50);
    drop(held);
    assert_eq!(apf.controller().levels()[1].exempt.executing(), 0);
}
