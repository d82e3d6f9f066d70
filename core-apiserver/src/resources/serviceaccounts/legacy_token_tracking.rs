//! Upstream's legacy-token-tracking controller (the `start-legacy-token-tracking-controller`
//! hook): the ConfigMap `kube-system/kube-apiserver-legacy-service-account-token-tracking`
//! says since when the API server records the use of legacy service-account tokens (the
//! `kubernetes.io/legacy-token-last-used` label). kube-controller-manager's
//! legacy-serviceaccount-token-cleaner reads it before it deletes unused tokens.
//!
//! Upstream follows the ConfigMap with an informer; this reads it from the watch cache at
//! start and every minute: a missing one is created (at most once every 30 minutes, upstream's
//! rate), one whose `since` is not a date gets today's.

use std::time::{Duration, Instant, SystemTime};

use kas_registry::rest::options::WriteOptions;
use kas_registry::store::Store;
use serde_json::{Value, json};

/// Upstream's `ConfigMapName`.
pub const CONFIG_MAP_NAME: &str = "kube-apiserver-legacy-service-account-token-tracking";
/// Upstream's `ConfigMapDataKey`.
const DATA_KEY: &str = "since";
const NAMESPACE: &str = "kube-system";
/// How often the ConfigMap is checked.
const RESYNC: Duration = Duration::from_secs(60);
/// Upstream's creation rate limit.
const CREATION_INTERVAL: Duration = Duration::from_secs(30 * 60);

/// Keeps the ConfigMap in the background, from now on (upstream's hook only starts its
/// controller: the writes pass admission, which may wait for this server to serve).
pub fn start(configmaps: Store) {
    tokio::spawn(async move {
        let mut last_created = None;
        loop {
            sync(&configmaps, &mut last_created).await;
            tokio::time::sleep(RESYNC).await;
        }
    });
}

/// Upstream's `syncConfigMap`.
async fn sync(configmaps: &Store, last_created: &mut Option<Instant>) {
    let opts = WriteOptions {
        manager: "kube-apiserver".to_owned(),
        ..WriteOptions::default()
    };
    let today = today();
    let current = match configmaps
        .get_if_exists(NAMESPACE, CONFIG_MAP_NAME, Some("0".into()))
        .await
    {
        Ok(current) => current,
        Err(e) => return warn(e),
    };
    let Some(current) = current else {
        if last_created.is_some_and(|at| at.elapsed() < CREATION_INTERVAL) {
            return;
        }
        let config_map = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": CONFIG_MAP_NAME, "namespace": NAMESPACE},
            "data": {DATA_KEY: today}});
        match configmaps.create(NAMESPACE, config_map, &opts).await {
            Ok(_) => *last_created = Some(Instant::now()),
            Err(e) if e.to_status().code == 409 => {}
            Err(e) => warn(e),
        }
        return;
    };
    let Ok(mut current) = current.value() else {
        return;
    };
    let since = current.pointer("/data/since").and_then(Value::as_str);
    if since.is_some_and(is_date) {
        return;
    }
    current["data"][DATA_KEY] = json!(today);
    if let Err(e) = configmaps
        .update(NAMESPACE, CONFIG_MAP_NAME, current, &opts)
        .await
        && !matches!(e.to_status().code, 404 | 409)
    {
        warn(e);
    }
}

/// Today in UTC as Go's `2006-01-02`.
fn today() -> String {
    let now = kas_apimachinery::golang::time::Time::from_system_time(SystemTime::now());
    kas_apimachinery::golang::time::format_rfc3339(now)[..10].to_owned()
}

/// Whether `s` parses with Go's `2006-01-02` layout.
fn is_date(s: &str) -> bool {
    kas_apimachinery::golang::time::parse_rfc3339(&format!("{s}T00:00:00Z")).is_some()
        && s.len() == 10
}

fn warn(e: kas_registry::error::Error) {
    let message = e.to_status().message.unwrap_or_default();
    tracing::warn!(error = %message, "legacy token tracking ConfigMap");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_gos_layout() {
        assert!(is_date("2026-11-28"));
        assert!(is_date(&today()));
        assert!(!is_date("2026-13-01"));
        assert!(!is_date("yesterday"));
        assert!(!is_date("2026-11-28T00:00:00Z"));
    }
}
