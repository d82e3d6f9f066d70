//! A handle to ask a running watch for a progress notification (upstream's
//! `RequestWatchProgress`, which etcd answers on the watch stream with its current
//! revision once every earlier event of the stream has been sent).

use std::fmt;
use std::sync::Arc;

use tokio::sync::Notify;

/// Upstream's error for a streaming list (`sendInitialEvents` with bookmarks) when the
/// storage cannot answer progress requests; clients fall back to a LIST.
pub const REQUEST_WATCH_PROGRESS_DISABLED: &str = "a watch stream was requested by the client but the required storage feature RequestWatchProgress is disabled";

/// Shared by the caller, which asks, and the storage's watch, which forwards each request to
/// its backend. Requests made while the watch is busy are coalesced into one.
#[derive(Clone, Default)]
pub struct WatchProgressRequester(Arc<Notify>);

impl WatchProgressRequester {
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks for a progress notification; never blocks. A request made while no watch
    /// listens is kept for the next one (a harmless extra notification).
    pub fn request(&self) {
        self.0.notify_one();
    }

    /// Resolves at the next request (for the storage's watch loop; cancel-safe).
    pub async fn requested(&self) {
        self.0.notified().await;
    }
}

impl fmt::Debug for WatchProgressRequester {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WatchProgressRequester")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn requests_are_kept_until_heard_and_coalesced() {
        let r = WatchProgressRequester::new();
        r.request();
        r.request();
        let heard = tokio::time::timeout(Duration::from_secs(1), r.requested()).await;
        assert!(heard.is_ok(), "a request made before listening is kept");
        let again = tokio::time::timeout(Duration::from_millis(50), r.requested()).await;
        assert!(again.is_err(), "two requests before listening are one");
    }
}
