//! Upstream's API Priority and Fairness (`k8s.io/apiserver/pkg/util/flowcontrol`): the
//! request's classification by the FlowSchemas, the priority levels with their concurrency
//! limits (nominal, lendable, borrowed), fair queuing (`fairqueuing`), the work a request
//! costs in seats, the `apiserver_flowcontrol_*` metrics and the debug dumps.
//!
//! No HTTP here: the filter that queues a request is kas-filters'.

pub mod apf;
pub mod bootstrap;
pub mod conc_alloc;
pub mod config;
pub mod controller;
pub mod dropped_requests;
pub mod fairqueuing;
pub mod handoff;
pub mod informer;
pub mod metrics;
pub mod request;
pub mod rule;
pub mod watch_tracker;

pub use apf::{Admitted, ApfRequest, PriorityAndFairness, Rejected};
pub use controller::Controller;
pub mod dangling;
pub mod debug;
