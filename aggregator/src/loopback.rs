//! Requests this role makes to core-apiserver for itself, through its delegate as
//! `system:apiserver` in `system:masters` (upstream's loopback client and user), so core
//! validates and admits them as any write.

use http::{Method, Request, StatusCode};
use kas_auth::UserInfo;
use kas_delegate::Delegate;
use kas_endpoints::body;
use serde_json::Value;
use tower::ServiceExt;

/// Upstream's loopback user agent, whose first part makes `kube-apiserver` the field
/// manager of what the controllers write.
pub fn user_agent() -> String {
    format!(
        "kube-apiserver/{} ({}/{}) kubernetes/$Format",
        kas_server::version::GIT_VERSION,
        std::env::consts::OS,
        go_arch()
    )
}

fn go_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    }
}

/// One request with `object` as its JSON body; the status and the JSON answer (null when
/// the answer is not JSON).
pub async fn send(
    delegate: &Delegate,
    user_agent: &str,
    method: Method,
    path: &str,
    object: Option<Value>,
) -> Result<(StatusCode, Value), String> {
    let payload = object.map(|o| o.to_string()).unwrap_or_default();
    let mut req = Request::builder()
        .method(method)
        .uri(path)
        .header(http::header::ACCEPT, "application/json")
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::USER_AGENT, user_agent)
        .body(body::full(payload))
        .map_err(|e| e.to_string())?;
    req.extensions_mut().insert(UserInfo {
        name: "system:apiserver".to_owned(),
        uid: String::new(),
        groups: vec![
            "system:authenticated".to_owned(),
            "system:masters".to_owned(),
        ],
        extra: Default::default(),
    });
    let resp = match delegate.clone().oneshot(req).await {
        Ok(resp) => resp,
        Err(never) => match never {},
    };
    let code = resp.status();
    let bytes = http_body_util::BodyExt::collect(resp.into_body())
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    Ok((code, serde_json::from_slice(&bytes).unwrap_or(Value::Null)))
}

/// `"<code>: <message>"` of a failed answer.
pub fn status_message(code: StatusCode, answer: &Value) -> String {
    match answer.get("message").and_then(Value::as_str) {
        Some(message) => format!("{}: {message}", code.as_u16()),
        None => format!("{}", code.as_u16()),
    }
}
