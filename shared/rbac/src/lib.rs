//! kas-rbac: upstream's RBAC authorizer (`plugin/pkg/auth/authorizer/rbac`), its rule
//! resolver and escalation checks (`pkg/registry/rbac/validation`,
//! `pkg/registry/rbac/escalation_check.go`), over an in-memory [`Index`] of the Roles,
//! ClusterRoles and their bindings that [`informer::follow`] keeps in step with storage.
//!
//! Decisions read only the index (no I/O), which holds the objects compactly and finds a
//! user's bindings by subject. It depends on kas-auth's traits and kas-storage's trait, never
//! on etcd, HTTP or the registry: callers map its messages to a `Status`.

pub mod authorizer;
pub mod bootstrap;
mod error;
pub mod escalation;
pub mod index;
pub mod informer;
pub mod resolver;
pub mod rules;
#[cfg(test)]
mod testutil;

pub use authorizer::RbacAuthorizer;
pub use error::{Error, Result};
pub use index::{Doc, Index, Kind, RoleRef};
pub use informer::{Sources, follow, start};
pub use resolver::{DefaultRuleResolver, RuleSource, Visit};
pub use rules::PolicyRule;
