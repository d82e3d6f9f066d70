//! kas-filters: the generic filter chain, after upstream's
//! `k8s.io/apiserver/pkg/server/filters` and `pkg/endpoints/filters`. One filter per file,
//! each a function of the request and the rest of the chain (its rule), made a tower layer
//! by the one glue in [`filter`].
//!
//! Every filter answers (`Error = Infallible`): a failure becomes a response at the filter
//! that found it, a `Status` where upstream writes a Status and upstream's plain text where
//! upstream writes plain text. Policy (authenticators, authorizers) comes from kas-auth.
//! Filters talk through request extensions: `RequestInfo`, `UserInfo`, `RequestDeadline`.
//!
//! Must not depend on hyper or on any role's crates.

mod attributes;
pub mod audit;
pub mod authentication;
pub mod authorization;
pub mod filter;
pub mod impersonation;
pub mod max_inflight;
pub mod metrics;
pub mod panic_recovery;
pub mod priority_and_fairness;
pub mod request_info;
pub mod timeout;
pub mod trace;

mod support;

pub use audit::{Auditor, with_audit, with_audit_init};
pub use authentication::with_authentication;
pub use authorization::with_authorization;
pub use filter::{
    Answer, Boxed, EraseLayer, Erased, Filter, FilterFuture, FilterLayer, Inline, Inner, Next,
    NextFuture,
};
pub use filter::{Rule, Storage, WithState};
pub use filter::{from_fn, from_fn_with_state};
pub use impersonation::with_impersonation;
pub use max_inflight::{InFlightCounts, MaxInFlight, with_max_in_flight_limit};
pub use metrics::{RequestLabels, RequestMetrics, with_request_metrics};
pub use panic_recovery::with_panic_recovery;
pub use priority_and_fairness::{
    ConcurrencyLimit, FlowControl, with_concurrency_limit, with_priority_and_fairness,
};
pub use request_info::with_request_info;
pub use timeout::{RequestDeadline, with_request_deadline};
pub use trace::with_tracing;
