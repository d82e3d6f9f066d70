use serde_json::json;

use super::*;
use crate::testutil::{non_resource_request, resource_request, rule, user};

/// (verb, group, resource or resource/subresource, expected)
type ResourceCase = (&'static str, &'static str, &'static str, bool);

fn check_resources(name: &str, r: &PolicyRule, cases: &[ResourceCase]) {
    for (verb, group, resource, want) in cases {
        let attrs = resource_request(user("u", &[]), verb, group, resource, "");
        assert_eq!(
            rule_allows(&attrs, r),
            *want,
            "{name}: {verb} {group} {resource}"
        );
    }
}

fn check_urls(name: &str, r: &PolicyRule, cases: &[(&str, &str, bool)]) {
    for (verb, url, want) in cases {
        let attrs = non_resource_request(user("u", &[]), verb, url);
        assert_eq!(rule_allows(&attrs, r), *want, "{name}: {verb} {url}");
    }
}

// Upstream's TestRuleMatches (plugin/pkg/auth/authorizer/rbac/rbac_test.go).
#[test]
fn star_verb_star_group_star_resource_and_tuple_expansion() {
    let g = ["group1", "group2"];
    let r = ["resource1", "resource2"];
    let v = ["verb1", "verb2"];
    let cases = |allowed: &dyn Fn(&str, &str, &str) -> bool| {
        let mut out = Vec::new();
        for verb in v {
            for group in g {
                for resource in r {
                    out.push((verb, group, resource, allowed(verb, group, resource)));
                }
            }
        }
        out
    };
    check_resources(
        "star verb",
        &rule("*", "group1", "resource1", "", ""),
        &cases(&|_, g, r| g == "group1" && r == "resource1"),
    );
    check_resources(
        "star group",
        &rule("verb1", "*", "resource1", "", ""),
        &cases(&|v, _, r| v == "verb1" && r == "resource1"),
    );
    check_resources(
        "star resource",
        &rule("verb1", "group1", "*", "", ""),
        &cases(&|v, g, _| v == "verb1" && g == "group1"),
    );
    check_resources(
        "tuple expansion",
        &rule(
            "verb1,verb2",
            "group1,group2",
            "resource1,resource2",
            "",
            "",
        ),
        &cases(&|_, _, _| true),
    );
}

#[test]
fn subresources() {
    check_resources(
        "subresource expansion",
        &rule("*", "*", "resource1/subresource1", "", ""),
        &[
            ("verb1", "group1", "resource1/subresource1", true),
            ("verb1", "group2", "resource1/subresource2", false),
            ("verb1", "group1", "resource2/subresource1", false),
            ("verb2", "group1", "resource1/subresource1", true),
            ("verb1", "group1", "resource1", false),
        ],
    );
    // TestAuthorizer's subresource resolution: `pods` does not grant `pods/status`.
    check_resources(
        "resource only",
        &rule("*", "*", "pods", "", ""),
        &[("get", "", "pods", true), ("get", "", "pods/status", false)],
    );
    check_resources(
        "star subresource",
        &rule("get", "*", "*/scale", "", ""),
        &[
            ("get", "apps", "deployments/scale", true),
            ("get", "", "replicationcontrollers/scale", true),
            ("get", "apps", "deployments", false),
            ("get", "apps", "deployments/status", false),
            // `*/scale` is not a prefix: the subresource must be all of it.
            ("get", "apps", "deployments/xscale", false),
        ],
    );
    // A rule `pods/status` against resource `pods/status` with no subresource.
    check_resources(
        "slash in resource name",
        &rule("get", "", "a/b", "", ""),
        &[("get", "", "a/b", true), ("get", "", "a", false)],
    );
}

#[test]
fn non_resource_urls() {
    check_urls(
        "star nonresource",
        &rule("verb1", "", "", "", "*"),
        &[
            ("verb1", "/foo", true),
            ("verb1", "/foo/bar/one", true),
            ("verb2", "/foo", false),
        ],
    );
    check_urls(
        "star nonresource subpath",
        &rule("verb1", "", "", "", "/foo/*"),
        &[
            ("verb1", "/foo", false),
            ("verb1", "/foo/bar", true),
            ("verb1", "/foo/baz/one", true),
            ("verb1", "/notfoo", false),
            ("verb1", "/notfoo/bar", false),
        ],
    );
    check_urls(
        "star verb, exact nonresource",
        &rule("*", "", "", "", "/foo,/foo/bar/one"),
        &[
            ("verb1", "/foo", true),
            ("verb1", "/foo/bar", false),
            ("verb1", "/foo/bar/one", true),
            ("verb2", "/foo", true),
            ("verb2", "/foo/baz/one", false),
        ],
    );
    // Trailing stars are all trimmed; a rule without URLs allows no path.
    check_urls(
        "double star",
        &rule("get", "", "", "", "/apis**"),
        &[("get", "/apis/v1", true), ("get", "/api", false)],
    );
    check_urls(
        "resource rule",
        &rule("*", "*", "*", "", ""),
        &[("get", "/healthz", false)],
    );
}

#[test]
fn resource_names_and_case() {
    let r = rule("get", "", "configmaps", "a,b", "");
    let mut attrs = resource_request(user("u", &[]), "get", "", "configmaps", "ns");
    assert!(!rule_allows(&attrs, &r), "no name is not one of the names");
    attrs.name = "a".into();
    assert!(rule_allows(&attrs, &r));
    attrs.name = "c".into();
    assert!(!rule_allows(&attrs, &r));
    // Verbs are case-sensitive, as TestAuthorizer's "GET" shows.
    let r = rule("get", "", "pods", "", "");
    let attrs = resource_request(user("u", &[]), "GET", "", "pods", "ns");
    assert!(!rule_allows(&attrs, &r));
    assert!(rules_allow(
        &resource_request(user("u", &[]), "get", "", "pods", "ns"),
        &[rule("list", "", "pods", "", ""), r]
    ));
}

#[test]
fn packing_round_trips_and_renders_like_upstream() {
    let value = json!({
        "verbs": ["get", "list"],
        "apiGroups": [""],
        "resources": ["pods", "pods/log"],
        "resourceNames": ["a"],
        "nonResourceURLs": null,
        "unknown": 1,
    });
    let r = PolicyRule::from_value(&value).unwrap();
    assert_eq!(r.verbs().collect::<Vec<_>>(), ["get", "list"]);
    assert_eq!(r.api_groups().collect::<Vec<_>>(), [""]);
    assert_eq!(r.resources().collect::<Vec<_>>(), ["pods", "pods/log"]);
    assert_eq!(r.resource_names().collect::<Vec<_>>(), ["a"]);
    assert_eq!(r.non_resource_urls().len(), 0);
    assert_eq!(
        r.to_value(),
        json!({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods", "pods/log"], "resourceNames": ["a"]})
    );
    assert_eq!(
        r.compact_string(),
        r#"{APIGroups:[""], Resources:["pods" "pods/log"], ResourceNames:["a"], Verbs:["get" "list"]}"#
    );
    assert_eq!(
        format!("{:?}", rule("get", "", "", "", "/healthz")),
        r#"PolicyRule{NonResourceURLs:["/healthz"], Verbs:["get"]}"#
    );
    assert_eq!(rule("", "", "", "", "").compact_string(), "{}");
    assert!(PolicyRule::from_value(&json!({"verbs": "get"})).is_err());
    assert!(PolicyRule::from_value(&json!("x")).is_err());
}

#[test]
fn rule_infos_split_resource_and_non_resource_rules() {
    let r = rule("get", "", "pods", "", "/healthz");
    let info = r.resource_rule_info().unwrap();
    assert_eq!(info.resources, ["pods"]);
    assert_eq!(info.api_groups, [""]);
    let info = r.non_resource_rule_info().unwrap();
    assert_eq!(info.non_resource_urls, ["/healthz"]);
    assert!(rule("get", "", "", "", "/x").resource_rule_info().is_none());
    assert!(
        rule("get", "", "pods", "", "")
            .non_resource_rule_info()
            .is_none()
    );
}
