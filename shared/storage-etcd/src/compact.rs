//! Upstream's compact.go: every `--etcd-compaction-interval`, compact etcd to the revision
//! seen on the previous tick, so at least one interval of history stays for slow watchers
//! and continue tokens. Several API servers coordinate through `compact_rev_key`, whose
//! etcd version acts as a logical clock: only the one whose compare-and-swap on it
//! succeeds compacts; the others adopt its clock and try again next tick.

use std::sync::Arc;
use std::time::Duration;

use crate::client::SharedClient;
use etcd_client::{Client, CompactionOptions, Compare, CompareOp, Txn, TxnOp, TxnOpResponse};
use kas_storage::{Error, Result};
use tokio::sync::{Mutex, watch};
use tokio::task::JoinHandle;

use crate::errors::from_etcd;

/// The key shared by every compactor of one etcd cluster (not under `--etcd-prefix`).
pub const COMPACT_REV_KEY: &str = "compact_rev_key";

/// The compactor of one etcd cluster. [`Compactor::start`] runs it in the background;
/// dropping the returned value stops it.
#[derive(Debug)]
pub struct Compactor {
    inner: Arc<Inner>,
    task: Option<JoinHandle<()>>,
}

struct Inner {
    client: SharedClient,
    /// (compact time = our view of `compact_rev_key`'s version, revision seen last tick).
    clock: Mutex<(i64, i64)>,
    /// The newest revision known to be compacted, by this process or another.
    compacted: watch::Sender<u64>,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inner")
            .field("compacted", &*self.compacted.borrow())
            .finish_non_exhaustive()
    }
}

impl Compactor {
    /// A compactor that only runs when [`Compactor::compact_now`] is called.
    pub fn new(client: Client) -> Self {
        Compactor::shared(SharedClient::new(client))
    }

    fn shared(client: SharedClient) -> Self {
        Compactor {
            inner: Arc::new(Inner {
                client,
                clock: Mutex::new((0, 0)),
                compacted: watch::Sender::new(0),
            }),
            task: None,
        }
    }

    /// Starts ticking every `interval` (the first tick after one interval, as upstream).
    /// A zero interval never ticks.
    pub fn start(client: Client, interval: Duration) -> Self {
        Compactor::start_shared(SharedClient::new(client), interval)
    }

    /// [`Compactor::start`] on a client shared with a store.
    pub(crate) fn start_shared(client: SharedClient, interval: Duration) -> Self {
        let mut compactor = Compactor::shared(client);
        if !interval.is_zero() {
            let inner = Arc::clone(&compactor.inner);
            compactor.task = Some(tokio::spawn(async move {
                loop {
                    tokio::time::sleep(interval).await;
                    if let Err(e) = inner.tick().await {
                        tracing::error!(error = %e, "etcd compaction failed");
                    }
                }
            }));
        }
        compactor
    }

    /// One tick now: returns the revision compacted to, if this tick compacted.
    pub async fn compact_now(&self) -> Result<Option<u64>> {
        self.inner.tick().await
    }

    /// The last revision this process knows to be compacted (0 if none).
    pub fn compacted_revision(&self) -> u64 {
        *self.inner.compacted.borrow()
    }

    /// Follows [`Compactor::compacted_revision`], so watch caches learn which revisions
    /// are gone.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.inner.compacted.subscribe()
    }

    /// Hands each newly compacted revision to `on_compacted` (a role tells its watch
    /// caches, whose watches from older revisions then answer 410 Gone at once). The task
    /// owns the compactor, so both live as long as the process.
    pub fn follow(self, mut on_compacted: impl FnMut(u64) + Send + 'static) {
        let mut compacted = self.subscribe();
        tokio::spawn(async move {
            let _compactor = self;
            while compacted.changed().await.is_ok() {
                let revision = *compacted.borrow_and_update();
                on_compacted(revision);
            }
        });
    }
}

impl Drop for Compactor {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

impl Inner {
    async fn tick(&self) -> Result<Option<u64>> {
        let mut clock = self.clock.lock().await;
        let (expect_version, rev) = *clock;
        let txn = Txn::new()
            .when([Compare::version(
                COMPACT_REV_KEY,
                CompareOp::Equal,
                expect_version,
            )])
            .and_then([TxnOp::put(COMPACT_REV_KEY, rev.to_string(), None)])
            .or_else([TxnOp::get(COMPACT_REV_KEY, None)]);
        let resp = self
            .client
            .get()
            .kv_client()
            .txn(txn)
            .await
            .map_err(|e| from_etcd(COMPACT_REV_KEY, e))?;
        let current_rev = resp.header().map_or(0, |h| h.revision());
        if !resp.succeeded() {
            // Another compactor moved the clock: adopt it, compact next time.
            let Some(TxnOpResponse::Get(get)) = resp.op_responses().into_iter().next() else {
                return Err(Error::internal("compaction txn: missing range response"));
            };
            let Some(kv) = get.kvs().first() else {
                return Err(Error::internal("compaction txn: compact_rev_key vanished"));
            };
            *clock = (kv.version(), current_rev);
            if let Some(theirs) = kv.value_str().ok().and_then(|v| v.parse::<u64>().ok()) {
                self.record(theirs);
            }
            return Ok(None);
        }
        *clock = (expect_version + 1, current_rev);
        if rev == 0 {
            return Ok(None); // nothing seen yet: never compact on bootstrap
        }
        self.client
            .get()
            .kv_client()
            .compact(rev, Some(CompactionOptions::new()))
            .await
            .map_err(|e| from_etcd(COMPACT_REV_KEY, e))?;
        tracing::debug!(revision = rev, "etcd compacted");
        self.record(rev as u64);
        Ok(Some(rev as u64))
    }

    fn record(&self, revision: u64) {
        self.compacted.send_if_modified(|c| {
            let newer = revision > *c;
            *c = (*c).max(revision);
            newer
        });
    }
}
