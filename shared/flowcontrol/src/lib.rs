//! Upstream's API Priority and Fairness (`k8s.io/apiserver/pkg/util/flowcontrol`): the
//! request's classification by the FlowSchemas, the priority levels with their concurrency
//! limits (nominal, lendable, borrowed), fair queuing (`fairqueuing`), the work a request
//! costs in seats, the `apiserver_flowcontrol_*` metrics and the debug dumps.
//!
//! No HTTP here: the filter that queues a request is kas-filters'.

pub mod fairqueuing;
pub mod metrics;
