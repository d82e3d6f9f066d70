//! Watch answers: a chunked stream of JSON events, one per line (`ADDED`, `MODIFIED`,
//! `DELETED`, or one `ERROR` carrying a `Status`), ending at `timeoutSeconds`, or when the
//! client falls so far behind that events were dropped (it then re-lists, as after a 410).

use std::collections::VecDeque;
use std::convert::Infallible;
use std::time::Duration;

use bytes::Bytes;
use http::{Response, StatusCode, header};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use kas_apimachinery::status::Status;
use serde_json::{Value, json};
use tokio::sync::broadcast;

use super::reply::Body;
use super::store::{Event, WatchStart};

fn line(kind: &str, object: &Value) -> Bytes {
    let mut bytes =
        serde_json::to_vec(&json!({"type": kind, "object": object})).unwrap_or_default();
    bytes.push(b'\n');
    Bytes::from(bytes)
}

struct Stream<F> {
    initial: VecDeque<Event>,
    live: broadcast::Receiver<Event>,
    keep: F,
    deadline: Option<tokio::time::Instant>,
}

impl<F: Fn(&Event) -> bool> Stream<F> {
    /// The next event to send; `None` ends the watch.
    async fn next(&mut self) -> Option<Event> {
        loop {
            let event = match self.initial.pop_front() {
                Some(e) => e,
                None => {
                    let recv = self.live.recv();
                    let received = match self.deadline {
                        Some(at) => tokio::time::timeout_at(at, recv).await.ok()?,
                        None => recv.await,
                    };
                    received.ok()?
                }
            };
            if (self.keep)(&event) {
                return Some(event);
            }
        }
    }
}

fn streaming(body: Body) -> Response<Body> {
    let mut resp = Response::new(body);
    *resp.status_mut() = StatusCode::OK;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    resp
}

/// The watch's answer: `start`'s events, then live ones, those `keep` accepts.
pub fn respond(
    start: WatchStart,
    keep: impl Fn(&Event) -> bool + Send + 'static,
    timeout: Option<Duration>,
) -> Response<Body> {
    let stream = Stream {
        initial: start.initial.into(),
        live: start.live,
        keep,
        deadline: timeout.map(|t| tokio::time::Instant::now() + t),
    };
    let frames = futures_util::stream::unfold(stream, |mut s| async move {
        let event = s.next().await?;
        let frame = Frame::data(line(event.kind.as_str(), &event.object));
        Some((Ok::<_, Infallible>(frame), s))
    });
    streaming(StreamBody::new(frames).boxed_unsync())
}

/// A watch that fails at once: one `ERROR` event with `status`, as upstream's watch cache
/// answers a resourceVersion older than its history.
pub fn error(status: &Status) -> Response<Body> {
    let object = serde_json::to_value(status).unwrap_or(Value::Null);
    streaming(super::reply::full(line("ERROR", &object)))
}
