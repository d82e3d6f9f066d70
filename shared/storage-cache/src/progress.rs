//! Upstream's `ConditionalProgressRequester` (pkg/storage/cacher/progress): while a read
//! waits for the cache to reach a revision, ask the storage's watch for a progress
//! notification every 100 ms. Without it a cache of a resource that nobody writes would
//! never learn that it is at the storage's current revision, which moves with every write
//! to any resource.

use std::sync::Arc;
use std::time::Duration;

use kas_storage::WatchProgressRequester;
use tokio::sync::watch;

/// Upstream's `progressRequestPeriod`.
const PERIOD: Duration = Duration::from_millis(100);

pub(crate) struct ProgressRequester {
    /// How many reads are waiting.
    waiting: watch::Sender<usize>,
    requests: WatchProgressRequester,
}

/// One waiting read; dropping it ends the wait.
pub(crate) struct Waiting(Arc<ProgressRequester>);

impl Drop for Waiting {
    fn drop(&mut self) {
        self.0.waiting.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl ProgressRequester {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(ProgressRequester {
            waiting: watch::Sender::new(0),
            requests: WatchProgressRequester::new(),
        })
    }

    /// The handle the cache's storage watch forwards requests from.
    pub(crate) fn requests(&self) -> WatchProgressRequester {
        self.requests.clone()
    }

    /// Registers a waiting read until the guard is dropped.
    pub(crate) fn wait(self: &Arc<Self>) -> Waiting {
        self.waiting.send_modify(|n| *n += 1);
        Waiting(Arc::clone(self))
    }

    /// Requests progress at most every [`PERIOD`] while some read waits; at once when the
    /// first one arrives after a quiet spell. Runs until aborted.
    pub(crate) async fn run(self: Arc<Self>) {
        let mut waiting = self.waiting.subscribe();
        loop {
            if waiting.wait_for(|n| *n > 0).await.is_err() {
                return;
            }
            self.requests.request();
            tokio::time::sleep(PERIOD).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn requests_only_while_someone_waits() {
        let p = ProgressRequester::new();
        let requests = p.requests();
        let task = tokio::spawn(Arc::clone(&p).run());
        let heard = |ms| tokio::time::timeout(Duration::from_millis(ms), requests.requested());
        assert!(heard(300).await.is_err(), "idle: none");
        let guard = p.wait();
        assert!(heard(1000).await.is_ok(), "at once");
        assert!(heard(1000).await.is_ok(), "and again after the period");
        drop(guard);
        tokio::time::sleep(Duration::from_millis(250)).await;
        let _ = heard(1).await; // the last tick's request may still be pending
        assert!(heard(400).await.is_err(), "stops with the last waiter");
        task.abort();
    }
}
