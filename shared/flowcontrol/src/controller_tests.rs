use super::*;
use kas_auth::UserInfo;
use serde_json::{Value, json};

/// Upstream's bootstrap configuration, decoded.
fn bootstrap() -> (Vec<PriorityLevelConfiguration>, Vec<FlowSchema>) {
    let mut levels = Vec::new();
    let mut schemas = Vec::new();
    for (plural, object) in crate::bootstrap::bootstrap_objects() {
        match plural {
            "flowschemas" => schemas.push(serde_json::from_value(object).unwrap()),
            _ => levels.push(serde_json::from_value(object).unwrap()),
        }
    }
    (levels, schemas)
}

fn limits(controller: &Controller) -> BTreeMap<String, (usize, usize, usize)> {
    controller
        .levels()
        .iter()
        .map(|l| {
            let limits = l.limits();
            (
                l.name().to_owned(),
                (limits.nominal, limits.lower, limits.upper),
            )
        })
        .collect()
}

#[tokio::test]
async fn nominal_limits_of_the_bootstrap_configuration() {
    let controller = Controller::new(600, None);
    let (levels, schemas) = bootstrap();
    controller.digest(levels, schemas);
    // Upstream's apiserver_flowcontrol_nominal_limit_seats with the default 400 + 200.
    let nominal: BTreeMap<String, usize> = limits(&controller)
        .into_iter()
        .map(|(name, (nominal, _, _))| (name, nominal))
        .collect();
    let expected: BTreeMap<String, usize> = [
        ("catch-all", 13),
        ("exempt", 0),
        ("global-default", 49),
        ("leader-election", 25),
        ("node-high", 98),
        ("system", 74),
        ("workload-high", 98),
        ("workload-low", 245),
    ]
    .into_iter()
    .map(|(n, v)| (n.to_owned(), v))
    .collect();
    assert_eq!(nominal, expected);
    // workload-low lends 90%: lower = 245 - round(220.5); no borrowing limit: + 600.
    assert_eq!(limits(&controller)["workload-low"], (245, 24, 845));
    let level = &controller.levels()[7];
    assert_eq!(level.name(), "workload-low");
    // max seats: min(ceil(245 × 0.15), 245 / 6) = 37.
    assert_eq!(level.max_seats(), 37);
}

#[tokio::test]
async fn mandatory_objects_are_imagined() {
    let controller = Controller::new(100, None);
    let names: Vec<String> = controller
        .levels()
        .iter()
        .map(|l| l.name().to_owned())
        .collect();
    assert_eq!(names, ["catch-all", "exempt"]);
    let schemas: Vec<String> = controller
        .flow_schemas()
        .iter()
        .map(|f| f.metadata.name.clone())
        .collect();
    assert_eq!(schemas, ["exempt", "catch-all"]);
    // catch-all has every share: all 100 seats.
    assert_eq!(limits(&controller)["catch-all"].0, 100);
}

fn user(name: &str, groups: &[&str]) -> UserInfo {
    UserInfo {
        name: name.into(),
        groups: groups.iter().map(|g| g.to_string()).collect(),
        ..Default::default()
    }
}

fn digest<'a>(
    user: &'a UserInfo,
    verb: &'a str,
    resource: &'a str,
    ns: &'a str,
) -> RequestDigest<'a> {
    RequestDigest {
        is_resource_request: true,
        verb,
        api_group: "",
        api_version: "v1",
        resource,
        subresource: "",
        namespace: ns,
        name: "",
        path: "",
        user,
    }
}

fn classified(controller: &Controller, d: &RequestDigest<'_>) -> (String, String) {
    let c = controller.classify(d).unwrap();
    (
        c.flow_schema.metadata.name.clone(),
        c.level.name().to_owned(),
    )
}

#[tokio::test]
async fn classification_follows_precedence() {
    let controller = Controller::new(600, None);
    let (levels, schemas) = bootstrap();
    controller.digest(levels, schemas);
    let admin = user("admin", &["system:masters", "system:authenticated"]);
    assert_eq!(
        classified(&controller, &digest(&admin, "list", "pods", "")),
        ("exempt".into(), "exempt".into())
    );
    let kcm = user("system:kube-controller-manager", &["system:authenticated"]);
    let mut lease = digest(&kcm, "update", "leases", "kube-system");
    lease.api_group = "coordination.k8s.io";
    assert_eq!(
        classified(&controller, &lease),
        ("system-leader-election".into(), "leader-election".into())
    );
    let alice = user("alice", &["system:authenticated"]);
    let c = controller
        .classify(&digest(&alice, "get", "pods", "default"))
        .unwrap();
    assert_eq!(c.flow_schema.metadata.name, "global-default");
    // global-default distinguishes by user.
    assert_eq!(c.flow_distinguisher, "alice");
    assert_eq!(c.hash, hash_flow_id("global-default", "alice"));
    // A user in no group matches no suggested schema.
    let anonymous = user("nobody", &[]);
    assert_eq!(
        classified(&controller, &digest(&anonymous, "get", "pods", "default")),
        ("catch-all".into(), "catch-all".into())
    );
}

fn object<T: serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).unwrap()
}

#[tokio::test]
async fn dangling_schemas_are_skipped_and_levels_kept_across_changes() {
    let controller = Controller::new(600, None);
    let level: PriorityLevelConfiguration = object(
        json!({"metadata": {"name": "mine", "uid": "u1"},
        "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 10,
            "lendablePercent": 0,
            "limitResponse": {"type": "Queue", "queuing": {"queues": 4, "handSize": 2, "queueLengthLimit": 5}}}}}),
    );
    let schema = |pl: &str| -> FlowSchema {
        object(json!({"metadata": {"name": "alice-fs", "uid": "s1"},
            "spec": {"priorityLevelConfiguration": {"name": pl}, "matchingPrecedence": 100,
                "rules": [{"subjects": [{"kind": "User", "user": {"name": "alice"}}],
                    "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                        "namespaces": ["*"], "clusterScope": true}]}]}}))
    };
    let alice = user("alice", &["system:authenticated"]);
    controller.digest(vec![], vec![schema("mine")]);
    // Its level does not exist: catch-all.
    assert_eq!(
        classified(&controller, &digest(&alice, "get", "pods", "a")).0,
        "catch-all"
    );
    controller.digest(vec![level.clone()], vec![schema("mine")]);
    let first = controller
        .classify(&digest(&alice, "get", "pods", "a"))
        .unwrap();
    assert_eq!(first.flow_schema.metadata.name, "alice-fs");
    assert_eq!(first.level.config().metadata.uid, "u1");
    // 10 shares of 15: ceil(600 × 10 / 15).
    assert_eq!(first.level.limits().nominal, 400);
    let mut changed = level;
    changed
        .spec
        .limited
        .as_mut()
        .unwrap()
        .nominal_concurrency_shares = Some(5);
    controller.digest(vec![changed], vec![schema("mine")]);
    let second = controller
        .classify(&digest(&alice, "get", "pods", "a"))
        .unwrap();
    // The same level, reconfigured in place.
    assert!(Arc::ptr_eq(&first.level, &second.level));
    assert_eq!(second.level.limits().nominal, 300);
    // A broken level is ignored.
    let broken: PriorityLevelConfiguration = object(json!({"metadata": {"name": "mine"},
        "spec": {"type": "Limited"}}));
    controller.digest(vec![broken], vec![schema("mine")]);
    assert_eq!(
        classified(&controller, &digest(&alice, "get", "pods", "a")).0,
        "catch-all"
    );
}

#[test]
fn flow_ids_hash_as_upstream() {
    // sha256("fs\0u")[..8] little-endian.
    let mut ctx = aws_lc_rs::digest::Context::new(&aws_lc_rs::digest::SHA256);
    ctx.update(b"fs\0u");
    let sum = ctx.finish();
    let expected = u64::from_le_bytes(sum.as_ref()[..8].try_into().unwrap());
    assert_eq!(hash_flow_id("fs", "u"), expected);
    assert_ne!(hash_flow_id("fs", "u"), hash_flow_id("f", "su"));
}
