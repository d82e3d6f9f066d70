use serde_json::json;

use super::*;
use crate::testutil::*;

fn rules_of(r: &DefaultRuleResolver, u: &UserInfo, ns: &str) -> (Vec<String>, Option<String>) {
    let (rules, err) = r.policy_rules_for(u, ns);
    let mut rendered: Vec<String> = rules.iter().map(PolicyRule::compact_string).collect();
    rendered.sort();
    (rendered, err)
}

/// Upstream's TestDefaultRuleResolver.
#[test]
fn default_rule_resolver() {
    let read_pods = rule_json("GET,WATCH", "v1", "pods", "");
    let read_services = rule_json("GET,WATCH", "v1", "services", "");
    let write_nodes = rule_json("PUT,CREATE,UPDATE", "v1", "nodes", "");
    let admin = rule_json("*", "*", "*", "");
    let r = DefaultRuleResolver::new(index(&[
        role("namespace1", "readthings", &[read_pods, read_services]),
        cluster_role("cluster-admin", &[admin]),
        cluster_role("write-nodes", &[write_nodes]),
        role_binding(
            "namespace1",
            "rb",
            "Role",
            "readthings",
            &["User:foobar", "Group:group1"],
        ),
        cluster_role_binding("crb", "cluster-admin", &["User:admin", "Group:admin"]),
    ]));
    let pods = r#"{APIGroups:["v1"], Resources:["pods"], Verbs:["GET" "WATCH"]}"#;
    let services = r#"{APIGroups:["v1"], Resources:["services"], Verbs:["GET" "WATCH"]}"#;
    let all = r#"{APIGroups:["*"], Resources:["*"], Verbs:["*"]}"#;
    assert_eq!(
        rules_of(&r, &user("foobar", &[]), "namespace1"),
        (vec![pods.to_owned(), services.to_owned()], None)
    );
    assert_eq!(
        rules_of(&r, &user("foobar", &[]), "namespace2"),
        (vec![], None)
    );
    // Without a namespace only cluster rules apply.
    assert_eq!(
        rules_of(&r, &user("foobar", &["admin"]), ""),
        (vec![all.to_owned()], None)
    );
    assert_eq!(rules_of(&r, &user("", &[]), ""), (vec![], None));
}

/// Upstream's TestAppliesTo, through the index.
#[test]
fn applies_to() {
    let cases: &[(&[&str], UserInfo, &str, bool)] = &[
        (&["User:foobar"], user("foobar", &[]), "", true),
        (
            &["User:barfoo", "User:foobar"],
            user("foobar", &[]),
            "",
            true,
        ),
        (
            &["User:barfoo", "User:foobar"],
            user("zimzam", &[]),
            "",
            false,
        ),
        (
            &["User:barfoo", "Group:foobar"],
            user("zimzam", &["foobar"]),
            "",
            true,
        ),
        (
            &["User:barfoo", "Group:foobar"],
            user("zimzam", &["foobar"]),
            "namespace1",
            true,
        ),
        (
            &[
                "User:barfoo",
                "Group:foobar",
                "ServiceAccount:kube-system:default",
            ],
            user("system:serviceaccount:kube-system:default", &[]),
            "default",
            true,
        ),
        (&["User:*"], user("foobar", &[]), "default", false),
        (
            &["Group:system:authenticated", "Group:system:unauthenticated"],
            user("foobar", &["system:authenticated"]),
            "default",
            true,
        ),
        (
            &["Group:system:authenticated", "Group:system:unauthenticated"],
            user("system:anonymous", &["system:unauthenticated"]),
            "default",
            true,
        ),
    ];
    for (subjects, u, ns, want) in cases {
        // A RoleBinding in the namespace asked about, and a ClusterRoleBinding.
        let objects = if ns.is_empty() {
            vec![cluster_role_binding("b", "r", subjects)]
        } else {
            vec![role_binding(ns, "b", "ClusterRole", "r", subjects)]
        };
        let mut objects = objects;
        objects.push(cluster_role("r", &[rule_json("get", "", "pods", "")]));
        let r = DefaultRuleResolver::new(index(&objects));
        let (rules, _) = r.policy_rules_for(u, ns);
        assert_eq!(!rules.is_empty(), *want, "{subjects:?} {u:?} {ns:?}");
    }
}

#[test]
fn service_account_subjects() {
    let r = DefaultRuleResolver::new(index(&[
        cluster_role("r", &[rule_json("get", "", "pods", "")]),
        // The namespace defaults to the binding's.
        role_binding("ns1", "local", "ClusterRole", "r", &["ServiceAccount:sa"]),
        // In a ClusterRoleBinding a ServiceAccount needs its namespace.
        cluster_role_binding("no-namespace", "r", &["ServiceAccount:sa"]),
        cluster_role_binding("qualified", "r", &["ServiceAccount:ns2:sa"]),
        // The service-account groups are plain groups the authenticator set.
        role_binding(
            "ns3",
            "all-sa",
            "ClusterRole",
            "r",
            &["Group:system:serviceaccounts:ns3"],
        ),
    ]));
    let sa1 = user(
        "system:serviceaccount:ns1:sa",
        &["system:serviceaccounts", "system:serviceaccounts:ns1"],
    );
    assert_eq!(r.policy_rules_for(&sa1, "ns1").0.len(), 1);
    assert_eq!(r.policy_rules_for(&sa1, "").0.len(), 0);
    assert_eq!(r.policy_rules_for(&sa1, "ns3").0.len(), 0);
    let sa2 = user(
        "system:serviceaccount:ns2:sa",
        &["system:serviceaccounts", "system:serviceaccounts:ns2"],
    );
    assert_eq!(r.policy_rules_for(&sa2, "").0.len(), 1);
    assert_eq!(
        r.policy_rules_for(&sa2, "ns1").0.len(),
        1,
        "cluster rules only"
    );
    let sa3 = user(
        "system:serviceaccount:ns3:x",
        &["system:serviceaccounts", "system:serviceaccounts:ns3"],
    );
    assert_eq!(r.policy_rules_for(&sa3, "ns3").0.len(), 1);
    // A user merely named like the subject's prefix does not match.
    assert!(!matches_username(
        "ns1",
        "sa",
        "system:serviceaccount:ns1:sa2"
    ));
    assert!(!matches_username(
        "ns1",
        "sa",
        "system:serviceaccount:ns1sa"
    ));
    assert!(matches_username(
        "ns1",
        "sa",
        "system:serviceaccount:ns1:sa"
    ));
}

#[test]
fn missing_roles_and_unsupported_kinds_are_upstream_errors() {
    let r = DefaultRuleResolver::new(index(&[
        cluster_role("present", &[rule_json("get", "", "pods", "")]),
        cluster_role_binding("a", "missing", &["User:u"]),
        cluster_role_binding("b", "present", &["User:u"]),
        role_binding("ns", "c", "Role", "gone", &["User:u"]),
        role_binding("ns", "d", "Pod", "x", &["User:u"]),
    ]));
    let (rules, err) = r.policy_rules_for(&user("u", &[]), "ns");
    assert_eq!(rules.len(), 1);
    assert_eq!(
        err.unwrap(),
        r#"[clusterrole.rbac.authorization.k8s.io "missing" not found, role.rbac.authorization.k8s.io "gone" not found, unsupported role reference kind: "Pod"]"#
    );
    let (_, err) = r.policy_rules_for(&user("u", &[]), "");
    assert_eq!(
        err.unwrap(),
        r#"clusterrole.rbac.authorization.k8s.io "missing" not found"#
    );
    // The SelfSubjectRulesReview view: never incomplete, errors as the evaluation error.
    let info = r.rules_info(&user("u", &[]), "");
    assert!(!info.incomplete);
    assert_eq!(info.resource_rules.len(), 1);
    assert_eq!(
        info.evaluation_error,
        r#"clusterrole.rbac.authorization.k8s.io "missing" not found"#
    );
}

#[test]
fn role_refs_resolve_like_get_role_reference_rules() {
    let r = DefaultRuleResolver::new(index(&[
        role("ns", "reader", &[rule_json("get", "", "pods", "")]),
        cluster_role("viewer", &[rule_json("list", "", "pods", "")]),
    ]));
    let role_ref = |kind: &str, name: &str| {
        RoleRef::from_value(
            &json!({"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": name}),
        )
    };
    assert_eq!(
        r.rules_for_role_ref("ns", &role_ref("Role", "reader"))
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        r.rules_for_role_ref("other", &role_ref("Role", "reader")),
        Err(r#"role.rbac.authorization.k8s.io "reader" not found"#.to_owned())
    );
    assert_eq!(
        r.rules_for_role_ref("", &role_ref("ClusterRole", "viewer"))
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        r.rules_for_role_ref("", &role_ref("ClusterRole", "nope")),
        Err(r#"clusterrole.rbac.authorization.k8s.io "nope" not found"#.to_owned())
    );
    assert_eq!(
        r.rules_for_role_ref("", &role_ref("Thing", "x")),
        Err(r#"unsupported role reference kind: "Thing""#.to_owned())
    );
}

#[test]
fn visiting_stops_when_the_visitor_says_so() {
    let r = DefaultRuleResolver::new(index(&[
        cluster_role(
            "r",
            &[
                rule_json("get", "", "pods", ""),
                rule_json("list", "", "pods", ""),
            ],
        ),
        cluster_role_binding("a", "r", &["User:u"]),
        cluster_role_binding("b", "r", &["User:u"]),
    ]));
    let mut seen = Vec::new();
    r.visit_rules_for(&user("u", &[]), "", &mut |v| {
        if let Visit::Rule(source, rule) = v {
            seen.push(format!("{source}: {}", rule.compact_string()));
        }
        seen.len() < 3
    });
    assert_eq!(
        seen,
        [
            r#"ClusterRoleBinding "a" of ClusterRole "r" to User "u": {APIGroups:[""], Resources:["pods"], Verbs:["get"]}"#,
            r#"ClusterRoleBinding "a" of ClusterRole "r" to User "u": {APIGroups:[""], Resources:["pods"], Verbs:["list"]}"#,
            r#"ClusterRoleBinding "b" of ClusterRole "r" to User "u": {APIGroups:[""], Resources:["pods"], Verbs:["get"]}"#,
        ]
    );
}
