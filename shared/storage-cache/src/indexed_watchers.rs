//! Upstream's `indexedWatchers`: a cacher's watchers, those whose predicate pins the
//! resource's trigger field (a kubelet's `spec.nodeName=<node>` watch of pods) filed by
//! the value they pin (`valueWatchers`), the others in one set (`allWatchers`). An event
//! is offered to the watchers of its object's trigger values (now and before) and to the
//! others, never to the rest: their filters would refuse it, since the object did not
//! have their value either before or after. Pure data, generic over what a watcher is.

use std::collections::HashMap;

/// Watchers by id, indexed by the trigger value they pin.
pub(crate) struct IndexedWatchers<W> {
    /// Upstream's `allWatchers`: offered every event.
    all: HashMap<u64, W>,
    /// Upstream's `valueWatchers`: offered the events of objects that have, or had, the
    /// value.
    by_value: HashMap<Box<str>, HashMap<u64, W>>,
    /// The value each indexed watcher is filed under, to find it by id (bookmarks).
    value_of: HashMap<u64, Box<str>>,
}

impl<W> Default for IndexedWatchers<W> {
    fn default() -> Self {
        IndexedWatchers {
            all: HashMap::new(),
            by_value: HashMap::new(),
            value_of: HashMap::new(),
        }
    }
}

impl<W> IndexedWatchers<W> {
    /// Files watcher `id` under `value`, or with the others when it pins none.
    pub(crate) fn insert(&mut self, id: u64, value: Option<&str>, watcher: W) {
        match value {
            None => {
                self.all.insert(id, watcher);
            }
            Some(value) => {
                self.value_of.insert(id, value.into());
                self.by_value
                    .entry(value.into())
                    .or_default()
                    .insert(id, watcher);
            }
        }
    }

    pub(crate) fn get(&self, id: u64) -> Option<&W> {
        match self.value_of.get(&id) {
            Some(value) => self.by_value.get(value)?.get(&id),
            None => self.all.get(&id),
        }
    }

    pub(crate) fn remove(&mut self, id: u64) -> Option<W> {
        let Some(value) = self.value_of.remove(&id) else {
            return self.all.remove(&id);
        };
        let bucket = self.by_value.get_mut(&value)?;
        let watcher = bucket.remove(&id);
        if bucket.is_empty() {
            self.by_value.remove(&value);
        }
        watcher
    }

    pub(crate) fn len(&self) -> usize {
        self.all.len() + self.value_of.len()
    }

    /// Keeps the watchers `keep` says to, of every watcher.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(u64, &mut W) -> bool) {
        self.all.retain(|&id, w| keep(id, w));
        let value_of = &mut self.value_of;
        self.by_value.retain(|_, bucket| {
            retain_bucket(bucket, value_of, &mut keep);
            !bucket.is_empty()
        });
    }

    /// Upstream's `startDispatching` choice: offers `keep` the watchers that pin none of
    /// the values, then those filed under each of `values` (given once each), and keeps
    /// those it says to. The watchers of other values are not offered.
    pub(crate) fn retain_offered(
        &mut self,
        values: &[&str],
        mut keep: impl FnMut(u64, &mut W) -> bool,
    ) {
        self.all.retain(|&id, w| keep(id, w));
        for value in values {
            let Some(bucket) = self.by_value.get_mut(*value) else {
                continue;
            };
            retain_bucket(bucket, &mut self.value_of, &mut keep);
            if bucket.is_empty() {
                self.by_value.remove(*value);
            }
        }
    }

    pub(crate) fn clear(&mut self) {
        self.all.clear();
        self.by_value.clear();
        self.value_of.clear();
    }
}

/// Keeps the watchers of one value's bucket that `keep` says to, forgetting where the
/// others were filed.
fn retain_bucket<W>(
    bucket: &mut HashMap<u64, W>,
    value_of: &mut HashMap<u64, Box<str>>,
    keep: &mut impl FnMut(u64, &mut W) -> bool,
) {
    bucket.retain(|&id, w| {
        let kept = keep(id, w);
        if !kept {
            value_of.remove(&id);
        }
        kept
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offered(ws: &mut IndexedWatchers<&'static str>, values: &[&str]) -> Vec<&'static str> {
        let mut got = Vec::new();
        ws.retain_offered(values, |_, w| {
            got.push(*w);
            true
        });
        got.sort_unstable();
        got
    }

    #[test]
    fn events_reach_their_values_and_the_unindexed() {
        let mut ws = IndexedWatchers::default();
        ws.insert(1, Some("node-a"), "a");
        ws.insert(2, Some("node-b"), "b");
        ws.insert(3, None, "all");
        ws.insert(4, Some(""), "unscheduled");
        ws.insert(5, Some("node-a"), "a2");
        assert_eq!(ws.len(), 5);
        assert_eq!(offered(&mut ws, &["node-a"]), ["a", "a2", "all"]);
        assert_eq!(
            offered(&mut ws, &["node-b", "node-a"]),
            ["a", "a2", "all", "b"]
        );
        assert_eq!(
            offered(&mut ws, &["", "node-b"]),
            ["all", "b", "unscheduled"]
        );
        assert_eq!(offered(&mut ws, &["node-z"]), ["all"]);
        assert_eq!(offered(&mut ws, &[]), ["all"]);
    }

    #[test]
    fn removal_by_id_and_by_refusal() {
        let mut ws = IndexedWatchers::default();
        ws.insert(1, Some("node-a"), "a");
        ws.insert(2, Some("node-a"), "a2");
        ws.insert(3, None, "all");
        assert_eq!(ws.get(1), Some(&"a"));
        assert_eq!(ws.get(3), Some(&"all"));
        assert_eq!(ws.remove(1), Some("a"));
        assert_eq!(ws.get(1), None);
        assert_eq!(ws.remove(1), None);
        // Refused while offered: gone, bucket and all.
        ws.retain_offered(&["node-a"], |id, _| id != 2);
        assert_eq!((ws.get(2), ws.len()), (None, 1));
        assert!(ws.by_value.is_empty() && ws.value_of.is_empty());
        ws.insert(4, Some("node-b"), "b");
        ws.retain(|id, _| id == 4);
        assert_eq!((ws.get(3), ws.get(4), ws.len()), (None, Some(&"b"), 1));
        ws.clear();
        assert_eq!(ws.len(), 0);
    }
}
