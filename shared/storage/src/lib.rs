//! kas-storage: the storage trait, modelled on k8s.io/apiserver's `storage.Interface`.
//!
//! It holds the [`Storage`] trait, its option and result types, the one [`Error`] enum,
//! the versioner rules (resourceVersion lives in etcd's mod revision, never in the stored
//! bytes), upstream's continue-token format, the [`transform::ReadTransform`] decorator, and (feature `testing`) the conformance suite
//! that every implementation runs against a real etcd.
//!
//! It must not depend on etcd, hyper or any HTTP type: the etcd store and the watch cache
//! implement the trait elsewhere, and the registry maps [`Error`] to a `Status` once.

pub mod attrs;
mod continue_token;
pub mod counts;
mod error;
#[cfg(feature = "testing")]
pub mod fake;
pub mod health;
mod interface;
pub mod latency;
mod object;
mod options;
mod progress;
pub mod reflector;
#[cfg(feature = "testing")]
pub mod testing;
pub mod transform;

pub use attrs::{Attrs, AttrsFunc};
pub use continue_token::{decode_continue, encode_continue};
pub use error::{BoxError, Error, Result};
pub use interface::{Storage, UpdateFn, ValidateDeletionFn, WatchEvent, WatchStream};
pub use object::{Object, ObjectRef, encode_for_storage, exact};
pub use options::{
    GetOptions, ListOptions, ListResult, Preconditions, Predicate, ResourceVersionMatch,
    WatchOptions, parse_resource_version,
};
pub use progress::{REQUEST_WATCH_PROGRESS_DISABLED, WatchProgressRequester};
