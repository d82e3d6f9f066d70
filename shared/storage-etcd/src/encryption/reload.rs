//! `--encryption-provider-config-automatic-reload`, as upstream's
//! `DynamicEncryptionConfigContent`: every minute the file's hash is compared with the
//! last loaded one; a changed file is parsed, its KMS plugins primed and checked healthy
//! (for up to 10 s), and only then does it replace the configuration in effect. A file that
//! does not load leaves the previous configuration in effect and is tried again at the
//! next poll. Each attempt that changes something is counted in
//! `apiserver_encryption_config_controller_automatic_reloads_total`.

use std::path::PathBuf;
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant, SystemTime};

use prometheus::core::Collector;
use prometheus::{IntCounterVec, IntGaugeVec, Opts};

use super::Encryption;

/// Upstream's `EncryptionConfigFileChangePollDuration`.
const POLL: Duration = Duration::from_secs(60);
/// How long new KMS plugins may take to answer healthy (upstream's minimum close grace).
const HEALTHY_WITHIN: Duration = Duration::from_secs(10);
/// A test-only knob, as upstream's tests set the poll variable: a Go duration.
const POLL_ENV: &str = "KAS_ENCRYPTION_CONFIG_POLL_INTERVAL";

/// The hash of a configuration file's content (upstream's `computeEncryptionConfigHash`).
pub(crate) fn config_hash(data: &[u8]) -> String {
    format!("k8s:enc:unstable:1:{}", crate::labels::sha256_hex(data))
}

/// Reads and parses the file, with upstream's errors, and its hash.
pub(crate) fn load(path: &std::path::Path) -> Result<(Encryption, String), String> {
    let data = std::fs::read(path).map_err(|e| {
        format!("error reading encryption provider configuration file {path:?}: {e}")
    })?;
    if data.is_empty() {
        return Err(format!(
            "encryption provider configuration file {path:?} is empty"
        ));
    }
    let encryption = Encryption::parse(&data).map_err(|e| {
        format!("error while parsing encryption provider configuration file {path:?}: {e}")
    })?;
    Ok((encryption, config_hash(&data)))
}

/// Polls `path` for as long as the process lives; `apply` puts each configuration that
/// loads into effect (the codec's swap), or says why it could not.
pub(crate) fn start(
    path: PathBuf,
    mut last_hash: String,
    apply: impl Fn(Arc<Encryption>) -> Result<(), String> + Send + Sync + 'static,
) {
    let poll = std::env::var(POLL_ENV)
        .ok()
        .and_then(|v| kas_apimachinery::golang::time::parse_duration(&v).ok())
        .and_then(|d| d.to_std())
        .unwrap_or(POLL);
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(poll).await;
            match reload(&path, &last_hash, &apply).await {
                Ok(None) => {}
                Ok(Some(hash)) => {
                    last_hash = hash;
                    record("success");
                    tracing::info!(path = %path.display(), "Loaded new kms encryption config content");
                }
                Err(e) => {
                    record("failure");
                    tracing::error!(
                        "error processing encryption config file {}: {e}",
                        path.display()
                    );
                }
            }
        }
    });
}

async fn reload(
    path: &std::path::Path,
    last_hash: &str,
    apply: &(impl Fn(Arc<Encryption>) -> Result<(), String> + Sync),
) -> Result<Option<String>, String> {
    let data = std::fs::read(path).map_err(|e| {
        format!("error reading encryption provider configuration file {path:?}: {e}")
    })?;
    if config_hash(&data) == last_hash {
        return Ok(None);
    }
    let (encryption, hash) = load(path)?;
    let encryption = Arc::new(encryption);
    encryption.start().await;
    let deadline = Instant::now() + HEALTHY_WITHIN;
    loop {
        match encryption.check_kms().await {
            Ok(()) => break,
            Err(e) if Instant::now() >= deadline => {
                return Err(format!(
                    "health check for new transformers failed, polling error timed out waiting for the condition: {e}"
                ));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    apply(encryption)?;
    Ok(Some(hash))
}

struct Metrics {
    reloads: IntCounterVec,
    last: IntGaugeVec,
}

static METRICS: LazyLock<Metrics> = LazyLock::new(|| {
    Metrics {
    reloads: IntCounterVec::new(
        Opts::new(
            "apiserver_encryption_config_controller_automatic_reloads_total",
            "[ALPHA] Total number of reload successes and failures of encryption configuration split by apiserver identity.",
        ),
        &["status", "apiserver_id_hash"],
    )
    .expect("a valid metric"),
    last: IntGaugeVec::new(
        Opts::new(
            "apiserver_encryption_config_controller_automatic_reload_last_timestamp_seconds",
            "[ALPHA] Timestamp of the last successful or failed automatic reload of encryption configuration split by apiserver identity.",
        ),
        &["status", "apiserver_id_hash"],
    )
    .expect("a valid metric"),
}
});

fn record(status: &str) {
    let id = crate::labels::apiserver_id_hash();
    METRICS.reloads.with_label_values(&[status, id]).inc();
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    METRICS.last.with_label_values(&[status, id]).set(now);
}

pub(crate) fn collectors() -> Vec<Box<dyn Collector>> {
    vec![
        Box::new(METRICS.reloads.clone()),
        Box::new(METRICS.last.clone()),
    ]
}
