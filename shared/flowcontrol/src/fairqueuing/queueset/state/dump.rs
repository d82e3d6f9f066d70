//! The queue set's state as plain data, for the debug dumps (upstream's `queueSet.Dump`).

use std::time::SystemTime;

use tokio::time::Instant;

use super::Inner;
use crate::fairqueuing::dump::{self, QueueSetDump};

impl Inner {
    pub fn dump(&self, include_details: bool) -> QueueSetDump {
        let now_sys = SystemTime::now();
        let now_std = std::time::Instant::now();
        let now = Instant::now();
        let request_dump = |id: &u64| -> Option<dump::RequestDump> {
            let r = self.requests.get(id)?;
            let ago = now_std.saturating_duration_since(r.arrived);
            Some(dump::RequestDump {
                matched_flow_schema: r.fs_name.clone(),
                flow_distinguisher: r.flow_distinguisher.clone(),
                arrive_time: now_sys.checked_sub(ago).unwrap_or(SystemTime::UNIX_EPOCH),
                start_time: r.start_time.map(|t| {
                    now_sys
                        .checked_sub(now.saturating_duration_since(t))
                        .unwrap_or(SystemTime::UNIX_EPOCH)
                }),
                work_estimate: r.work,
                user_name: if include_details {
                    r.user.clone()
                } else {
                    String::new()
                },
                request_info: if include_details {
                    r.descr.clone()
                } else {
                    String::new()
                },
            })
        };
        let queues = self
            .queues
            .iter()
            .map(|q| dump::QueueDump {
                queue_sum: dump::QueueSum {
                    initial_seats_sum: q.sum.initial_seats_sum,
                    max_seats_sum: q.sum.max_seats_sum,
                    total_work_sum: q.sum.total_work_sum.to_string(),
                },
                requests: q.waiting.iter().filter_map(request_dump).collect(),
                requests_executing: q.executing.iter().filter_map(request_dump).collect(),
                next_dispatch_r: q.next_dispatch_r.to_string(),
                executing_requests: q.executing.len(),
                seats_in_use: q.seats_in_use,
            })
            .collect();
        QueueSetDump {
            queues,
            queueless_executing_requests: self
                .queueless_executing
                .iter()
                .filter_map(request_dump)
                .collect(),
            waiting: self.tot_requests_waiting,
            executing: self.tot_requests_executing,
            seats_in_use: self.tot_seats_in_use,
            seats_waiting: self.tot_seats_waiting,
            dispatched: self.dispatched,
            rejected: self.rejected,
            timedout: self.timedout,
            cancelled: self.cancelled,
        }
    }
}
