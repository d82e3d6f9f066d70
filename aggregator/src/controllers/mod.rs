//! The aggregator's controllers, after upstream's `k8s.io/kube-aggregator/pkg/controllers`
//! and the aggregator parts of kube-apiserver's: each runs in every replica and converges
//! through conditional writes, so replicas need no leader.
//!
//! - `available`: the `Available` condition of every APIService (upstream's local and
//!   remote availability controllers).

pub mod available;

use kas_registry::rest::options::WriteOptions;

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
