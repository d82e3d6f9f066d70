//! kas-node-authorizer: upstream's Node authorizer (`plugin/pkg/auth/authorizer/node`):
//! a [`Graph`] of the pods bound to each node and the secrets, config maps, claims,
//! volumes and service accounts they use, that [`informer::follow`] keeps in step with
//! storage, and the [`NodeAuthorizer`] that lets a kubelet read only what its pods need.
//!
//! Decisions read only the graph (no I/O). It depends on kas-auth's traits, kas-storage's
//! trait and kas-rbac's rule matching, never on etcd, HTTP or the registry.

pub mod authorizer;
mod error;
pub mod graph;
pub mod informer;
pub mod populator;

pub use authorizer::{NodeAuthorizer, node_identity};
pub use error::{Error, Result};
pub use graph::{Graph, PathError, VertexType};
pub use informer::{Sources, follow, start};
pub use populator::{NodeBound, PersistentVolume, Pod};
