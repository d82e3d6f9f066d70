//! Upstream's `GenericWebhook` (`k8s.io/apiserver/pkg/util/webhook`): a JSON object posted
//! to the configured URL, the answer read as client-go's REST client reads it (a `Status`
//! or an unstructured error for anything but 200-206), retried with exponential backoff
//! while the webhook's `ShouldRetry` ([`default_should_retry`] unless replaced) says so.

use std::future::Future;
use std::time::Duration;

use kas_apimachinery::Status;
use kas_apimachinery::golang::base64::STD_ENCODING;
use kas_apimachinery::status::StatusReason;
use serde_json::Value;

use crate::kubeconfig::{BearerToken, WebhookConfig};
use crate::{Client, Error, Response, Result};

/// Upstream's `wait.Backoff` as webhooks use it (no cap).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backoff {
    pub duration: Duration,
    pub factor: f64,
    pub jitter: f64,
    pub steps: u32,
}

impl Backoff {
    /// Upstream's `DefaultRetryBackoffWithInitialDelay(delay)`: ×1.5, 20 % jitter, 5 tries.
    pub fn with_initial_delay(delay: Duration) -> Backoff {
        Backoff {
            duration: delay,
            factor: 1.5,
            jitter: 0.2,
            steps: 5,
        }
    }

    /// The token authenticator's and authorizer's `DefaultRetryBackoff()` (and
    /// kube-apiserver's `DefaultAuthWebhookRetryBackoff`): from 500 ms.
    pub fn default_retry() -> Backoff {
        Backoff::with_initial_delay(Duration::from_millis(500))
    }

    /// `Backoff.Step()`: the wait before the next try, jittered; advances the backoff.
    fn step(&mut self) -> Duration {
        self.steps = self.steps.saturating_sub(1);
        let wait = self.duration;
        if self.factor != 0.0 {
            self.duration = self.duration.mul_f64(self.factor);
        }
        if self.jitter > 0.0 {
            return wait + wait.mul_f64(random_unit() * self.jitter);
        }
        wait
    }
}

/// A number in [0, 1) that varies between calls (jitter needs no better randomness).
fn random_unit() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos(),
    );
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// Upstream's `DefaultShouldRetry`: a reset or lost connection, and answers that are
/// internal errors (500, and other 5xx but 503), timeouts (504), 429s, or that carry a
/// `Retry-After`.
pub fn default_should_retry(err: &Error) -> bool {
    match err {
        Error::Request(msg) => {
            msg.contains("connection reset by peer")
                || msg.contains("http2: client connection lost")
        }
        Error::Status(status) => {
            let reason = status.reason.unwrap_or(StatusReason::Unknown);
            let known = reason != StatusReason::Unknown;
            let code = status.code;
            matches!(
                reason,
                StatusReason::InternalError | StatusReason::Timeout | StatusReason::TooManyRequests
            ) || (!known && matches!(code, 500 | 504 | 429))
                || status.details.as_ref().is_some_and(|d| {
                    reason == StatusReason::ServerTimeout || d.retry_after_seconds.unwrap_or(0) > 0
                })
        }
        _ => false,
    }
}

/// Upstream's `WithExponentialBackoff`: calls `call` until it succeeds, fails with an
/// error `should_retry` refuses, or `backoff.steps` tries were made; the last error is
/// returned.
pub async fn with_exponential_backoff<T, F, Fut>(
    mut backoff: Backoff,
    mut call: F,
    should_retry: fn(&Error) -> bool,
) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T>>,
{
    loop {
        let err = match call().await {
            Ok(answer) => return Ok(answer),
            Err(err) => err,
        };
        if !should_retry(&err) || backoff.steps <= 1 {
            return Err(err);
        }
        tokio::time::sleep(backoff.step()).await;
    }
}

pub struct GenericWebhook {
    client: Client,
    url: String,
    token: Option<BearerToken>,
    /// The `Authorization` value of a user's `username`/`password`.
    basic_auth: Option<http::HeaderValue>,
    retry_backoff: Backoff,
    should_retry: fn(&Error) -> bool,
}

impl GenericWebhook {
    /// Upstream's `NewGenericWebhook` over a loaded kubeconfig.
    pub fn new(config: WebhookConfig, retry_backoff: Backoff) -> Result<GenericWebhook> {
        let basic_auth = match &config.basic_auth {
            Some((user, password)) => {
                let encoded =
                    STD_ENCODING.encode_to_string(format!("{user}:{password}").as_bytes());
                let value = http::HeaderValue::from_str(&format!("Basic {encoded}"))
                    .map_err(|e| Error::Config(e.to_string()))?;
                Some(value)
            }
            None => None,
        };
        Ok(GenericWebhook {
            client: Client::new(&config.tls, config.timeout)?,
            url: config.url,
            token: config.token,
            basic_auth,
            retry_backoff,
            should_retry: default_should_retry,
        })
    }

    /// Replaces `ShouldRetry` (the audit backend retries every error).
    pub fn with_should_retry(mut self, should_retry: fn(&Error) -> bool) -> GenericWebhook {
        self.should_retry = should_retry;
        self
    }

    /// Posts `body` (JSON) and decodes the JSON object answered, retrying as upstream.
    pub async fn post(&self, body: &[u8]) -> Result<Value> {
        let call = || async { read_answer(&self.post_once(body).await?) };
        with_exponential_backoff(self.retry_backoff, call, self.should_retry).await
    }

    /// Posts `body` (JSON), retrying as upstream, and reads only whether it succeeded
    /// (client-go's `Do(ctx).Error()`): an answer of 200-206 is not decoded.
    pub async fn post_ignoring_body(&self, body: &[u8]) -> Result<()> {
        let call = || async { check_status(&self.post_once(body).await?) };
        with_exponential_backoff(self.retry_backoff, call, self.should_retry).await
    }

    async fn post_once(&self, body: &[u8]) -> Result<Response> {
        match &self.basic_auth {
            Some(basic) => {
                let json = http::HeaderValue::from_static("application/json");
                let mut headers = http::HeaderMap::new();
                headers.insert(http::header::CONTENT_TYPE, json.clone());
                headers.insert(http::header::ACCEPT, json);
                headers.insert(http::header::AUTHORIZATION, basic.clone());
                let body = bytes::Bytes::copy_from_slice(body);
                self.client
                    .send(http::Method::POST, &self.url, headers, body)
                    .await
            }
            None => {
                let token = self.token.as_ref().map(BearerToken::current);
                self.client
                    .post_json(&self.url, body.to_vec(), token.as_deref())
                    .await
            }
        }
    }
}

/// An answer's `Content-Type` (`application/json` when absent) and its media type.
fn content_type(answer: &Response) -> (String, String) {
    let content_type = answer
        .headers
        .get(http::header::CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "application/json".to_owned());
    let media_type = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    (content_type, media_type)
}

/// client-go's `transformResponse` and `Result.Into` for a JSON-only client.
pub fn read_answer(answer: &Response) -> Result<Value> {
    check_status(answer)?;
    let code = answer.status.as_u16();
    let (content_type, media_type) = content_type(answer);
    if media_type != "application/json" {
        return Err(Error::Decode(format!(
            "serializer for {content_type} doesn't exist"
        )));
    }
    if answer.body.is_empty() {
        return Err(Error::Decode(format!(
            "0-length response with status code: {code} and content type: {content_type}"
        )));
    }
    let decoded = kas_apimachinery::runtime::serializer::decode_json(&answer.body)
        .map_err(|e| Error::Decode(e.to_string()))?;
    Ok(decoded.object)
}

/// client-go's `transformResponse` and `Result.Error` for a JSON-only client: an answer
/// outside 200-206 is its `Failure` `Status`, else an unstructured error of its code.
pub fn check_status(answer: &Response) -> Result<()> {
    let code = answer.status.as_u16();
    if (200..=206).contains(&code) {
        return Ok(());
    }
    let (_, media_type) = content_type(answer);
    if media_type == "application/json"
        && let Some(status) = failure_status(&answer.body)
    {
        return Err(Error::Status(Box::new(status)));
    }
    let message = match media_type.starts_with("text/") {
        true => String::from_utf8_lossy(&answer.body).trim().to_owned(),
        false => "unknown".to_owned(),
    };
    let mut status = Status::generic_server_response(code, &message);
    let retry_after = answer
        .headers
        .get(http::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<i32>().ok());
    if let Some(details) = status.details.as_mut() {
        details.retry_after_seconds = retry_after;
    }
    Err(Error::Status(Box::new(status)))
}

/// An error answer whose body is a `Status` with `status: Failure` (`Result.Error`).
fn failure_status(body: &[u8]) -> Option<Status> {
    let value: Value = serde_json::from_slice(body).ok()?;
    if value.get("kind")?.as_str()? != "Status" {
        return None;
    }
    let status: Status = serde_json::from_value(value).ok()?;
    (status.status.as_deref() == Some("Failure")).then_some(status)
}

#[cfg(test)]
pub(crate) mod tests;
