//! Rules, scopes, match policies, configurations, selectors and match conditions.

use super::*;

// Upstream's rules_test: operations, groups, versions, resources with subresources.
#[test]
fn rules_match_as_upstreams() {
    let all = rule(&["*"], &["*"], &["*"], &["*"]);
    assert!(rule_matches(&all, &target("CREATE", "pods", "", "ns")));
    assert!(
        !rule_matches(&all, &target("UPDATE", "pods", "status", "ns")),
        "* is no subresource"
    );
    let any_sub = rule(&["*"], &["*"], &["*"], &["*/*"]);
    assert!(rule_matches(
        &any_sub,
        &target("UPDATE", "pods", "status", "ns")
    ));
    // `*/*` is every resource and every subresource, the resource itself included.
    assert!(rule_matches(&any_sub, &target("UPDATE", "pods", "", "ns")));
    let status = rule(&["UPDATE"], &[""], &["v1"], &["pods/status"]);
    assert!(rule_matches(
        &status,
        &target("UPDATE", "pods", "status", "ns")
    ));
    assert!(!rule_matches(&status, &target("UPDATE", "pods", "", "ns")));
    assert!(!rule_matches(
        &status,
        &target("CREATE", "pods", "status", "ns")
    ));
    let all_status = rule(&["*"], &["*"], &["*"], &["*/status"]);
    assert!(rule_matches(
        &all_status,
        &target("UPDATE", "nodes", "status", "")
    ));
    let cms = rule(&["CREATE", "DELETE"], &[""], &["v1"], &["configmaps"]);
    assert!(rule_matches(
        &cms,
        &target("DELETE", "configmaps", "", "ns")
    ));
    assert!(!rule_matches(
        &cms,
        &target("UPDATE", "configmaps", "", "ns")
    ));
    let apps = rule(&["*"], &["apps"], &["v1"], &["*"]);
    assert!(!rule_matches(
        &apps,
        &target("CREATE", "configmaps", "", "ns")
    ));
}

#[test]
fn scopes_treat_namespaces_as_cluster_scoped() {
    let mut namespaced = rule(&["*"], &["*"], &["*"], &["*"]);
    namespaced.scope = Some("Namespaced".into());
    let mut cluster = namespaced.clone();
    cluster.scope = Some("Cluster".into());
    assert!(rule_matches(
        &namespaced,
        &target("CREATE", "pods", "", "ns")
    ));
    assert!(!rule_matches(
        &namespaced,
        &target("CREATE", "nodes", "", "")
    ));
    // A namespace's update has its own name as namespace, and is still cluster-scoped.
    assert!(!rule_matches(
        &namespaced,
        &target("UPDATE", "namespaces", "", "ns")
    ));
    assert!(rule_matches(
        &cluster,
        &target("UPDATE", "namespaces", "", "ns")
    ));
    assert!(rule_matches(&cluster, &target("CREATE", "nodes", "", "")));
    assert!(!rule_matches(&cluster, &target("CREATE", "pods", "", "ns")));
}

#[test]
fn match_policy_equivalent_matches_other_versions_exact_does_not() {
    let hooks = hooks_of(&config(
        "c",
        json!([
            {"name": "eq.kas.test", "matchPolicy": "Equivalent", "clientConfig": {"url": "https://127.0.0.1:1/"},
             "rules": [{"operations": ["CREATE"], "apiGroups": ["autoscaling"], "apiVersions": ["v2"], "resources": ["horizontalpodautoscalers"]}]},
            {"name": "exact.kas.test", "matchPolicy": "Exact", "clientConfig": {"url": "https://127.0.0.1:1/"},
             "rules": [{"operations": ["CREATE"], "apiGroups": ["autoscaling"], "apiVersions": ["v2"], "resources": ["horizontalpodautoscalers"]}]}
        ]),
    ));
    let v1 = Target {
        operation: "CREATE",
        group: "autoscaling",
        version: "v1",
        resource: "horizontalpodautoscalers",
        subresource: "",
        namespace: "ns",
    };
    assert!(hook_matches(&hooks[0], &v1));
    assert!(!hook_matches(&hooks[1], &v1));
    assert!(hook_matches(
        &hooks[1],
        &Target {
            version: "v2",
            ..v1
        }
    ));
}

#[test]
fn configurations_parse_with_upstreams_defaults_and_sort_by_name() {
    let source = Source::default();
    source.replace(&[
        config("b", json!([{"name": "b1.kas.test", "clientConfig": {"service": {"name": "hook", "namespace": "system", "path": "/admit"}}}])),
        config("a", json!([
            {"name": "a1.kas.test", "failurePolicy": "Ignore", "timeoutSeconds": 3, "reinvocationPolicy": "IfNeeded",
             "clientConfig": {"url": "https://hook.example:8443/m"}, "admissionReviewVersions": ["v1beta1", "v1"]},
            {"name": "a2.kas.test", "clientConfig": {"url": "https://hook.example/v"}}
        ])),
    ]);
    let hooks = source.hooks();
    let names: Vec<&str> = hooks.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(names, ["a1.kas.test", "a2.kas.test", "b1.kas.test"]);
    assert!(hooks[0].ignore_failures && hooks[0].reinvoke_if_needed);
    assert_eq!(hooks[0].timeout.as_secs(), 3);
    assert!(!hooks[1].ignore_failures, "Fail is the default");
    assert!(hooks[1].equivalent, "Equivalent is the default");
    assert_eq!(hooks[1].timeout.as_secs(), 10);
    assert_eq!(hooks[2].url, "https://hook.system.svc:443/admit");
    source.set(&config("a", json!([])), false);
    assert_eq!(source.hooks().len(), 1);
}

#[test]
fn admission_configuration_kinds_are_exempt() {
    assert!(is_exempt(
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration"
    ));
    assert!(is_exempt(
        "admissionregistration.k8s.io",
        "ValidatingAdmissionPolicyBinding"
    ));
    assert!(!is_exempt("", "ConfigMap"));
}

#[tokio::test]
async fn object_selectors_look_at_the_object_or_the_old_one() {
    let alice = user();
    let mut hooks = unreachable("Fail");
    hooks[0]["objectSelector"] = json!({"matchLabels": {"hooked": "yes"}});
    hooks[0]["rules"][0]["operations"] = json!(["*"]);
    let plugin = webhooks(hooks);
    let plain = json!({"metadata": {"name": "cm", "labels": {"hooked": "no"}}});
    let labeled = json!({"metadata": {"name": "cm", "labels": {"hooked": "yes"}}});
    plugin
        .validate(&request("CREATE", &alice, None), Some(&plain))
        .await
        .unwrap();
    assert!(
        plugin
            .validate(&request("CREATE", &alice, None), Some(&labeled))
            .await
            .is_err()
    );
    assert!(
        plugin
            .validate(&request("UPDATE", &alice, Some(&labeled)), Some(&plain))
            .await
            .is_err()
    );
    assert!(
        plugin
            .validate(&request("DELETE", &alice, Some(&labeled)), None)
            .await
            .is_err()
    );
}

#[test]
fn match_conditions_evaluate_in_order_false_before_errors() {
    use crate::matchconditions::{Condition, Outcome, evaluate};
    let alice = user();
    let req = request("CREATE", &alice, None);
    let variables = review::condition_request(&req);
    assert_eq!(variables["name"], "cm");
    assert_eq!(variables["subResource"], "");
    assert_eq!(variables.get("object"), None);
    let object = json!({"metadata": {"name": "cm", "labels": {}}});
    let run = |exprs: &[&str]| {
        let conditions: Vec<Condition> = exprs
            .iter()
            .enumerate()
            .map(|(i, e)| Condition::new(&format!("c{i}"), e))
            .collect();
        evaluate(&conditions, Some(&object), None, &variables)
    };
    assert_eq!(
        run(&[
            "object.metadata.name == 'cm'",
            "request.operation == 'CREATE' && request.userInfo.username == 'alice'",
            "oldObject == null",
        ]),
        Outcome::Match
    );
    assert_eq!(
        run(&["true", "request.namespace == 'other'"]),
        Outcome::NoMatch("c1".into())
    );
    let missing = "object.metadata.labels.missing == 'x'";
    assert_eq!(
        run(&[missing]),
        Outcome::Error(format!(
            "expression '{missing}' resulted in error: no such key: missing"
        ))
    );
    assert_eq!(run(&[missing, "false"]), Outcome::NoMatch("c1".into()));
    let Outcome::Error(both) = run(&[missing, missing]) else {
        panic!("two errors");
    };
    assert!(
        both.starts_with("[expression '") && both.contains("missing, expression"),
        "{both}"
    );
}

#[tokio::test]
async fn match_conditions_skip_a_webhook_or_fail_closed() {
    let alice = user();
    let req = request("CREATE", &alice, None);
    let object = json!({"metadata": {"name": "cm", "namespace": "team", "labels": {}}});
    let with = |policy: &str, expression: &str| {
        let mut hooks = unreachable(policy);
        hooks[0]["matchConditions"] = json!([{"name": "only", "expression": expression}]);
        webhooks(hooks)
    };
    // A false condition: the unreachable webhook is not called.
    with("Fail", "object.metadata.name != 'cm'")
        .validate(&req, Some(&object))
        .await
        .unwrap();
    let status = with("Fail", "object.metadata.labels.nope")
        .validate(&req, Some(&object))
        .await
        .unwrap_err();
    assert_eq!(status.code, 403);
    assert_eq!(
        status.message.as_deref(),
        Some(
            "configmaps \"cm\" is forbidden: expression 'object.metadata.labels.nope' resulted in error: no such key: nope"
        )
    );
    with("Ignore", "object.metadata.labels.nope")
        .validate(&req, Some(&object))
        .await
        .unwrap();
    // A true condition calls it.
    let status = with("Fail", "object.metadata.name == 'cm'")
        .validate(&req, Some(&object))
        .await
        .unwrap_err();
    assert_eq!(status.code, 500);
}

#[test]
fn a_namespaces_own_writes_name_it_and_subresources_their_kind() {
    use kas_registry::admission::{Attributes, Operation};
    let namespaces = &NAMESPACES;
    let update = Attributes::new(Operation::Update, namespaces, "", "team", None);
    assert_eq!(Request::new(&update).namespace, "team");
    let create = Attributes::new(Operation::Create, namespaces, "", "team", None);
    assert_eq!(Request::new(&create).namespace, "");
    let eviction = Attributes {
        subresource: "eviction",
        ..Attributes::new(Operation::Create, &PODS, "team", "p", None)
    };
    assert_eq!(Request::new(&eviction).kind, ("policy", "v1", "Eviction"));
    let status = Attributes {
        subresource: "status",
        ..Attributes::new(Operation::Update, &PODS, "team", "p", None)
    };
    assert_eq!(Request::new(&status).kind, ("", "v1", "Pod"));
}
