use std::sync::Arc;
use std::sync::atomic::{AtomicU16, Ordering};

use serde_json::json;

use super::*;
use crate::testing::{self, Answer};

/// Upstream's tests' backoff: 5 ms, 5 tries.
pub const TEST_BACKOFF: Backoff = Backoff {
    duration: Duration::from_millis(5),
    factor: 1.5,
    jitter: 0.2,
    steps: 5,
};

async fn webhook(
    handler: impl Fn(&Value) -> Answer + Send + Sync + 'static,
) -> (GenericWebhook, testing::Server) {
    let pki = testing::pki();
    let server = testing::serve(&pki, handler).await;
    let dir = tempfile::tempdir().unwrap();
    let path = testing::kubeconfig(dir.path(), &pki, &server.url, "s3cret");
    let config = crate::kubeconfig::load(&path).unwrap();
    (GenericWebhook::new(config, TEST_BACKOFF).unwrap(), server)
}

#[tokio::test]
async fn retries_follow_default_should_retry() {
    let code = Arc::new(AtomicU16::new(500));
    let answer = code.clone();
    let (hook, server) = webhook(move |_| {
        (
            answer.load(Ordering::SeqCst),
            "text/plain; charset=utf-8",
            "HTTP Error\n".to_owned(),
        )
    })
    .await;
    // (status, tries, error)
    let cases = [
        (
            500,
            5,
            "an error on the server (\"HTTP Error\") has prevented the request from succeeding",
        ),
        (
            429,
            5,
            "the server has received too many requests and has asked us to try again later",
        ),
        (
            504,
            5,
            "the server was unable to return a response in the time allotted, but may still be processing the request",
        ),
        (
            503,
            1,
            "the server is currently unable to handle the request",
        ),
        (404, 1, "the server could not find the requested resource"),
        (403, 1, "HTTP Error"),
        (
            401,
            1,
            "the server has asked for the client to provide credentials",
        ),
    ];
    for (status, tries, message) in cases {
        code.store(status, Ordering::SeqCst);
        let err = hook.post(b"{}").await.unwrap_err();
        assert_eq!(err.to_string(), message, "{status}");
        assert_eq!(server.calls(), tries, "{status}");
    }
    let (auth, body) = server.last();
    assert_eq!(auth, "Bearer s3cret");
    assert_eq!(body, json!({}));
}

#[tokio::test]
async fn answers_are_read_as_client_go_reads_them() {
    let (hook, server) = webhook(|body| match body["case"].as_str().unwrap_or_default() {
        "status" => testing::json(
            500,
            json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": "webhook is broken", "reason": "BadRequest", "code": 500}),
        ),
        "json-error" => testing::json(502, json!({"message": "no"})),
        "plain" => (200, "text/plain", "ok".to_owned()),
        "empty" => (200, "application/json", String::new()),
        "garbage" => (200, "application/json", "{nope".to_owned()),
        _ => testing::json(201, json!({"apiVersion": "x/v1", "status": {"allowed": true}})),
    })
    .await;
    let post = |case: &str| hook.post(format!("{{\"case\":\"{case}\"}}").into_bytes().leak());
    // A Failure Status is the error, with its own reason: BadRequest is not retried.
    assert_eq!(
        post("status").await.unwrap_err().to_string(),
        "webhook is broken"
    );
    assert_eq!(server.calls(), 1);
    assert_eq!(
        post("json-error").await.unwrap_err().to_string(),
        "an error on the server (\"unknown\") has prevented the request from succeeding"
    );
    assert_eq!(server.calls(), 5);
    assert_eq!(
        post("plain").await.unwrap_err().to_string(),
        "serializer for text/plain doesn't exist"
    );
    assert_eq!(
        post("empty").await.unwrap_err().to_string(),
        "0-length response with status code: 200 and content type: application/json"
    );
    assert_eq!(
        post("garbage").await.unwrap_err().to_string(),
        "couldn't get version/kind; json parse error: invalid character 'n' looking for beginning of object key string"
    );
    assert_eq!(post("ok").await.unwrap()["status"]["allowed"], json!(true));
}

#[tokio::test]
async fn a_post_ignoring_the_body_reads_only_the_status() {
    let (hook, server) = webhook(|body| match body["case"].as_str().unwrap_or_default() {
        "empty" => (200, "application/json", String::new()),
        "plain" => (204, "text/plain", "ok".to_owned()),
        _ => (503, "text/plain", "down".to_owned()),
    })
    .await;
    hook.post_ignoring_body(br#"{"case":"empty"}"#)
        .await
        .unwrap();
    hook.post_ignoring_body(br#"{"case":"plain"}"#)
        .await
        .unwrap();
    assert_eq!(server.calls(), 2);
    let err = hook.post_ignoring_body(b"{}").await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "the server is currently unable to handle the request"
    );
    assert_eq!(server.calls(), 1, "503 is not retried by default");
    let hook = hook.with_should_retry(|_| true);
    hook.post_ignoring_body(b"{}").await.unwrap_err();
    assert_eq!(server.calls(), 5, "a replaced ShouldRetry is used");
}

#[tokio::test]
async fn a_username_and_password_are_sent_as_basic_auth() {
    let pki = testing::pki();
    let server = testing::serve(&pki, |_| testing::json(200, json!({"status": {}}))).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ca.pem"), &pki.ca_pem).unwrap();
    let path = dir.path().join("config");
    let text = format!(
        "clusters:\n- cluster:\n    server: {}\n    certificate-authority: ca.pem\nusers:\n- user:\n    username: admin\n    password: pw\n",
        server.url
    );
    std::fs::write(&path, text).unwrap();
    let hook = GenericWebhook::new(crate::kubeconfig::load(&path).unwrap(), TEST_BACKOFF).unwrap();
    hook.post(b"{\"a\":1}").await.unwrap();
    assert_eq!(
        server.last(),
        ("Basic YWRtaW46cHc=".to_owned(), json!({"a": 1}))
    );
}

#[tokio::test]
async fn a_refused_connection_is_not_retried() {
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = closed.local_addr().unwrap();
    drop(closed);
    let config = WebhookConfig {
        url: format!("https://{addr}/hook"),
        tls: crate::TlsConfig::default(),
        token: None,
        basic_auth: None,
        timeout: Duration::from_secs(5),
    };
    let hook = GenericWebhook::new(config, TEST_BACKOFF).unwrap();
    let err = hook.post(b"{}").await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("Post \"https://{addr}/hook\": dial tcp {addr}: connect: connection refused")
    );
    assert!(!default_should_retry(&err));
    assert!(default_should_retry(&Error::Request(
        "Post \"https://h/\": read tcp 1.2.3.4:5->6.7.8.9:443: read: connection reset by peer"
            .to_owned()
    )));
}

#[test]
fn the_default_backoff_grows_by_half_with_jitter() {
    let mut backoff = Backoff::default_retry();
    let waits: Vec<Duration> = (0..4).map(|_| backoff.step()).collect();
    for (wait, base) in waits.iter().zip([500.0, 750.0, 1125.0, 1687.5]) {
        let ms = wait.as_secs_f64() * 1000.0;
        assert!(ms >= base && ms <= base * 1.2, "{ms} vs {base}");
    }
    assert_eq!(backoff.steps, 1);
}
