//! The protobuf frames of recent watch events, shared by every watcher of a resource
//! (upstream's `CachingObject`, which its cacher wraps around each dispatched event so
//! that the object is encoded once per format, not once per watcher). A JSON event
//! splices the object's stored bytes and needs no memo; a protobuf one is encoded from
//! them, which for a thousand watchers of one resource was a thousand encodings of
//! every write.
//!
//! An event's bytes are fixed by the object's key and resourceVersion, its type and the
//! transform asked for, so those are the memo's key: watchers fed by the watch cache, by
//! etcd or through a conversion all share it. The memo holds the last few frames only;
//! watchers handle an event within moments of each other, and one that lags further just
//! encodes again.

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use bytes::Bytes;
use kas_storage::ObjectRef;

use crate::responsewriters::partial::Partial;

/// Frames kept: events of the last moments (a third of a second at 100 writes/s).
const CAPACITY: usize = 32;

#[derive(Default)]
pub struct FrameMemo {
    recent: Mutex<VecDeque<Entry>>,
}

struct Entry {
    key: String,
    resource_version: u64,
    event_type: &'static str,
    target: Option<Partial>,
    frame: Bytes,
}

impl Entry {
    fn is(&self, o: &ObjectRef, event_type: &str, target: Option<Partial>) -> bool {
        self.resource_version == o.resource_version
            && self.event_type == event_type
            && self.target == target
            && self.key == o.key
    }
}

impl FrameMemo {
    /// The frame of `event_type` for `object` under `target`: the one a watcher already
    /// encoded, or `encode`'s, kept for the next watcher.
    pub fn get_or_encode(
        &self,
        object: &ObjectRef,
        event_type: &'static str,
        target: Option<Partial>,
        encode: impl FnOnce() -> Bytes,
    ) -> Bytes {
        let found = self
            .lock()
            .iter()
            .rev()
            .find(|e| e.is(object, event_type, target))
            .map(|e| e.frame.clone());
        if let Some(frame) = found {
            return frame;
        }
        // Encoded outside the lock; two watchers racing on a new event both encode it.
        let frame = encode();
        let mut recent = self.lock();
        if recent.len() == CAPACITY {
            recent.pop_front();
        }
        recent.push_back(Entry {
            key: object.key.clone(),
            resource_version: object.resource_version,
            event_type,
            target,
            frame: frame.clone(),
        });
        frame
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Entry>> {
        // The queue is consistent after any panic: entries are pushed whole.
        self.recent.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use kas_storage::Object;
    use serde_json::json;

    use super::*;
    use crate::responsewriters::partial::MetaVersion;

    fn object(key: &str, rv: u64) -> ObjectRef {
        Arc::new(Object::new(key, rv, json!({"metadata": {"name": key}})).unwrap())
    }

    #[test]
    fn an_event_is_encoded_once_for_every_watcher() {
        let memo = FrameMemo::default();
        let encodings = AtomicUsize::new(0);
        let encode = |tag: &'static str| {
            encodings.fetch_add(1, Ordering::Relaxed);
            Bytes::from_static(tag.as_bytes())
        };
        let a = object("/configmaps/default/a", 5);
        // Watchers fed from etcd hold their own copies of the same state.
        let a_again = object("/configmaps/default/a", 5);
        for o in [&a, &a_again, &a] {
            let frame = memo.get_or_encode(o, "MODIFIED", None, || encode("a5"));
            assert_eq!(frame, "a5");
        }
        assert_eq!(encodings.load(Ordering::Relaxed), 1);

        // Another type, transform, revision or key is another frame.
        let partial = Some(Partial {
            list: false,
            version: MetaVersion::V1,
        });
        memo.get_or_encode(&a, "DELETED", None, || encode("x"));
        memo.get_or_encode(&a, "MODIFIED", partial, || encode("x"));
        memo.get_or_encode(
            &object("/configmaps/default/a", 6),
            "MODIFIED",
            None,
            || encode("x"),
        );
        memo.get_or_encode(
            &object("/configmaps/default/b", 5),
            "MODIFIED",
            None,
            || encode("x"),
        );
        assert_eq!(encodings.load(Ordering::Relaxed), 5);
    }

    #[test]
    fn only_the_latest_frames_are_kept() {
        let memo = FrameMemo::default();
        for rv in 0..CAPACITY as u64 + 1 {
            memo.get_or_encode(&object("/k", rv), "ADDED", None, Bytes::new);
        }
        assert_eq!(memo.lock().len(), CAPACITY);
        let encoded = AtomicUsize::new(0);
        let again = |rv| {
            memo.get_or_encode(&object("/k", rv), "ADDED", None, || {
                encoded.fetch_add(1, Ordering::Relaxed);
                Bytes::new()
            });
        };
        again(CAPACITY as u64);
        assert_eq!(encoded.load(Ordering::Relaxed), 0, "the newest is kept");
        again(0);
        assert_eq!(encoded.load(Ordering::Relaxed), 1, "the oldest was dropped");
    }
}
