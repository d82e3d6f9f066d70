use std::collections::BTreeSet;

use kas_registry::Strategy as _;
use serde_json::{Value, json};

use super::builder::{BOOTSTRAPPING_LABEL, rule};
use super::reconcile::{
    Operation, binding_to_create, breakdown_rule, compute_reconciled_binding,
    compute_reconciled_role, covers, role_to_create,
};
use super::*;
use crate::resources::messages;
use crate::resources::rbac::{clusterrolebindings, clusterroles, rolebindings, roles};

fn named<'a>(items: &'a [Value], name: &str) -> &'a Value {
    items
        .iter()
        .find(|o| kas_registry::meta::name(o) == name)
        .unwrap_or_else(|| panic!("{name} is missing"))
}

#[test]
fn every_object_passes_rbac_validation() {
    let p = policy_data();
    for role in &p.cluster_roles {
        assert_eq!(
            messages(&clusterroles::Strategy.validate(role)),
            Vec::<String>::new()
        );
    }
    for role in &p.roles {
        assert_eq!(
            messages(&roles::Strategy.validate(role)),
            Vec::<String>::new()
        );
    }
    for (strategy, bindings) in [
        (&clusterrolebindings::STRATEGY, &p.cluster_role_bindings),
        (&rolebindings::STRATEGY, &p.role_bindings),
    ] {
        for binding in bindings {
            let mut defaulted = binding.clone();
            strategy.default(&mut defaulted);
            assert_eq!(&defaulted, binding, "built as the API defaults it");
            assert_eq!(messages(&strategy.validate(binding)), Vec::<String>::new());
        }
    }
}

#[test]
fn names_are_unique_and_counts_are_upstreams() {
    let p = policy_data();
    for (items, want) in [
        (&p.cluster_roles, 66),
        (&p.cluster_role_bindings, 47),
        (&p.roles, 7),
        (&p.role_bindings, 7),
    ] {
        let keys: BTreeSet<(&str, &str)> = items
            .iter()
            .map(|o| {
                (
                    kas_registry::meta::namespace(o),
                    kas_registry::meta::name(o),
                )
            })
            .collect();
        assert_eq!(keys.len(), items.len(), "duplicate names");
        assert_eq!(items.len(), want);
    }
    // Every binding's role is bootstrapped too (system:node's included).
    let role_names: BTreeSet<&str> = p
        .cluster_roles
        .iter()
        .map(kas_registry::meta::name)
        .collect();
    for b in &p.cluster_role_bindings {
        assert!(role_names.contains(b["roleRef"]["name"].as_str().unwrap_or("")));
    }
}

#[test]
fn objects_carry_the_default_label_annotation_and_upstream_content() {
    let p = policy_data();
    for o in p
        .cluster_roles
        .iter()
        .chain(&p.cluster_role_bindings)
        .chain(&p.roles)
    {
        assert_eq!(
            o["metadata"]["labels"][BOOTSTRAPPING_LABEL.0],
            "rbac-defaults"
        );
        assert_eq!(o["metadata"]["annotations"][AUTO_UPDATE_ANNOTATION], "true");
    }
    let admin = named(&p.cluster_roles, "cluster-admin");
    assert_eq!(
        admin["rules"],
        json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
            {"nonResourceURLs": ["*"], "verbs": ["*"]}])
    );
    let edit = named(&p.cluster_roles, "edit");
    assert_eq!(
        edit["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-admin"],
        "true"
    );
    assert_eq!(
        edit["aggregationRule"],
        json!({"clusterRoleSelectors": [{"matchLabels":
            {"rbac.authorization.k8s.io/aggregate-to-edit": "true"}}]})
    );
    assert!(edit.get("rules").is_none());
    // Sorted as upstream's rule builder sorts.
    let scheduler = named(&p.cluster_roles, "system:kube-scheduler");
    assert_eq!(
        scheduler["rules"][0],
        json!({"apiGroups": ["", "events.k8s.io"], "resources": ["events"],
            "verbs": ["create", "patch", "update"]})
    );
    let node = named(&p.cluster_role_bindings, "system:node");
    assert!(node.get("subjects").is_none());
    let kcm = named(&p.cluster_role_bindings, "system:controller:job-controller");
    assert_eq!(
        kcm["subjects"],
        json!([{"kind": "ServiceAccount", "name": "job-controller", "namespace": "kube-system"}])
    );
    let reader = named(
        &p.role_bindings,
        "system::extension-apiserver-authentication-reader",
    );
    assert_eq!(
        reader["roleRef"]["name"],
        "extension-apiserver-authentication-reader"
    );
    // Roles of feature gates off by default in 1.33 are left out.
    for off in [
        "system:controller:resource-claim-controller",
        "system:cluster-trust-bundle-discovery",
    ] {
        assert!(
            p.cluster_roles
                .iter()
                .all(|r| kas_registry::meta::name(r) != off)
        );
    }
    let split = &p.cluster_role_bindings_to_split;
    assert_eq!(split.len(), 1);
    assert_eq!(
        (split[0].0, kas_registry::meta::name(&split[0].1)),
        ("system:discovery", "system:public-info-viewer")
    );
}

#[test]
fn reconciling_the_policy_against_itself_changes_nothing() {
    let p = policy_data();
    for role in p.cluster_roles.iter().chain(&p.roles) {
        let result = compute_reconciled_role(role, role);
        assert_eq!(
            result.operation,
            Operation::None,
            "{}",
            kas_registry::meta::name(role)
        );
    }
    for binding in p.cluster_role_bindings.iter().chain(&p.role_bindings) {
        let result = compute_reconciled_binding(binding, binding);
        assert_eq!(result.operation, Operation::None);
    }
}

#[test]
fn breakdown_and_covers() {
    let r = rule(&["get", "list"])
        .groups(&[""])
        .resources(&["pods"])
        .names(&["a"])
        .build();
    assert_eq!(
        breakdown_rule(&r),
        [
            json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["get"], "resourceNames": ["a"]}),
            json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["list"], "resourceNames": ["a"]}),
        ]
    );
    let scale = rule(&["get"])
        .groups(&["*"])
        .resources(&["*/scale"])
        .build();
    let want = rule(&["get"])
        .groups(&["apps"])
        .resources(&["deployments/scale"])
        .build();
    assert!(covers(std::slice::from_ref(&scale), std::slice::from_ref(&want)).0);
    let named_only = rule(&["get"])
        .groups(&[""])
        .resources(&["pods"])
        .names(&["a"])
        .build();
    let all_pods = rule(&["get"]).groups(&[""]).resources(&["pods"]).build();
    assert!(
        !covers(
            std::slice::from_ref(&named_only),
            std::slice::from_ref(&all_pods)
        )
        .0
    );
    assert!(
        covers(
            std::slice::from_ref(&all_pods),
            std::slice::from_ref(&named_only)
        )
        .0
    );
    let apis = rule(&["get"]).urls(&["/apis/*"]).build();
    let (ok, missing) = covers(
        &[apis],
        &[rule(&["get"]).urls(&["/apis/apps", "/api"]).build()],
    );
    assert!(!ok);
    assert_eq!(
        missing,
        [json!({"nonResourceURLs": ["/api"], "verbs": ["get"]})]
    );
}

fn stored(mut obj: Value) -> Value {
    obj["metadata"]["resourceVersion"] = json!("7");
    obj["metadata"]["uid"] = json!("u-1");
    obj
}

#[test]
fn missing_role_is_created() {
    let expected = named(&policy_data().cluster_roles, "system:heapster").clone();
    let result = role_to_create(&expected);
    assert_eq!(result.operation, Operation::Create);
    assert_eq!(result.role, expected);
    assert_eq!(result.missing_rules.len(), 2);
}

#[test]
fn existing_role_gains_missing_rules_and_metadata_keeps_its_own() {
    let expected = named(&policy_data().cluster_roles, "system:kube-dns").clone();
    let extra = rule(&["get"]).groups(&[""]).resources(&["secrets"]).build();
    let partial = rule(&["list"])
        .groups(&[""])
        .resources(&["endpoints", "services"])
        .build();
    let existing = stored(
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "system:kube-dns",
            "labels": {"kubernetes.io/bootstrapping": "mine", "team": "dns"}},
        "rules": [extra, partial]}),
    );
    let result = compute_reconciled_role(&existing, &expected);
    assert_eq!(result.operation, Operation::Update);
    assert!(!result.protected);
    let watch = |r: &str| json!({"apiGroups": [""], "resources": [r], "verbs": ["watch"]});
    assert_eq!(
        result.missing_rules,
        [watch("endpoints"), watch("services")]
    );
    assert_eq!(
        result.role["rules"],
        json!([extra, partial, watch("endpoints"), watch("services")])
    );
    // Existing values win; missing keys are added.
    assert_eq!(
        result.role["metadata"]["labels"],
        json!({"kubernetes.io/bootstrapping": "mine", "team": "dns"})
    );
    assert_eq!(
        result.role["metadata"]["annotations"],
        json!({AUTO_UPDATE_ANNOTATION: "true"})
    );
    assert_eq!(result.role["metadata"]["resourceVersion"], "7");
    // Once written, nothing more to do.
    assert_eq!(
        compute_reconciled_role(&result.role, &expected).operation,
        Operation::None
    );
}

#[test]
fn protected_roles_are_reported_not_written() {
    let expected = named(&policy_data().cluster_roles, "system:kube-dns").clone();
    let existing = stored(json!({"metadata": {"name": "system:kube-dns",
        "annotations": {AUTO_UPDATE_ANNOTATION: "false"}}}));
    let result = compute_reconciled_role(&existing, &expected);
    assert!(result.protected);
    assert_eq!(result.operation, Operation::Update);
}

#[test]
fn aggregation_selectors_are_added_and_unexpected_aggregation_removed() {
    let p = policy_data();
    let expected = named(&p.cluster_roles, "view").clone();
    let own = json!({"matchLabels": {"example.com/view": "true"}});
    let existing = stored(json!({"metadata": {"name": "view"},
        "aggregationRule": {"clusterRoleSelectors": [own]},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}));
    let result = compute_reconciled_role(&existing, &expected);
    let want = json!({"matchLabels": {AGGREGATE: "true"}});
    assert_eq!(result.missing_selectors, std::slice::from_ref(&want));
    assert_eq!(
        result.role["aggregationRule"]["clusterRoleSelectors"],
        json!([own, want])
    );
    // Aggregated on both sides: the aggregated rules are not "missing" nor touched.
    assert_eq!(result.role["rules"], existing["rules"]);
    let plain = named(&p.cluster_roles, "system:kube-dns").clone();
    let mut aggregated = stored(plain.clone());
    aggregated["aggregationRule"] = json!({"clusterRoleSelectors": [own]});
    let result = compute_reconciled_role(&aggregated, &plain);
    assert_eq!(result.operation, Operation::Update);
    assert!(result.role.get("aggregationRule").is_none());
}

const AGGREGATE: &str = "rbac.authorization.k8s.io/aggregate-to-view";

#[test]
fn bindings_gain_missing_subjects_and_are_recreated_on_a_new_role_ref() {
    let p = policy_data();
    let expected = named(&p.cluster_role_bindings, "system:public-info-viewer").clone();
    assert_eq!(binding_to_create(&expected).operation, Operation::Create);
    let extra = json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"});
    let authenticated = expected["subjects"][0].clone();
    let mut existing = stored(expected.clone());
    existing["subjects"] = json!([extra, authenticated]);
    let result = compute_reconciled_binding(&existing, &expected);
    assert_eq!(result.operation, Operation::Update);
    let unauthenticated = expected["subjects"][1].clone();
    assert_eq!(
        result.missing_subjects,
        std::slice::from_ref(&unauthenticated)
    );
    assert_eq!(
        result.binding["subjects"],
        json!([extra, authenticated, unauthenticated])
    );
    assert_eq!(result.binding["metadata"]["uid"], "u-1");
    let mut other_role = existing.clone();
    other_role["roleRef"]["name"] = json!("system:discovery");
    let result = compute_reconciled_binding(&other_role, &expected);
    assert_eq!(result.operation, Operation::Recreate);
    assert_eq!(result.binding, expected);
    other_role["metadata"]["annotations"] = json!({AUTO_UPDATE_ANNOTATION: "false"});
    assert!(compute_reconciled_binding(&other_role, &expected).protected);
}
