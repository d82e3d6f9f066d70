//! [`LeaseManager`]: upstream's etcd3 lease manager. Every write under a TTL needs an etcd
//! lease; granting one per write would flood etcd with leases (events are written all the
//! time), so writes within a short window share one, granted a little longer than asked.

use std::time::{Duration, Instant};

use kas_storage::Result;
use tokio::sync::Mutex;

use crate::client::SharedClient;
use crate::errors::from_etcd;

/// Upstream's defaults: a lease is reused for at most 60 s, or 5 % of its TTL when that is
/// shorter, and by at most 1000 writes.
const REUSE_DURATION_SECONDS: i64 = 60;
const REUSE_DURATION_PERCENT: f64 = 0.05;
const MAX_OBJECTS_PER_LEASE: u64 = 1000;

pub(crate) struct LeaseManager {
    client: SharedClient,
    previous: Mutex<Option<Lease>>,
}

#[derive(Debug, Clone, Copy)]
struct Lease {
    id: i64,
    expires: Instant,
    attached: u64,
}

impl LeaseManager {
    pub(crate) fn new(client: SharedClient) -> Self {
        LeaseManager {
            client,
            previous: Mutex::new(None),
        }
    }

    /// A lease that lives at least `ttl` seconds from now and at most the reuse window
    /// longer: the previous one if it still fits, otherwise a new one.
    pub(crate) async fn get_lease(&self, ttl: i64) -> Result<i64> {
        let now = Instant::now();
        let reuse = reuse_seconds(ttl);
        // Held across the grant, as upstream's is, so concurrent writes share one lease.
        let mut previous = self.previous.lock().await;
        if let Some(lease) = previous.as_mut().filter(|l| reusable(l, now, ttl, reuse)) {
            lease.attached += 1;
            return Ok(lease.id);
        }
        let granted = ttl.saturating_add(reuse);
        let resp = self
            .client
            .get()
            .lease_client()
            .grant(granted, None)
            .await
            .map_err(|e| from_etcd("lease grant", e))?;
        *previous = Some(Lease {
            id: resp.id(),
            expires: after(now, granted),
            attached: 1,
        });
        Ok(resp.id())
    }
}

/// How much longer than asked a lease is granted, and so how long it may be reused.
fn reuse_seconds(ttl: i64) -> i64 {
    ((REUSE_DURATION_PERCENT * ttl as f64) as i64).min(REUSE_DURATION_SECONDS)
}

/// Upstream's test: the lease outlives the new TTL ("valid"), but by no more than the reuse
/// window ("sufficient"), and has room for another object.
fn reusable(lease: &Lease, now: Instant, ttl: i64, reuse: i64) -> bool {
    let valid = after(now, ttl) < lease.expires;
    let sufficient = after(now, ttl.saturating_add(reuse)) > lease.expires;
    valid && sufficient && lease.attached < MAX_OBJECTS_PER_LEASE
}

/// `s` seconds after `now`; beyond what the clock can hold, `now`, so that a lease of
/// such a TTL is never reused rather than the arithmetic overflowing.
fn after(now: Instant, s: i64) -> Instant {
    now.checked_add(Duration::from_secs(s.max(0) as u64))
        .unwrap_or(now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reuse_window_is_five_percent_capped_at_a_minute() {
        assert_eq!(reuse_seconds(3600), 60);
        assert_eq!(reuse_seconds(600), 30);
        assert_eq!(reuse_seconds(2), 0);
    }

    #[test]
    fn a_lease_is_reused_within_its_window_and_count() {
        let now = Instant::now();
        let lease = Lease {
            id: 7,
            expires: after(now, 3600 + 60),
            attached: 1,
        };
        assert!(reusable(&lease, after(now, 1), 3600, 60));
        // A minute later it no longer outlives a fresh TTL.
        assert!(!reusable(&lease, after(now, 61), 3600, 60));
        // A much shorter TTL would keep the key far too long.
        assert!(!reusable(&lease, now, 60, 3));
        let full = Lease {
            attached: MAX_OBJECTS_PER_LEASE,
            ..lease
        };
        assert!(!reusable(&full, after(now, 1), 3600, 60));
        // Without a window there is nothing to reuse.
        let short = Lease {
            expires: after(now, 2),
            ..lease
        };
        assert!(!reusable(&short, now, 2, 0));
        assert!(!reusable(&lease, now, i64::MAX, 60));
    }
}
