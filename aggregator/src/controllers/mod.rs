//! The aggregator's controllers, after upstream's `k8s.io/kube-aggregator/pkg/controllers`
//! and the aggregator parts of kube-apiserver's: each runs in every replica and converges
//! through conditional writes, so replicas need no leader.
//!
//! - `available`: the `Available` condition of every APIService (upstream's local and
//!   remote availability controllers).
//!   `status_metrics` holds their metrics.
//! - `autoregister`: the Local APIServices of the built-in group versions and of the CRDs'
//!   (`crd_registration`).
//! - `authentication_trust`: `kube-system/extension-apiserver-authentication`, what
//!   aggregated servers read to trust the clients and this role's front-proxy requests.

pub mod authentication_trust;
pub mod autoregister;
pub mod available;
pub mod crd_registration;
pub mod queue;
pub mod status_metrics;

use kas_registry::rest::options::WriteOptions;
use kas_registry::store::informer::Objects;
use tokio::sync::watch;

/// Upstream's controllers write through the loopback client, whose user agent makes
/// `kube-apiserver` their field manager.
pub const FIELD_MANAGER: &str = "kube-apiserver";

/// The options of a write a controller makes.
pub fn write_options() -> WriteOptions {
    WriteOptions {
        manager: FIELD_MANAGER.to_owned(),
        ..WriteOptions::default()
    }
}

/// Waits for an informer's first list (upstream's `WaitForCacheSync`). `informer` must not
/// have seen a value yet: a clone of the store's receiver taken before anyone borrowed
/// from it, or the list already arrived. Fails when the informer stopped.
pub async fn informer_synced(
    informer: &mut watch::Receiver<Objects>,
) -> Result<(), watch::error::RecvError> {
    if informer.borrow().is_empty() {
        informer.changed().await?;
    }
    Ok(())
}
