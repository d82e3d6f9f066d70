//! The history of dropped (rejected) requests per priority level, and the `Retry-After` it
//! suggests: a port of upstream's
//! `k8s.io/apiserver/pkg/util/flowcontrol/dropped_requests_tracker.go`.
//!
//! Drops are counted in one-second buckets. When the second changes, the suggestion is
//! revisited from the drops of the last `retry_after` seconds, much like TCP's congestion
//! window: it doubles (up to [`MAX_RETRY_AFTER`], at most once per `retry_after` seconds) when
//! there were at least `3 * retry_after` drops, and goes down by one when there were fewer
//! than `retry_after`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Instant;

/// The largest `Retry-After` (in seconds) ever suggested.
pub const MAX_RETRY_AFTER: i64 = 32;

/// The clock: a source of the current instant.
type Now = Box<dyn Fn() -> Instant + Send + Sync>;

/// The drops within one second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SecondStat {
    second: i64,
    requests: i64,
}

/// What the write lock of one priority level's stats guards.
#[derive(Debug, Default)]
struct History {
    /// Past seconds, oldest first.
    seconds: Vec<SecondStat>,
    /// The second that `current_count` counts.
    current_second: i64,
    /// When `retry_after` was last raised.
    retry_after_raised_at: i64,
}

/// One priority level's drops. The count of the current second is an atomic so that the
/// common case (another drop in the same second) needs only the read lock.
#[derive(Debug)]
struct DroppedRequestsStats {
    history: RwLock<History>,
    current_count: AtomicI64,
    retry_after: AtomicI64,
}

impl DroppedRequestsStats {
    fn new() -> Self {
        DroppedRequestsStats {
            // Raising is allowed at any time after the first drop.
            history: RwLock::new(History::default()),
            current_count: AtomicI64::new(0),
            retry_after: AtomicI64::new(1),
        }
    }

    fn record_dropped_request(&self, second: i64) {
        {
            let history = self.history.read().unwrap_or_else(PoisonError::into_inner);
            if history.current_second == second {
                self.current_count.fetch_add(1, Ordering::Relaxed);
                return;
            }
        }
        let mut history = self.history.write().unwrap_or_else(PoisonError::into_inner);
        if history.current_second == second {
            self.current_count.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let (finished_second, finished_count) = (
            history.current_second,
            self.current_count.load(Ordering::Relaxed),
        );
        self.update_history(&mut history, finished_second, finished_count);
        history.current_second = second;
        self.current_count.store(1, Ordering::Relaxed);
        // The suggestion is only revisited when the second changes, from the seconds before
        // this one.
        self.update_retry_after(&mut history, second);
    }

    /// Appends a finished second and drops the entries too old to ever be looked at again
    /// (older than `2 * retry_after`, or than [`MAX_RETRY_AFTER`]).
    fn update_history(&self, history: &mut History, second: i64, count: i64) {
        history.seconds.push(SecondStat {
            second,
            requests: count,
        });
        let max_history = self
            .retry_after
            .load(Ordering::Relaxed)
            .saturating_mul(2)
            .min(MAX_RETRY_AFTER);
        let stale = history
            .seconds
            .iter()
            .take_while(|stat| second.saturating_sub(stat.second) > max_history)
            .count();
        history.seconds.drain(..stale);
    }

    /// Revisits `retry_after` from the drops in the seconds `[now - retry_after, now)`.
    fn update_retry_after(&self, history: &mut History, now: i64) {
        let mut retry_after = self.retry_after.load(Ordering::Relaxed);
        let mut dropped: i64 = 0;
        for stat in history.seconds.iter().rev() {
            if now.saturating_sub(stat.second) > retry_after {
                break;
            }
            if stat.second < now {
                dropped = dropped.saturating_add(stat.requests);
            }
        }
        if now.saturating_sub(history.retry_after_raised_at) >= retry_after
            && dropped >= retry_after.saturating_mul(3)
        {
            retry_after = retry_after.saturating_mul(2).min(MAX_RETRY_AFTER);
            self.retry_after.store(retry_after, Ordering::Relaxed);
            history.retry_after_raised_at = now;
            return;
        }
        if dropped < retry_after && retry_after > 1 {
            self.retry_after.store(retry_after - 1, Ordering::Relaxed);
        }
    }
}

/// Tracks the dropped requests of each priority level, for the `Retry-After` of the next
/// rejections.
pub struct DroppedRequestsTracker {
    now: Now,
    /// The instant that second 0 starts at: the clock's reading when the tracker was made.
    origin: Instant,
    pl_stats: RwLock<HashMap<String, Arc<DroppedRequestsStats>>>,
}

impl std::fmt::Debug for DroppedRequestsTracker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DroppedRequestsTracker")
            .field("origin", &self.origin)
            .field("pl_stats", &self.pl_stats)
            .finish_non_exhaustive()
    }
}

impl Default for DroppedRequestsTracker {
    fn default() -> Self {
        Self::new()
    }
}

impl DroppedRequestsTracker {
    /// A tracker on the real clock.
    pub fn new() -> Self {
        Self::with_clock(Instant::now)
    }

    /// A tracker on the given clock (tests drive time with it). Seconds are counted from the
    /// clock's reading now; a reading before that counts as second 0.
    pub fn with_clock(now: impl Fn() -> Instant + Send + Sync + 'static) -> Self {
        let origin = now();
        DroppedRequestsTracker {
            now: Box::new(now),
            origin,
            pl_stats: RwLock::new(HashMap::new()),
        }
    }

    /// The current whole second since the origin.
    fn second(&self) -> i64 {
        let elapsed = (self.now)().saturating_duration_since(self.origin);
        i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX)
    }

    /// Records a request of priority level `pl` that was just dropped.
    pub fn record_dropped_request(&self, pl: &str) {
        let second = self.second();
        let existing = self
            .pl_stats
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(pl)
            .cloned();
        let stats = match existing {
            Some(stats) => stats,
            None => {
                let mut pl_stats = self
                    .pl_stats
                    .write()
                    .unwrap_or_else(PoisonError::into_inner);
                Arc::clone(
                    pl_stats
                        .entry(pl.to_owned())
                        .or_insert_with(|| Arc::new(DroppedRequestsStats::new())),
                )
            }
        };
        stats.record_dropped_request(second);
    }

    /// The `Retry-After` (in seconds) currently suggested for priority level `pl`: 1 for a
    /// level that never dropped a request.
    pub fn retry_after(&self, pl: &str) -> i64 {
        self.pl_stats
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(pl)
            .map_or(1, |stats| stats.retry_after.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::time::Duration;

    /// A clock that moves only when told to.
    #[derive(Clone)]
    struct FakeClock(Arc<Mutex<Instant>>);

    impl FakeClock {
        fn new() -> Self {
            FakeClock(Arc::new(Mutex::new(Instant::now())))
        }

        fn now(&self) -> Instant {
            *self.0.lock().unwrap_or_else(PoisonError::into_inner)
        }

        fn step(&self, by: Duration) {
            let mut now = self.0.lock().unwrap_or_else(PoisonError::into_inner);
            *now += by;
        }

        fn tracker(&self) -> DroppedRequestsTracker {
            let clock = self.clone();
            DroppedRequestsTracker::with_clock(move || clock.now())
        }
    }

    /// upstream's TestDroppedRequestsTracker.
    #[test]
    fn retry_after_follows_the_drops() {
        let clock = FakeClock::new();
        let tracker = clock.tracker();
        // (seconds elapsed, drops recorded in that second, expected retry-after after them)
        let steps: [(u64, usize, i64); 11] = [
            (0, 5, 1),
            (1, 11, 2),
            // No second raise right after the first, despite the drops.
            (2, 1, 2),
            (3, 11, 4),
            (4, 1, 4),
            (7, 1, 8),
            (11, 1, 8),
            (15, 1, 7),
            (17, 1, 6),
            (21, 14, 5),
            (22, 1, 10),
        ];
        let mut elapsed = 0;
        for (i, (seconds, drops, want)) in steps.into_iter().enumerate() {
            clock.step(Duration::from_secs(seconds - elapsed));
            elapsed = seconds;
            for _ in 0..drops {
                tracker.record_dropped_request("pl");
            }
            assert_eq!(
                tracker.retry_after("pl"),
                want,
                "step {i} (second {seconds})"
            );
        }
    }

    /// upstream's TestDroppedRequestsTrackerPLIndependent.
    #[test]
    fn priority_levels_are_independent() {
        let clock = FakeClock::new();
        let tracker = clock.tracker();
        for i in 0..10 {
            tracker.record_dropped_request(&format!("pl-{i}"));
        }
        clock.step(Duration::from_secs(1));
        for i in 0..10 {
            let pl = format!("pl-{i}");
            tracker.record_dropped_request(&pl);
            assert_eq!(tracker.retry_after(&pl), 1, "{pl}");
        }

        // A few more drops on one level raise only its retry-after.
        for _ in 0..5 {
            tracker.record_dropped_request("pl-0");
        }
        clock.step(Duration::from_secs(1));
        for i in 0..10 {
            let pl = format!("pl-{i}");
            tracker.record_dropped_request(&pl);
            let want = if i == 0 { 2 } else { 1 };
            assert_eq!(tracker.retry_after(&pl), want, "{pl}");
        }
        assert_eq!(tracker.retry_after("other-pl"), 1);
    }

    #[test]
    fn retry_after_is_capped_and_history_bounded() {
        let clock = FakeClock::new();
        let tracker = clock.tracker();
        let mut raised = Vec::new();
        for _ in 0..200 {
            for _ in 0..200 {
                tracker.record_dropped_request("pl");
            }
            raised.push(tracker.retry_after("pl"));
            clock.step(Duration::from_secs(1));
        }
        assert_eq!(raised.iter().copied().max(), Some(MAX_RETRY_AFTER));
        assert_eq!(tracker.retry_after("pl"), MAX_RETRY_AFTER);
        let stats = tracker
            .pl_stats
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get("pl")
            .cloned();
        let len = stats.map(|s| {
            s.history
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .seconds
                .len()
        });
        assert!(len.is_some_and(|len| len <= 33), "{len:?}");

        // Quiet seconds bring it back down, one at a time per drop-recording second.
        let mut last = MAX_RETRY_AFTER;
        for _ in 0..100 {
            clock.step(Duration::from_secs(40));
            tracker.record_dropped_request("pl");
            let now = tracker.retry_after("pl");
            assert!(
                now == last - 1 || (now == 1 && last == 1),
                "{last} -> {now}"
            );
            last = now;
        }
        assert_eq!(last, 1);
    }

    #[test]
    fn clock_going_backwards_does_not_panic() {
        let clock = FakeClock::new();
        clock.step(Duration::from_secs(10));
        let tracker = clock.tracker();
        for _ in 0..10 {
            tracker.record_dropped_request("pl");
        }
        *clock.0.lock().unwrap_or_else(PoisonError::into_inner) -= Duration::from_secs(5);
        for _ in 0..10 {
            tracker.record_dropped_request("pl");
        }
        assert_eq!(tracker.retry_after("pl"), 1);
    }

    #[test]
    fn concurrent_drops_are_all_counted() {
        let clock = FakeClock::new();
        let tracker = Arc::new(clock.tracker());
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let tracker = Arc::clone(&tracker);
                std::thread::spawn(move || {
                    for _ in 0..250 {
                        tracker.record_dropped_request("pl");
                    }
                })
            })
            .collect();
        for thread in threads {
            assert!(thread.join().is_ok());
        }
        let count = tracker
            .pl_stats
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get("pl")
            .map(|s| s.current_count.load(Ordering::Relaxed));
        assert_eq!(count, Some(1000));
        clock.step(Duration::from_secs(1));
        tracker.record_dropped_request("pl");
        assert_eq!(tracker.retry_after("pl"), 2);
    }
}
