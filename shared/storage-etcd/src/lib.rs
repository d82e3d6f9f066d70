//! kas-storage-etcd: the etcd v3 implementation of [`kas_storage::Storage`].
//!
//! [`EtcdStore`] keeps objects under `<--etcd-prefix>/<key>` (upstream's layout; callers
//! build `/<resource>/<namespace>/<name>`), uses the etcd mod revision as resourceVersion,
//! and follows upstream's etcd3 store and watcher; writes with a TTL share leases as
//! upstream's lease manager's do. [`Compactor`] is upstream's compact.go.
//! [`EtcdOptions`] are upstream's `--etcd-*` flags, which connect the store and give the
//! `etcd`, `etcd-readiness` and `kms-providers` checks (`EtcdOptions::health_checks`) that
//! each role hands to its server.
//!
//! It must not depend on hyper, kas-server, the registry or any HTTP type; errors leave as
//! [`kas_storage::Error`].

mod client;
mod codec;
mod compact;
mod encryption;
mod errors;
mod health;
mod labels;
mod lease;
pub mod metrics;
mod options;
mod store;

pub use codec::{Codec, Defaulter, MediaType, Registration, StoredKind};
pub use compact::{COMPACT_REV_KEY, Compactor};
pub use encryption::Encryption;
pub use options::EtcdOptions;
pub use store::EtcdStore;
pub use store::{WatchProgressSupport, version_supports_progress_requests};

/// The etcd client the store runs on, re-exported so callers need not name the crate.
pub use etcd_client::Client;
