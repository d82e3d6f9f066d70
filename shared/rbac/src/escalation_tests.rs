use std::sync::Mutex;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::json;

use super::*;
use crate::testutil::*;

fn compact(rules: &[PolicyRule]) -> Vec<String> {
    let mut out: Vec<String> = rules.iter().map(PolicyRule::compact_string).collect();
    out.sort();
    out
}

#[test]
fn breakdown_splits_into_single_tuples() {
    let r = rule("get,list", "", "pods,services", "a", "/x,/y");
    assert_eq!(
        compact(&breakdown_rule(&r)),
        [
            r#"{APIGroups:[""], Resources:["pods"], ResourceNames:["a"], Verbs:["get"]}"#,
            r#"{APIGroups:[""], Resources:["pods"], ResourceNames:["a"], Verbs:["list"]}"#,
            r#"{APIGroups:[""], Resources:["services"], ResourceNames:["a"], Verbs:["get"]}"#,
            r#"{APIGroups:[""], Resources:["services"], ResourceNames:["a"], Verbs:["list"]}"#,
            r#"{NonResourceURLs:["/x"], Verbs:["get"]}"#,
            r#"{NonResourceURLs:["/x"], Verbs:["list"]}"#,
            r#"{NonResourceURLs:["/y"], Verbs:["get"]}"#,
            r#"{NonResourceURLs:["/y"], Verbs:["list"]}"#,
        ]
    );
}

/// Cases after upstream's policy_comparator_test.go.
#[test]
fn covers_like_upstream() {
    let cases: &[(&str, Vec<PolicyRule>, Vec<PolicyRule>, bool)] = &[
        (
            "exact match",
            vec![rule("get", "", "builds", "", "")],
            vec![rule("get", "", "builds", "", "")],
            true,
        ),
        (
            "star verb and group",
            vec![rule("*", "*", "builds", "", "")],
            vec![rule("get,delete", "apps,batch", "builds", "", "")],
            true,
        ),
        (
            "star resource",
            vec![rule("get", "", "*", "", "")],
            vec![rule("get", "", "pods,pods/status", "", "")],
            true,
        ),
        (
            "star subresource",
            vec![rule("get", "", "*/status", "", "")],
            vec![rule("get", "", "pods/status", "", "")],
            true,
        ),
        (
            "star subresource does not cover the resource",
            vec![rule("get", "", "*/status", "", "")],
            vec![rule("get", "", "pods", "", "")],
            false,
        ),
        (
            "split across owner rules",
            vec![
                rule("get", "", "pods", "", ""),
                rule("list", "", "pods", "", ""),
            ],
            vec![rule("get,list", "", "pods", "", "")],
            true,
        ),
        (
            "named owner does not cover every name",
            vec![rule("get", "", "pods", "a", "")],
            vec![rule("get", "", "pods", "", "")],
            false,
        ),
        (
            "unnamed owner covers names",
            vec![rule("get", "", "pods", "", "")],
            vec![rule("get", "", "pods", "a,b", "")],
            true,
        ),
        (
            "names subset",
            vec![rule("get", "", "pods", "a,b", "")],
            vec![rule("get", "", "pods", "b", "")],
            true,
        ),
        (
            "star url",
            vec![rule("get", "", "", "", "*")],
            vec![rule("get", "", "", "", "/api,/healthz/x")],
            true,
        ),
        (
            "url prefix",
            vec![rule("get", "", "", "", "/foo/*")],
            vec![rule("get", "", "", "", "/foo/bar")],
            true,
        ),
        (
            "url prefix is not the bare path",
            vec![rule("get", "", "", "", "/foo/*")],
            vec![rule("get", "", "", "", "/foo")],
            false,
        ),
        (
            "resources do not cover urls",
            vec![rule("*", "*", "*", "", "")],
            vec![rule("get", "", "", "", "/healthz")],
            false,
        ),
        (
            "nothing is always covered",
            vec![],
            vec![rule("get", "", "", "", "")],
            true,
        ),
    ];
    for (name, owner, servant, want) in cases {
        let (got, missing) = covers(owner, servant);
        assert_eq!(got, *want, "{name}: missing {missing:?}");
        assert_eq!(missing.is_empty(), *want, "{name}");
    }
}

#[test]
fn compact_merges_simple_rules_by_group_resource_and_name() {
    let rules = [
        rule("get", "", "pods", "", ""),
        rule("list", "", "pods", "", ""),
        rule("get", "", "pods", "a", ""),
        rule("update", "", "pods", "a", ""),
        rule("get", "apps", "pods", "", ""),
        rule("get", "", "", "", "/x"),
        rule("get", "", "pods", "", ""),
    ];
    assert_eq!(
        compact(&compact_rules(&rules)),
        [
            r#"{APIGroups:[""], Resources:["pods"], ResourceNames:["a"], Verbs:["get" "update"]}"#,
            r#"{APIGroups:[""], Resources:["pods"], Verbs:["get" "list" "get"]}"#,
            r#"{APIGroups:["apps"], Resources:["pods"], Verbs:["get"]}"#,
            r#"{NonResourceURLs:["/x"], Verbs:["get"]}"#,
        ]
    );
}

fn servant() -> Vec<PolicyRule> {
    vec![
        PolicyRule::from_value(
            &json!({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}),
        )
        .unwrap(),
        rule("get", "", "", "", "/healthz"),
    ]
}

#[test]
fn confirm_no_escalation_lists_the_missing_rules() {
    let resolver = DefaultRuleResolver::new(index(&[
        cluster_role("pods", &[rule_json("get", "", "pods", "")]),
        cluster_role_binding("b", "pods", &["Group:system:authenticated"]),
        role("ns", "lister", &[rule_json("list", "", "pods", "")]),
        role_binding("ns", "rb", "Role", "lister", &["User:bob"]),
    ]));
    let bob = user("bob", &["system:authenticated"]);
    assert_eq!(
        confirm_no_escalation(&resolver, &bob, "", &servant()),
        Err("user \"bob\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"list\"]}\n{NonResourceURLs:[\"/healthz\"], Verbs:[\"get\"]}".to_owned())
    );
    // In the namespace bob also lists pods.
    assert_eq!(
        confirm_no_escalation(&resolver, &bob, "ns", &servant()),
        Err("user \"bob\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{NonResourceURLs:[\"/healthz\"], Verbs:[\"get\"]}".to_owned())
    );
    assert_eq!(
        confirm_no_escalation(&resolver, &bob, "ns", &servant()[..1]),
        Ok(())
    );
}

#[test]
fn confirm_no_escalation_appends_resolution_errors() {
    let resolver = DefaultRuleResolver::new(index(&[
        cluster_role_binding("a", "missing", &["User:bob"]),
        cluster_role_binding("b", "gone", &["User:bob"]),
    ]));
    let bob = user("bob", &[]);
    let rules = [rule("get", "", "pods", "", "")];
    assert_eq!(
        confirm_no_escalation(&resolver, &bob, "", &rules),
        Err("user \"bob\" (groups=[]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"get\"]}; resolution errors: [[clusterrole.rbac.authorization.k8s.io \"missing\" not found, clusterrole.rbac.authorization.k8s.io \"gone\" not found]]".to_owned())
    );
    let resolver = DefaultRuleResolver::new(index(&[cluster_role_binding(
        "a",
        "missing",
        &["User:bob"],
    )]));
    let err = confirm_no_escalation(&resolver, &bob, "", &rules).unwrap_err();
    assert!(
        err.ends_with(
            "; resolution errors: [clusterrole.rbac.authorization.k8s.io \"missing\" not found]"
        ),
        "{err}"
    );
    // Covered rules pass whatever the errors.
    assert_eq!(confirm_no_escalation(&resolver, &bob, "", &[]), Ok(()));
}

#[test]
fn aggregation_rules_and_role_rules_from_json() {
    let mut role = cluster_role("r", &[rule_json("get", "", "pods", "")]).1;
    assert!(!has_aggregation_rule(&role));
    role["aggregationRule"] = json!({"clusterRoleSelectors": []});
    assert!(!has_aggregation_rule(&role));
    role["aggregationRule"] = json!({"clusterRoleSelectors": [{"matchLabels": {"a": "b"}}]});
    assert!(has_aggregation_rule(&role));
    assert_eq!(
        compact(&PolicyRule::rules_of(&role).unwrap()),
        [r#"{APIGroups:[""], Resources:["pods"], Verbs:["get"]}"#]
    );
    assert!(PolicyRule::rules_of(&json!({})).unwrap().is_empty());
    assert!(
        PolicyRule::rules_of(&json!({"rules": null}))
            .unwrap()
            .is_empty()
    );
    assert!(PolicyRule::rules_of(&json!({"rules": [{"verbs": 1}]})).is_err());
}

#[test]
fn full_authority_needs_everything() {
    let admin = [rule("*", "*", "*", "", ""), rule("*", "", "", "", "*")];
    assert!(covers(&admin, &full_authority()).0);
    assert!(!covers(&admin[..1], &full_authority()).0);
    assert!(escalation_allowed(&user("x", &["a", "system:masters"])));
    assert!(!escalation_allowed(&user("system:masters", &["a"])));
}

/// An authorizer that records what it was asked and allows one verb.
struct Recorder {
    allow_verb: &'static str,
    asked: Mutex<Vec<Attributes>>,
}

impl Authorizer for Recorder {
    fn authorize<'a>(
        &'a self,
        attrs: &'a Attributes,
    ) -> BoxFuture<'a, kas_auth::Result<(Decision, String)>> {
        self.asked.lock().unwrap().push(attrs.clone());
        let decision = if attrs.verb == self.allow_verb {
            Decision::Allow
        } else {
            Decision::NoOpinion
        };
        futures_util::future::ready(Ok((decision, String::new()))).boxed()
    }
}

fn recorder(allow_verb: &'static str) -> Recorder {
    Recorder {
        allow_verb,
        asked: Mutex::new(Vec::new()),
    }
}

#[tokio::test]
async fn role_escalation_asks_for_escalate_on_the_role() {
    let a = recorder("escalate");
    let mut request = resource_request(user("u", &["g"]), "create", GROUP_NAME, "roles", "ns");
    request.name = "r".into();
    assert!(role_escalation_authorized(&request, &a).await);
    let asked = a.asked.lock().unwrap().pop().unwrap();
    assert_eq!(
        asked,
        Attributes {
            user: user("u", &["g"]),
            verb: "escalate".into(),
            is_resource_request: true,
            namespace: "ns".into(),
            api_group: GROUP_NAME.into(),
            api_version: "*".into(),
            resource: "roles".into(),
            name: "r".into(),
            ..Attributes::default()
        }
    );
    // Only for roles and clusterroles of the RBAC group.
    let pods = resource_request(user("u", &[]), "create", "", "pods", "ns");
    assert!(!role_escalation_authorized(&pods, &a).await);
    let other = resource_request(user("u", &[]), "create", "x.io", "roles", "ns");
    assert!(!role_escalation_authorized(&other, &a).await);
    assert!(a.asked.lock().unwrap().is_empty());
    let denied = recorder("bind");
    assert!(!role_escalation_authorized(&request, &denied).await);
}

#[tokio::test]
async fn binding_asks_for_bind_on_the_role_ref() {
    let a = recorder("bind");
    let role_ref = RoleRef::from_value(
        &json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}),
    );
    assert!(binding_authorized(&user("u", &[]), &role_ref, "ns", &a).await);
    let asked = a.asked.lock().unwrap().pop().unwrap();
    assert_eq!(
        (
            asked.verb.as_str(),
            asked.resource.as_str(),
            asked.name.as_str(),
            asked.namespace.as_str(),
            asked.api_group.as_str(),
            asked.api_version.as_str()
        ),
        ("bind", "clusterroles", "view", "ns", GROUP_NAME, "*")
    );
    let role = RoleRef::from_value(&json!({"kind": "Role", "name": "edit"}));
    assert!(binding_authorized(&user("u", &[]), &role, "", &a).await);
    assert_eq!(a.asked.lock().unwrap().pop().unwrap().resource, "roles");
    let bad = RoleRef::from_value(&json!({"kind": "Pod", "name": "x"}));
    assert!(!binding_authorized(&user("u", &[]), &bad, "", &a).await);
    assert!(a.asked.lock().unwrap().is_empty());
}
