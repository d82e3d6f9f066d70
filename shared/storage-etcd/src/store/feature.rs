//! Upstream's etcd feature support checker for `RequestWatchProgress`: whether etcd's
//! answer to a progress request can be trusted, decided from the server's version.
//!
//! Before 3.4.25 / 3.5.8 (etcd#15220) etcd answers a progress request with its current
//! revision even while the watch still has older events to send (a watch that starts in
//! the past, or one that fell behind), so a cache trusting it would serve reads missing
//! those events; until 3.4.31 / 3.5.13 (etcd#17507) a fixed etcd may not answer at all.
//! Upstream uses progress requests only from 3.4.31 and 3.5.13 on, and so does this.

use std::sync::Arc;

use tokio::sync::OnceCell;

use super::EtcdStore;

/// Whether the store uses etcd's progress requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WatchProgressSupport {
    /// From the etcd server's version, as upstream decides (the default).
    #[default]
    Detect,
    /// Always: for an etcd known to answer correctly, or tests that accept the risk.
    Enabled,
    /// Never.
    Disabled,
}

impl EtcdStore {
    /// Overrides how this store (and its later clones) decides whether to use etcd's
    /// progress requests.
    pub fn with_watch_progress_support(mut self, mode: WatchProgressSupport) -> Self {
        self.watch_progress = Arc::new(WatchProgressCheck::new(mode));
        self
    }
}

/// The decision, made once per store (its clones share it).
#[derive(Debug, Default)]
pub(crate) struct WatchProgressCheck {
    mode: WatchProgressSupport,
    detected: OnceCell<bool>,
}

impl WatchProgressCheck {
    pub(crate) fn new(mode: WatchProgressSupport) -> Self {
        WatchProgressCheck {
            mode,
            detected: OnceCell::new(),
        }
    }

    pub(crate) async fn supported(&self, store: &EtcdStore) -> bool {
        match self.mode {
            WatchProgressSupport::Enabled => true,
            WatchProgressSupport::Disabled => false,
            WatchProgressSupport::Detect => {
                // An unreachable etcd is not remembered: the next read asks again.
                let detected = self.detected.get_or_try_init(|| detect(store)).await;
                detected.copied().unwrap_or(false)
            }
        }
    }
}

async fn detect(store: &EtcdStore) -> Result<bool, etcd_client::Error> {
    let status = store.client.get().maintenance_client().status().await?;
    let supported = version_supports_progress_requests(status.version());
    if !supported {
        tracing::info!(
            etcd_version = status.version(),
            "etcd does not answer watch progress requests reliably (needs 3.4.31+ or 3.5.13+): \
             consistent reads go to etcd, and streaming lists are refused"
        );
    }
    Ok(supported)
}

/// Upstream's thresholds; an unparsable version is taken as unsupported, as upstream does.
pub fn version_supports_progress_requests(version: &str) -> bool {
    let Some(v) = Version::parse(version) else {
        return false;
    };
    let v3_4_31 = Version::release(3, 4, 31);
    let v3_5_0 = Version::release(3, 5, 0);
    let v3_5_13 = Version::release(3, 5, 13);
    !(v < v3_4_31 || (v >= v3_5_0 && v < v3_5_13))
}

/// A semantic version as far as the thresholds need it: a pre-release sorts before its
/// release.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Version {
    major: u64,
    minor: u64,
    patch: u64,
    release: bool,
}

impl Version {
    fn release(major: u64, minor: u64, patch: u64) -> Self {
        Version {
            major,
            minor,
            patch,
            release: true,
        }
    }

    fn parse(s: &str) -> Option<Self> {
        let s = s.strip_prefix('v').unwrap_or(s);
        let (core, _build) = s.split_once('+').unwrap_or((s, ""));
        let (core, pre) = match core.split_once('-') {
            Some((core, pre)) => (core, Some(pre)),
            None => (core, None),
        };
        let mut parts = core.split('.').map(|p| p.parse::<u64>().ok());
        let (major, minor, patch) = (parts.next()??, parts.next()??, parts.next()??);
        if parts.next().is_some() {
            return None;
        }
        Some(Version {
            major,
            minor,
            patch,
            release: pre.is_none(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::version_supports_progress_requests as ok;

    #[test]
    fn upstreams_thresholds() {
        for v in [
            "3.4.23",
            "3.4.30",
            "3.5.0",
            "3.5.12",
            "3.3.27",
            "3.4.31-rc.0",
        ] {
            assert!(!ok(v), "{v}");
        }
        for v in [
            "3.4.31", "3.4.37", "3.5.13", "3.5.21", "3.6.0", "v3.6.1", "4.0.0",
        ] {
            assert!(ok(v), "{v}");
        }
        for v in ["", "3.5", "x.y.z", "3.5.13.1"] {
            assert!(!ok(v), "{v:?} does not parse");
        }
    }
}
