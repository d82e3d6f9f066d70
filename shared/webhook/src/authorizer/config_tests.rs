//! Webhooks of `--authorization-config`: match conditions before the call, the failure
//! policy on errors, the configuration's fields.

use std::sync::atomic::{AtomicU16, Ordering};

use kas_auth::authorization::config::load_and_validate_data;
use serde_json::json;

use super::*;
use crate::generic::tests::TEST_BACKOFF;
use crate::testing;

struct Hook {
    server: testing::Server,
    code: Arc<AtomicU16>,
    kubeconfig: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

/// A webhook that allows everything it is asked, or answers `code` when not 200.
async fn hook() -> Hook {
    let code = Arc::new(AtomicU16::new(200));
    let answer = code.clone();
    let pki = testing::pki();
    let server = testing::serve(&pki, move |_| match answer.load(Ordering::SeqCst) {
        200 => testing::json(
            200,
            json!({"apiVersion": "authorization.k8s.io/v1", "status": {"allowed": true, "reason": "hook says yes"}}),
        ),
        code => (code, "text/plain; charset=utf-8", "HTTP Error\n".to_owned()),
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = testing::kubeconfig(dir.path(), &pki, &server.url, "t");
    Hook {
        server,
        code,
        kubeconfig,
        _dir: dir,
    }
}

/// The webhook of a configuration file with `policy` and `conditions`.
fn configured(h: &Hook, policy: &str, conditions: &[&str]) -> Arc<WebhookAuthorizer> {
    let mut yaml = format!(
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: Webhook\n  name: team-hook\n  webhook:\n    timeout: 3s\n    failurePolicy: {policy}\n    subjectAccessReviewVersion: v1\n    matchConditionSubjectAccessReviewVersion: v1\n    authorizedTTL: 1ms\n    unauthorizedTTL: 1ms\n    connectionInfo:\n      type: KubeConfigFile\n      kubeConfigFile: {}\n    matchConditions:\n",
        h.kubeconfig.display()
    );
    for c in conditions {
        yaml.push_str(&format!(
            "    - expression: {}\n",
            serde_json::to_string(c).unwrap()
        ));
    }
    let config = load_and_validate_data(yaml.as_bytes(), &[]).unwrap();
    new_from_config(&config.authorizers[0], TEST_BACKOFF).unwrap()
}

fn pods_in(namespace: &str) -> Attributes {
    Attributes {
        user: UserInfo {
            name: "jane".into(),
            ..UserInfo::default()
        },
        verb: "list".into(),
        is_resource_request: true,
        namespace: namespace.into(),
        api_version: "v1".into(),
        resource: "pods".into(),
        ..Attributes::default()
    }
}

fn healthz() -> Attributes {
    Attributes {
        verb: "get".into(),
        path: "/healthz".into(),
        ..Attributes::default()
    }
}

#[tokio::test]
async fn match_conditions_choose_the_requests_the_webhook_sees() {
    let h = hook().await;
    let authz = configured(
        &h,
        "NoOpinion",
        &[
            "has(request.resourceAttributes)",
            "request.resourceAttributes.namespace == 'team'",
        ],
    );
    assert_eq!(
        authz.authorize(&pods_in("team")).await.unwrap(),
        (Decision::Allow, "hook says yes".to_owned())
    );
    assert_eq!(h.server.calls(), 1);
    assert_eq!(
        h.server.last().1["spec"]["resourceAttributes"]["namespace"],
        "team"
    );
    assert_eq!(
        authz.authorize(&pods_in("other")).await.unwrap(),
        (Decision::NoOpinion, String::new())
    );
    assert_eq!(
        authz.authorize(&healthz()).await.unwrap(),
        (Decision::NoOpinion, String::new())
    );
    assert_eq!(
        h.server.calls(),
        0,
        "skipped requests never reach the webhook"
    );
}

#[tokio::test]
async fn match_condition_errors_follow_the_failure_policy() {
    let h = hook().await;
    let condition = "request.resourceAttributes.namespace == 'team'";
    let expected = "cel evaluation error: expression 'request.resourceAttributes.namespace == 'team'' resulted in error: no such key: resourceAttributes";
    let open = configured(&h, "NoOpinion", &[condition]);
    let err = open.authorize(&healthz()).await.unwrap_err();
    assert!(matches!(err, kas_auth::Error::Webhook(_)), "{err:?}");
    assert_eq!(err.to_string(), expected);
    let closed = configured(&h, "Deny", &[condition]);
    let err = closed.authorize(&healthz()).await.unwrap_err();
    assert!(matches!(err, kas_auth::Error::DeniedOnError(_)), "{err:?}");
    assert_eq!(err.to_string(), expected);
    assert_eq!(h.server.calls(), 0);
}

#[tokio::test]
async fn a_webhook_that_is_down_follows_the_failure_policy() {
    let h = hook().await;
    h.code.store(500, Ordering::SeqCst);
    let message =
        "an error on the server (\"HTTP Error\") has prevented the request from succeeding";
    let err = configured(&h, "NoOpinion", &[])
        .authorize(&pods_in("team"))
        .await
        .unwrap_err();
    assert!(matches!(err, kas_auth::Error::Webhook(_)));
    assert_eq!(err.to_string(), message);
    let err = configured(&h, "Deny", &[])
        .authorize(&pods_in("team"))
        .await
        .unwrap_err();
    assert!(matches!(err, kas_auth::Error::DeniedOnError(_)));
    assert_eq!(err.to_string(), message);
    // Back up, the same webhook answers again.
    h.code.store(200, Ordering::SeqCst);
    assert_eq!(
        configured(&h, "Deny", &[])
            .authorize(&pods_in("team"))
            .await
            .unwrap()
            .0,
        Decision::Allow
    );
}

#[test]
fn in_cluster_connections_are_refused() {
    let a = AuthorizerConfiguration {
        authorizer_type: "Webhook".into(),
        name: "w".into(),
        webhook: Some(kas_auth::authorization::config::WebhookConfiguration {
            failure_policy: "Deny".into(),
            subject_access_review_version: "v1".into(),
            connection_info: kas_auth::authorization::config::WebhookConnectionInfo {
                connection_type: "InClusterConfig".into(),
                kube_config_file: None,
            },
            ..Default::default()
        }),
    };
    let err = new_from_config(&a, TEST_BACKOFF).err().unwrap();
    assert_eq!(
        err.to_string(),
        "authorizer \"w\": webhook connectionInfo type \"InClusterConfig\" is not supported"
    );
}
