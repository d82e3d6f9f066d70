use super::*;
use crate::testutil::*;

fn decide(a: &RbacAuthorizer, attrs: &Attributes) -> (Decision, String) {
    a.decide(attrs)
}

fn allowed(a: &RbacAuthorizer, attrs: &Attributes) -> bool {
    decide(a, attrs).0 == Decision::Allow
}

/// Upstream's TestAuthorizer, first case: a RoleBinding to a ClusterRole.
#[test]
fn role_binding_to_cluster_role() {
    let a = RbacAuthorizer::new(index(&[
        cluster_role("admin", &[rule_json("*", "*", "*", "*")]),
        role_binding(
            "ns1",
            "admin",
            "ClusterRole",
            "admin",
            &["User:admin", "Group:admins"],
        ),
    ]));
    let req = |name: &str, groups: &[&str], verb: &str, resource: &str, ns: &str| {
        resource_request(user(name, groups), verb, "", resource, ns)
    };
    for pass in [
        req("admin", &[], "get", "Pods", "ns1"),
        req("admin", &[], "watch", "Pods", "ns1"),
        req("admin", &["group1"], "watch", "Foobar", "ns1"),
        req("joe", &["admins"], "watch", "Foobar", "ns1"),
        req("joe", &["group1", "admins"], "watch", "Foobar", "ns1"),
    ] {
        assert!(allowed(&a, &pass), "{pass:?}");
    }
    for fail in [
        req("admin", &[], "GET", "Pods", "ns2"),
        req("admin", &[], "GET", "Nodes", ""),
        req("admin", &["admins"], "GET", "Pods", "ns2"),
        req("admin", &["admins"], "GET", "Nodes", ""),
    ] {
        assert_eq!(decide(&a, &fail), (Decision::NoOpinion, String::new()));
    }
}

/// Upstream's TestAuthorizer, non-resource URL case.
#[test]
fn non_resource_urls() {
    let a = RbacAuthorizer::new(index(&[
        cluster_role(
            "non-resource-url-getter",
            &[rule_json("get", "", "", "/apis")],
        ),
        cluster_role("non-resource-url", &[rule_json("*", "", "", "/apis")]),
        cluster_role(
            "non-resource-url-prefix",
            &[rule_json("get", "", "", "/apis/*")],
        ),
        cluster_role_binding(
            "getter",
            "non-resource-url-getter",
            &["User:foo", "Group:bar"],
        ),
        cluster_role_binding("all", "non-resource-url", &["User:admin", "Group:admin"]),
        cluster_role_binding(
            "prefix",
            "non-resource-url-prefix",
            &["User:prefixed", "Group:prefixed"],
        ),
    ]));
    let by_name = |n: &str| user(n, &[]);
    let by_group = |g: &str| user("", &[g]);
    for (u, verb, path) in [
        (by_name("foo"), "get", "/apis"),
        (by_group("bar"), "get", "/apis"),
        (by_name("admin"), "get", "/apis"),
        (by_group("admin"), "watch", "/apis"),
        (by_name("prefixed"), "get", "/apis/v1"),
        (by_group("prefixed"), "get", "/apis/v1/foobar"),
    ] {
        assert!(allowed(&a, &non_resource_request(u, verb, path)), "{path}");
    }
    for (u, verb, path) in [
        (by_name("foo"), "watch", "/apis"),
        (by_group("bar"), "watch", "/apis"),
        (by_name("foo"), "get", "/api/v1"),
        (by_name("admin"), "get", "/api/v1"),
        (by_name("prefixed"), "get", "/api/v1"),
        (by_group("prefixed"), "get", "/api/v1"),
    ] {
        assert!(!allowed(&a, &non_resource_request(u, verb, path)), "{path}");
    }
}

#[test]
fn reasons_name_the_binding_role_and_subject() {
    let a = RbacAuthorizer::new(index(&[
        cluster_role("view", &[rule_json("get,list", "", "pods", "")]),
        role("ns", "edit", &[rule_json("update", "", "pods", "")]),
        cluster_role_binding("viewers", "view", &["User:other", "Group:devs"]),
        role_binding("ns", "editors", "Role", "edit", &["ServiceAccount:robot"]),
        role_binding(
            "ns",
            "remote",
            "ClusterRole",
            "view",
            &["ServiceAccount:elsewhere:sa"],
        ),
    ]));
    let dev = user("alice", &["devs"]);
    assert_eq!(
        decide(&a, &resource_request(dev, "get", "", "pods", "ns")),
        (
            Decision::Allow,
            r#"RBAC: allowed by ClusterRoleBinding "viewers" of ClusterRole "view" to Group "devs""#
                .to_owned()
        )
    );
    let robot = user("system:serviceaccount:ns:robot", &[]);
    assert_eq!(
        decide(&a, &resource_request(robot, "update", "", "pods", "ns")),
        (
            Decision::Allow,
            r#"RBAC: allowed by RoleBinding "editors/ns" of Role "edit" to ServiceAccount "robot/ns""#
                .to_owned()
        )
    );
    let remote = user("system:serviceaccount:elsewhere:sa", &[]);
    assert_eq!(
        decide(&a, &resource_request(remote, "list", "", "pods", "ns")).1,
        r#"RBAC: allowed by RoleBinding "remote/ns" of ClusterRole "view" to ServiceAccount "sa/elsewhere""#
    );
    let other = user("other", &[]);
    assert_eq!(
        decide(&a, &resource_request(other, "list", "", "pods", "")).1,
        r#"RBAC: allowed by ClusterRoleBinding "viewers" of ClusterRole "view" to User "other""#
    );
}

#[test]
fn missing_roles_are_the_reason_of_no_opinion() {
    let a = RbacAuthorizer::new(index(&[
        cluster_role("view", &[rule_json("get", "", "pods", "")]),
        cluster_role_binding("a", "missing", &["User:u"]),
        cluster_role_binding("b", "view", &["User:u"]),
        role_binding("ns", "c", "Role", "gone", &["Group:g"]),
    ]));
    let u = user("u", &["g"]);
    // An allowing rule wins over the errors met before it.
    assert_eq!(
        decide(&a, &resource_request(u.clone(), "get", "", "pods", "ns")).0,
        Decision::Allow
    );
    assert_eq!(
        decide(&a, &resource_request(u.clone(), "delete", "", "pods", "")),
        (
            Decision::NoOpinion,
            r#"RBAC: clusterrole.rbac.authorization.k8s.io "missing" not found"#.to_owned()
        )
    );
    assert_eq!(
        decide(&a, &resource_request(u, "delete", "", "pods", "ns")).1,
        r#"RBAC: [clusterrole.rbac.authorization.k8s.io "missing" not found, role.rbac.authorization.k8s.io "gone" not found]"#
    );
}

#[tokio::test]
async fn implements_authorizer_and_rule_resolver() {
    let a = RbacAuthorizer::new(index(&[
        cluster_role(
            "view",
            &[
                rule_json("get", "", "pods", ""),
                rule_json("get", "", "", "/healthz"),
            ],
        ),
        cluster_role_binding("b", "view", &["Group:system:authenticated"]),
    ]));
    let dyn_a: &dyn Authorizer = &a;
    let u = user("x", &["system:authenticated"]);
    let (decision, _) = dyn_a
        .authorize(&non_resource_request(u.clone(), "get", "/healthz"))
        .await
        .unwrap();
    assert_eq!(decision, Decision::Allow);
    let info = RuleResolver::rules_for(&a, &u, "ns").await;
    assert_eq!(info.resource_rules.len(), 1);
    assert_eq!(info.non_resource_rules.len(), 1);
    assert_eq!(info.non_resource_rules[0].non_resource_urls, ["/healthz"]);
    assert!(!info.incomplete);
    assert_eq!(info.evaluation_error, "");
}

#[test]
fn denials_are_described_like_upstream_logs() {
    let mut attrs = resource_request(
        user("u", &["g1", "g2"]),
        "get",
        "apps",
        "deployments/scale",
        "ns",
    );
    attrs.name = "d".into();
    assert_eq!(
        denial(&attrs),
        r#"RBAC: no rules authorize user "u" with groups ["g1" "g2"] to "get" resource "deployments.apps/scale" named "d" in namespace "ns""#
    );
    let attrs = non_resource_request(user("u", &[]), "get", "/x");
    assert_eq!(
        denial(&attrs),
        r#"RBAC: no rules authorize user "u" with groups [] to "get" nonResourceURL "/x" cluster-wide"#
    );
}
