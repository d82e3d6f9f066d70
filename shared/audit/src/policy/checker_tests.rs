//! Upstream's `checker_test.go`: each request against each rule list.

use kas_auth::UserInfo;
use kas_auth::authorization::Attributes;

use super::*;
use crate::event::Stage::{Panic, RequestReceived, ResponseComplete, ResponseStarted};

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

fn tim() -> UserInfo {
    UserInfo {
        name: "tim@k8s.io".into(),
        groups: strings(&["humans", "developers"]),
        ..UserInfo::default()
    }
}

fn request(name: &str) -> Attributes {
    let pod = |user: UserInfo, subresource: &str| Attributes {
        user,
        verb: "get".into(),
        namespace: "default".into(),
        api_version: "v1".into(),
        resource: "pods".into(),
        subresource: subresource.into(),
        name: "busybox".into(),
        is_resource_request: true,
        path: "/api/v1/namespaces/default/pods/busybox".into(),
        ..Attributes::default()
    };
    match name {
        "namespaced" => pod(tim(), ""),
        "subresource" => pod(tim(), "log"),
        "unauthorized" => pod(UserInfo::default(), ""),
        "cluster" => Attributes {
            user: tim(),
            verb: "get".into(),
            api_group: "rbac.authorization.k8s.io".into(),
            api_version: "v1beta1".into(),
            resource: "clusterroles".into(),
            name: "edit".into(),
            is_resource_request: true,
            path: "/apis/rbac.authorization.k8s.io/v1beta1/clusterroles/edit".into(),
            ..Attributes::default()
        },
        "nonResource" => Attributes {
            user: tim(),
            verb: "get".into(),
            path: "/logs/kubelet.log".into(),
            ..Attributes::default()
        },
        _ => panic!("no request {name}"),
    }
}

fn resources(group: &str, resources: &[&str], names: &[&str]) -> Vec<GroupResources> {
    vec![GroupResources {
        group: group.into(),
        resources: strings(resources),
        resource_names: strings(names),
    }]
}

fn rule(name: &str) -> PolicyRule {
    let at = |level: &str| PolicyRule {
        level: level.into(),
        ..PolicyRule::default()
    };
    let get = |level: &str| PolicyRule {
        verbs: strings(&["get"]),
        ..at(level)
    };
    match name {
        "default" => at("Metadata"),
        "create" => PolicyRule {
            verbs: strings(&["create"]),
            ..at("Request")
        },
        "tims" => PolicyRule {
            users: strings(&["tim@k8s.io"]),
            ..at("Metadata")
        },
        "humans" => PolicyRule {
            user_groups: strings(&["humans"]),
            ..at("Metadata")
        },
        "serviceAccounts" => PolicyRule {
            user_groups: strings(&["system:serviceaccounts"]),
            ..at("Request")
        },
        "getPods" => PolicyRule {
            resources: resources("", &["pods"], &[]),
            ..get("RequestResponse")
        },
        "getPodLogs" => PolicyRule {
            resources: resources("", &["pods/log"], &[]),
            ..get("Request")
        },
        "getPodWildcardMatching" => PolicyRule {
            resources: resources("", &["*"], &[]),
            ..get("Request")
        },
        "getPodResourceWildcardMatching" => PolicyRule {
            resources: resources("", &["*/log"], &[]),
            ..get("Request")
        },
        "getPodSubResourceWildcardMatching" => PolicyRule {
            resources: resources("", &["pods/*"], &[]),
            ..get("Request")
        },
        "getClusterRoles" => PolicyRule {
            resources: resources("rbac.authorization.k8s.io", &["clusterroles"], &[]),
            namespaces: strings(&[""]),
            ..get("RequestResponse")
        },
        "getLogs" => PolicyRule {
            non_resource_urls: strings(&["/logs*"]),
            ..get("RequestResponse")
        },
        "getMetrics" => PolicyRule {
            non_resource_urls: strings(&["/metrics"]),
            ..get("Request")
        },
        "clusterRoleEdit" => PolicyRule {
            resources: resources("rbac.authorization.k8s.io", &["clusterroles"], &["edit"]),
            ..at("Request")
        },
        "omit RequestReceived" => PolicyRule {
            omit_stages: strings(&["RequestReceived"]),
            ..at("Request")
        },
        "only audit panic" => PolicyRule {
            omit_stages: strings(&["RequestReceived", "ResponseStarted", "ResponseComplete"]),
            ..at("Request")
        },
        _ => panic!("no rule {name}"),
    }
}

fn check(req: &str, level: Level, policy_stages: &[Stage], stages: &[Stage], rules: &[&str]) {
    let policy = Policy {
        rules: rules.iter().map(|r| rule(r)).collect(),
        omit_stages: policy_stages
            .iter()
            .map(|s| s.as_str().to_owned())
            .collect(),
        omit_managed_fields: false,
    };
    let config = PolicyRuleEvaluator::new(&policy).evaluate_policy_rule(&request(req));
    assert_eq!(config.level, level, "request {req}, rules {rules:?}");
    assert_eq!(config.omit_stages, stages, "request {req}, rules {rules:?}");
}

fn check_levels(stages: &[Stage]) {
    use Level::{Metadata, None, Request, RequestResponse};
    let cases: &[(&str, Level, &[&str])] = &[
        ("namespaced", Metadata, &["default"]),
        ("namespaced", None, &["create"]),
        ("namespaced", Metadata, &["tims"]),
        ("namespaced", Metadata, &["humans"]),
        ("namespaced", None, &["serviceAccounts"]),
        ("namespaced", RequestResponse, &["getPods"]),
        ("namespaced", None, &["getClusterRoles"]),
        ("namespaced", None, &["getLogs"]),
        ("namespaced", None, &["getMetrics"]),
        (
            "namespaced",
            Metadata,
            &["getMetrics", "serviceAccounts", "default"],
        ),
        (
            "namespaced",
            RequestResponse,
            &["getMetrics", "getPods", "default"],
        ),
        ("namespaced", RequestResponse, &["getPodLogs", "getPods"]),
        ("cluster", Metadata, &["default"]),
        ("cluster", None, &["create"]),
        ("cluster", Metadata, &["tims"]),
        ("cluster", Metadata, &["humans"]),
        ("cluster", None, &["serviceAccounts"]),
        ("cluster", None, &["getPods"]),
        ("cluster", RequestResponse, &["getClusterRoles"]),
        ("cluster", Request, &["clusterRoleEdit", "getClusterRoles"]),
        ("cluster", None, &["getLogs"]),
        ("cluster", None, &["getMetrics"]),
        (
            "cluster",
            Metadata,
            &["getMetrics", "serviceAccounts", "default"],
        ),
        (
            "cluster",
            RequestResponse,
            &["getMetrics", "getClusterRoles", "default"],
        ),
        ("cluster", None, &["getPodLogs", "getPods"]),
        ("nonResource", Metadata, &["default"]),
        ("nonResource", None, &["create"]),
        ("nonResource", Metadata, &["tims"]),
        ("nonResource", Metadata, &["humans"]),
        ("nonResource", None, &["serviceAccounts"]),
        ("nonResource", None, &["getPods"]),
        ("nonResource", None, &["getClusterRoles"]),
        ("nonResource", RequestResponse, &["getLogs"]),
        ("nonResource", None, &["getMetrics"]),
        (
            "nonResource",
            Metadata,
            &["getMetrics", "serviceAccounts", "default"],
        ),
        (
            "nonResource",
            RequestResponse,
            &["getLogs", "getClusterRoles", "default"],
        ),
        ("nonResource", None, &["getPodLogs", "getPods"]),
        ("subresource", Request, &["getPodLogs", "getPods"]),
        ("subresource", Request, &["getPodWildcardMatching"]),
        ("subresource", Request, &["getPodResourceWildcardMatching"]),
        (
            "subresource",
            Request,
            &["getPodSubResourceWildcardMatching"],
        ),
        ("unauthorized", None, &["tims"]),
        ("unauthorized", Metadata, &["tims", "default"]),
        ("unauthorized", None, &["humans"]),
        ("unauthorized", Metadata, &["humans", "default"]),
    ];
    for (req, level, rules) in cases {
        check(req, *level, stages, stages, rules);
    }
}

#[test]
fn first_matching_rule_sets_the_level() {
    check_levels(&[]);
    let received: &[Stage] = &[RequestReceived];
    let all_but_panic: &[Stage] = &[RequestReceived, ResponseStarted, ResponseComplete];
    for req in ["namespaced", "cluster", "nonResource"] {
        let rules = ["omit RequestReceived", "getPods", "default"];
        check(req, Level::Request, &[], received, &rules);
        let rules = ["only audit panic", "getPods", "default"];
        check(req, Level::Request, &[], all_but_panic, &rules);
    }
}

#[test]
fn policy_stages_join_each_rules() {
    let policy_stages: &[Stage] = &[RequestReceived, ResponseStarted];
    check_levels(policy_stages);
    let all_but_panic: &[Stage] = &[RequestReceived, ResponseStarted, ResponseComplete];
    for req in ["namespaced", "cluster"] {
        let rules = ["omit RequestReceived", "getPods", "default"];
        check(req, Level::Request, policy_stages, policy_stages, &rules);
        let rules = ["only audit panic", "getPods", "default"];
        check(req, Level::Request, policy_stages, all_but_panic, &rules);
    }
    let rules = ["default", "omit RequestReceived", "getPods"];
    check(
        "nonResource",
        Level::Metadata,
        policy_stages,
        policy_stages,
        &rules,
    );
    let rules = ["only audit panic", "getPods", "default"];
    check(
        "nonResource",
        Level::Request,
        policy_stages,
        all_but_panic,
        &rules,
    );
}

#[test]
fn union_of_stages_has_each_once() {
    let cases: &[(&[Stage], &[Stage], &[Stage])] = &[
        (&[], &[], &[]),
        (&[RequestReceived], &[], &[RequestReceived]),
        (&[RequestReceived], &[RequestReceived], &[RequestReceived]),
        (
            &[RequestReceived],
            &[ResponseStarted],
            &[RequestReceived, ResponseStarted],
        ),
        (
            &[RequestReceived, RequestReceived],
            &[RequestReceived, RequestReceived],
            &[RequestReceived],
        ),
        (
            &[ResponseStarted, RequestReceived],
            &[Panic, RequestReceived],
            &[RequestReceived, ResponseStarted, Panic],
        ),
        (&[], &[Panic], &[Panic]),
    ];
    for (a, b, union) in cases {
        assert_eq!(union_stages(a, b), *union, "{a:?} + {b:?}");
    }
}

#[test]
fn rules_omit_managed_fields_overrides_the_policys() {
    let attrs = Attributes {
        verb: "get".into(),
        ..Attributes::default()
    };
    for (policy_default, rule_value, want) in [
        (false, Option::None, false),
        (true, Option::None, true),
        (true, Some(false), false),
        (false, Some(true), true),
    ] {
        let policy = Policy {
            omit_managed_fields: policy_default,
            rules: vec![PolicyRule {
                level: "RequestResponse".into(),
                verbs: strings(&["get"]),
                omit_managed_fields: rule_value,
                ..PolicyRule::default()
            }],
            ..Policy::default()
        };
        let config = PolicyRuleEvaluator::new(&policy).evaluate_policy_rule(&attrs);
        assert_eq!(config.level, Level::RequestResponse);
        assert_eq!(
            config.omit_managed_fields, want,
            "{policy_default} {rule_value:?}"
        );
    }
}

#[test]
fn no_match_takes_the_policys_defaults() {
    let policy = Policy {
        rules: vec![rule("create")],
        omit_stages: strings(&["ResponseStarted", "RequestReceived"]),
        omit_managed_fields: true,
    };
    let config = PolicyRuleEvaluator::new(&policy).evaluate_policy_rule(&request("namespaced"));
    assert_eq!(
        config,
        RequestAuditConfig {
            level: Level::None,
            omit_stages: vec![RequestReceived, ResponseStarted],
            omit_managed_fields: true,
        }
    );
}

fn level_of(rule: PolicyRule, attrs: &Attributes) -> Level {
    let policy = Policy {
        rules: vec![rule],
        ..Policy::default()
    };
    PolicyRuleEvaluator::new(&policy)
        .evaluate_policy_rule(attrs)
        .level
}

#[test]
fn resource_names_groups_and_namespaces() {
    let pods = |names: &[&str]| PolicyRule {
        resources: resources("", &["pods"], names),
        ..rule("default")
    };
    let busybox = request("namespaced");
    assert_eq!(level_of(pods(&["busybox"]), &busybox), Level::Metadata);
    assert_eq!(level_of(pods(&["other"]), &busybox), Level::None);
    // A group without resources is every resource of the group, whatever the names.
    let core = PolicyRule {
        resources: resources("", &[], &["other"]),
        ..rule("default")
    };
    assert_eq!(level_of(core.clone(), &busybox), Level::Metadata);
    assert_eq!(level_of(core, &request("cluster")), Level::None);
    let in_ns = |ns: &[&str]| PolicyRule {
        namespaces: strings(ns),
        ..rule("default")
    };
    assert_eq!(level_of(in_ns(&["default"]), &busybox), Level::Metadata);
    assert_eq!(level_of(in_ns(&["kube-system"]), &busybox), Level::None);
    assert_eq!(level_of(in_ns(&[""]), &request("cluster")), Level::Metadata);
    // Namespaces alone still make a rule for resources only.
    assert_eq!(level_of(in_ns(&[""]), &request("nonResource")), Level::None);
}

#[test]
fn subresource_patterns() {
    let spec = |s: &str| PolicyRule {
        resources: resources("", &[s], &[]),
        ..rule("default")
    };
    let log = request("subresource");
    let pod = request("namespaced");
    for (pattern, on_log, on_pod) in [
        ("pods", false, true),
        ("pods/log", true, false),
        ("pods/status", false, false),
        ("pods/*", true, true),
        ("*/log", true, false),
        ("*/status", false, false),
        ("*", true, true),
        ("nodes/*", false, false),
        ("pods/", false, false),
        ("*/", false, false),
    ] {
        let want = |m: bool| if m { Level::Metadata } else { Level::None };
        assert_eq!(
            level_of(spec(pattern), &log),
            want(on_log),
            "{pattern} on pods/log"
        );
        assert_eq!(
            level_of(spec(pattern), &pod),
            want(on_pod),
            "{pattern} on pods"
        );
    }
}

#[test]
fn non_resource_url_patterns() {
    let urls = |u: &[&str]| PolicyRule {
        non_resource_urls: strings(u),
        ..rule("default")
    };
    let at = |path: &str| Attributes {
        verb: "get".into(),
        path: path.into(),
        ..Attributes::default()
    };
    for (pattern, path, matches) in [
        ("*", "/anything", true),
        ("/healthz", "/healthz", true),
        ("/healthz", "/healthz/etcd", false),
        ("/healthz*", "/healthz/etcd", true),
        ("/healthz*", "/healthzz", true),
        ("/healthz/*", "/healthz", false),
        ("/healthz**", "/healthz", true),
        ("/metrics", "/metric", false),
    ] {
        let want = if matches {
            Level::Metadata
        } else {
            Level::None
        };
        assert_eq!(
            level_of(urls(&[pattern]), &at(path)),
            want,
            "{pattern} on {path}"
        );
    }
    // A resource request never matches a non-resource rule, whatever its path.
    assert_eq!(level_of(urls(&["*"]), &request("namespaced")), Level::None);
}

#[test]
fn fake_gives_every_request_its_level() {
    let fake = PolicyRuleEvaluator::new_fake(Level::Request, vec![Panic]);
    for req in ["namespaced", "nonResource", "unauthorized"] {
        let config = fake.evaluate_policy_rule(&request(req));
        assert_eq!(config.level, Level::Request);
        assert_eq!(config.omit_stages, [Panic]);
        assert!(!config.omit_managed_fields);
    }
}
