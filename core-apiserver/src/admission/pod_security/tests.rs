//! The checks' reasons and details, the aggregation into upstream's messages, label
//! parsing and the namespace warnings, against upstream's test expectations.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::api::{Level, LevelVersion, Policy, Version, policy_to_evaluate};
use super::is_significant_pod_update;
use super::namespace::{namespace_warnings, prioritize_pods};
use super::policy::{Aggregate, evaluate_pod};

fn lv(level: Level, version: Version) -> LevelVersion {
    LevelVersion { level, version }
}

const RESTRICTED: LevelVersion = LevelVersion {
    level: Level::Restricted,
    version: Version::Latest,
};
const BASELINE: LevelVersion = LevelVersion {
    level: Level::Baseline,
    version: Version::Latest,
};

fn detail(level: LevelVersion, spec: Value) -> String {
    detail_meta(level, json!({}), spec)
}

fn detail_meta(level: LevelVersion, metadata: Value, spec: Value) -> String {
    Aggregate::of(evaluate_pod(level, &metadata, &spec)).detail()
}

fn compliant() -> Value {
    json!({
        "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [{"name": "c", "image": "i", "securityContext": {
            "allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}}],
        "volumes": [{"name": "v", "emptyDir": {}}]
    })
}

#[test]
fn a_bare_pod_violates_restricted_in_upstreams_order_and_words() {
    let spec = json!({"containers": [{"name": "c", "image": "i"}]});
    assert_eq!(
        detail(RESTRICTED, spec.clone()),
        r#"allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")"#
    );
    assert_eq!(detail(BASELINE, spec), "");
    assert_eq!(detail(RESTRICTED, compliant()), "");
    assert_eq!(
        detail(
            lv(Level::Privileged, Version::Latest),
            json!({"hostPID": true})
        ),
        ""
    );
}

#[test]
fn baseline_checks_name_fields_and_containers() {
    let spec = json!({
        "hostNetwork": true, "hostPID": true,
        "securityContext": {"sysctls": [{"name": "kernel.msgmax"}, {"name": "net.ipv4.tcp_rmem"}],
            "seLinuxOptions": {"type": "spc_t", "user": "u"}},
        "initContainers": [{"name": "i", "securityContext": {"privileged": true, "procMount": "Unmasked"}}],
        "containers": [
            {"name": "a", "ports": [{"containerPort": 80, "hostPort": 8080}, {"containerPort": 9, "hostPort": 80}],
             "securityContext": {"privileged": true, "capabilities": {"add": ["NET_RAW", "CHOWN", "SYS_ADMIN"]},
                "appArmorProfile": {"type": "Unconfined"}, "seccompProfile": {"type": "Unconfined"},
                "windowsOptions": {"hostProcess": true}}},
        ],
        "volumes": [{"name": "h", "hostPath": {"path": "/"}}, {"name": "g", "gitRepo": {"repository": "x"}}]
    });
    assert_eq!(
        detail(BASELINE, spec.clone()),
        concat!(
            r#"forbidden AppArmor profile (container "a" must not set AppArmor profile type to "Unconfined"), "#,
            "host namespaces (hostNetwork, hostPID), ",
            r#"hostPort (container "a" uses hostPorts 80, 8080), "#,
            r#"privileged (containers "i", "a" must not set securityContext.privileged=true), "#,
            r#"procMount (container "i" must not set securityContext.procMount to "Unmasked"), "#,
            r#"seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set), "#,
            "forbidden sysctls (kernel.msgmax), ",
            r#"hostProcess (container "a" must not set securityContext.windowsOptions.hostProcess=true), "#,
            r#"non-default capabilities (container "a" must not include "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add), "#,
            r#"hostPath volumes (volume "h"), "#,
            r#"seccompProfile (container "a" must not set securityContext.seccompProfile.type to "Unconfined")"#,
        )
    );
    // Restricted replaces the overlapping checks with its own.
    let restricted = detail(RESTRICTED, spec);
    assert!(
        restricted.contains(r#"restricted volume types (volumes ["g" "h"] have restricted types)"#),
        "{restricted}"
    );
    assert!(!restricted.contains("hostPath volumes"), "{restricted}");
    assert!(
        restricted.contains(r#"unrestricted capabilities (containers "i", "a" must set securityContext.capabilities.drop=["ALL"]; container "a" must not include "CHOWN", "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add)"#),
        "{restricted}"
    );
}

#[test]
fn versions_change_what_is_allowed() {
    let sysctl = json!({"securityContext": {"sysctls": [{"name": "net.ipv4.tcp_wmem"}]}});
    assert_eq!(
        detail(lv(Level::Baseline, Version::Minor(31)), sysctl.clone()),
        "forbidden sysctls (net.ipv4.tcp_wmem)"
    );
    assert_eq!(
        detail(lv(Level::Baseline, Version::Minor(32)), sysctl.clone()),
        ""
    );
    assert_eq!(detail(lv(Level::Baseline, Version::Minor(40)), sysctl), "");
    let engine = json!({"securityContext": {"seLinuxOptions": {"type": "container_engine_t"}}});
    assert_eq!(detail(BASELINE, engine.clone()), "");
    assert!(
        detail(lv(Level::Baseline, Version::Minor(30)), engine)
            .starts_with("seLinuxOptions (pod set")
    );
    // Before 1.22 restricted asked for no capability drop; Windows pods skip it from 1.25.
    let bare = json!({"containers": [{"name": "c"}]});
    assert!(
        !detail(lv(Level::Restricted, Version::Minor(21)), bare.clone()).contains("capabilities")
    );
    let windows = json!({"os": {"name": "windows"}, "securityContext": {"runAsNonRoot": true}, "containers": [{"name": "c"}]});
    assert_eq!(detail(RESTRICTED, windows.clone()), "");
    assert!(
        detail(lv(Level::Restricted, Version::Minor(24)), windows)
            .contains("allowPrivilegeEscalation")
    );
    // Before 1.19 baseline looked at the seccomp annotations.
    let meta = json!({"annotations": {"seccomp.security.alpha.kubernetes.io/pod": "unconfined"}});
    assert_eq!(
        detail_meta(lv(Level::Baseline, Version::Minor(18)), meta, json!({})),
        r#"seccompProfile (forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined")"#
    );
}

#[test]
fn app_armor_annotations_and_run_as_user() {
    let meta =
        json!({"annotations": {"container.apparmor.security.beta.kubernetes.io/c": "unconfined"}});
    assert_eq!(
        detail_meta(BASELINE, meta, json!({"containers": [{"name": "c"}]})),
        r#"forbidden AppArmor profile (annotation must not set AppArmor profile type to "container.apparmor.security.beta.kubernetes.io/c="unconfined"")"#
    );
    let mut spec = compliant();
    spec["securityContext"]["runAsUser"] = json!(0);
    spec["containers"][0]["securityContext"]["runAsNonRoot"] = json!(false);
    assert_eq!(
        detail(RESTRICTED, spec),
        r#"runAsNonRoot != true (container "c" must not set securityContext.runAsNonRoot=false), runAsUser=0 (pod must not set runAsUser=0)"#
    );
}

#[test]
fn labels_parse_with_upstreams_errors() {
    let labels = json!({
        "pod-security.kubernetes.io/enforce": "restricted",
        "pod-security.kubernetes.io/enforce-version": "v1.29",
        "pod-security.kubernetes.io/warn": "bogus",
        "pod-security.kubernetes.io/audit-version": "v1.01",
    });
    let (policy, errors) = policy_to_evaluate(Some(&labels), Policy::DEFAULT);
    assert_eq!(policy.enforce.to_string(), "restricted:v1.29");
    assert_eq!(policy.warn.level, Level::Privileged);
    let texts: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        texts,
        [
            r#"metadata.labels[pod-security.kubernetes.io/audit-version]: Invalid value: "v1.01": must be "latest" or "v1.x""#,
            r#"metadata.labels[pod-security.kubernetes.io/warn]: Invalid value: "bogus": must be one of privileged, baseline, restricted"#,
        ]
    );
    let bad_enforce = json!({"pod-security.kubernetes.io/enforce": "x"});
    assert_eq!(
        policy_to_evaluate(Some(&bad_enforce), Policy::DEFAULT)
            .0
            .enforce
            .level,
        Level::Restricted
    );
    assert_eq!(Version::parse("v1.0"), Ok(Version::Minor(0)));
    assert!(Version::parse("v2.1").is_err() && Version::parse("v1.").is_err());
}

#[test]
fn namespace_warnings_group_pods_by_reasons() {
    let pod = |name: &str, spec: Value| json!({"metadata": {"name": name}, "spec": spec});
    let priv_spec = json!({"containers": [{"name": "c", "securityContext": {"privileged": true}}]});
    let pods = vec![
        pod("b", priv_spec.clone()),
        pod("a", priv_spec.clone()),
        pod("c", priv_spec),
        pod("ok", json!({"containers": [{"name": "c"}]})),
        pod("h", json!({"hostIPC": true})),
    ];
    let far = Instant::now() + Duration::from_secs(60);
    assert_eq!(
        namespace_warnings("ns", BASELINE, pods, far),
        [
            r#"existing pods in namespace "ns" violate the new PodSecurity enforce level "baseline:latest""#,
            "a (and 2 other pods): privileged",
            "h: host namespaces",
        ]
    );
    let owned = |name: &str, uid: &str| json!({"metadata": {"name": name, "ownerReferences": [{"uid": uid, "controller": true}]}});
    let order: Vec<String> = prioritize_pods(vec![
        owned("x1", "x"),
        owned("x2", "x"),
        owned("y1", "y"),
        json!({"metadata": {"name": "z"}}),
    ])
    .iter()
    .map(|p| p["metadata"]["name"].as_str().unwrap_or("").to_owned())
    .collect();
    assert_eq!(order, ["x1", "y1", "z", "x2"]);
}

#[test]
fn only_images_seccomp_annotations_and_ephemeral_containers_are_significant() {
    let pod = json!({"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}});
    let mut relabelled = pod.clone();
    relabelled["metadata"]["labels"]["a"] = json!("c");
    assert!(!is_significant_pod_update(&relabelled, &pod));
    let mut image = pod.clone();
    image["spec"]["containers"][0]["image"] = json!("j");
    assert!(is_significant_pod_update(&image, &pod));
    let mut ephemeral = pod.clone();
    ephemeral["spec"]["ephemeralContainers"] = json!([{"name": "e", "image": "i"}]);
    assert!(is_significant_pod_update(&ephemeral, &pod));
    assert!(!is_significant_pod_update(&ephemeral, &ephemeral.clone()));
}
