use super::*;
use crate::resources::messages;
use kas_registry::Strategy as _;

fn pod() -> Value {
    let mut p = json!({"metadata": {"name": "p", "namespace": "ns", "resourceVersion": "1"},
        "spec": {"containers": [{"name": "c", "image": "nginx:1.27",
            "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}});
    Strategy.default(&mut p);
    p
}

#[test]
fn qos_classes_as_upstream_computes_them() {
    assert_eq!(qos_class(&pod()), "Guaranteed");
    let mut burstable = pod();
    burstable["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("500m");
    assert_eq!(qos_class(&burstable), "Burstable");
    let best = json!({"spec": {"containers": [{"name": "c", "resources": {"limits": {"example.com/gpu": "1"}}}]}});
    assert_eq!(qos_class(&best), "BestEffort");
}

#[test]
fn a_new_pod_is_pending_whatever_status_it_brings() {
    let mut p = pod();
    p["status"] = json!({"phase": "Running", "podIP": "10.0.0.1"});
    Strategy.prepare_for_create(&mut p);
    assert_eq!(
        p["status"],
        json!({"phase": "Pending", "qosClass": "Guaranteed"})
    );
    let mut gated = pod();
    gated["spec"]["schedulingGates"] = json!([{"name": "g"}]);
    Strategy.prepare_for_create(&mut gated);
    assert_eq!(
        gated["status"]["conditions"][0]["reason"],
        "SchedulingGated"
    );
}

#[test]
fn ephemeral_containers_cannot_be_set_on_create() {
    let mut p = pod();
    p["spec"]["ephemeralContainers"] = json!([{"name": "debug", "image": "busybox"}]);
    let errs = Strategy.validate(&p);
    assert!(
        messages(&errs)
            .contains(&"spec.ephemeralContainers: Forbidden: cannot be set on create".to_owned()),
        "{:?}",
        messages(&errs)
    );
}

#[test]
fn an_update_may_change_images_but_not_the_rest() {
    let old = pod();
    let mut new = old.clone();
    new["spec"]["containers"][0]["image"] = json!("nginx:1.28");
    new["spec"]["activeDeadlineSeconds"] = json!(60);
    new["spec"]["tolerations"] = json!([{"key": "k", "operator": "Exists"}]);
    assert!(
        Strategy.validate_update(&new, &old).is_empty(),
        "{:?}",
        messages(&Strategy.validate_update(&new, &old))
    );

    let mut changed = old.clone();
    changed["spec"]["restartPolicy"] = json!("Never");
    let m = messages(&Strategy.validate_update(&changed, &old));
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(m[0].starts_with("spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"), "{m:?}");
    assert!(m[0].contains("RestartPolicy: \"Always\""), "{m:?}");

    let mut removed = old.clone();
    removed["spec"]["containers"] = json!([]);
    let m = messages(&Strategy.validate_update(&removed, &old));
    assert!(
        m.contains(
            &"spec.containers: Forbidden: pod updates may not add or remove containers".to_owned()
        ),
        "{m:?}"
    );
}

#[test]
fn the_active_deadline_only_shortens() {
    let mut old = pod();
    old["spec"]["activeDeadlineSeconds"] = json!(30);
    let mut new = old.clone();
    new["spec"]["activeDeadlineSeconds"] = json!(60);
    assert_eq!(
        messages(&Strategy.validate_update(&new, &old)),
        [
            "spec.activeDeadlineSeconds: Invalid value: 60: must be less than or equal to previous value"
        ]
    );
    new["spec"]
        .as_object_mut()
        .unwrap()
        .remove("activeDeadlineSeconds");
    let m = messages(&Strategy.validate_update(&new, &old));
    assert!(m.contains(&"spec.activeDeadlineSeconds: Invalid value: <nil>: must not update from a positive integer to nil value".to_owned()), "{m:?}");
}

#[test]
fn tolerations_are_only_added_and_gates_only_removed() {
    let mut old = pod();
    old["spec"]["tolerations"] = json!([{"key": "a", "operator": "Exists"}]);
    old["spec"]["schedulingGates"] = json!([{"name": "g1"}]);
    let mut new = old.clone();
    new["spec"]["tolerations"] = json!([{"key": "b", "operator": "Exists"}]);
    new["spec"]["schedulingGates"] = json!([{"name": "g1"}, {"name": "g2"}]);
    let m = messages(&Strategy.validate_update(&new, &old));
    assert!(m.contains(&"spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds".to_owned()), "{m:?}");
    assert!(m.contains(&"spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new scheduling gate 'g2'".to_owned()), "{m:?}");
}

#[test]
fn status_writes_check_pod_ips() {
    let old = pod();
    let mut new = old.clone();
    new["status"] = json!({"podIPs": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}]});
    let m = messages(&Strategy.validate_status_update(&new, &old));
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(
        m[0].ends_with("may specify no more than one IP for each IP family"),
        "{m:?}"
    );
    new["status"] = json!({"podIPs": [{"ip": "nope"}]});
    assert_eq!(
        messages(&Strategy.validate_status_update(&new, &old)),
        [
            "status.podIPs[0]: Invalid value: \"nope\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
        ]
    );
    new["status"] = json!({"podIPs": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}]});
    assert!(Strategy.validate_status_update(&new, &old).is_empty());
}

#[test]
fn pod_ip_and_pod_ips_agree() {
    let mut p = json!({"spec": {}, "status": {"podIP": "10.0.0.9"}});
    Strategy.default(&mut p);
    assert_eq!(p["status"]["podIPs"], json!([{"ip": "10.0.0.9"}]));
    let mut p = json!({"spec": {}, "status": {"podIPs": [{"ip": "10.0.0.7"}]}});
    Strategy.default(&mut p);
    assert_eq!(p["status"]["podIP"], "10.0.0.7");
}

#[test]
fn field_selectors_see_upstreams_pod_fields() {
    let mut p = pod();
    p["spec"]["nodeName"] = json!("n1");
    p["status"] = json!({"phase": "Running", "podIPs": [{"ip": "10.0.0.1"}]});
    let set = Strategy.field_set(&p);
    assert_eq!(set["spec.nodeName"], "n1");
    assert_eq!(set["spec.restartPolicy"], "Always");
    assert_eq!(set["spec.schedulerName"], "default-scheduler");
    assert_eq!(set["spec.hostNetwork"], "false");
    assert_eq!(set["status.phase"], "Running");
    assert_eq!(set["status.podIP"], "10.0.0.1");
    assert_eq!(set["metadata.namespace"], "ns");
}

#[test]
fn graceful_deletion_periods_as_upstream_chooses_them() {
    let mut p = pod();
    assert_eq!(
        Strategy.check_graceful_delete(&p, None),
        Some(0),
        "not scheduled"
    );
    p["spec"]["nodeName"] = json!("n1");
    assert_eq!(Strategy.check_graceful_delete(&p, None), Some(30));
    assert_eq!(Strategy.check_graceful_delete(&p, Some(5)), Some(5));
    p["spec"]["terminationGracePeriodSeconds"] = json!(-3);
    assert_eq!(Strategy.check_graceful_delete(&p, None), Some(1));
    p["status"]["phase"] = json!("Succeeded");
    assert_eq!(Strategy.check_graceful_delete(&p, Some(5)), Some(0));
}
