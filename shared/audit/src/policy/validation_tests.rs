//! Upstream's `validation_test.go` cases, with the texts upstream writes.

use super::*;

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

fn at(level: &str) -> PolicyRule {
    PolicyRule {
        level: level.into(),
        ..PolicyRule::default()
    }
}

fn valid_rules() -> Vec<PolicyRule> {
    vec![
        at("Metadata"),
        PolicyRule {
            user_groups: strings(&["system:serviceaccounts", "system:nodes"]),
            ..at("None")
        },
        PolicyRule {
            verbs: strings(&["get"]),
            resources: vec![GroupResources {
                group: "rbac.authorization.k8s.io".into(),
                resources: strings(&["roles", "rolebindings"]),
                ..GroupResources::default()
            }],
            namespaces: strings(&["kube-system"]),
            ..at("RequestResponse")
        },
        PolicyRule {
            user_groups: strings(&["developers"]),
            non_resource_urls: strings(&["/logs*", "/healthz*", "/metrics", "*"]),
            ..at("Metadata")
        },
        PolicyRule {
            omit_stages: strings(&["RequestReceived"]),
            ..at("Metadata")
        },
    ]
}

/// The aggregate of a policy's errors, as `LoadPolicyFromBytes` returns it.
fn message(policy: &Policy) -> Option<String> {
    field::aggregate_message(&validate_policy(policy))
}

fn rule_message(rule: PolicyRule) -> String {
    let policy = Policy {
        rules: vec![rule],
        ..Policy::default()
    };
    message(&policy).expect("an invalid rule")
}

#[test]
fn valid_policies() {
    let mut policies: Vec<Policy> = valid_rules()
        .into_iter()
        .map(|rule| Policy {
            rules: vec![rule],
            ..Policy::default()
        })
        .collect();
    policies.push(Policy::default());
    policies.push(Policy {
        omit_stages: strings(&["RequestReceived"]),
        ..Policy::default()
    });
    policies.push(Policy {
        rules: valid_rules(),
        ..Policy::default()
    });
    for policy in policies {
        assert_eq!(message(&policy), None, "{policy:?}");
    }
}

#[test]
fn levels() {
    assert_eq!(
        rule_message(PolicyRule::default()),
        "rules[0].level: Required value"
    );
    let missing = PolicyRule {
        verbs: strings(&["get"]),
        resources: vec![GroupResources {
            resources: strings(&["secrets"]),
            ..GroupResources::default()
        }],
        namespaces: strings(&["kube-system"]),
        ..PolicyRule::default()
    };
    assert_eq!(rule_message(missing), "rules[0].level: Required value");
    assert_eq!(
        rule_message(at("FooBar")),
        r#"rules[0].level: Unsupported value: "FooBar": supported values: "None", "Metadata", "Request", "RequestResponse""#
    );
    // Levels are words, matched exactly.
    assert!(rule_message(at("metadata")).contains("Unsupported value"));
}

#[test]
fn non_resource_urls_apart_from_resources() {
    let with_namespaces = PolicyRule {
        namespaces: strings(&["default"]),
        non_resource_urls: strings(&["/logs*"]),
        ..at("Metadata")
    };
    assert_eq!(
        rule_message(with_namespaces),
        r#"rules[0].nonResourceURLs: Invalid value: []string{"/logs*"}: rules cannot apply to both regular resources and non-resource URLs"#
    );
    let with_resources = PolicyRule {
        resources: vec![GroupResources {
            resources: strings(&["secrets"]),
            ..GroupResources::default()
        }],
        non_resource_urls: strings(&["/logs*"]),
        ..at("Metadata")
    };
    assert!(rule_message(with_resources).ends_with("regular resources and non-resource URLs"));
}

#[test]
fn non_resource_url_shapes() {
    let urls = |u: &[&str]| PolicyRule {
        non_resource_urls: strings(u),
        ..at("Metadata")
    };
    assert_eq!(
        rule_message(urls(&["logs", "/healthz*"])),
        r#"rules[0].nonResourceURLs[0]: Invalid value: "logs": non-resource URL rules must begin with a '/' character"#
    );
    assert_eq!(
        rule_message(urls(&["", "/healthz*"])),
        r#"rules[0].nonResourceURLs[0]: Invalid value: "": non-resource URL rules must begin with a '/' character"#
    );
    assert_eq!(
        rule_message(urls(&["/metrics", "/logs/*/*"])),
        r#"rules[0].nonResourceURLs[1]: Invalid value: "/logs/*/*": non-resource URL wildcards '*' must be the final character of the rule"#
    );
    assert_eq!(
        rule_message(urls(&["/logs/*.log", "/metrics"])),
        r#"rules[0].nonResourceURLs[0]: Invalid value: "/logs/*.log": non-resource URL wildcards '*' must be the final character of the rule"#
    );
    // Both findings on one URL, in upstream's order.
    assert_eq!(
        rule_message(urls(&["**"])),
        r#"[rules[0].nonResourceURLs[0]: Invalid value: "**": non-resource URL rules must begin with a '/' character, rules[0].nonResourceURLs[0]: Invalid value: "**": non-resource URL wildcards '*' must be the final character of the rule]"#
    );
}

#[test]
fn resources() {
    let group = PolicyRule {
        resources: vec![GroupResources {
            group: "rbac.authorization.k8s.io/v1beta1".into(),
            resources: strings(&["roles"]),
            ..GroupResources::default()
        }],
        ..at("Metadata")
    };
    assert_eq!(
        rule_message(group),
        r#"rules[0].resources.group: Invalid value: "rbac.authorization.k8s.io/v1beta1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#
    );
    let names = PolicyRule {
        verbs: strings(&["get"]),
        resources: vec![GroupResources {
            resource_names: strings(&["leader"]),
            ..GroupResources::default()
        }],
        namespaces: strings(&["kube-system"]),
        ..at("Metadata")
    };
    assert_eq!(
        rule_message(names),
        r#"rules[0].resources.resourceNames: Invalid value: []string{"leader"}: using resourceNames requires at least one resource"#
    );
}

#[test]
fn stages() {
    let rule = PolicyRule {
        omit_stages: strings(&["RequestReceived", "foo"]),
        ..at("Metadata")
    };
    assert_eq!(
        rule_message(rule),
        r#"rules[0].omitStages[1]: Invalid value: "foo": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic"#
    );
    let policy = Policy {
        omit_stages: strings(&["foo"]),
        rules: vec![at("Metadata")],
        ..Policy::default()
    };
    assert_eq!(
        message(&policy).unwrap(),
        r#"omitStages[0]: Invalid value: "foo": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic"#
    );
}

#[test]
fn every_rule_is_checked_in_order() {
    let mut rules = valid_rules();
    rules.push(PolicyRule::default());
    rules.push(at("Everything"));
    let policy = Policy {
        omit_stages: strings(&["Never"]),
        rules,
        ..Policy::default()
    };
    assert_eq!(
        message(&policy).unwrap(),
        r#"[omitStages[0]: Invalid value: "Never": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic, rules[5].level: Required value, rules[6].level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse"]"#
    );
}
