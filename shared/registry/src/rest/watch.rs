//! WATCH: the storage's events as JSON lines, each object's cached bytes spliced, with
//! bookmarks when asked and upstream's timeout. Streaming lists (`sendInitialEvents`) end
//! their initial events with the annotated bookmark of [`list`].

mod frames;
mod list;

pub use frames::FrameMemo;

use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use http::{Response, StatusCode};
use http_body::Frame;
use http_body_util::StreamBody;
use kas_apimachinery::{Status, StatusReason};
use kas_endpoints::negotiation::MediaType;
use kas_endpoints::{Body, RequestInfo, body};
use kas_storage::{REQUEST_WATCH_PROGRESS_DISABLED, WatchEvent};

use crate::error::Result;
use crate::rest::options::ListOptions;
use crate::rest::partial::{self, Partial};
use crate::rest::{encode, proto, selection};
use crate::store::Store;

/// Upstream's `--min-request-timeout` default; a watch without `timeoutSeconds` lasts
/// between it and twice it.
const MIN_REQUEST_TIMEOUT: Duration = Duration::from_secs(1800);

pub async fn watch(
    store: &Store,
    info: &RequestInfo,
    opts: &ListOptions,
    query: Option<&str>,
    headers: &http::HeaderMap,
) -> Result<Response<Body>> {
    let (out, as_table) = if opts.is_list_watch() {
        (list::negotiate(headers, query)?, false)
    } else {
        crate::rest::read::negotiate(headers, query)?
    };
    let protobuf = out.accepted == MediaType::Protobuf;
    let as_partial = Partial::from_options(&out);
    let include = crate::rest::table::IncludeObject::from_query(query);
    let predicate = selection::predicate(store, opts)?;
    let name = (!info.name.is_empty()).then_some(info.name.as_str());
    let timeout = watch_timeout(opts.timeout_seconds);
    let deadline = tokio::time::Instant::now() + timeout;
    let events = store
        .watch(&info.namespace, name, opts, predicate, deadline)
        .await?;
    // A timeout that has already expired (a negative timeoutSeconds) sends nothing:
    // upstream's timer fires before the first event.
    let limit = if timeout.is_zero() {
        0
    } else {
        partial::watch_event_limit(as_partial)
    };
    let events = events.take(limit);
    let descriptor = store.descriptor;
    let store = store.clone();
    let bookmarks = opts.allow_watch_bookmarks;
    let table_store = store.clone();
    let mut first = true;
    // With a Table, each event's object is a one-row Table; only the first carries the
    // column definitions, as upstream's watch does.
    let mut render = move |o: &kas_storage::ObjectRef| -> Bytes {
        if !as_table {
            return partial::watch_object(descriptor, as_partial, o);
        }
        let meta = serde_json::json!({"resourceVersion": o.resource_version.to_string()});
        let with_columns = std::mem::take(&mut first);
        crate::rest::table::table(
            &table_store,
            // Bytes the storage encoded always decode; Null would render an empty row.
            std::iter::once(&o.value().unwrap_or_default()),
            meta,
            include,
            with_columns,
        )
    };
    if protobuf {
        let frames = events
            .filter_map(move |event| {
                std::future::ready(protobuf_frame(&store, event, bookmarks, as_partial))
            })
            .take_until(tokio::time::sleep_until(deadline))
            .map(|frame: Bytes| Ok::<_, std::convert::Infallible>(Frame::data(frame)));
        let mut resp = Response::new(body::boxed(StreamBody::new(frames)));
        resp.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static(proto::WATCH_MEDIA_TYPE),
        );
        return Ok(resp);
    }
    let lines = events
        .filter_map(move |event| {
            std::future::ready(json_line(&store, event, bookmarks, as_partial, &mut render))
        })
        .take_until(tokio::time::sleep_until(deadline))
        .map(|line: Bytes| Ok::<_, std::convert::Infallible>(Frame::data(line)));
    let mut resp = Response::new(body::boxed(StreamBody::new(lines)));
    *resp.status_mut() = StatusCode::OK;
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    Ok(resp)
}

/// One event as a JSON line, its object rendered by `render`.
fn json_line(
    store: &Store,
    event: WatchEvent,
    bookmarks: bool,
    target: Option<Partial>,
    render: &mut impl FnMut(&kas_storage::ObjectRef) -> Bytes,
) -> Option<Bytes> {
    let d = store.descriptor;
    match event {
        WatchEvent::Added(o) => Some(encode::watch_event("ADDED", &render(&o))),
        WatchEvent::Modified(o) => Some(encode::watch_event("MODIFIED", &render(&o))),
        WatchEvent::Deleted(o) => Some(encode::watch_event("DELETED", &render(&o))),
        WatchEvent::Bookmark(rv) => bookmarks.then(|| partial::bookmark(d, target, rv)),
        WatchEvent::InitialEventsEnd(rv) => bookmarks.then(|| {
            list::bookmark_json(d, target, rv)
                .unwrap_or_else(|e| encode::watch_event("ERROR", &e.to_status().to_json()))
        }),
        WatchEvent::Error(e) => Some(encode::watch_event(
            "ERROR",
            &error_status(store, e).to_json(),
        )),
    }
}

/// One event as a length-prefixed protobuf `WatchEvent` around the enveloped object.
fn protobuf_frame(
    store: &Store,
    event: WatchEvent,
    bookmarks: bool,
    target: Option<Partial>,
) -> Option<Bytes> {
    let d = store.descriptor;
    let object = |kind: &'static str, o: &kas_storage::ObjectRef| {
        store.watch_frames.get_or_encode(o, kind, target, || {
            match partial::watch_object_protobuf(d, target, o) {
                Ok(bytes) => proto::watch_event(kind, &bytes),
                Err(e) => proto::watch_event("ERROR", &proto::status(&e.to_status())),
            }
        })
    };
    match event {
        WatchEvent::Added(o) => Some(object("ADDED", &o)),
        WatchEvent::Modified(o) => Some(object("MODIFIED", &o)),
        WatchEvent::Deleted(o) => Some(object("DELETED", &o)),
        WatchEvent::Bookmark(rv) if bookmarks => partial::bookmark_protobuf(d, target, rv).ok(),
        WatchEvent::Bookmark(_) => None,
        WatchEvent::InitialEventsEnd(rv) if bookmarks => Some(
            list::bookmark_protobuf(d, target, rv)
                .unwrap_or_else(|e| proto::watch_event("ERROR", &proto::status(&e.to_status()))),
        ),
        WatchEvent::InitialEventsEnd(_) => None,
        WatchEvent::Error(e) => Some(proto::watch_event(
            "ERROR",
            &proto::status(&error_status(store, e)),
        )),
    }
}

/// A watch's ERROR event. Upstream's cacher refuses a streaming list it cannot serve with
/// a bare internal error, not wrapped as "Internal error occurred".
fn error_status(store: &Store, e: kas_storage::Error) -> Status {
    match e {
        kas_storage::Error::Internal {
            message,
            source: None,
        } if message == REQUEST_WATCH_PROGRESS_DISABLED => {
            Status::failure(500, StatusReason::InternalError, message)
        }
        e => store.storage_error(e, "").to_status(),
    }
}

/// Upstream's `ListResource`: `timeoutSeconds` as given, a negative one already expired
/// (zero here); unset or 0, between `--min-request-timeout` and twice it.
fn watch_timeout(timeout_seconds: Option<i64>) -> Duration {
    match timeout_seconds {
        None | Some(0) => {
            let jitter = uuid::Uuid::new_v4().as_u128() % 1800;
            MIN_REQUEST_TIMEOUT + Duration::from_secs(jitter as u64)
        }
        Some(s) => Duration::from_secs(s.max(0).unsigned_abs()),
    }
}
