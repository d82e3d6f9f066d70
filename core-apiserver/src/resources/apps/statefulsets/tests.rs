use super::*;
use crate::resources::messages;
use kas_registry::Strategy as _;

fn sts() -> Value {
    let mut sts = json!({"metadata": {"name": "web", "namespace": "ns"},
        "spec": {"serviceName": "web",
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "1Gi"}}}}]}});
    Strategy.default(&mut sts);
    sts
}

fn created() -> Value {
    let mut s = sts();
    Strategy.prepare_for_create(&mut s);
    s
}

#[test]
fn upstream_defaults_fill_the_spec_and_its_claim_templates() {
    let s = sts();
    let spec = &s["spec"];
    assert_eq!(spec["podManagementPolicy"], "OrderedReady");
    assert_eq!(
        spec["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
    );
    assert_eq!(spec["replicas"], 1);
    assert_eq!(spec["revisionHistoryLimit"], 10);
    assert_eq!(
        spec["persistentVolumeClaimRetentionPolicy"],
        json!({"whenDeleted": "Retain", "whenScaled": "Retain"})
    );
    assert_eq!(spec["template"]["spec"]["restartPolicy"], "Always");
    assert_eq!(spec["template"]["spec"]["dnsPolicy"], "ClusterFirst");
    let claim = &spec["volumeClaimTemplates"][0];
    assert_eq!(claim["status"], json!({"phase": "Pending"}));
    assert_eq!(claim["spec"]["volumeMode"], "Filesystem");
    assert!(
        Strategy.validate(&s).is_empty(),
        "{:?}",
        messages(&Strategy.validate(&s))
    );
}

#[test]
fn an_explicit_strategy_keeps_its_shape() {
    let mut s = json!({"spec": {"updateStrategy": {"type": "OnDelete"}}});
    Strategy.default(&mut s);
    assert_eq!(s["spec"]["updateStrategy"], json!({"type": "OnDelete"}));
    let mut s = json!({"spec": {"updateStrategy": {"type": "RollingUpdate"}}});
    Strategy.default(&mut s);
    assert_eq!(
        s["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate"})
    );
    let mut s = json!({"spec": {"updateStrategy": {"type": "RollingUpdate",
        "rollingUpdate": {"partition": 2}}, "replicas": 0}});
    Strategy.default(&mut s);
    assert_eq!(s["spec"]["updateStrategy"]["rollingUpdate"]["partition"], 2);
    assert_eq!(s["spec"]["replicas"], 0);
}

#[test]
fn spec_rules_and_their_messages() {
    let mut bad = sts();
    bad["metadata"]["name"] = json!("web.v1");
    let spec = &mut bad["spec"];
    spec["podManagementPolicy"] = json!("Random");
    spec["persistentVolumeClaimRetentionPolicy"]["whenScaled"] = json!("Keep");
    spec["replicas"] = json!(-1);
    spec["minReadySeconds"] = json!(-2);
    spec["ordinals"] = json!({"start": -3});
    spec["serviceName"] = json!("Web_1");
    spec["selector"] = json!({"matchLabels": {"app": "db"}});
    spec["template"]["spec"]["restartPolicy"] = json!("Never");
    spec["template"]["spec"]["activeDeadlineSeconds"] = json!(5);
    let label = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
    assert_eq!(
        messages(&Strategy.validate(&bad)),
        [
            "metadata.name: Invalid value: \"web.v1\": must not contain dots".into(),
            "spec.podManagementPolicy: Invalid value: \"Random\": must be 'OrderedReady' or 'Parallel'".into(),
            "spec.persistentVolumeClaimRetentionPolicy.whenScaled: Unsupported value: \"Keep\": supported values: \"Retain\", \"Delete\"".into(),
            "spec.replicas: Invalid value: -1: must be greater than or equal to 0".into(),
            "spec.minReadySeconds: Invalid value: -2: must be greater than or equal to 0".into(),
            "spec.ordinals.start: Invalid value: -3: must be greater than or equal to 0".into(),
            format!("spec.serviceName: Invalid value: \"Web_1\": {label}"),
            "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`".into(),
            "spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\"".into(),
            "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in StatefulSet is not Supported".into(),
        ]
    );
}

#[test]
fn the_pod_spec_is_not_validated_as_in_1_33() {
    let mut s = sts();
    s["spec"]["template"]["spec"]["containers"][0]["image"] = json!("");
    s["spec"]["volumeClaimTemplates"][0]["spec"] = json!({});
    assert!(Strategy.validate(&s).is_empty());
    s["spec"]["template"]["metadata"]["labels"]["bad key!"] = json!("x");
    assert_eq!(
        messages(&Strategy.validate(&s))[0].split(':').next(),
        Some("spec.template.labels")
    );
}

#[test]
fn update_strategies_are_checked() {
    let mut s = sts();
    s["spec"]["updateStrategy"] = json!({"type": "OnDelete", "rollingUpdate": {}});
    assert_eq!(
        messages(&Strategy.validate(&s)),
        [
            "spec.updateStrategy.rollingUpdate: Invalid value: apps.RollingUpdateStatefulSetStrategy{Partition:0, MaxUnavailable:(*intstr.IntOrString)(nil)}: only allowed for updateStrategy 'RollingUpdate'"
        ]
    );
    s["spec"]["updateStrategy"] = json!({"type": "Sometimes"});
    assert_eq!(
        messages(&Strategy.validate(&s)),
        [
            "spec.updateStrategy: Invalid value: apps.StatefulSetUpdateStrategy{Type:\"Sometimes\", RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(nil)}: must be 'RollingUpdate' or 'OnDelete'"
        ]
    );
    s["spec"]["updateStrategy"] =
        json!({"type": "RollingUpdate", "rollingUpdate": {"partition": -1}});
    assert_eq!(
        messages(&Strategy.validate(&s)),
        [
            "spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0"
        ]
    );
    s["spec"]["updateStrategy"] = json!({});
    assert_eq!(
        messages(&Strategy.validate(&s)),
        ["spec.updateStrategy: Required value"]
    );
}

#[test]
fn selectors_are_required_and_not_empty() {
    let mut s = sts();
    if let Some(spec) = s["spec"].as_object_mut() {
        spec.remove("selector");
    }
    assert_eq!(
        messages(&Strategy.validate(&s)),
        [
            "spec.selector: Required value",
            "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`",
        ]
    );
    s["spec"]["selector"] = json!({});
    assert_eq!(
        messages(&Strategy.validate(&s)),
        [
            "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for statefulset"
        ]
    );
    s["spec"]["selector"] =
        json!({"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]});
    assert!(Strategy.validate(&s).is_empty());
}

#[test]
fn only_some_spec_fields_change() {
    let old = created();
    let mut new = old.clone();
    new["spec"]["replicas"] = json!(3);
    new["spec"]["minReadySeconds"] = json!(5);
    new["spec"]["updateStrategy"] = json!({"type": "OnDelete"});
    new["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:2");
    new["spec"]["persistentVolumeClaimRetentionPolicy"]["whenDeleted"] = json!("Delete");
    Strategy.prepare_for_update(&mut new, &old);
    assert!(
        Strategy.validate_update(&new, &old).is_empty(),
        "{:?}",
        messages(&Strategy.validate_update(&new, &old))
    );
    assert_eq!(new["metadata"]["generation"], 2);

    for (field, value) in [
        ("serviceName", json!("other")),
        ("podManagementPolicy", json!("Parallel")),
        ("revisionHistoryLimit", json!(3)),
        ("volumeClaimTemplates", json!([])),
    ] {
        let mut new = old.clone();
        new["spec"][field] = value;
        Strategy.prepare_for_update(&mut new, &old);
        assert_eq!(
            messages(&Strategy.validate_update(&new, &old)),
            [
                "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
            ],
            "{field}"
        );
    }
}

#[test]
fn a_stored_invalid_service_name_does_not_block_updates() {
    let mut old = created();
    old["spec"]["serviceName"] = json!("Bad_Name");
    assert!(!Strategy.validate(&old).is_empty());
    let mut new = old.clone();
    new["spec"]["replicas"] = json!(2);
    Strategy.prepare_for_update(&mut new, &old);
    assert!(Strategy.validate_update(&new, &old).is_empty());
}

#[test]
fn writes_keep_the_status_and_drop_max_unavailable() {
    let mut s = sts();
    s["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"] = json!(2);
    s["status"] = json!({"replicas": 5});
    Strategy.prepare_for_create(&mut s);
    assert_eq!(s["status"], json!({}));
    assert_eq!(s["metadata"]["generation"], 1);
    assert_eq!(
        s["spec"]["updateStrategy"]["rollingUpdate"],
        json!({"partition": 0})
    );
    let mut new = s.clone();
    new["status"] = json!({"replicas": 7});
    new["metadata"]["generation"] = json!(9);
    Strategy.prepare_for_update(&mut new, &s);
    assert_eq!(new["status"], s["status"]);
    assert_eq!(new["metadata"]["generation"], 1);
    // A set that already has maxUnavailable keeps it, and it is checked.
    let mut old = s.clone();
    old["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"] = json!(1);
    let mut new = old.clone();
    new["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"] = json!("0%");
    Strategy.prepare_for_update(&mut new, &old);
    assert_eq!(
        messages(&Strategy.validate_update(&new, &old)),
        [
            "spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"0%\"}: cannot be 0"
        ]
    );
}

#[test]
fn status_counts_are_bounded_and_collisions_only_grow() {
    let mut old = created();
    old["status"] = json!({"replicas": 2, "collisionCount": 3});
    let mut new = old.clone();
    new["status"] = json!({"replicas": 1, "readyReplicas": 1, "availableReplicas": 2,
        "currentReplicas": -1, "collisionCount": 1});
    assert_eq!(
        messages(&Strategy.validate_status_update(&new, &old)),
        [
            "status.currentReplicas: Invalid value: -1: must be greater than or equal to 0",
            "status.availableReplicas: Invalid value: 2: cannot be greater than status.replicas",
            "status.availableReplicas: Invalid value: 2: cannot be greater than status.readyReplicas",
            "status.collisionCount: Invalid value: 1: cannot be decremented",
        ]
    );
}

#[test]
fn the_printer_shows_ready_over_desired() {
    let mut s = created();
    s["spec"]["replicas"] = json!(3);
    s["status"]["readyReplicas"] = json!(1);
    let cells = Strategy.table_cells(&s);
    assert_eq!(cells[0], "web");
    assert_eq!(cells[1], "1/3");
    assert_eq!(cells[2], "<unknown>");
    assert_eq!(cells[3..], [json!("c"), json!("nginx")]);
    assert_eq!(cells.len(), DESCRIPTOR.table_columns.len());
}
