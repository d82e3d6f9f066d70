//! When each watcher that allows bookmarks gets its next one (upstream's
//! `cacheWatcher.nextBookmarkTime` and `watcherBookmarkTimeBuckets`): a bookmark frequency
//! after the last one, or 2 s before the watch's deadline if that is sooner, so that a
//! client resuming after its timeout starts from a recent resourceVersion. Watchers due in
//! the same bucket (upstream: a second) are served by one wake-up of the cacher's bookmark
//! task, which sleeps until the earliest bucket starts. Pure data: no I/O, no locking, no
//! clock (times are given).

use std::collections::BTreeMap;

use tokio::time::{Duration, Instant};

/// How long before its deadline a watch gets its last bookmark (upstream's 2 s).
const BEFORE_DEADLINE: Duration = Duration::from_secs(2);

/// Upstream `nextBookmarkTime`: the earlier of `now + frequency` and `deadline - 2s`;
/// `None` when that is already past (a watch with less than 2 s left gets none).
pub(crate) fn next_bookmark_time(
    now: Instant,
    frequency: Duration,
    deadline: Option<Instant>,
) -> Option<Instant> {
    let heartbeat = now + frequency;
    let Some(deadline) = deadline else {
        return Some(heartbeat);
    };
    let before_deadline = deadline.checked_sub(BEFORE_DEADLINE)?;
    let next = heartbeat.min(before_deadline);
    (next >= now).then_some(next)
}

/// Watcher ids by the bucket their next bookmark is due in. Bucket `b` starts at
/// `epoch + b × resolution`, and its watchers are served when it starts: a bookmark is
/// sent at most one resolution early, never late.
#[derive(Debug)]
pub(crate) struct BookmarkQueue {
    buckets: BTreeMap<u64, Vec<u64>>,
    epoch: Instant,
    resolution: Duration,
    /// The first bucket not served yet; nothing is scheduled before it.
    unserved: u64,
}

impl BookmarkQueue {
    pub(crate) fn new(epoch: Instant, resolution: Duration) -> Self {
        BookmarkQueue {
            buckets: BTreeMap::new(),
            epoch,
            resolution: resolution.max(Duration::from_millis(1)),
            unserved: 0,
        }
    }

    fn bucket(&self, at: Instant) -> u64 {
        let since = at.saturating_duration_since(self.epoch).as_nanos();
        u64::try_from(since / self.resolution.as_nanos()).unwrap_or(u64::MAX)
    }

    fn start(&self, bucket: u64) -> Instant {
        let offset = self
            .resolution
            .as_nanos()
            .saturating_mul(u128::from(bucket));
        self.epoch + Duration::from_nanos(u64::try_from(offset).unwrap_or(u64::MAX))
    }

    /// Schedules watcher `id` for `at` (in the first unserved bucket if `at` falls in one
    /// already served); whether that made it the earliest, so the task must wake sooner.
    pub(crate) fn schedule(&mut self, id: u64, at: Instant) -> bool {
        let bucket = self.bucket(at).max(self.unserved);
        let earliest = self
            .buckets
            .first_key_value()
            .is_none_or(|(&first, _)| bucket < first);
        self.buckets.entry(bucket).or_default().push(id);
        earliest
    }

    /// Whether `at` falls in a bucket already served: the bookmark just sent covers it.
    pub(crate) fn served(&self, at: Instant) -> bool {
        self.bucket(at) < self.unserved
    }

    /// When the earliest scheduled bucket starts.
    pub(crate) fn next_due(&self) -> Option<Instant> {
        self.buckets.first_key_value().map(|(&b, _)| self.start(b))
    }

    /// The watchers of every bucket that started by `now`, which are then served.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Vec<u64> {
        let current = self.bucket(now);
        self.unserved = self.unserved.max(current.saturating_add(1));
        let later = self.buckets.split_off(&self.unserved);
        std::mem::replace(&mut self.buckets, later)
            .into_values()
            .flatten()
            .collect()
    }

    /// Forgets every watcher (all watches ended).
    pub(crate) fn clear(&mut self) {
        self.buckets.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);
    const SECOND: Duration = Duration::from_secs(1);

    #[test]
    fn next_bookmark_time_is_upstreams() {
        let now = Instant::now();
        assert_eq!(next_bookmark_time(now, MINUTE, None), Some(now + MINUTE));
        let far = now + Duration::from_secs(1800);
        assert_eq!(
            next_bookmark_time(now, MINUTE, Some(far)),
            Some(now + MINUTE)
        );
        // A 3 s watch: 2 s before its deadline, a second from now.
        let soon = now + 3 * SECOND;
        assert_eq!(
            next_bookmark_time(now, MINUTE, Some(soon)),
            Some(now + SECOND)
        );
        // Exactly 2 s left: now; less: none, and never after the deadline.
        assert_eq!(
            next_bookmark_time(now, MINUTE, Some(now + 2 * SECOND)),
            Some(now)
        );
        assert_eq!(next_bookmark_time(now, MINUTE, Some(now + SECOND)), None);
        assert_eq!(next_bookmark_time(now, MINUTE, Some(now)), None);
        // An expired deadline (a negative timeoutSeconds).
        assert_eq!(next_bookmark_time(now + SECOND, MINUTE, Some(now)), None);
    }

    #[test]
    fn buckets_are_served_when_they_start() {
        let epoch = Instant::now();
        let mut q = BookmarkQueue::new(epoch, SECOND);
        assert_eq!(q.next_due(), None);
        assert!(q.schedule(1, epoch + Duration::from_millis(2500)));
        assert!(
            !q.schedule(2, epoch + Duration::from_millis(2900)),
            "same bucket"
        );
        assert!(
            q.schedule(3, epoch + Duration::from_millis(1200)),
            "earlier"
        );
        assert!(!q.schedule(4, epoch + MINUTE));
        assert_eq!(q.next_due(), Some(epoch + SECOND));
        assert!(q.pop_due(epoch + Duration::from_millis(999)).is_empty());
        assert_eq!(q.pop_due(epoch + SECOND), [3]);
        assert_eq!(q.next_due(), Some(epoch + 2 * SECOND));
        // A late wake-up serves every bucket that started, in order.
        assert_eq!(q.pop_due(epoch + 5 * SECOND), [1, 2]);
        assert_eq!(q.next_due(), Some(epoch + MINUTE));
    }

    #[test]
    fn nothing_is_scheduled_into_a_served_bucket() {
        let epoch = Instant::now();
        let mut q = BookmarkQueue::new(epoch, SECOND);
        q.schedule(1, epoch + 3 * SECOND);
        assert_eq!(q.pop_due(epoch + Duration::from_millis(3100)), [1]);
        let early = epoch + Duration::from_millis(3500);
        assert!(q.served(early));
        assert!(!q.served(epoch + 4 * SECOND));
        // Scheduled for a served time anyway (a new watcher whose time has come): the
        // next bucket.
        q.schedule(2, epoch + SECOND);
        assert_eq!(q.next_due(), Some(epoch + 4 * SECOND));
        assert_eq!(q.pop_due(epoch + 4 * SECOND), [2]);
    }
}
