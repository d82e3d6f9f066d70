//! `with_request_deadline`: upstream's `WithRequestDeadline`
//! (endpoints/filters/request_deadline.go) and `WithTimeoutForNonLongRunningRequests`
//! (server/filters/timeout.go) in one filter.
//!
//! The deadline is the `timeout` query parameter (a Go duration) when it is positive and
//! shorter than the server's default, else the default. A malformed `timeout` is a 400
//! Status. Long-running requests (watch, proxy, exec, ...) get no deadline.
//!
//! At the deadline: if the handler has not produced a response, the client gets upstream's
//! 504. Upstream writes that one by JSON-encoding the bare Status (no kind/apiVersion) after
//! `WriteHeader(504)` without a Content-Type, so Go sniffs `text/plain; charset=utf-8`; this
//! filter writes the same bytes and headers, since clients (client-go picks its message by
//! content type) see the difference. If the response is already streaming, the body ends
//! with an error so the server aborts it, as upstream does with `http.ErrAbortHandler`. The
//! handler's future is dropped at the deadline (upstream lets its goroutine run on).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::header::{CONTENT_TYPE, HeaderValue};
use http::{Request, Response, StatusCode};
use http_body::{Body as HttpBody, Frame, SizeHint};
use kas_apimachinery::Status;
use kas_apimachinery::golang::time::parse_duration;
use kas_endpoints::{Body, BoxError, RequestInfo, body, write_status};
use tokio::time::{Instant, Sleep};

use crate::filter::{Inner, Next};
use crate::support::{go_quote, http_error, request_uri};

const INVALID_TIMEOUT_IN_URL: &str = "invalid timeout specified in the request URL";
const TIMEOUT_MESSAGE: &str = "request did not complete within the allotted timeout";
/// `json.NewEncoder(w).Encode(&apierrors.NewTimeoutError(TIMEOUT_MESSAGE, 0).ErrStatus)`.
const TIMEOUT_BODY: &str = "{\"metadata\":{},\"status\":\"Failure\",\"message\":\"Timeout: request did not \
                            complete within the allotted timeout\",\"reason\":\"Timeout\",\
                            \"details\":{},\"code\":504}\n";

/// When the request must be answered by; set for every request that has a deadline, so
/// handlers can bound their own work (upstream's context deadline).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestDeadline(pub Instant);

/// `default` is upstream's `--request-timeout` (60s by default): the deadline for requests
/// that ask for none or for a longer one.
pub fn with_request_deadline<S: Inner>(
    default: Duration,
    req: Request<Body>,
    next: Next<S>,
) -> impl Future<Output = Response<Body>> {
    let answer = match deadline(&req, default) {
        Deadline::LongRunning => Ok((next.run(req), None)),
        Deadline::At(deadline) => Ok((next.run(with_deadline(req, deadline)), Some(deadline))),
        Deadline::Refused(refused) => Err(refused),
    };
    async move {
        match answer {
            Ok((answer, None)) => answer.await,
            Ok((answer, Some(deadline))) => match tokio::time::timeout_at(deadline, answer).await {
                Ok(resp) => resp.map(|b| DeadlineBody::wrap(b, deadline)),
                Err(_elapsed) => timeout_response(),
            },
            Err(refused) => refused,
        }
    }
}

enum Deadline {
    At(Instant),
    LongRunning,
    /// The answer for a bad `timeout`, or for a chain without `RequestInfo`.
    Refused(Response<Body>),
}

fn deadline(req: &Request<Body>, default: Duration) -> Deadline {
    let Some(info) = req.extensions().get::<RequestInfo>() else {
        let msg = format!(
            "Error - no RequestInfo found in context, handler chain must be wrong: {}",
            go_quote(&request_uri(req))
        );
        tracing::error!("{msg}");
        return Deadline::Refused(http_error(StatusCode::INTERNAL_SERVER_ERROR, &msg));
    };
    if info.is_long_running() {
        return Deadline::LongRunning;
    }
    match request_timeout(req.uri(), default) {
        Ok(timeout) => Deadline::At(Instant::now() + timeout),
        Err(msg) => {
            tracing::error!("Error - {msg}: {}", go_quote(&request_uri(req)));
            Deadline::Refused(write_status(&Status::bad_request(&msg)))
        }
    }
}

fn with_deadline(mut req: Request<Body>, deadline: Instant) -> Request<Body> {
    req.extensions_mut().insert(RequestDeadline(deadline));
    req
}

/// The request's timeout: `default` unless `timeout` asks for a positive, shorter one. The
/// error is upstream's 400 message.
fn request_timeout(uri: &http::Uri, default: Duration) -> Result<Duration, String> {
    let value = form_urlencoded::parse(uri.query().unwrap_or("").as_bytes())
        .find(|(k, _)| k == "timeout")
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default();
    if value.is_empty() {
        return Ok(default);
    }
    match parse_duration(&value).map(|d| d.to_std()) {
        Err(err) => Err(format!("{INVALID_TIMEOUT_IN_URL} - {err}")),
        Ok(Some(d)) if !d.is_zero() && d < default => Ok(d),
        Ok(_) => Ok(default),
    }
}

fn timeout_response() -> Response<Body> {
    let mut resp = Response::new(body::full(TIMEOUT_BODY));
    *resp.status_mut() = StatusCode::GATEWAY_TIMEOUT;
    resp.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    resp
}

/// Ends a still-streaming body with an error once the deadline passes.
struct DeadlineBody {
    inner: Body,
    sleep: Pin<Box<Sleep>>,
    expired: bool,
}

impl DeadlineBody {
    fn wrap(inner: Body, deadline: Instant) -> Body {
        if inner.is_end_stream() {
            return inner;
        }
        body::boxed(DeadlineBody {
            inner,
            sleep: Box::pin(tokio::time::sleep_until(deadline)),
            expired: false,
        })
    }
}

impl HttpBody for DeadlineBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        if self.expired {
            return Poll::Ready(None);
        }
        if let Poll::Ready(frame) = Pin::new(&mut self.inner).poll_frame(cx) {
            return Poll::Ready(frame);
        }
        match self.sleep.as_mut().poll(cx) {
            Poll::Ready(()) => {
                self.expired = true;
                Poll::Ready(Some(Err(TIMEOUT_MESSAGE.into())))
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.expired || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::from_fn_with_state;
    use crate::support::test_util::body_string;
    use http_body_util::{BodyExt, StreamBody};
    use std::convert::Infallible;
    use tower::{Layer, ServiceExt};

    fn req(uri: &str, verb: &str) -> Request<Body> {
        let mut req = Request::get(uri).body(body::empty()).unwrap();
        req.extensions_mut().insert(RequestInfo {
            is_resource_request: true,
            verb: verb.into(),
            api_prefix: "api".into(),
            api_version: "v1".into(),
            resource: "pods".into(),
            ..Default::default()
        });
        req
    }

    /// Answers with the time left until the deadline, in whole milliseconds.
    fn deadline_echo() -> impl Inner {
        tower::service_fn(|req: Request<Body>| async move {
            let left = req
                .extensions()
                .get::<RequestDeadline>()
                .map(|d| {
                    d.0.saturating_duration_since(Instant::now())
                        .as_millis()
                        .to_string()
                })
                .unwrap_or_else(|| "none".into());
            Ok::<_, Infallible>(Response::new(body::full(left)))
        })
    }

    async fn left_ms(uri: &str, default: Duration) -> String {
        let svc = from_fn_with_state(default, with_request_deadline).layer(deadline_echo());
        body_string(svc.oneshot(req(uri, "list")).await.unwrap()).await
    }

    #[test]
    fn timeout_parameter_is_clamped() {
        let d = Duration::from_secs(60);
        let t = |q: &str| request_timeout(&format!("/api/v1/pods{q}").parse().unwrap(), d);
        assert_eq!(t(""), Ok(d));
        assert_eq!(t("?timeout="), Ok(d));
        assert_eq!(t("?timeout=30s"), Ok(Duration::from_secs(30)));
        assert_eq!(t("?timeout=1m0s"), Ok(d));
        assert_eq!(t("?timeout=2m"), Ok(d));
        assert_eq!(t("?timeout=0s"), Ok(d));
        assert_eq!(t("?timeout=-5s"), Ok(d));
        assert_eq!(
            t("?timeout=500ms&timeout=1s"),
            Ok(Duration::from_millis(500))
        );
        assert_eq!(
            t("?timeout=abc"),
            Err(
                "invalid timeout specified in the request URL - time: invalid duration \"abc\""
                    .into()
            )
        );
        assert_eq!(
            t("?timeout=5"),
            Err("invalid timeout specified in the request URL - time: missing unit in duration \"5\"".into())
        );
    }

    #[tokio::test]
    async fn sets_the_deadline_extension() {
        let left: u128 = left_ms("/api/v1/pods?timeout=10s", Duration::from_secs(60))
            .await
            .parse()
            .unwrap();
        assert!((9_000..=10_000).contains(&left), "{left}");
        let left: u128 = left_ms("/api/v1/pods?timeout=10m", Duration::from_secs(60))
            .await
            .parse()
            .unwrap();
        assert!((59_000..=60_000).contains(&left), "{left}");
    }

    #[tokio::test]
    async fn invalid_timeout_is_bad_request() {
        let svc = from_fn_with_state(Duration::from_secs(60), with_request_deadline)
            .layer(deadline_echo());
        let resp = svc
            .oneshot(req("/api/v1/pods?timeout=abc", "list"))
            .await
            .unwrap();
        let expected = write_status(&Status::bad_request(
            "invalid timeout specified in the request URL - time: invalid duration \"abc\"",
        ));
        assert_eq!(resp.status(), 400);
        assert_eq!(resp.headers(), expected.headers());
        assert_eq!(body_string(resp).await, body_string(expected).await);
    }

    #[tokio::test]
    async fn slow_handler_gets_upstream_504() {
        let svc = from_fn_with_state(Duration::from_millis(20), with_request_deadline).layer(
            tower::service_fn(|_req: Request<Body>| async {
                tokio::time::sleep(Duration::from_secs(5)).await;
                Ok::<_, Infallible>(Response::new(body::empty()))
            }),
        );
        let resp = svc.oneshot(req("/api/v1/pods", "list")).await.unwrap();
        assert_eq!(resp.status(), 504);
        assert_eq!(resp.headers()["content-type"], "text/plain; charset=utf-8");
        assert_eq!(
            body_string(resp).await,
            "{\"metadata\":{},\"status\":\"Failure\",\"message\":\"Timeout: request did not complete \
             within the allotted timeout\",\"reason\":\"Timeout\",\"details\":{},\"code\":504}\n"
        );
    }

    #[tokio::test]
    async fn user_timeout_shortens_the_deadline() {
        let svc = from_fn_with_state(Duration::from_secs(60), with_request_deadline).layer(
            tower::service_fn(|_req: Request<Body>| async {
                tokio::time::sleep(Duration::from_secs(5)).await;
                Ok::<_, Infallible>(Response::new(body::empty()))
            }),
        );
        let resp = svc
            .oneshot(req("/api/v1/pods?timeout=20ms", "list"))
            .await
            .unwrap();
        assert_eq!(resp.status(), 504);
    }

    #[tokio::test]
    async fn long_running_requests_have_no_deadline() {
        let svc = from_fn_with_state(Duration::from_millis(10), with_request_deadline).layer(
            tower::service_fn(|req: Request<Body>| async move {
                tokio::time::sleep(Duration::from_millis(50)).await;
                let has = req.extensions().get::<RequestDeadline>().is_some();
                Ok::<_, Infallible>(Response::new(body::full(has.to_string())))
            }),
        );
        let resp = svc
            .oneshot(req("/api/v1/pods?watch=true", "watch"))
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(body_string(resp).await, "false");
    }

    #[tokio::test]
    async fn streaming_past_the_deadline_aborts_the_body() {
        let svc = from_fn_with_state(Duration::from_millis(30), with_request_deadline).layer(
            tower::service_fn(|_req: Request<Body>| async {
                let stream = futures_util::stream::unfold(0u8, |n| async move {
                    if n > 0 {
                        tokio::time::sleep(Duration::from_secs(5)).await;
                    }
                    Some((
                        Ok::<_, BoxError>(Frame::data(Bytes::from_static(b"chunk"))),
                        n + 1,
                    ))
                });
                Ok::<_, Infallible>(Response::new(body::boxed(StreamBody::new(stream))))
            }),
        );
        let resp = svc.oneshot(req("/api/v1/pods", "list")).await.unwrap();
        assert_eq!(resp.status(), 200);
        let mut b = resp.into_body();
        assert!(b.frame().await.unwrap().unwrap().is_data());
        let err = b.frame().await.unwrap().unwrap_err();
        assert_eq!(err.to_string(), TIMEOUT_MESSAGE);
        assert!(b.frame().await.is_none());
    }

    #[tokio::test]
    async fn missing_request_info_is_500() {
        let svc = from_fn_with_state(Duration::from_secs(1), with_request_deadline)
            .layer(deadline_echo());
        let resp = svc
            .oneshot(Request::get("/x").body(body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(resp.status(), 500);
        assert_eq!(
            body_string(resp).await,
            "Error - no RequestInfo found in context, handler chain must be wrong: \"/x\"\n"
        );
    }
}
