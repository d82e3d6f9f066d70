//! WATCH: the storage's events streamed in the negotiated form (see
//! `responsewriters::watch`), with bookmarks when asked and upstream's timeout.

use crate::handlers::RequestScope;
use std::time::Duration;

use crate::negotiation::MediaType;
use crate::{Body, body};
use bytes::Bytes;
use futures_util::StreamExt;
use http::{Response, StatusCode};
use http_body::Frame;
use http_body_util::StreamBody;

use crate::handlers::selection;
use crate::responsewriters::partial::{self, Partial};
use crate::responsewriters::protobuf as proto;
use crate::responsewriters::watch;
use kas_registry::error::Result;
use kas_registry::rest::options::ListOptions;

/// Upstream's `--min-request-timeout` default; a watch without `timeoutSeconds` lasts
/// between it and twice it.
const MIN_REQUEST_TIMEOUT: Duration = Duration::from_secs(1800);

pub async fn watch(scope: &RequestScope<'_>, opts: &ListOptions) -> Result<Response<Body>> {
    let (resource, info, query, headers) = (scope.resource, scope.info, scope.query, scope.headers);
    let store = &resource.store;
    let (out, as_table) = if opts.is_list_watch() {
        (watch::initial_events::negotiate(headers, query)?, false)
    } else {
        crate::responsewriters::negotiated::negotiate(headers, query)?
    };
    let protobuf = out.accepted == MediaType::Protobuf;
    let as_partial = Partial::from_options(&out);
    let include = if as_table {
        crate::handlers::options::include_object(query)?
    } else {
        crate::responsewriters::table::IncludeObject::Metadata
    };
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
        crate::responsewriters::table::table(
            &table_store,
            // Bytes the storage encoded always decode; Null would render an empty row.
            std::iter::once(&o.value().unwrap_or_default()),
            meta,
            include,
            with_columns,
        )
    };
    if protobuf {
        let resource = resource.clone();
        let frames = events
            .filter_map(move |event| {
                std::future::ready(watch::protobuf_frame(
                    &resource.store,
                    &resource.watch_frames,
                    event,
                    bookmarks,
                    as_partial,
                ))
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
            std::future::ready(watch::json_line(
                &store,
                event,
                bookmarks,
                as_partial,
                &mut render,
            ))
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
