//! Upstream's rate-limited work queue (`workqueue.NewTypedRateLimitingQueue` with
//! `DefaultControllerRateLimiter`'s per-item backoff) for controllers that run in one task:
//! keys to process, each at most once at a time, failed ones retried after 5 ms doubling
//! to 1000 s (or another `ItemExponentialFailureRateLimiter`'s delays).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::Hash;
use std::time::Duration;

use tokio::time::Instant;

const BACKOFF_FIRST: Duration = Duration::from_millis(5);
const BACKOFF_MAX: Duration = Duration::from_secs(1000);

pub struct Queue<K> {
    dirty: BTreeSet<K>,
    failures: HashMap<K, u32>,
    retry: BTreeMap<(Instant, K), ()>,
    first_backoff: Duration,
    max_backoff: Duration,
}

impl<K> Default for Queue<K> {
    fn default() -> Self {
        Queue {
            dirty: BTreeSet::new(),
            failures: HashMap::new(),
            retry: BTreeMap::new(),
            first_backoff: BACKOFF_FIRST,
            max_backoff: BACKOFF_MAX,
        }
    }
}

impl<K: Ord + Hash + Clone> Queue<K> {
    /// A queue whose backoff stops growing at `max` (the remote availability controller's
    /// limiter tops out at 30 s).
    pub fn with_max_backoff(max: Duration) -> Self {
        Queue {
            max_backoff: max,
            ..Queue::default()
        }
    }

    /// A queue whose backoff starts at `first` and doubles up to `max` (the OpenAPI
    /// controllers' limiter: a minute to an hour).
    pub fn with_backoff(first: Duration, max: Duration) -> Self {
        Queue {
            first_backoff: first,
            max_backoff: max,
            ..Queue::default()
        }
    }

    /// Forgets `key`'s failures, so its next one waits the first backoff (upstream's
    /// `Forget`); a pending add stays.
    pub fn forget(&mut self, key: &K) {
        self.failures.remove(key);
    }

    /// How many times in a row `key` failed (upstream's `NumRequeues`).
    pub fn num_requeues(&self, key: &K) -> u32 {
        self.failures.get(key).copied().unwrap_or(0)
    }

    pub fn add(&mut self, key: K) {
        self.dirty.insert(key);
    }

    /// Adds `key` after `delay` (upstream's `AddAfter`).
    pub fn add_after(&mut self, key: K, delay: Duration) {
        self.retry.insert((Instant::now() + delay, key), ());
    }

    /// The keys due now, taken off the queue.
    pub fn take_ready(&mut self) -> Vec<K> {
        let now = Instant::now();
        while let Some(((at, key), ())) = self.retry.first_key_value() {
            if *at > now {
                break;
            }
            let key = key.clone();
            self.retry.pop_first();
            self.dirty.insert(key);
        }
        std::mem::take(&mut self.dirty).into_iter().collect()
    }

    /// Records how processing `key` went: a success forgets its failures, a failure
    /// retries it with the next backoff.
    pub fn done(&mut self, key: K, ok: bool) {
        if ok {
            self.failures.remove(&key);
            return;
        }
        let n = self.failures.entry(key.clone()).or_default();
        let delay = backoff(self.first_backoff, self.max_backoff, *n);
        *n = n.saturating_add(1);
        self.add_after(key, delay);
    }

    /// When the next delayed key is due.
    pub fn next_retry(&self) -> Option<Instant> {
        self.retry.first_key_value().map(|((at, _), ())| *at)
    }
}

/// The delay after the `n`th consecutive failure (from 0).
fn backoff(first: Duration, max: Duration, n: u32) -> Duration {
    first.saturating_mul(2u32.saturating_pow(n)).min(max)
}

/// Sleeps until `at`, or forever without one.
pub async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_taken_once_and_a_failure_waits_for_its_backoff() {
        let mut q = Queue::default();
        q.add("a");
        q.add("a");
        q.add("b");
        assert_eq!(q.take_ready(), ["a", "b"]);
        assert!(q.take_ready().is_empty());
        q.done("a", false);
        q.done("a", false);
        assert!(q.next_retry().is_some());
        assert_eq!(q.failures["a"], 2);
        q.done("a", true);
        assert!(q.failures.is_empty());
        assert_eq!(
            backoff(BACKOFF_FIRST, BACKOFF_MAX, 0),
            Duration::from_millis(5)
        );
        assert_eq!(
            backoff(BACKOFF_FIRST, BACKOFF_MAX, 3),
            Duration::from_millis(40)
        );
        assert_eq!(backoff(BACKOFF_FIRST, BACKOFF_MAX, 40), BACKOFF_MAX);
    }

    #[test]
    fn the_backoff_can_start_later_and_be_forgotten() {
        let mut q = Queue::with_backoff(Duration::from_secs(60), Duration::from_secs(3600));
        let delays: Vec<u64> = (0..8)
            .map(|_| {
                let before = Instant::now();
                q.retry.clear();
                q.done("a", false);
                (q.next_retry().unwrap() - before).as_secs()
            })
            .collect();
        assert_eq!(delays, [60, 120, 240, 480, 960, 1920, 3600, 3600]);
        assert_eq!(q.num_requeues(&"a"), 8);
        q.forget(&"a");
        assert_eq!(q.num_requeues(&"a"), 0);
    }

    #[test]
    fn the_backoff_can_stop_early() {
        let mut q = Queue::with_max_backoff(Duration::from_secs(30));
        for _ in 0..20 {
            q.done("a", false);
        }
        let at = q.next_retry().unwrap();
        assert!(at <= Instant::now() + Duration::from_secs(30));
    }
}
