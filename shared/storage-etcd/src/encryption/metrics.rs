//! Upstream's metrics of value transformations (`storage/value/metrics.go`) and of KMS v2
//! envelope encryption (`envelope/metrics`), the process's, registered through
//! [`crate::metrics::collectors`].

use std::sync::LazyLock;
use std::time::{Duration, Instant};

use prometheus::core::Collector;
use prometheus::{HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGaugeVec, Opts};

struct Metrics {
    transformation_duration: HistogramVec,
    transformation_operations: IntCounterVec,
    cache_misses: IntCounter,
    kms_latency: HistogramVec,
    invalid_key_id: IntCounterVec,
    dek_source_cache_size: IntGaugeVec,
    key_id_hash: IntCounterVec,
    key_id_hash_last: IntGaugeVec,
    key_id_hash_status_last: IntGaugeVec,
}

fn exponential(start: f64, factor: f64, count: usize) -> Vec<f64> {
    prometheus::exponential_buckets(start, factor, count).unwrap_or_default()
}

static METRICS: LazyLock<Metrics> = LazyLock::new(|| {
    Metrics {
    transformation_duration: HistogramVec::new(
        HistogramOpts::new(
            "apiserver_storage_transformation_duration_seconds",
            "[ALPHA] Latencies in seconds of value transformation operations.",
        )
        .buckets(exponential(5e-6, 2.0, 25)),
        &["transformation_type", "transformer_prefix"],
    )
    .expect("a valid metric"),
    transformation_operations: IntCounterVec::new(
        Opts::new(
            "apiserver_storage_transformation_operations_total",
            "[ALPHA] Total number of transformations. Successful transformation will have a status 'OK' and a varied status string when the transformation fails.",
        ),
        &["resource", "transformation_type", "transformer_prefix", "status"],
    )
    .expect("a valid metric"),
    cache_misses: IntCounter::new(
        "apiserver_storage_envelope_transformation_cache_misses_total",
        "[ALPHA] Total number of cache misses while accessing key decryption key(KEK).",
    )
    .expect("a valid metric"),
    kms_latency: HistogramVec::new(
        HistogramOpts::new(
            "apiserver_envelope_encryption_kms_operations_latency_seconds",
            "[ALPHA] KMS operation duration with gRPC error code status total.",
        )
        .buckets(exponential(0.0001, 2.0, 20)),
        &["provider_name", "method_name", "grpc_status_code"],
    )
    .expect("a valid metric"),
    invalid_key_id: IntCounterVec::new(
        Opts::new(
            "apiserver_envelope_encryption_invalid_key_id_from_status_total",
            "[ALPHA] Number of times an invalid keyID is returned by the Status RPC call split by error.",
        ),
        &["provider_name", "error"],
    )
    .expect("a valid metric"),
    dek_source_cache_size: IntGaugeVec::new(
        Opts::new(
            "apiserver_envelope_encryption_dek_source_cache_size",
            "[ALPHA] Number of records in data encryption key (DEK) source cache. On a restart, this value is an approximation of the number of decrypt RPC calls the server will make to the KMS plugin.",
        ),
        &["provider_name"],
    )
    .expect("a valid metric"),
    key_id_hash: IntCounterVec::new(
        Opts::new(
            "apiserver_envelope_encryption_key_id_hash_total",
            "[ALPHA] Number of times a keyID is used split by transformation type, provider, and apiserver identity.",
        ),
        &["transformation_type", "provider_name", "key_id_hash", "apiserver_id_hash"],
    )
    .expect("a valid metric"),
    key_id_hash_last: IntGaugeVec::new(
        Opts::new(
            "apiserver_envelope_encryption_key_id_hash_last_timestamp_seconds",
            "[ALPHA] The last time in seconds when a keyID was used.",
        ),
        &["transformation_type", "provider_name", "key_id_hash", "apiserver_id_hash"],
    )
    .expect("a valid metric"),
    key_id_hash_status_last: IntGaugeVec::new(
        Opts::new(
            "apiserver_envelope_encryption_key_id_hash_status_last_timestamp_seconds",
            "[ALPHA] The last time in seconds when a keyID was returned by the Status RPC call.",
        ),
        &["provider_name", "key_id_hash", "apiserver_id_hash"],
    )
    .expect("a valid metric"),
}
});

pub(crate) fn collectors() -> Vec<Box<dyn Collector>> {
    let m = &*METRICS;
    let mut all: Vec<Box<dyn Collector>> = super::reload::collectors();
    all.extend::<[Box<dyn Collector>; 9]>([
        Box::new(m.transformation_duration.clone()),
        Box::new(m.transformation_operations.clone()),
        Box::new(m.cache_misses.clone()),
        Box::new(m.kms_latency.clone()),
        Box::new(m.invalid_key_id.clone()),
        Box::new(m.dek_source_cache_size.clone()),
        Box::new(m.key_id_hash.clone()),
        Box::new(m.key_id_hash_last.clone()),
        Box::new(m.key_id_hash_status_last.clone()),
    ]);
    all
}

/// Upstream's `RecordTransformation`: the operation counted with its status, the latency
/// of those that succeeded.
pub(crate) fn record(
    resource: &str,
    kind: &str,
    prefix: &str,
    start: Instant,
    error: Option<&String>,
) {
    let status = error.map_or("OK", |e| grpc_code(e).unwrap_or("unknown-non-grpc"));
    METRICS
        .transformation_operations
        .with_label_values(&[resource, kind, prefix, status])
        .inc();
    if error.is_none() {
        METRICS
            .transformation_duration
            .with_label_values(&[kind, prefix])
            .observe(start.elapsed().as_secs_f64());
    }
}

/// The gRPC code a KMS call's error carries (the client writes them as Go's gRPC client
/// prints them, `rpc error: code = <Code> desc = ...`), as upstream's `getErrorCode`
/// unwraps it from the error chain.
fn grpc_code(error: &str) -> Option<&str> {
    let rest = &error[error.find("rpc error: code = ")? + "rpc error: code = ".len()..];
    rest.split_whitespace().next()
}

pub(crate) fn record_cache_miss() {
    METRICS.cache_misses.inc();
}

/// A KMS call's latency by provider, method (`/v2.KeyManagementService/Status`) and
/// status (`OK`, or the gRPC code).
pub(crate) fn record_kms_operation(provider: &str, method: &str, elapsed: Duration, code: &str) {
    METRICS
        .kms_latency
        .with_label_values(&[provider, method, code])
        .observe(elapsed.as_secs_f64());
}

/// A `Status` answer whose key ID is `empty` or `too_long`.
pub(crate) fn record_invalid_key_id(provider: &str, error: &str) {
    METRICS
        .invalid_key_id
        .with_label_values(&[provider, error])
        .inc();
}

pub(crate) fn record_dek_source_cache_size(provider: &str, size: usize) {
    METRICS
        .dek_source_cache_size
        .with_label_values(&[provider])
        .set(size as i64);
}

fn now_seconds() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Upstream's `RecordKeyID`: a value written (`to_storage`) or read (`from_storage`)
/// under the key whose ID hashes to `key_id_hash`.
pub(crate) fn record_key_id(kind: &str, provider: &str, key_id_hash: &str) {
    let labels = [
        kind,
        provider,
        key_id_hash,
        crate::labels::apiserver_id_hash(),
    ];
    METRICS.key_id_hash.with_label_values(&labels).inc();
    METRICS
        .key_id_hash_last
        .with_label_values(&labels)
        .set(now_seconds());
}

/// Upstream's `RecordKeyIDFromStatus`: the key ID a healthy `Status` reported.
pub(crate) fn record_key_id_from_status(provider: &str, key_id_hash: &str) {
    let labels = [provider, key_id_hash, crate::labels::apiserver_id_hash()];
    METRICS
        .key_id_hash_status_last
        .with_label_values(&labels)
        .set(now_seconds());
}
