use http::header::AUTHORIZATION;
use std::sync::Mutex;

use http::HeaderMap;
use serde_json::json;

use super::*;
use crate::generic::tests::TEST_BACKOFF;
use crate::testing;

const TOKEN: &str = "my-s3cr3t-t0ken";

/// A webhook answering with the status in `answer`, and the authenticator asking it.
async fn setup(
    version: &str,
    implicit_auds: &[&str],
    answer: Arc<Mutex<Value>>,
) -> (WebhookTokenAuthenticator, testing::Server) {
    let pki = testing::pki();
    let server = testing::serve(&pki, move |_| {
        testing::json(200, json!({"apiVersion": "authentication.k8s.io/v1", "status": answer.lock().unwrap().clone()}))
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let path = testing::kubeconfig(dir.path(), &pki, &server.url, "hook-token");
    let config = crate::kubeconfig::load(&path).unwrap();
    let webhook = GenericWebhook::new(config, TEST_BACKOFF).unwrap();
    let auds = implicit_auds.iter().map(|a| (*a).to_owned()).collect();
    let version = TokenReviewVersion::parse(version).unwrap();
    (
        WebhookTokenAuthenticator::new(webhook, version, auds),
        server,
    )
}

#[tokio::test]
async fn the_review_sent_is_upstreams() {
    let answer = Arc::new(Mutex::new(
        json!({"authenticated": true, "user": {"username": "somebody"}}),
    ));
    let (authn, server) = setup("v1", &[], answer.clone()).await;
    authn.authenticate_token(TOKEN).await.unwrap();
    let (auth, body) = server.last();
    assert_eq!(auth, "Bearer hook-token");
    assert_eq!(
        body,
        json!({"kind": "TokenReview", "apiVersion": "authentication.k8s.io/v1",
               "metadata": {"creationTimestamp": null},
               "spec": {"token": TOKEN}, "status": {"user": {}}})
    );
    assert_eq!(
        String::from_utf8(authn.review_body(TOKEN)).unwrap(),
        "{\"kind\":\"TokenReview\",\"apiVersion\":\"authentication.k8s.io/v1\",\"metadata\":{\"creationTimestamp\":null},\"spec\":{\"token\":\"my-s3cr3t-t0ken\"},\"status\":{\"user\":{}}}\n"
    );
    let (authn, server) = setup("v1beta1", &["api", "other"], answer).await;
    authn.authenticate_token(TOKEN).await.unwrap();
    let body = server.last().1;
    assert_eq!(body["apiVersion"], "authentication.k8s.io/v1beta1");
    assert_eq!(
        body["spec"],
        json!({"token": TOKEN, "audiences": ["api", "other"]})
    );
}

#[tokio::test]
async fn answers_map_to_users_as_upstream() {
    let answer = Arc::new(Mutex::new(Value::Null));
    let (authn, _server) = setup("v1", &[], answer.clone()).await;
    let cases = [
        (
            json!({"authenticated": true, "user": {"username": "person@place.com", "uid": "abcd-1234",
                   "groups": ["stuff-dev", "main-eng"], "extra": {"foo": ["bar", "baz"]}}}),
            Some(UserInfo {
                name: "person@place.com".into(),
                uid: "abcd-1234".into(),
                groups: vec!["stuff-dev".into(), "main-eng".into()],
                extra: [("foo".to_owned(), vec!["bar".to_owned(), "baz".to_owned()])].into(),
            }),
        ),
        // Unauthenticated answers carry no user, whatever they say.
        (
            json!({"authenticated": false, "user": {"username": "garbage", "groups": ["not-actually-used"]}}),
            None,
        ),
        (json!({}), None),
    ];
    for (status, want) in cases {
        *answer.lock().unwrap() = status.clone();
        assert_eq!(
            authn.authenticate_token(TOKEN).await.unwrap(),
            want,
            "{status}"
        );
    }
    *answer.lock().unwrap() = json!({"authenticated": false, "error": "token expired"});
    assert_eq!(
        authn
            .authenticate_token(TOKEN)
            .await
            .unwrap_err()
            .to_string(),
        "token expired"
    );
    *answer.lock().unwrap() = json!({"authenticated": "yes"});
    assert_eq!(
        authn
            .authenticate_token(TOKEN)
            .await
            .unwrap_err()
            .to_string(),
        "json: cannot unmarshal string into Go struct field TokenReviewStatus.status.authenticated of type bool"
    );
}

#[tokio::test]
async fn audiences_are_checked_as_upstream() {
    let answer = Arc::new(Mutex::new(Value::Null));
    let (authn, _server) = setup("v1", &["api"], answer.clone()).await;
    let somebody = json!({"username": "somebody"});
    let cases = [
        // An audience-unaware backend: the implicit audiences are granted.
        (json!({"authenticated": true, "user": somebody}), true),
        (
            json!({"authenticated": true, "user": somebody, "audiences": ["api"]}),
            true,
        ),
        (
            json!({"authenticated": true, "user": somebody, "audiences": ["other"]}),
            false,
        ),
        // No shared audience: no user, and the webhook's error is not reported.
        (
            json!({"authenticated": false, "error": "x", "audiences": ["other"]}),
            false,
        ),
    ];
    for (status, ok) in cases {
        *answer.lock().unwrap() = status.clone();
        let user = authn.authenticate_token(TOKEN).await.unwrap();
        assert_eq!(user.is_some(), ok, "{status}");
    }
}

#[tokio::test]
async fn answers_are_cached_for_the_ttl_users_and_failures_alike() {
    let answer = Arc::new(Mutex::new(
        json!({"authenticated": true, "user": {"username": "alice"}}),
    ));
    let (authn, server) = setup("v1", &[], answer.clone()).await;
    let cached = CachedTokenAuthenticator::with_ttls(
        Arc::new(authn),
        Duration::from_millis(300),
        Duration::from_millis(300),
    );
    let run = |token: &'static str| {
        let cached = &cached;
        async move {
            let mut headers = HeaderMap::new();
            headers.insert(AUTHORIZATION, format!("Bearer {token}").parse().unwrap());
            let req = AuthRequest {
                path: "/",
                headers: &headers,
                peer_certificates: None,
                audiences: None,
            };
            cached
                .authenticate(&req)
                .await
                .map(|r| r.map(|r| (r.user.name, r.consumed_headers)))
        }
    };
    for _ in 0..3 {
        let (name, consumed) = run("a").await.unwrap().unwrap();
        assert_eq!((name.as_str(), consumed), ("alice", vec![AUTHORIZATION]));
    }
    assert_eq!(server.calls(), 1);
    *answer.lock().unwrap() = json!({"authenticated": false});
    assert!(run("b").await.unwrap().is_none());
    assert!(run("b").await.unwrap().is_none());
    assert_eq!(server.calls(), 1, "the failure is remembered");
    *answer.lock().unwrap() = json!({"authenticated": false, "error": "bad"});
    assert!(run("c").await.is_err());
    assert!(run("c").await.is_err());
    assert_eq!(server.calls(), 2, "errors are not");
    tokio::time::sleep(Duration::from_millis(350)).await;
    assert!(run("a").await.is_err(), "expired");
    // No bearer token: no opinion, no call.
    let headers = HeaderMap::new();
    let req = AuthRequest {
        path: "/",
        headers: &headers,
        peer_certificates: None,
        audiences: None,
    };
    assert!(cached.authenticate(&req).await.unwrap().is_none());
    assert_eq!(server.calls(), 1);
}

#[test]
fn versions_are_upstreams() {
    assert_eq!(
        TokenReviewVersion::parse("v2").unwrap_err().to_string(),
        "unsupported authentication webhook version \"v2\", supported versions are \"v1\", \"v1beta1\""
    );
}
