//! kas-filters: the generic filter chain as tower layers, one per file, after upstream's
//! `k8s.io/apiserver/pkg/server/filters` and `pkg/endpoints/filters`.
//!
//! Every service here has `Error = Infallible`: a failure becomes a response at the filter
//! that found it, a `Status` where upstream writes a Status and upstream's plain text where
//! upstream writes plain text. Policy (authenticators, authorizers) comes from kas-auth.
//! Filters talk through request extensions: `RequestInfo`, `UserInfo`, `RequestDeadline`.
//!
//! Must not depend on hyper or on any role's crates.

pub mod authentication;
pub mod authorization;
pub mod max_inflight;
pub mod metrics;
pub mod panic_recovery;
pub mod request_info;
pub mod timeout;

mod support;

pub use authentication::{Authentication, AuthenticationLayer};
pub use authorization::{Authorization, AuthorizationLayer};
pub use max_inflight::{InFlightCounts, MaxInFlight, MaxInFlightLayer};
pub use metrics::{RequestLabels, RequestMetrics, RequestMetricsFilter, RequestMetricsLayer};
pub use panic_recovery::{PanicRecovery, PanicRecoveryLayer};
pub use request_info::{RequestInfoFilter, RequestInfoLayer};
pub use timeout::{RequestDeadline, Timeout, TimeoutLayer};
