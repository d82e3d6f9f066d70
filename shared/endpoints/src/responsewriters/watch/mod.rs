//! Watch events as they go on the wire, after upstream's `WatchServer`: JSON lines that
//! splice each object's cached bytes, or length-prefixed protobuf `WatchEvent`s encoded
//! once for all of a resource's watchers ([`FrameMemo`]); bookmarks when asked, the
//! annotated bookmark that ends a streaming list's initial events ([`initial_events`]),
//! and ERROR events as `Status`es.

mod frames;
pub mod initial_events;

pub use frames::FrameMemo;

use bytes::Bytes;
use kas_apimachinery::{Status, StatusReason};
use kas_registry::store::Store;
use kas_storage::{REQUEST_WATCH_PROGRESS_DISABLED, WatchEvent};

use crate::responsewriters::encode;
use crate::responsewriters::partial::{self, Partial};
use crate::responsewriters::protobuf as proto;

/// One event as a JSON line, its object rendered by `render`.
pub(crate) fn json_line(
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
            initial_events::bookmark_json(d, target, rv)
                .unwrap_or_else(|e| encode::watch_event("ERROR", &e.to_status().to_json()))
        }),
        WatchEvent::Error(e) => Some(encode::watch_event(
            "ERROR",
            &error_status(store, e).to_json(),
        )),
    }
}

/// One event as a length-prefixed protobuf `WatchEvent` around the enveloped object.
pub(crate) fn protobuf_frame(
    store: &Store,
    frames: &FrameMemo,
    event: WatchEvent,
    bookmarks: bool,
    target: Option<Partial>,
) -> Option<Bytes> {
    let d = store.descriptor;
    let object = |kind: &'static str, o: &kas_storage::ObjectRef| {
        frames.get_or_encode(o, kind, target, || {
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
            initial_events::bookmark_protobuf(d, target, rv)
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
