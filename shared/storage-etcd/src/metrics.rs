//! What upstream's etcd3 storage tells about itself on /metrics:
//! - `apiserver_storage_objects{resource}`: each store's object count, polled every
//!   `--etcd-count-metric-poll-period` ([`observe_count`]; -1 when the count failed), also
//!   set in the process's `kas_storage::counts` tracker;
//! - `apiserver_storage_size_bytes{storage_cluster_id}`: the etcd database's size, asked
//!   of etcd when /metrics is scraped;
//! - `apiserver_storage_db_total_size_in_bytes{endpoint}` (deprecated upstream, still
//!   served): each endpoint's database size, polled every `--etcd-db-metric-poll-interval`.
//!
//! - the transformation and KMS envelope metrics of encryption at rest
//!   (`crate::encryption::metrics`).
//!
//! The collectors are the process's (one etcd configuration a process); each role
//! registers [`collectors`] with its server.

use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use kas_storage::Storage;

pub use crate::labels::qualified_resource;
use prometheus::core::{Collector, Desc};
use prometheus::proto::MetricFamily;
use prometheus::{IntGaugeVec, Opts};

struct Metrics {
    objects: IntGaugeVec,
    db_total_size: IntGaugeVec,
    /// The client `apiserver_storage_size_bytes` asks, once the store connected.
    client: Mutex<Option<etcd_client::Client>>,
    size_desc: Desc,
}

static METRICS: LazyLock<Metrics> = LazyLock::new(|| {
    Metrics {
    objects: IntGaugeVec::new(
        Opts::new(
            "apiserver_storage_objects",
            "[STABLE] Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.",
        ),
        &["resource"],
    )
    .expect("a valid metric"),
    db_total_size: IntGaugeVec::new(
        Opts::new(
            "apiserver_storage_db_total_size_in_bytes",
            "[ALPHA] (Deprecated since 1.28.0) Total size of the storage database file physically allocated in bytes.",
        ),
        &["endpoint"],
    )
    .expect("a valid metric"),
    client: Mutex::new(None),
    size_desc: Desc::new(
        "apiserver_storage_size_bytes".to_owned(),
        "[STABLE] Size of the storage database file physically allocated in bytes.".to_owned(),
        vec!["storage_cluster_id".to_owned()],
        Default::default(),
    )
    .expect("a valid metric"),
}
});

/// The storage metrics, for a role's registry.
pub fn collectors() -> Vec<Box<dyn Collector>> {
    let mut all: Vec<Box<dyn Collector>> = vec![
        Box::new(METRICS.objects.clone()),
        Box::new(METRICS.db_total_size.clone()),
        Box::new(StorageSize),
    ];
    all.extend(crate::encryption::metrics::collectors());
    all
}

/// Counts the objects under `prefix` (a store's key root, `/pods`) every `period` (none
/// when zero) as `apiserver_storage_objects{resource=<resource>}` until the handle is
/// dropped, which also removes the series (a custom resource no longer served).
pub fn observe_count(
    resource: String,
    storage: Arc<dyn Storage>,
    prefix: String,
    period: Duration,
) -> Option<CountObserver> {
    if period.is_zero() {
        return None;
    }
    let label = resource.clone();
    let task = tokio::spawn(async move {
        loop {
            let count = storage.count(&prefix).await.unwrap_or(-1);
            METRICS.objects.with_label_values(&[&resource]).set(count);
            // The work estimate of API Priority and Fairness reads the same count.
            kas_storage::counts::tracker().set(&resource, count);
            tokio::time::sleep(jittered(period)).await;
        }
    });
    Some(CountObserver { label, task })
}

/// [`observe_count`] of the resource `plural`.`group` stored under `storage_resource`,
/// for as long as the process lives (a built-in resource's store).
pub fn observe_count_forever(
    (group, plural): (&str, &str),
    storage: Arc<dyn Storage>,
    storage_resource: &str,
    period: Duration,
) {
    let resource = qualified_resource(group, plural);
    let prefix = format!("/{storage_resource}");
    if let Some(counted) = observe_count(resource, storage, prefix, period) {
        counted.keep();
    }
}

/// Stops a count's polling and removes its series when dropped.
pub struct CountObserver {
    label: String,
    task: tokio::task::JoinHandle<()>,
}

impl CountObserver {
    /// Polls for as long as the process lives.
    fn keep(self) {
        std::mem::forget(self);
    }
}

impl Drop for CountObserver {
    fn drop(&mut self) {
        self.task.abort();
        let _ = METRICS.objects.remove_label_values(&[&self.label]);
    }
}

/// Upstream's jitter of 1 (`wait.JitterUntil`): somewhere between `period` and twice it,
/// so that many stores do not count at once.
fn jittered(period: Duration) -> Duration {
    let mut byte = [0u8; 1];
    let _ = aws_lc_rs::rand::fill(&mut byte);
    period + period.mul_f64(f64::from(byte[0]) / 255.0)
}

/// Keeps `client` for `apiserver_storage_size_bytes`.
pub(crate) fn set_size_client(client: etcd_client::Client) {
    *METRICS.client.lock().unwrap_or_else(|e| e.into_inner()) = Some(client);
}

/// Polls one endpoint's database size every `interval` through `client` (connected to
/// that endpoint alone); the series says -1 while etcd does not answer.
pub(crate) fn poll_db_size(
    endpoint: String,
    mut client: etcd_client::MaintenanceClient,
    interval: Duration,
) {
    tokio::spawn(async move {
        loop {
            let size = match client.status().await {
                Ok(status) => status.db_size(),
                Err(_) => -1,
            };
            METRICS
                .db_total_size
                .with_label_values(&[&endpoint])
                .set(size);
            tokio::time::sleep(jittered(interval)).await;
        }
    });
}

/// `apiserver_storage_size_bytes`, asked of etcd at each scrape within a second, as
/// upstream's monitor collector does (`storage_cluster_id` `etcd-0`: one storage cluster).
struct StorageSize;

impl Collector for StorageSize {
    fn desc(&self) -> Vec<&Desc> {
        vec![&METRICS.size_desc]
    }

    fn collect(&self) -> Vec<MetricFamily> {
        let client = METRICS
            .client
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let Some(client) = client else {
            return Vec::new();
        };
        let size = std::thread::scope(|s| {
            s.spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .ok()?;
                runtime.block_on(async {
                    let mut maintenance = client.maintenance_client();
                    tokio::time::timeout(Duration::from_secs(1), maintenance.status())
                        .await
                        .ok()?
                        .ok()
                        .map(|s| s.db_size())
                })
            })
            .join()
            .ok()
            .flatten()
        });
        let Some(size) = size else {
            return Vec::new();
        };
        let gauge = prometheus::IntGaugeVec::new(
            Opts::new(
                "apiserver_storage_size_bytes",
                "[STABLE] Size of the storage database file physically allocated in bytes.",
            ),
            &["storage_cluster_id"],
        );
        match gauge {
            Ok(gauge) => {
                gauge.with_label_values(&["etcd-0"]).set(size);
                gauge.collect()
            }
            Err(_) => Vec::new(),
        }
    }
}
