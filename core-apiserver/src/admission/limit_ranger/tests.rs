//! The rules against upstream's messages and the operations the plugin looks at.

use super::defaults::mutate_pod;
use super::rules::{aggregate, validate_claim, validate_pod};
use serde_json::{Value, json};

fn range(items: Value) -> Value {
    json!({"spec": {"limits": items}})
}

fn pod(containers: Value, init: Value) -> Value {
    json!({"metadata": {"name": "p"}, "spec": {"containers": containers, "initContainers": init}})
}

fn message(range: &Value, pod: &Value) -> Option<String> {
    aggregate(&validate_pod(range, pod))
}

#[test]
fn defaults_fill_what_containers_lack_and_are_annotated() {
    let lr = range(json!([
        {"type": "Container", "default": {"cpu": "500m", "memory": "1Gi"}, "defaultRequest": {"cpu": "100m"}},
        {"type": "Pod", "max": {"cpu": "4"}}
    ]));
    let mut p = pod(
        json!([
            {"name": "nginx", "image": "nginx"},
            {"name": "own", "image": "x", "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "2", "memory": "2Gi"}}}
        ]),
        json!([{"name": "setup", "image": "x", "resources": {"limits": {"memory": "64Mi"}}}]),
    );
    mutate_pod(&lr, &mut p);
    assert_eq!(
        p["spec"]["containers"][0]["resources"],
        json!({"limits": {"cpu": "500m", "memory": "1Gi"}, "requests": {"cpu": "100m"}})
    );
    // A container with all of them set is left as it is.
    assert_eq!(
        p["spec"]["containers"][1]["resources"],
        json!({"requests": {"cpu": "1"}, "limits": {"cpu": "2", "memory": "2Gi"}})
    );
    assert_eq!(
        p["spec"]["initContainers"][0]["resources"],
        json!({"limits": {"memory": "64Mi", "cpu": "500m"}, "requests": {"cpu": "100m"}})
    );
    assert_eq!(
        p["metadata"]["annotations"]["kubernetes.io/limit-ranger"],
        "LimitRanger plugin set: cpu request for container nginx; cpu, memory limit for container nginx; cpu request for init container setup; cpu limit for init container setup"
    );
    // Nothing to set: no annotation.
    let mut bare = pod(json!([{"name": "c"}]), json!([]));
    mutate_pod(
        &range(json!([{"type": "Pod", "max": {"cpu": "1"}}])),
        &mut bare,
    );
    assert!(bare["metadata"].get("annotations").is_none());
    assert!(bare["spec"]["containers"][0].get("resources").is_none());
}

#[test]
fn container_bounds_use_upstreams_messages() {
    let lr = range(json!([{
        "type": "Container",
        "min": {"cpu": "100m"},
        "max": {"memory": "1Gi"},
        "maxLimitRequestRatio": {"cpu": "2"}
    }]));
    let c = |requests: Value, limits: Value| {
        pod(
            json!([{"name": "c", "resources": {"requests": requests, "limits": limits}}]),
            json!([]),
        )
    };
    let ok = c(
        json!({"cpu": "200m"}),
        json!({"cpu": "400m", "memory": "1Gi"}),
    );
    assert_eq!(message(&lr, &ok), None);
    assert_eq!(
        message(
            &lr,
            &c(
                json!({"cpu": "50m"}),
                json!({"cpu": "100m", "memory": "1Gi"})
            )
        )
        .as_deref(),
        Some("minimum cpu usage per Container is 100m, but request is 50m")
    );
    assert_eq!(
        message(
            &lr,
            &c(
                json!({"cpu": "100m"}),
                json!({"cpu": "400m", "memory": "2Gi"})
            )
        )
        .as_deref(),
        Some(
            "[maximum memory usage per Container is 1Gi, but limit is 2Gi, cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000]"
        )
    );
    assert_eq!(
        message(&lr, &c(json!({}), json!({"memory": "1Gi"}))).as_deref(),
        Some(
            "[minimum cpu usage per Container is 100m.  No request is specified, cpu max limit to request ratio per Container is 2, but no request is specified or request is 0]"
        )
    );
    assert_eq!(
        message(
            &lr,
            &c(json!({"cpu": "1", "memory": "2Gi"}), json!({"cpu": "1"}))
        )
        .as_deref(),
        Some("maximum memory usage per Container is 1Gi.  No limit is specified")
    );
    assert_eq!(
        message(
            &lr,
            &c(json!({"cpu": "1"}), json!({"cpu": "0", "memory": "1"}))
        )
        .as_deref(),
        Some(
            "[minimum cpu usage per Container is 100m, but limit is 0, cpu max limit to request ratio per Container is 2, but no limit is specified or limit is 0]"
        )
    );
}

#[test]
fn pod_bounds_sum_containers_and_count_init_containers_at_their_largest() {
    let lr = range(json!([{"type": "Pod", "max": {"cpu": "2"}, "min": {"memory": "1Mi"}}]));
    let res =
        |cpu: &str| json!({"requests": {"cpu": cpu, "memory": "1Mi"}, "limits": {"cpu": cpu}});
    let fits = pod(
        json!([{"name": "a", "resources": res("1")}, {"name": "b", "resources": res("1")}]),
        json!([{"name": "i", "resources": res("2")}]),
    );
    assert_eq!(message(&lr, &fits), None);
    let over = pod(
        json!([{"name": "a", "resources": res("1")}]),
        json!([{"name": "i", "resources": res("3")}]),
    );
    assert_eq!(
        message(&lr, &over).as_deref(),
        Some("maximum cpu usage per Pod is 2, but limit is 3")
    );
    // A sidecar (restartable init container) adds to the containers.
    let sidecar = pod(
        json!([{"name": "a", "resources": res("1500m")}]),
        json!([{"name": "s", "restartPolicy": "Always", "resources": res("1")}]),
    );
    assert_eq!(
        message(&lr, &sidecar).as_deref(),
        Some("maximum cpu usage per Pod is 2, but limit is 2500m")
    );
}

#[test]
fn claims_are_bounded_on_their_storage_request() {
    let lr = range(
        json!([{"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}, "max": {"storage": "2Gi"}}]),
    );
    let claim = |size: &str| json!({"spec": {"resources": {"requests": {"storage": size}}}});
    assert!(validate_claim(&lr, &claim("2Gi")).is_empty());
    assert_eq!(
        aggregate(&validate_claim(&lr, &claim("5Gi"))).as_deref(),
        Some("maximum storage usage per PersistentVolumeClaim is 2Gi, but request is 5Gi")
    );
    assert_eq!(
        aggregate(&validate_claim(&lr, &claim("100Mi"))).as_deref(),
        Some("minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 100Mi")
    );
    assert_eq!(
        aggregate(&validate_claim(&lr, &json!({"spec": {}}))).as_deref(),
        Some(
            "[minimum storage usage per PersistentVolumeClaim is 1Gi.  No request is specified, maximum storage usage per PersistentVolumeClaim is 2Gi.  No request is specified]"
        )
    );
}

#[test]
fn aggregate_drops_repeated_messages() {
    let e = |s: &str| s.to_owned();
    assert_eq!(aggregate(&[]), None);
    assert_eq!(aggregate(&[e("a"), e("a")]).as_deref(), Some("a"));
    assert_eq!(
        aggregate(&[e("a"), e("b"), e("a")]).as_deref(),
        Some("[a, b]")
    );
}

#[test]
fn pods_are_looked_at_on_create_and_resize_claims_on_create_and_update() {
    use crate::resources::{configmaps, persistentvolumeclaims as pvcs, pods};
    use kas_registry::admission::Operation::{Create, Delete, Update};
    let supports = super::supports;
    assert!(supports(&pods::DESCRIPTOR, "", Create));
    assert!(!supports(&pods::DESCRIPTOR, "", Update));
    assert!(supports(&pods::DESCRIPTOR, "resize", Update));
    assert!(!supports(&pods::DESCRIPTOR, "status", Update));
    assert!(!supports(&pods::DESCRIPTOR, "ephemeralcontainers", Update));
    assert!(supports(&pvcs::DESCRIPTOR, "", Create));
    assert!(supports(&pvcs::DESCRIPTOR, "", Update));
    assert!(!supports(&pvcs::DESCRIPTOR, "", Delete));
    assert!(!supports(&pvcs::DESCRIPTOR, "status", Update));
    assert!(!supports(&configmaps::DESCRIPTOR, "", Create));
}
