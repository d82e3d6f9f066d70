//! Upstream's `LatencyTrackers` (`k8s.io/apiserver/pkg/endpoints/request/webhook_duration.go`):
//! how long a request spent in each layer of the server (etcd, decoding, webhooks, the
//! APF queue, transforming, serializing and writing the answer), which the audit event of
//! a request slower than 500 ms carries as `apiserver.latency.k8s.io/*` annotations.
//!
//! Upstream hangs the trackers on the request's context. Here the audit filter runs the
//! request's future inside [`scope`] (a task-local), so the storage, admission and
//! response code record with [`track`] and [`track_fn`] without a context argument; with
//! no scope (auditing off, watches, work spawned off the request's task) they record
//! nothing and cost a thread-local lookup. The trackers live in kas-storage, the lowest
//! crate every layer that records shares.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use kas_apimachinery::golang::time::{Duration as GoDuration, duration_string};

/// The layers, in the order upstream's `AuditAnnotationsFromLatencyTrackers` writes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layer {
    /// Converting what storage returned to what the client asked for (summed).
    Transform,
    /// Round trips to etcd (summed).
    Storage,
    /// Encoding the answer (summed).
    Serialization,
    /// Writing the answer's bytes (summed).
    ResponseWrite,
    /// Mutating webhooks, called one after another (summed).
    MutatingWebhook,
    /// Validating webhooks, called together (the longest).
    ValidatingWebhook,
    /// Decoding what etcd returned (summed).
    Decode,
    /// Waiting in an APF queue (the longest).
    ApfQueueWait,
}

const LAYERS: [(Layer, &str); 8] = [
    (
        Layer::Transform,
        "apiserver.latency.k8s.io/transform-response-object",
    ),
    (Layer::Storage, "apiserver.latency.k8s.io/etcd"),
    (
        Layer::Serialization,
        "apiserver.latency.k8s.io/serialize-response-object",
    ),
    (
        Layer::ResponseWrite,
        "apiserver.latency.k8s.io/response-write",
    ),
    (
        Layer::MutatingWebhook,
        "apiserver.latency.k8s.io/mutating-webhook",
    ),
    (
        Layer::ValidatingWebhook,
        "apiserver.latency.k8s.io/validating-webhook",
    ),
    (
        Layer::Decode,
        "apiserver.latency.k8s.io/decode-response-object",
    ),
    (
        Layer::ApfQueueWait,
        "apiserver.latency.k8s.io/apf-queue-wait",
    ),
];

/// The key of the request's total latency, which upstream adds beside the layers'.
pub const TOTAL_KEY: &str = "apiserver.latency.k8s.io/total";

/// Upstream's threshold: a request's latencies are annotated only when it took longer.
pub const ANNOTATION_THRESHOLD: Duration = Duration::from_millis(500);

/// One request's trackers, in nanoseconds.
#[derive(Debug, Default)]
pub struct LatencyTrackers {
    nanos: [AtomicU64; 8],
}

impl Layer {
    fn index(self) -> usize {
        self as usize
    }

    /// Validating webhooks run in parallel and APF waits once: upstream keeps the longest.
    fn keeps_max(self) -> bool {
        matches!(self, Layer::ValidatingWebhook | Layer::ApfQueueWait)
    }
}

impl LatencyTrackers {
    pub fn new() -> Arc<LatencyTrackers> {
        Arc::new(LatencyTrackers::default())
    }

    /// Upstream's `TrackDuration`.
    pub fn record(&self, layer: Layer, d: Duration) {
        let n = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        let slot = &self.nanos[layer.index()];
        if layer.keeps_max() {
            slot.fetch_max(n, Ordering::Relaxed);
        } else {
            slot.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// Upstream's `GetLatency`.
    pub fn get(&self, layer: Layer) -> Duration {
        Duration::from_nanos(self.nanos[layer.index()].load(Ordering::Relaxed))
    }

    /// Upstream's `AuditAnnotationsFromLatencyTrackers`: each layer that took any time, as
    /// Go prints a `time.Duration`.
    pub fn audit_annotations(&self) -> Vec<(&'static str, String)> {
        LAYERS
            .iter()
            .filter_map(|(layer, key)| {
                let d = self.get(*layer);
                (!d.is_zero()).then(|| (*key, go_duration(d)))
            })
            .collect()
    }
}

/// Go's `time.Duration.String()` of `d`.
pub fn go_duration(d: Duration) -> String {
    duration_string(GoDuration(i64::try_from(d.as_nanos()).unwrap_or(i64::MAX)))
}

tokio::task_local! {
    static TRACKERS: Arc<LatencyTrackers>;
}

/// Runs `fut` with `trackers` as the request's.
pub fn scope<F: Future>(trackers: Arc<LatencyTrackers>, fut: F) -> impl Future<Output = F::Output> {
    TRACKERS.scope(trackers, fut)
}

/// Runs `f` with `trackers` as the request's (for work done outside the request's future,
/// such as polling its answer's body).
pub fn sync_scope<R>(trackers: Arc<LatencyTrackers>, f: impl FnOnce() -> R) -> R {
    TRACKERS.sync_scope(trackers, f)
}

/// Whether the current request tracks latencies.
pub fn tracking() -> bool {
    TRACKERS.try_with(|_| ()).is_ok()
}

/// Upstream's `TrackStorageLatency`, `TrackAPFQueueWaitLatency` and the like: adds `d` to
/// the current request's tracker of `layer`, if it tracks.
pub fn track(layer: Layer, d: Duration) {
    let _ = TRACKERS.try_with(|t| t.record(layer, d));
}

/// Upstream's `Track(f)`: times `f` into the current request's tracker of `layer` (and
/// only reads the clock when the request tracks).
pub fn track_fn<R>(layer: Layer, f: impl FnOnce() -> R) -> R {
    if !tracking() {
        return f();
    }
    let start = Instant::now();
    let out = f();
    track(layer, start.elapsed());
    out
}

/// [`track_fn`] for a future: the time from its first poll to its end.
pub async fn track_future<F: Future>(layer: Layer, fut: F) -> F::Output {
    if !tracking() {
        return fut.await;
    }
    let start = Instant::now();
    let out = fut.await;
    track(layer, start.elapsed());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn layers_sum_or_keep_the_longest_and_print_as_go() {
        let t = LatencyTrackers::new();
        scope(t.clone(), async {
            track(Layer::Storage, Duration::from_micros(300));
            track(Layer::Storage, Duration::from_micros(330));
            track(Layer::ValidatingWebhook, Duration::from_millis(7));
            track(Layer::ValidatingWebhook, Duration::from_millis(3));
            track(Layer::ApfQueueWait, Duration::from_nanos(1_500_000_000));
            assert_eq!(track_fn(Layer::Serialization, || 7), 7);
            track(Layer::Serialization, Duration::from_nanos(1));
        })
        .await;
        let annotations = t.audit_annotations();
        let keys: Vec<&str> = annotations.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            keys,
            [
                "apiserver.latency.k8s.io/etcd",
                "apiserver.latency.k8s.io/serialize-response-object",
                "apiserver.latency.k8s.io/validating-webhook",
                "apiserver.latency.k8s.io/apf-queue-wait",
            ]
        );
        assert_eq!(annotations[0].1, "630µs");
        assert_eq!(annotations[2].1, "7ms");
        assert_eq!(annotations[3].1, "1.5s");
    }

    #[tokio::test]
    async fn outside_a_scope_nothing_is_tracked() {
        assert!(!tracking());
        track(Layer::Storage, Duration::from_secs(1));
        assert_eq!(track_fn(Layer::Decode, || 1), 1);
        let t = LatencyTrackers::new();
        assert!(t.audit_annotations().is_empty());
    }
}
