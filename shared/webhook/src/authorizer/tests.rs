use std::sync::atomic::{AtomicU16, Ordering};

use serde_json::json;

use super::*;
use crate::generic::tests::TEST_BACKOFF;
use crate::testing;

/// What the test webhook answers: an HTTP status and the review's status.
struct Script {
    code: AtomicU16,
    status: Mutex<Value>,
}

async fn setup(version: &str, ttl: Duration) -> (WebhookAuthorizer, testing::Server, Arc<Script>) {
    let script = Arc::new(Script {
        code: AtomicU16::new(200),
        status: Mutex::new(json!({"allowed": true})),
    });
    let answer = script.clone();
    let pki = testing::pki();
    let server = testing::serve(&pki, move |_| {
        let code = answer.code.load(Ordering::SeqCst);
        if code != 200 {
            return (code, "text/plain; charset=utf-8", "HTTP Error\n".to_owned());
        }
        let status = answer.status.lock().unwrap().clone();
        testing::json(
            200,
            json!({"apiVersion": "authorization.k8s.io/v1", "status": status}),
        )
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let path = testing::kubeconfig(dir.path(), &pki, &server.url, "t");
    let webhook =
        GenericWebhook::new(crate::kubeconfig::load(&path).unwrap(), TEST_BACKOFF).unwrap();
    let version = SubjectAccessReviewVersion::parse(version).unwrap();
    (
        WebhookAuthorizer::new(webhook, version, ttl, ttl),
        server,
        script,
    )
}

fn user(name: &str) -> UserInfo {
    UserInfo {
        name: name.to_owned(),
        ..UserInfo::default()
    }
}

fn jane_gets_a_pod() -> Attributes {
    Attributes {
        user: UserInfo {
            name: "jane".into(),
            uid: "1".into(),
            groups: vec!["group1".into(), "group2".into()],
            ..UserInfo::default()
        },
        verb: "GET".into(),
        namespace: "kittensandponies".into(),
        api_group: "group3".into(),
        api_version: "v7beta3".into(),
        resource: "pods".into(),
        subresource: "proxy".into(),
        name: "my-pod".into(),
        is_resource_request: true,
        path: "/foo".into(),
        ..Attributes::default()
    }
}

#[tokio::test]
async fn the_reviews_sent_are_upstreams() {
    let (authz, server, _) = setup("v1", Duration::ZERO).await;
    let meta = json!({"creationTimestamp": null});
    // Upstream's TestV1Webhook cases.
    let cases = [
        (Attributes::default(), json!({"nonResourceAttributes": {}})),
        (
            Attributes {
                user: user("jane"),
                ..Attributes::default()
            },
            json!({"user": "jane", "nonResourceAttributes": {}}),
        ),
        (
            jane_gets_a_pod(),
            json!({"user": "jane", "uid": "1", "groups": ["group1", "group2"],
                   "resourceAttributes": {"verb": "GET", "namespace": "kittensandponies",
                       "group": "group3", "version": "v7beta3", "resource": "pods",
                       "subresource": "proxy", "name": "my-pod"}}),
        ),
    ];
    for (attrs, spec) in cases {
        let decision = authz.authorize(&attrs).await.unwrap();
        assert_eq!(decision, (Decision::Allow, String::new()));
        assert_eq!(
            server.last().1,
            json!({"kind": "SubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
                   "metadata": meta, "spec": spec, "status": {"allowed": false}})
        );
    }
    let text = String::from_utf8(authz.review_body(&spec_for(&jane_gets_a_pod()))).unwrap();
    assert_eq!(
        text,
        "{\"kind\":\"SubjectAccessReview\",\"apiVersion\":\"authorization.k8s.io/v1\",\"metadata\":{\"creationTimestamp\":null},\"spec\":{\"resourceAttributes\":{\"namespace\":\"kittensandponies\",\"verb\":\"GET\",\"group\":\"group3\",\"version\":\"v7beta3\",\"resource\":\"pods\",\"subresource\":\"proxy\",\"name\":\"my-pod\"},\"user\":\"jane\",\"groups\":[\"group1\",\"group2\"],\"uid\":\"1\"},\"status\":{\"allowed\":false}}\n"
    );
}

#[tokio::test]
async fn v1beta1_names_groups_group_and_field_selectors_are_structured() {
    let (authz, server, _) = setup("v1beta1", Duration::ZERO).await;
    let mut attrs = jane_gets_a_pod();
    attrs.user.extra = [("scopes".to_owned(), vec!["a".to_owned()])].into();
    attrs.verb = "list".into();
    attrs.field_selector = "spec.nodeName=n1,metadata.name!=x".into();
    authz.authorize(&attrs).await.unwrap();
    let body = server.last().1;
    assert_eq!(body["apiVersion"], "authorization.k8s.io/v1beta1");
    assert_eq!(body["spec"]["group"], json!(["group1", "group2"]));
    assert_eq!(body["spec"]["extra"], json!({"scopes": ["a"]}));
    assert!(body["spec"].get("groups").is_none());
    assert_eq!(
        body["spec"]["resourceAttributes"]["fieldSelector"],
        json!({"requirements": [
            {"key": "metadata.name", "operator": "NotIn", "values": ["x"]},
            {"key": "spec.nodeName", "operator": "In", "values": ["n1"]}]})
    );
    // Label selectors go as requirements too; `gt` is not sent.
    attrs.label_selector = "tier notin (b,a),app=web,!gone,has,n>3".into();
    authz.authorize(&attrs).await.unwrap();
    assert_eq!(
        server.last().1["spec"]["resourceAttributes"]["labelSelector"],
        json!({"requirements": [
            {"key": "app", "operator": "In", "values": ["web"]},
            {"key": "gone", "operator": "DoesNotExist"},
            {"key": "has", "operator": "Exists"},
            {"key": "tier", "operator": "NotIn", "values": ["a", "b"]}]})
    );
    // A selector that does not parse sends none.
    attrs.label_selector = "a in (".into();
    attrs.field_selector = "spec.nodeName".into();
    authz.authorize(&attrs).await.unwrap();
    let resource_attributes = &server.last().1["spec"]["resourceAttributes"];
    assert!(resource_attributes.get("fieldSelector").is_none());
    assert!(resource_attributes.get("labelSelector").is_none());
}

#[tokio::test]
async fn decisions_and_reasons_are_the_answers() {
    let (authz, _server, script) = setup("v1", Duration::ZERO).await;
    let cases = [
        (json!({"allowed": true, "reason": "ok"}), Ok((Decision::Allow, "ok".to_owned()))),
        (json!({"allowed": false, "denied": true, "reason": "no"}), Ok((Decision::Deny, "no".to_owned()))),
        (json!({"allowed": false, "reason": "dunno"}), Ok((Decision::NoOpinion, "dunno".to_owned()))),
        (
            json!({"allowed": true, "denied": true}),
            Err("webhook subject access review returned both allow and deny response".to_owned()),
        ),
        (
            json!({"allowed": 1}),
            Err("json: cannot unmarshal number into Go struct field SubjectAccessReviewStatus.status.allowed of type bool".to_owned()),
        ),
    ];
    for (status, want) in cases {
        *script.status.lock().unwrap() = status.clone();
        let got = authz
            .authorize(&jane_gets_a_pod())
            .await
            .map_err(|e| e.to_string());
        assert_eq!(got, want, "{status}");
    }
    let rules = authz.rules_for(&user("jane"), "ns").await;
    assert_eq!(
        rules,
        RulesInfo {
            incomplete: true,
            evaluation_error: "webhook authorizer does not support user rule resolution".to_owned(),
            ..RulesInfo::default()
        }
    );
}

/// Upstream's TestV1WebhookCache.
#[tokio::test]
async fn successes_are_cached_and_errors_retried_as_upstream() {
    let (authz, server, script) = setup("v1", Duration::from_secs(3600)).await;
    let resource = |name: &str| Attributes {
        user: user(name),
        is_resource_request: true,
        namespace: "kittensandponies".into(),
        ..Attributes::default()
    };
    let ridiculous = |name: &str| Attributes {
        verb: "v".repeat(2000),
        api_group: "g".repeat(2000),
        api_version: "a".repeat(2000),
        resource: "r".repeat(2000),
        name: "n".repeat(2000),
        ..resource(name)
    };
    let (alice, bob) = (resource("alice"), resource("bob"));
    // (attributes, allow, HTTP status, error expected, allowed, calls)
    let cases = [
        (&alice, false, 500, true, false, 5),
        (&alice, false, 429, true, false, 5),
        (&alice, false, 404, true, false, 1),
        (&alice, false, 403, true, false, 1),
        (&alice, false, 401, true, false, 1),
        (&alice, true, 200, false, true, 1),
        (&alice, false, 500, false, true, 0),
        (&bob, false, 500, true, false, 5),
        (&bob, false, 200, false, false, 1),
        (&bob, false, 500, false, false, 0),
        (&ridiculous("bob"), false, 200, false, false, 1),
        (&ridiculous("bob"), false, 200, false, false, 1),
        (&ridiculous("alice"), true, 200, false, true, 1),
        (&ridiculous("alice"), true, 200, false, true, 1),
    ];
    for (i, (attrs, allow, code, error, allowed, calls)) in cases.into_iter().enumerate() {
        script.code.store(code, Ordering::SeqCst);
        *script.status.lock().unwrap() = json!({"allowed": allow});
        let got = authz.authorize(attrs).await;
        assert_eq!(got.is_err(), error, "case {i}: {got:?}");
        assert_eq!(
            got.is_ok_and(|(d, _)| d == Decision::Allow),
            allowed,
            "case {i}"
        );
        assert_eq!(server.calls(), calls, "case {i}");
    }
}

#[tokio::test]
async fn unauthorized_answers_expire_on_their_own_ttl() {
    let (mut authz, server, script) = setup("v1", Duration::from_secs(3600)).await;
    authz.unauthorized_ttl = Duration::from_millis(100);
    *script.status.lock().unwrap() = json!({"allowed": false});
    let attrs = jane_gets_a_pod();
    authz.authorize(&attrs).await.unwrap();
    authz.authorize(&attrs).await.unwrap();
    assert_eq!(server.calls(), 1);
    tokio::time::sleep(Duration::from_millis(150)).await;
    authz.authorize(&attrs).await.unwrap();
    assert_eq!(server.calls(), 1);
    let err = SubjectAccessReviewVersion::parse("v2").unwrap_err();
    assert_eq!(
        err.to_string(),
        "unsupported webhook authorizer version \"v2\", supported versions are \"v1\", \"v1beta1\""
    );
}

#[tokio::test]
async fn a_failed_call_is_the_error_upstream_reports() {
    let (authz, _server, script) = setup("v1", Duration::ZERO).await;
    script.code.store(500, Ordering::SeqCst);
    let err = authz.authorize(&jane_gets_a_pod()).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "an error on the server (\"HTTP Error\") has prevented the request from succeeding"
    );
}
