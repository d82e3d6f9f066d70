//! Upstream's `watchCache`: every object of the resource by key (and, for a resource with
//! an indexed field, by its value of it), a bounded ring buffer of recent events for
//! watches that start from an older resourceVersion, and the revision the cache has caught
//! up to. Pure data: no I/O, no locking (the cacher holds the lock).

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use kas_storage::{Attrs, Error, ObjectRef, Predicate, Result, WatchEvent};

use crate::field_index::FieldIndex;

/// The type of a cached event, as the underlying watch reported it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventType {
    Added,
    Modified,
    Deleted,
}

/// An object with the attributes selectors test (upstream's `storeElement`). The cache
/// keeps these, not decoded documents: a selector never decodes anything.
#[derive(Debug, Clone)]
pub(crate) struct StoreElement {
    pub(crate) object: ObjectRef,
    pub(crate) attrs: Attrs,
}

/// One change, kept once and shared by every watcher (upstream `watchCacheEvent`).
#[derive(Debug)]
pub(crate) struct CachedEvent {
    pub(crate) kind: EventType,
    /// The new state; for a deletion, the last state stamped with the deletion's revision.
    pub(crate) object: ObjectRef,
    pub(crate) attrs: Attrs,
    /// The state before this event, as the cache had it.
    pub(crate) prev: Option<StoreElement>,
    pub(crate) resource_version: u64,
    /// `prev` stamped with this event's revision, encoded at most once, for watchers whose
    /// predicate the object leaves (they see a DELETED of the previous state).
    prev_at_event: OnceLock<Option<ObjectRef>>,
    /// When the cache saw it (to size the buffer by freshness, as upstream does).
    recorded: Instant,
}

impl CachedEvent {
    /// This event as seen through `predicate` (upstream `cacheWatcher.convertToWatchEvent`):
    /// moving into the predicate is ADDED, out of it DELETED.
    pub(crate) fn filtered(&self, predicate: &Predicate) -> Option<WatchEvent> {
        let cur = || predicate.matches_attrs(&self.attrs);
        match self.kind {
            EventType::Added => cur().then(|| WatchEvent::Added(self.object.clone())),
            EventType::Deleted => cur().then(|| WatchEvent::Deleted(self.object.clone())),
            EventType::Modified => {
                let Some(prev) = &self.prev else {
                    return cur().then(|| WatchEvent::Modified(self.object.clone()));
                };
                if predicate.is_empty() {
                    return Some(WatchEvent::Modified(self.object.clone()));
                }
                match (predicate.matches_attrs(&prev.attrs), cur()) {
                    (true, true) => Some(WatchEvent::Modified(self.object.clone())),
                    (false, true) => Some(WatchEvent::Added(self.object.clone())),
                    (true, false) => self.prev_at_event().map(WatchEvent::Deleted),
                    (false, false) => None,
                }
            }
        }
    }

    fn prev_at_event(&self) -> Option<ObjectRef> {
        self.prev_at_event
            .get_or_init(|| {
                let prev = &self.prev.as_ref()?.object;
                match prev.with_resource_version(self.resource_version) {
                    Ok(obj) => Some(Arc::new(obj)),
                    Err(e) => {
                        tracing::warn!(key = %prev.key, error = %e, "cannot restamp object");
                        None
                    }
                }
            })
            .clone()
    }
}

/// Sizing of the event buffer (upstream's `defaultLowerBoundCapacity`,
/// `defaultUpperBoundCapacity` and `eventFreshDuration`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Capacity {
    pub(crate) initial: usize,
    pub(crate) max: usize,
    pub(crate) fresh: Duration,
}

/// Whether `key` is `watched` itself or, when recursive, lies under `watched/`.
pub(crate) fn key_matches(watched: &str, recursive: bool, key: &str) -> bool {
    if !recursive {
        return key == watched;
    }
    let dir = watched.strip_suffix('/').unwrap_or(watched);
    key.len() > dir.len() && key.starts_with(dir) && key.as_bytes()[dir.len()] == b'/'
}

pub(crate) struct WatchCache {
    objects: BTreeMap<String, StoreElement>,
    /// The objects' keys by their value of the indexed field, if the resource has one.
    index: Option<FieldIndex>,
    events: VecDeque<Arc<CachedEvent>>,
    capacity: usize,
    limits: Capacity,
    /// The newest revision every change up to which has been applied.
    resource_version: u64,
    /// The revision of the last (re-)list.
    list_resource_version: u64,
    /// Whether the buffer dropped an event since then (upstream `removedEventSinceRelist`).
    evicted_since_list: bool,
    /// The newest revision etcd compacted, as the compactor told us.
    compacted: u64,
}

impl WatchCache {
    /// A cache sized by `limits`, indexing objects by `index_field` if given.
    pub(crate) fn new(limits: Capacity, index_field: Option<&str>) -> Self {
        WatchCache {
            objects: BTreeMap::new(),
            index: index_field.map(FieldIndex::new),
            events: VecDeque::new(),
            capacity: limits.initial.max(1),
            limits,
            resource_version: 0,
            list_resource_version: 0,
            evicted_since_list: false,
            compacted: 0,
        }
    }

    pub(crate) fn resource_version(&self) -> u64 {
        self.resource_version
    }

    /// Upstream `Replace`: the result of a (re-)list; the buffer starts over.
    pub(crate) fn replace(&mut self, items: Vec<StoreElement>, resource_version: u64) {
        self.objects = items
            .into_iter()
            .map(|e| (e.object.key.clone(), e))
            .collect();
        if let Some(index) = &mut self.index {
            index.clear();
            for (key, e) in &self.objects {
                index.update(key, None, Some(&e.attrs));
            }
        }
        self.events.clear();
        self.resource_version = resource_version;
        self.list_resource_version = resource_version;
        self.evicted_since_list = false;
    }

    /// A progress notification: nothing changed up to `resource_version`.
    pub(crate) fn bookmark(&mut self, resource_version: u64) {
        self.resource_version = self.resource_version.max(resource_version);
    }

    pub(crate) fn compacted(&mut self, revision: u64) {
        self.compacted = self.compacted.max(revision);
    }

    /// Applies one event of the underlying watch and records it in the buffer; `attrs`
    /// are those of the event's object.
    pub(crate) fn apply(&mut self, event: WatchEvent, attrs: Attrs) -> Option<Arc<CachedEvent>> {
        let (kind, object, prev) = match event {
            WatchEvent::Added(o) | WatchEvent::Modified(o) => {
                let elem = StoreElement {
                    object: o.clone(),
                    attrs: attrs.clone(),
                };
                let prev = self.objects.insert(o.key.clone(), elem);
                if let Some(index) = &mut self.index {
                    index.update(&o.key, prev.as_ref().map(|p| &p.attrs), Some(&attrs));
                }
                let kind = if prev.is_some() {
                    EventType::Modified
                } else {
                    EventType::Added
                };
                (kind, o, prev)
            }
            WatchEvent::Deleted(o) => {
                let prev = self.objects.remove(&o.key);
                if let Some(index) = &mut self.index {
                    index.update(&o.key, prev.as_ref().map(|p| &p.attrs), None);
                }
                (EventType::Deleted, o, prev)
            }
            WatchEvent::Bookmark(rv) | WatchEvent::InitialEventsEnd(rv) => {
                self.bookmark(rv);
                return None;
            }
            WatchEvent::Error(_) => return None,
        };
        let resource_version = object.resource_version;
        self.resource_version = self.resource_version.max(resource_version);
        let event = Arc::new(CachedEvent {
            kind,
            object,
            attrs,
            prev,
            resource_version,
            prev_at_event: OnceLock::new(),
            recorded: Instant::now(),
        });
        self.push(event.clone());
        Some(event)
    }

    fn push(&mut self, event: Arc<CachedEvent>) {
        if self.events.len() >= self.capacity {
            // Upstream grows the buffer while the events it would drop are still fresh.
            let fresh = self
                .events
                .front()
                .is_some_and(|e| e.recorded.elapsed() < self.limits.fresh);
            if fresh && self.capacity < self.limits.max {
                self.capacity = (self.capacity * 2).min(self.limits.max);
            }
        }
        while self.events.len() >= self.capacity {
            self.events.pop_front();
            self.evicted_since_list = true;
        }
        self.events.push_back(event);
    }

    pub(crate) fn get(&self, key: &str) -> Option<ObjectRef> {
        self.objects.get(key).map(|e| e.object.clone())
    }

    /// The objects `key` covers that pass `predicate`, in key order. A collection whose
    /// predicate pins the indexed field reads only that value's objects (upstream's
    /// `listLatestRV` with the predicate's `MatcherIndex`).
    pub(crate) fn list<'a>(
        &'a self,
        key: &'a str,
        recursive: bool,
        predicate: &'a Predicate,
    ) -> Box<dyn Iterator<Item = &'a ObjectRef> + 'a> {
        let start = if recursive {
            let dir = key.strip_suffix('/').unwrap_or(key);
            format!("{dir}/")
        } else {
            key.to_string()
        };
        let covered = move |k: &str| {
            if recursive {
                key_matches(key, true, k)
            } else {
                k == key
            }
        };
        let selected = move |e: &&'a StoreElement| predicate.matches_attrs(&e.attrs);
        let pinned = self
            .index
            .as_ref()
            .filter(|_| recursive)
            .and_then(|index| Some((index, predicate.requires_exact_match(index.field())?)));
        if let Some((index, value)) = pinned {
            let elements = index
                .keys_from(value, &start)
                .take_while(move |k| covered(k))
                .filter_map(|k| self.objects.get(k));
            return Box::new(elements.filter(selected).map(|e| &e.object));
        }
        let elements = self
            .objects
            .range(start..)
            .take_while(move |(k, _)| covered(k))
            .map(|(_, e)| e);
        Box::new(elements.filter(selected).map(|e| &e.object))
    }

    /// The buffered events after `resource_version` (upstream `getAllEventsSinceLocked`),
    /// or upstream's error when they are no longer all there.
    pub(crate) fn events_since(&self, resource_version: u64) -> Result<Vec<Arc<CachedEvent>>> {
        if resource_version + 1 < self.compacted {
            return Err(Error::watch_expired(
                Some(resource_version),
                Some(self.compacted),
            ));
        }
        // Upstream's `oldest - 1`: the list's revision until the buffer dropped an event,
        // then the revision just before the oldest event kept.
        let oldest_servable = match self.events.front() {
            Some(first) if self.evicted_since_list => first.resource_version - 1,
            _ => self.list_resource_version,
        };
        if resource_version < oldest_servable {
            return Err(Error::Expired {
                message: format!(
                    "too old resource version: {resource_version} ({oldest_servable})"
                ),
                requested: Some(resource_version),
                compacted: None,
                continue_token: None,
            });
        }
        let first = self
            .events
            .partition_point(|e| e.resource_version <= resource_version);
        Ok(self.events.range(first..).cloned().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kas_storage::Object;
    use serde_json::json;

    fn obj(key: &str, rv: u64, v: i64) -> ObjectRef {
        Arc::new(Object::new(key, rv, json!({"spec": {"v": v}})).unwrap())
    }

    fn attrs_of(o: &ObjectRef) -> Attrs {
        spec_v_attrs()(&o.value().unwrap())
    }

    fn spec_v_attrs() -> kas_storage::AttrsFunc {
        Arc::new(|v: &serde_json::Value| Attrs {
            labels: Default::default(),
            fields: std::collections::BTreeMap::from([(
                "v".to_owned(),
                v["spec"]["v"].to_string(),
            )])
            .into(),
        })
    }

    fn ones() -> Predicate {
        use kas_apimachinery::labels::Labels;
        Predicate::new(spec_v_attrs(), |a| a.fields.get("v") == Some("1"))
    }

    fn elem(key: &str, rv: u64, v: i64) -> StoreElement {
        let object = obj(key, rv, v);
        StoreElement {
            attrs: attrs_of(&object),
            object,
        }
    }

    fn apply(c: &mut WatchCache, event: WatchEvent) -> Option<Arc<CachedEvent>> {
        let attrs = match &event {
            WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o) => attrs_of(o),
            _ => Attrs::default(),
        };
        c.apply(event, attrs)
    }

    fn cache(initial: usize, max: usize) -> WatchCache {
        WatchCache::new(
            Capacity {
                initial,
                max,
                fresh: Duration::from_secs(75),
            },
            None,
        )
    }

    #[test]
    fn keys_match_like_etcd_prefixes() {
        assert!(key_matches("/pods", true, "/pods/a"));
        assert!(key_matches("/pods/", true, "/pods/a"));
        assert!(!key_matches("/pods", true, "/podsx/a"));
        assert!(!key_matches("/pods", true, "/pods"));
        assert!(key_matches("/pods/a", false, "/pods/a"));
        assert!(!key_matches("/pods/a", false, "/pods/a/b"));
    }

    #[test]
    fn lists_are_sorted_and_scoped() {
        let mut c = cache(10, 10);
        c.replace(
            vec![
                elem("/p/b/2", 3, 1),
                elem("/p/a/1", 2, 2),
                elem("/p/ab/1", 4, 1),
            ],
            4,
        );
        let all = Predicate::everything();
        let keys: Vec<_> = c.list("/p", true, &all).map(|o| o.key.clone()).collect();
        assert_eq!(keys, ["/p/a/1", "/p/ab/1", "/p/b/2"]);
        let keys: Vec<_> = c.list("/p/a", true, &all).map(|o| o.key.clone()).collect();
        assert_eq!(keys, ["/p/a/1"]);
        let ones = ones();
        assert_eq!(c.list("/p", true, &ones).count(), 2);
        assert_eq!(c.list("/p/b/2", false, &all).count(), 1);
    }

    #[test]
    fn events_after_a_revision_and_too_old() {
        let mut c = cache(2, 2);
        c.replace(vec![], 10);
        for rv in 11..=13 {
            apply(&mut c, WatchEvent::Added(obj(&format!("/p/{rv}"), rv, 0)));
        }
        // Capacity 2: the event at 11 was evicted, so 11 is the oldest servable start.
        let rvs: Vec<_> = c
            .events_since(11)
            .unwrap()
            .iter()
            .map(|e| e.resource_version)
            .collect();
        assert_eq!(rvs, [12, 13]);
        let err = c.events_since(10).unwrap_err();
        assert_eq!(err.to_string(), "too old resource version: 10 (11)");
        c.compacted(13);
        assert!(c.events_since(11).is_err());
        assert!(c.events_since(12).is_ok());
    }

    #[test]
    fn the_floor_follows_the_oldest_event_kept() {
        let mut c = cache(1, 1);
        c.replace(vec![], 10);
        assert!(c.events_since(10).is_ok());
        apply(&mut c, WatchEvent::Added(obj("/p/a", 12, 0)));
        apply(&mut c, WatchEvent::Added(obj("/p/b", 15, 0)));
        // No event of this resource between 12 and 15: 14 is still servable.
        assert!(c.events_since(14).unwrap().len() == 1);
        let err = c.events_since(13).unwrap_err();
        assert_eq!(err.to_string(), "too old resource version: 13 (14)");
    }

    #[test]
    fn the_buffer_grows_while_events_are_fresh() {
        let mut c = cache(2, 8);
        c.replace(vec![], 1);
        for rv in 2..=9 {
            apply(&mut c, WatchEvent::Added(obj(&format!("/p/{rv}"), rv, 0)));
        }
        assert_eq!(c.events_since(1).unwrap().len(), 8);
    }

    #[test]
    fn lists_that_pin_the_indexed_field_read_its_objects_only() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let calls = Arc::new(AtomicUsize::new(0));
        let pinned = |selector: &str| {
            let parsed = kas_apimachinery::fields::parse_selector(selector).unwrap();
            let (filter, calls) = (parsed.clone(), calls.clone());
            Predicate::new(spec_v_attrs(), move |a| {
                calls.fetch_add(1, Ordering::Relaxed);
                filter.matches(&a.fields)
            })
            .with_field_selector(parsed)
        };
        let limits = Capacity {
            initial: 10,
            max: 10,
            fresh: Duration::from_secs(75),
        };
        let (mut indexed, mut plain) = (WatchCache::new(limits, Some("v")), cache(10, 10));
        let elems = || {
            let mut all: Vec<_> = (0..50)
                .map(|i| elem(&format!("/p/ns{}/o{i:02}", i % 3), 2, i % 5))
                .collect();
            all.push(elem("/px/o", 2, 1));
            all
        };
        indexed.replace(elems(), 2);
        plain.replace(elems(), 2);
        let keys = |c: &WatchCache, key: &str, p: &Predicate| -> Vec<String> {
            c.list(key, true, p).map(|o| o.key.clone()).collect()
        };
        for (key, selector) in [
            ("/p", "v=1"),
            ("/p/ns1", "v=1"),
            ("/p", "v=7"),
            ("/p", "v!=1"),
        ] {
            let p = pinned(selector);
            assert_eq!(
                keys(&indexed, key, &p),
                keys(&plain, key, &p),
                "{key} {selector}"
            );
        }
        calls.store(0, Ordering::Relaxed);
        let ones = keys(&indexed, "/p", &pinned("v=1,metadata.name!=x"));
        assert_eq!(ones.len(), 10);
        assert!(ones.is_sorted() && ones.iter().all(|k| k.starts_with("/p/")));
        assert_eq!(
            calls.load(Ordering::Relaxed),
            10,
            "only the value's objects"
        );
        // The index follows changes: one moves to 1, one leaves it, one is deleted.
        for c in [&mut indexed, &mut plain] {
            apply(c, WatchEvent::Modified(obj("/p/ns0/o00", 3, 1)));
            apply(c, WatchEvent::Modified(obj("/p/ns1/o01", 4, 2)));
            apply(c, WatchEvent::Deleted(obj("/p/ns0/o06", 5, 1)));
        }
        let p = pinned("v=1");
        let after = keys(&indexed, "/p", &p);
        assert_eq!(after, keys(&plain, "/p", &p));
        assert!(after.contains(&"/p/ns0/o00".to_owned()) && after.len() == 9);
        // A single key is read by key.
        assert_eq!(indexed.list("/p/ns0/o00", false, &p).count(), 1);
    }

    #[test]
    fn predicates_turn_changes_into_added_and_deleted() {
        let mut c = cache(10, 10);
        c.replace(vec![elem("/p/a", 1, 0)], 1);
        let into = apply(&mut c, WatchEvent::Modified(obj("/p/a", 2, 1))).unwrap();
        let out = apply(&mut c, WatchEvent::Modified(obj("/p/a", 3, 2))).unwrap();
        let ones = ones();
        assert!(matches!(into.filtered(&ones), Some(WatchEvent::Added(_))));
        match out.filtered(&ones) {
            Some(WatchEvent::Deleted(o)) => {
                assert_eq!(o.resource_version, 3);
                assert_eq!(o.value().unwrap()["spec"]["v"], 1);
            }
            e => panic!("{e:?}"),
        }
        let gone = apply(&mut c, WatchEvent::Deleted(obj("/p/a", 4, 2))).unwrap();
        assert!(gone.filtered(&ones).is_none());
        assert!(matches!(
            gone.filtered(&Predicate::everything()),
            Some(WatchEvent::Deleted(_))
        ));
        assert!(c.get("/p/a").is_none());
    }
}
