//! The number of objects stored per resource, as the storage layer last reported it, for the
//! work estimate of list requests: a port of upstream's
//! `k8s.io/apiserver/pkg/util/flowcontrol/request/object_count_tracker.go`.
//!
//! Counts are keyed by `{group}.{resource}`. The storage layer polls them about once a minute;
//! a count not refreshed for [`STALE_TOLERATION_THRESHOLD`] is reported as stale (still with
//! its value), and [`ObjectCountTracker::run_until`] forgets the counts not refreshed for
//! [`PRUNE_INTERVAL`] (for instance of a deleted custom resource).
//!
//! A process has one tracker ([`tracker`]): kas-storage-etcd's count polling (the one
//! behind `apiserver_storage_objects`) sets the counts of the role's own stores, and a
//! delegating role sets those its delegates report on the Peer stream ([`snapshot`]
//! is what a role reports), so that the role where requests enter estimates lists of any
//! resource.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{PoisonError, RwLock};
use std::time::{Duration, Instant};

/// How often the pruner runs, and how long a count may go without update before it is pruned.
/// Types are rarely deleted, so this can be long.
pub const PRUNE_INTERVAL: Duration = Duration::from_secs(60 * 60);

/// How long a count may go without update before it is stale: two or three failed polls of
/// the storage layer.
pub const STALE_TOLERATION_THRESHOLD: Duration = Duration::from_secs(3 * 60);

/// Why [`ObjectCountTracker::get`] has no fresh count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectCountError {
    /// The resource's count is not tracked.
    NotFound,
    /// The count (the value carried) has not been updated for longer than
    /// [`STALE_TOLERATION_THRESHOLD`].
    Stale(i64),
}

impl std::fmt::Display for ObjectCountError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ObjectCountError::NotFound => "object count not found for the given resource",
            ObjectCountError::Stale(_) => "object count has gone stale for the given resource",
        })
    }
}

impl std::error::Error for ObjectCountError {}

/// A count and when it was last set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TimestampedCount {
    count: i64,
    last_updated_at: Instant,
}

/// The clock: a source of the current instant.
type Now = Box<dyn Fn() -> Instant + Send + Sync>;

/// The total number of objects of each resource.
pub struct ObjectCountTracker {
    now: Now,
    counts: RwLock<HashMap<String, TimestampedCount>>,
}

impl std::fmt::Debug for ObjectCountTracker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectCountTracker")
            .field("counts", &self.counts)
            .finish_non_exhaustive()
    }
}

impl Default for ObjectCountTracker {
    fn default() -> Self {
        Self::new()
    }
}

impl ObjectCountTracker {
    /// A tracker on the real clock.
    pub fn new() -> Self {
        Self::with_clock(Instant::now)
    }

    /// A tracker on the given clock (tests drive time with it).
    pub fn with_clock(now: impl Fn() -> Instant + Send + Sync + 'static) -> Self {
        ObjectCountTracker {
            now: Box::new(now),
            counts: RwLock::new(HashMap::new()),
        }
    }

    /// Sets the count of `group_resource`. A negative count (-1 is the storage layer's "the
    /// count failed", most often transiently) is ignored: the previous count stays in use
    /// until it goes stale, and is eventually pruned if the failures persist.
    pub fn set(&self, group_resource: &str, count: i64) {
        if count <= -1 {
            return;
        }
        let now = (self.now)();
        let mut counts = self.counts.write().unwrap_or_else(PoisonError::into_inner);
        match counts.get_mut(group_resource) {
            Some(item) => {
                item.count = count;
                item.last_updated_at = now;
            }
            None => {
                counts.insert(
                    group_resource.to_owned(),
                    TimestampedCount {
                        count,
                        last_updated_at: now,
                    },
                );
            }
        }
    }

    /// The count of `group_resource`: [`ObjectCountError::NotFound`] if it is not tracked,
    /// [`ObjectCountError::Stale`] (with the count) if it was last set more than
    /// [`STALE_TOLERATION_THRESHOLD`] ago.
    pub fn get(&self, group_resource: &str) -> Result<i64, ObjectCountError> {
        let now = (self.now)();
        let counts = self.counts.read().unwrap_or_else(PoisonError::into_inner);
        let item = counts
            .get(group_resource)
            .ok_or(ObjectCountError::NotFound)?;
        if age(now, item.last_updated_at).is_some_and(|age| age > STALE_TOLERATION_THRESHOLD) {
            return Err(ObjectCountError::Stale(item.count));
        }
        Ok(item.count)
    }

    /// Forgets the counts last set `older_than` ago or longer.
    pub fn prune(&self, older_than: Duration) {
        let now = (self.now)();
        let mut counts = self.counts.write().unwrap_or_else(PoisonError::into_inner);
        counts.retain(|_, item| age(now, item.last_updated_at).is_none_or(|age| age < older_than));
    }

    /// Prunes the counts not set for [`PRUNE_INTERVAL`], every [`PRUNE_INTERVAL`] (the first
    /// time one interval from now), until `stop` completes.
    pub async fn run_until(&self, stop: impl Future<Output = ()>) {
        let mut stop = std::pin::pin!(stop);
        loop {
            tokio::select! {
                () = &mut stop => break,
                () = tokio::time::sleep(PRUNE_INTERVAL) => self.prune(PRUNE_INTERVAL),
            }
        }
        tracing::info!("StorageObjectCountTracker pruner is exiting");
    }
}

/// The process's tracker.
pub fn tracker() -> std::sync::Arc<ObjectCountTracker> {
    static TRACKER: std::sync::LazyLock<std::sync::Arc<ObjectCountTracker>> =
        std::sync::LazyLock::new(Default::default);
    TRACKER.clone()
}

impl ObjectCountTracker {
    /// The counts that are not stale, by group resource.
    pub fn snapshot(&self) -> std::collections::BTreeMap<String, i64> {
        let now = (self.now)();
        let counts = self.counts.read().unwrap_or_else(PoisonError::into_inner);
        counts
            .iter()
            .filter(|(_, item)| {
                age(now, item.last_updated_at).is_none_or(|age| age <= STALE_TOLERATION_THRESHOLD)
            })
            .map(|(k, item)| (k.clone(), item.count))
            .collect()
    }
}

/// How long ago `then` was at `now`; `None` if `then` is later than `now`.
fn age(now: Instant, then: Instant) -> Option<Duration> {
    now.checked_duration_since(then)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A clock that is set by hand.
    #[derive(Clone)]
    struct FakeClock(Arc<Mutex<Instant>>);

    impl FakeClock {
        fn new(at: Instant) -> Self {
            FakeClock(Arc::new(Mutex::new(at)))
        }

        fn now(&self) -> Instant {
            *self.0.lock().unwrap_or_else(PoisonError::into_inner)
        }

        fn set(&self, at: Instant) {
            *self.0.lock().unwrap_or_else(PoisonError::into_inner) = at;
        }

        fn tracker(&self) -> ObjectCountTracker {
            let clock = self.clone();
            ObjectCountTracker::with_clock(move || clock.now())
        }
    }

    /// An instant with room to go back an hour and more.
    fn base() -> Instant {
        let now = Instant::now();
        now + Duration::from_secs(2 * 60 * 60)
    }

    fn tracked(tracker: &ObjectCountTracker) -> Vec<(String, i64)> {
        let counts = tracker
            .counts
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        let mut tracked: Vec<_> = counts.iter().map(|(k, v)| (k.clone(), v.count)).collect();
        tracked.sort();
        tracked
    }

    /// upstream's TestStorageObjectCountTracker.
    #[test]
    fn set_and_get() {
        let cases: [(&str, Duration, i64, Result<i64, ObjectCountError>); 5] = [
            (
                "object count not tracked for given resource",
                Duration::ZERO,
                -2,
                Err(ObjectCountError::NotFound),
            ),
            (
                "transient failure",
                Duration::ZERO,
                -1,
                Err(ObjectCountError::NotFound),
            ),
            ("object count is zero", Duration::ZERO, 0, Ok(0)),
            (
                "object count is more than zero",
                Duration::ZERO,
                799,
                Ok(799),
            ),
            (
                "object count stale",
                STALE_TOLERATION_THRESHOLD + Duration::from_millis(1),
                799,
                Err(ObjectCountError::Stale(799)),
            ),
        ];
        for (name, last_updated, count, want) in cases {
            let now = base();
            let clock = FakeClock::new(now - last_updated);
            let tracker = clock.tracker();
            let key = "foo.bar.resource";
            tracker.set(key, count);
            clock.set(now);
            assert_eq!(tracker.get(key), want, "{name}");
            if count <= -1 {
                assert!(tracked(&tracker).is_empty(), "{name}: cache not empty");
            }
        }
    }

    #[test]
    fn stale_only_past_the_threshold() {
        let now = base();
        let clock = FakeClock::new(now);
        let tracker = clock.tracker();
        tracker.set("apps.deployments", 7);
        clock.set(now + STALE_TOLERATION_THRESHOLD);
        assert_eq!(tracker.get("apps.deployments"), Ok(7));
        clock.set(now + STALE_TOLERATION_THRESHOLD + Duration::from_nanos(1));
        assert_eq!(
            tracker.get("apps.deployments"),
            Err(ObjectCountError::Stale(7))
        );
        // A failed poll does not refresh it; a successful one does.
        tracker.set("apps.deployments", -1);
        assert_eq!(
            tracker.get("apps.deployments"),
            Err(ObjectCountError::Stale(7))
        );
        tracker.set("apps.deployments", 9);
        assert_eq!(tracker.get("apps.deployments"), Ok(9));
        // A count set "in the future" (a clock going back) is not stale.
        clock.set(now);
        assert_eq!(tracker.get("apps.deployments"), Ok(9));
    }

    /// upstream's TestStorageObjectCountTrackerWithPrune.
    #[test]
    fn prune() {
        let now = base();
        let clock = FakeClock::new(now - Duration::from_secs(61 * 60));
        let tracker = clock.tracker();
        tracker.set("k1", 61);
        clock.set(now - Duration::from_secs(60 * 60));
        tracker.set("k2", 60);
        // Counts as old as the threshold or older are pruned; k3 is not.
        let most_recent = now - Duration::from_secs(59 * 60);
        clock.set(most_recent);
        tracker.set("k3", 59);

        clock.set(now);
        tracker.prune(Duration::from_secs(60 * 60));
        assert_eq!(tracked(&tracker), vec![("k3".to_owned(), 59)]);
        let counts = tracker
            .counts
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        assert_eq!(
            counts.get("k3").map(|item| item.last_updated_at),
            Some(most_recent)
        );
    }

    #[test]
    fn prune_keeps_counts_set_later_than_now() {
        let now = base();
        let clock = FakeClock::new(now + Duration::from_secs(1));
        let tracker = clock.tracker();
        tracker.set("k", 1);
        clock.set(now);
        tracker.prune(Duration::ZERO);
        assert_eq!(tracked(&tracker), vec![("k".to_owned(), 1)]);
        // With a zero threshold, a count set just now is pruned (it is not after "now").
        clock.set(now + Duration::from_secs(1));
        tracker.prune(Duration::ZERO);
        assert!(tracked(&tracker).is_empty());
    }

    #[test]
    fn error_texts() {
        assert_eq!(
            ObjectCountError::NotFound.to_string(),
            "object count not found for the given resource"
        );
        assert_eq!(
            ObjectCountError::Stale(3).to_string(),
            "object count has gone stale for the given resource"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn run_until_prunes_every_interval() {
        let now = base();
        let clock = FakeClock::new(now);
        let tracker = Arc::new(clock.tracker());
        tracker.set("old", 1);
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let pruner = {
            let tracker = Arc::clone(&tracker);
            tokio::spawn(async move {
                tracker
                    .run_until(async {
                        let _ = stop_rx.await;
                    })
                    .await;
            })
        };
        // Nothing is pruned before the first interval is up.
        clock.set(now + PRUNE_INTERVAL);
        tokio::time::sleep(PRUNE_INTERVAL / 2).await;
        assert_eq!(tracked(&tracker).len(), 1);
        tokio::time::sleep(PRUNE_INTERVAL).await;
        assert!(tracked(&tracker).is_empty());
        let _ = stop_tx.send(());
        assert!(pruner.await.is_ok());
    }
}
