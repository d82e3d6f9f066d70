//! Upstream's audit machinery (`k8s.io/apiserver/pkg/audit` and its plugins): the
//! `audit.k8s.io/v1` [`Event`] each request stage writes, the request's [`AuditContext`]
//! that filters, handlers and admission add to, the policy that sets a request's level
//! (`policy`), and the backends that write the events (`backend`).
//!
//! No HTTP here: the filters that make and finish a request's context are kas-filters',
//! the webhook backend is kas-webhook's.

pub mod backend;
pub mod context;
pub mod error;
pub mod evaluator;
pub mod event;
pub mod format;
pub mod handoff;
pub mod metrics;
pub mod policy;

pub use backend::{Backend, Sink};
pub use context::{AuditContext, RequestAuditConfig};
pub use error::{Error, Result};
pub use evaluator::PolicyRuleEvaluator;
pub use event::{Event, Level, ObjectReference, Stage};
pub use handoff::{AuditId, HandOff};
