//! A work queue of names for the aggregator's controllers, after client-go's
//! `workqueue.TypedRateLimitingInterface`: a name is processed by one worker at a time
//! (added again while it runs, it runs once more after), may be added after a delay, and
//! a failing one is retried after a delay that doubles with each failure until
//! `forget`. Pure data: the controller's loop owns it, starts what `ready` hands out and
//! sleeps until `next_wakeup`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use tokio::time::Instant;

/// client-go's `ItemExponentialFailureRateLimiter`: `base * 2^failures`, at most `max`.
#[derive(Clone, Copy, Debug)]
pub struct Backoff {
    pub base: Duration,
    pub max: Duration,
}

#[derive(Debug)]
pub struct WorkQueue {
    backoff: Backoff,
    dirty: BTreeSet<String>,
    running: BTreeSet<String>,
    failures: HashMap<String, u32>,
    delayed: BTreeMap<(Instant, String), ()>,
}

impl WorkQueue {
    pub fn new(backoff: Backoff) -> WorkQueue {
        WorkQueue {
            backoff,
            dirty: BTreeSet::new(),
            running: BTreeSet::new(),
            failures: HashMap::new(),
            delayed: BTreeMap::new(),
        }
    }

    pub fn add(&mut self, name: &str) {
        self.dirty.insert(name.to_owned());
    }

    pub fn add_after(&mut self, name: &str, delay: Duration) {
        if delay.is_zero() {
            return self.add(name);
        }
        self.delayed
            .insert((Instant::now() + delay, name.to_owned()), ());
    }

    /// Adds `name` after its backoff, counting one more failure.
    pub fn add_rate_limited(&mut self, name: &str) {
        let n = self.failures.entry(name.to_owned()).or_default();
        let delay = self
            .backoff
            .base
            .saturating_mul(2u32.saturating_pow(*n))
            .min(self.backoff.max);
        *n = n.saturating_add(1);
        self.add_after(name, delay);
    }

    /// Forgets `name`'s failures (not a pending add).
    pub fn forget(&mut self, name: &str) {
        self.failures.remove(name);
    }

    pub fn num_requeues(&self, name: &str) -> u32 {
        self.failures.get(name).copied().unwrap_or(0)
    }

    /// The names that may start now, at most `limit` running at once; they count as
    /// running until `done`.
    pub fn ready(&mut self, limit: usize) -> Vec<String> {
        let now = Instant::now();
        while let Some(((at, _), ())) = self.delayed.first_key_value() {
            if *at > now {
                break;
            }
            if let Some(((_, name), ())) = self.delayed.pop_first() {
                self.dirty.insert(name);
            }
        }
        let free = limit.saturating_sub(self.running.len());
        let start: Vec<String> = self
            .dirty
            .difference(&self.running)
            .take(free)
            .cloned()
            .collect();
        for name in &start {
            self.dirty.remove(name);
            self.running.insert(name.clone());
        }
        start
    }

    pub fn done(&mut self, name: &str) {
        self.running.remove(name);
    }

    /// When a delayed name comes due.
    pub fn next_wakeup(&self) -> Option<Instant> {
        self.delayed.first_key_value().map(|((at, _), ())| *at)
    }
}

/// Sleeps until `at`, or forever without one: a `select!` arm for `next_wakeup`.
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
    fn one_at_a_time() {
        let mut q = WorkQueue::new(Backoff {
            base: Duration::from_secs(60),
            max: Duration::from_secs(3600),
        });
        q.add("a");
        q.add("a");
        q.add("b");
        assert_eq!(q.ready(1), ["a"]);
        q.add("a");
        assert_eq!(q.ready(2), ["b"], "a runs; its second add waits");
        q.done("a");
        assert_eq!(q.ready(2), ["a"]);
    }

    #[test]
    fn failures_back_off_doubling_to_the_maximum() {
        let mut q = WorkQueue::new(Backoff {
            base: Duration::from_secs(60),
            max: Duration::from_secs(3600),
        });
        let delays: Vec<u64> = (0..8)
            .map(|_| {
                let before = Instant::now();
                q.delayed.clear();
                q.add_rate_limited("a");
                (q.next_wakeup().unwrap() - before).as_secs()
            })
            .collect();
        assert_eq!(delays, [60, 120, 240, 480, 960, 1920, 3600, 3600]);
        assert_eq!(q.num_requeues("a"), 8);
        assert!(q.ready(2).is_empty(), "not due yet");
        q.forget("a");
        assert_eq!(q.num_requeues("a"), 0);
    }

    #[test]
    fn delayed_names_come_due() {
        let mut q = WorkQueue::new(Backoff {
            base: Duration::from_millis(1),
            max: Duration::from_millis(1),
        });
        q.add_after("a", Duration::from_millis(5));
        assert!(q.ready(1).is_empty());
        std::thread::sleep(Duration::from_millis(10));
        assert_eq!(q.ready(1), ["a"]);
        assert_eq!(q.next_wakeup(), None);
    }
}
