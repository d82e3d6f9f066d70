//! Upstream's `TestValidateAuthorizationConfiguration` (validation_test.go), with the
//! messages its field errors render, and kube-apiserver's `LoadAndValidateData` checks.

use kas_apimachinery::golang::time::Duration;

use super::*;
use crate::authorization::config::{
    AuthorizerConfiguration, WebhookConnectionInfo, WebhookMatchCondition,
};

const SECOND: i64 = 1_000_000_000;

fn webhook() -> WebhookConfiguration {
    WebhookConfiguration {
        timeout: Duration(5 * SECOND),
        authorized_ttl: Duration(300 * SECOND),
        unauthorized_ttl: Duration(30 * SECOND),
        failure_policy: "NoOpinion".into(),
        subject_access_review_version: "v1".into(),
        match_condition_subject_access_review_version: "v1".into(),
        connection_info: WebhookConnectionInfo {
            connection_type: "InClusterConfig".into(),
            kube_config_file: None,
        },
        match_conditions: Vec::new(),
    }
}

fn authorizer(
    t: &str,
    name: &str,
    webhook: Option<WebhookConfiguration>,
) -> AuthorizerConfiguration {
    AuthorizerConfiguration {
        authorizer_type: t.into(),
        name: name.into(),
        webhook,
    }
}

/// The rendered errors of validating `authorizers` with `known` types (Webhook repeats).
fn errors(authorizers: Vec<AuthorizerConfiguration>, known: &[&str]) -> Vec<String> {
    let config = AuthorizationConfiguration { authorizers };
    validate_authorization_configuration(&config, known, &["Webhook"])
        .iter()
        .map(|e| e.to_string())
        .collect()
}

fn webhook_errors(w: WebhookConfiguration) -> Vec<String> {
    errors(
        vec![authorizer("Webhook", "default", Some(w))],
        &["Webhook"],
    )
}

#[test]
fn authorizers_types_and_names() {
    assert_eq!(
        errors(vec![], &[]),
        ["authorizers: Required value: at least one authorization mode must be defined"]
    );
    assert_eq!(
        errors(vec![AuthorizerConfiguration::default()], &["Webhook"]),
        ["authorizers[0].type: Required value"]
    );
    assert_eq!(
        errors(vec![authorizer("Foo", "", None)], &["Foo"]),
        ["authorizers[0].name: Required value"]
    );
    assert_eq!(
        errors(
            vec![
                authorizer("Foo", "foo", None),
                authorizer("Bar", "foo", None)
            ],
            &["Foo", "Bar"]
        ),
        ["authorizers[1].name: Duplicate value: \"foo\""]
    );
    assert!(errors(vec![authorizer("Foo", "myauthorizer", None)], &["Foo"]).is_empty());
    assert!(
        errors(
            vec![authorizer("Foo", "foo.example.domain", None)],
            &["Foo"]
        )
        .is_empty()
    );
    assert_eq!(
        errors(
            vec![authorizer("Foo", "FOO.example.domain", None)],
            &["Foo"]
        ),
        [
            "authorizers[0].name: Invalid value: \"FOO.example.domain\": authorizer name is invalid: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        ]
    );
    assert_eq!(
        errors(
            vec![authorizer("Foo", "", None)],
            &["Webhook", "AlwaysAllow"]
        ),
        [
            "authorizers[0].type: Unsupported value: \"Foo\": supported values: \"AlwaysAllow\", \"Webhook\""
        ]
    );
    assert_eq!(
        errors(
            vec![
                authorizer("Foo", "foo-1", None),
                authorizer("Foo", "foo-2", None)
            ],
            &["Foo"]
        ),
        ["authorizers[1].type: Duplicate value: \"Foo\""]
    );
    assert_eq!(
        errors(vec![authorizer("Webhook", "default", None)], &["Webhook"]),
        ["authorizers[0].webhook: Required value: required when type=Webhook"]
    );
    assert_eq!(
        errors(
            vec![authorizer(
                "Foo",
                "foo",
                Some(WebhookConfiguration::default())
            )],
            &["Foo"]
        ),
        [
            "authorizers[0].webhook: Invalid value: \"non-null\": may only be specified when type=Webhook"
        ]
    );
}

#[test]
fn webhooks_bare_minimum_and_repeated() {
    assert!(webhook_errors(webhook()).is_empty());
    let mut w = webhook();
    w.match_conditions = vec![
        WebhookMatchCondition {
            expression: "has(request.resourceAttributes) && request.resourceAttributes.namespace == 'kube-system'".into(),
        },
        WebhookMatchCondition {
            expression: "request.user == 'admin'".into(),
        },
    ];
    assert!(webhook_errors(w).is_empty());
    assert!(
        errors(
            vec![
                authorizer("Webhook", "default", Some(webhook())),
                authorizer("Webhook", "second-webhook", Some(webhook())),
            ],
            &["Webhook"]
        )
        .is_empty()
    );
}

#[test]
fn webhook_timeouts_and_ttls() {
    let with = |f: &dyn Fn(&mut WebhookConfiguration)| {
        let mut w = webhook();
        f(&mut w);
        webhook_errors(w)
    };
    assert_eq!(
        with(&|w| w.timeout = Duration(0)),
        ["authorizers[0].timeout: Required value"]
    );
    assert_eq!(
        with(&|w| w.timeout = Duration(-30 * SECOND)),
        ["authorizers[0].timeout: Invalid value: \"-30s\": must be > 0s and <= 30s"]
    );
    assert_eq!(
        with(&|w| w.timeout = Duration(60 * SECOND)),
        ["authorizers[0].timeout: Invalid value: \"1m0s\": must be > 0s and <= 30s"]
    );
    assert!(with(&|w| w.timeout = Duration(30 * SECOND)).is_empty());
    assert_eq!(
        with(&|w| w.authorized_ttl = Duration(0)),
        ["authorizers[0].authorizedTTL: Required value"]
    );
    assert_eq!(
        with(&|w| w.authorized_ttl = Duration(-30 * SECOND)),
        ["authorizers[0].authorizedTTL: Invalid value: \"-30s\": must be > 0s"]
    );
    assert_eq!(
        with(&|w| w.unauthorized_ttl = Duration(0)),
        ["authorizers[0].unauthorizedTTL: Required value"]
    );
    assert_eq!(
        with(&|w| w.unauthorized_ttl = Duration(-30 * SECOND)),
        ["authorizers[0].unauthorizedTTL: Invalid value: \"-30s\": must be > 0s"]
    );
}

#[test]
fn webhook_versions_and_failure_policy() {
    let with = |f: &dyn Fn(&mut WebhookConfiguration)| {
        let mut w = webhook();
        f(&mut w);
        webhook_errors(w)
    };
    assert_eq!(
        with(&|w| w.subject_access_review_version.clear()),
        ["authorizers[0].subjectAccessReviewVersion: Required value"]
    );
    assert_eq!(
        with(&|w| w.subject_access_review_version = "v2beta1".into()),
        [
            "authorizers[0].subjectAccessReviewVersion: Unsupported value: \"v2beta1\": supported values: \"v1\", \"v1beta1\""
        ]
    );
    assert!(with(&|w| w.match_condition_subject_access_review_version.clear()).is_empty());
    assert_eq!(
        with(&|w| {
            w.match_condition_subject_access_review_version.clear();
            w.match_conditions = vec![WebhookMatchCondition {
                expression: "true".into(),
            }];
        }),
        [
            "authorizers[0].matchConditionSubjectAccessReviewVersion: Required value: required if match conditions are specified"
        ]
    );
    assert_eq!(
        with(&|w| w.match_condition_subject_access_review_version = "v1beta1".into()),
        [
            "authorizers[0].matchConditionSubjectAccessReviewVersion: Unsupported value: \"v1beta1\": supported values: \"v1\""
        ]
    );
    assert_eq!(
        with(&|w| w.failure_policy.clear()),
        ["authorizers[0].failurePolicy: Required value"]
    );
    assert_eq!(
        with(&|w| w.failure_policy = "AlwaysAllow".into()),
        [
            "authorizers[0].failurePolicy: Unsupported value: \"AlwaysAllow\": supported values: \"NoOpinion\", \"Deny\""
        ]
    );
}

#[test]
fn webhook_connection_info() {
    let with = |t: &str, file: Option<&str>| {
        let mut w = webhook();
        w.connection_info = WebhookConnectionInfo {
            connection_type: t.into(),
            kube_config_file: file.map(str::to_owned),
        };
        webhook_errors(w)
    };
    assert_eq!(
        with("", None),
        ["authorizers[0].connectionInfo.type: Required value"]
    );
    assert_eq!(
        with("ExternalClusterConfig", None),
        [
            "authorizers[0].connectionInfo.type: Unsupported value: apiserver.WebhookConnectionInfo{Type:\"ExternalClusterConfig\", KubeConfigFile:(*string)(nil)}: supported values: \"InClusterConfig\", \"KubeConfigFile\""
        ]
    );
    assert_eq!(
        with("InClusterConfig", Some("")),
        [
            "authorizers[0].connectionInfo.kubeConfigFile: Invalid value: \"\": can only be set when type=KubeConfigFile"
        ]
    );
    assert_eq!(
        with("KubeConfigFile", None),
        ["authorizers[0].connectionInfo.kubeConfigFile: Required value"]
    );
    assert_eq!(
        with("KubeConfigFile", Some("../some/relative/path/kubeconfig")),
        [
            "authorizers[0].connectionInfo.kubeConfigFile: Invalid value: \"../some/relative/path/kubeconfig\": must be an absolute path"
        ]
    );
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let missing = missing.to_str().unwrap();
    assert_eq!(
        with("KubeConfigFile", Some(missing)),
        [format!(
            "authorizers[0].connectionInfo.kubeConfigFile: Invalid value: \"{missing}\": error loading file: stat {missing}: no such file or directory"
        )]
    );
    let d = dir.path().to_str().unwrap();
    assert_eq!(
        with("KubeConfigFile", Some(d)),
        [format!(
            "authorizers[0].connectionInfo.kubeConfigFile: Invalid value: \"{d}\": must be a regular file"
        )]
    );
    let file = dir.path().join("kubeconfig");
    std::fs::write(&file, "").unwrap();
    assert!(with("KubeConfigFile", Some(file.to_str().unwrap())).is_empty());
}

#[test]
fn errors_of_several_fields_come_in_upstreams_order() {
    let w = WebhookConfiguration {
        authorized_ttl: Duration(-1),
        ..WebhookConfiguration::default()
    };
    assert_eq!(
        webhook_errors(w),
        [
            "authorizers[0].timeout: Required value",
            "authorizers[0].authorizedTTL: Invalid value: \"-1ns\": must be > 0s",
            "authorizers[0].unauthorizedTTL: Required value",
            "authorizers[0].subjectAccessReviewVersion: Required value",
            "authorizers[0].failurePolicy: Required value",
            "authorizers[0].connectionInfo.type: Required value",
        ]
    );
}

const HEADER: &str = "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\n";

fn load(body: &str, required: &[&str]) -> Result<AuthorizationConfiguration, String> {
    let required: Vec<String> = required.iter().map(|s| (*s).to_owned()).collect();
    load_and_validate_data(format!("{HEADER}{body}").as_bytes(), &required)
}

#[test]
fn kube_apiservers_checks_around_validation() {
    assert_eq!(
        load(
            "authorizers:\n- type: RBAC\n  name: rbac\n- type: Node\n  name: node\n",
            &[]
        )
        .unwrap()
        .authorizers
        .len(),
        2
    );
    assert_eq!(
        load(
            "authorizers:\n- type: RBAC\n  name: myrbac\n- type: AlwaysAllow\n  name: allow\n",
            &[]
        )
        .unwrap_err(),
        "[expected name rbac for authorizer RBAC instead of myrbac, expected name alwaysallow for authorizer AlwaysAllow instead of allow]"
    );
    assert_eq!(
        load(
            "authorizers:\n- type: AlwaysDeny\n  name: alwaysdeny\n",
            &["RBAC", "Node"]
        )
        .unwrap_err(),
        "missing required types: [Node RBAC]"
    );
    assert_eq!(
        load(
            "authorizers:\n- type: Bogus\n  name: b\n- type: RBAC\n",
            &[]
        )
        .unwrap_err(),
        "[authorizers[0].type: Unsupported value: \"Bogus\": supported values: \"ABAC\", \"AlwaysAllow\", \"AlwaysDeny\", \"Node\", \"RBAC\", \"Webhook\", authorizers[1].name: Required value]"
    );
    assert_eq!(
        load("", &[]).unwrap_err(),
        "authorizers: Required value: at least one authorization mode must be defined"
    );
    assert_eq!(
        load_and_validate_data(b"apiVersion: apiserver.config.k8s.io", &[]).unwrap_err(),
        "failed to load AuthorizationConfiguration from file: Object 'Kind' is missing in 'apiVersion: apiserver.config.k8s.io'"
    );
}
