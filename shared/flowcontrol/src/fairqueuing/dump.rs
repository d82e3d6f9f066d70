//! The instant dump of a queue set (upstream's `k8s.io/apiserver/pkg/util/flowcontrol/debug`),
//! as plain data: the debug endpoints render it.

use std::time::SystemTime;

use super::WorkEstimate;

/// A queue set at one instant (upstream's `QueueSetDump`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueueSetDump {
    pub queues: Vec<QueueDump>,
    /// The executing requests of a queue set without queues (the Reject type).
    pub queueless_executing_requests: Vec<RequestDump>,
    pub waiting: usize,
    pub executing: usize,
    pub seats_in_use: usize,
    pub seats_waiting: usize,
    pub dispatched: usize,
    pub rejected: usize,
    pub timedout: usize,
    pub cancelled: usize,
}

/// One queue at one instant (upstream's `QueueDump`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueueDump {
    pub queue_sum: QueueSum,
    /// The waiting requests, oldest first.
    pub requests: Vec<RequestDump>,
    pub requests_executing: Vec<RequestDump>,
    /// The queue's next dispatch R, rendered as upstream's `SeatSeconds.String()`.
    pub next_dispatch_r: String,
    pub executing_requests: usize,
    pub seats_in_use: usize,
}

/// The sums over a queue's waiting requests (upstream's `debug.QueueSum`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueueSum {
    pub initial_seats_sum: usize,
    pub max_seats_sum: usize,
    /// Rendered as upstream's `SeatSeconds.String()`.
    pub total_work_sum: String,
}

/// One request at one instant (upstream's `RequestDump`).
#[derive(Debug, Clone, PartialEq)]
pub struct RequestDump {
    pub matched_flow_schema: String,
    pub flow_distinguisher: String,
    /// When the request arrived (wall clock, derived from its monotonic arrival).
    pub arrive_time: SystemTime,
    /// When it started executing; `None` while it waits (upstream's zero time).
    pub start_time: Option<SystemTime>,
    pub work_estimate: WorkEstimate,
    /// The user's name; empty unless the dump includes details.
    pub user_name: String,
    /// The caller's description of the request (upstream's `RequestInfo`); empty unless
    /// the dump includes details.
    pub request_info: String,
}
