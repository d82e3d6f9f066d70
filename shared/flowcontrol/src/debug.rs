//! The debug dumps (upstream's `apf_controller_debug.go`): `dump_priority_levels`,
//! `dump_queues` and `dump_requests` under `/debug/api_priority_and_fairness/`, comma-and-tab
//! separated rows aligned by Go's tabwriter (minimum width 8, padding 1).

use kas_apimachinery::golang::tabwriter;
use kas_apimachinery::golang::time::{
    Duration as GoDuration, Time, duration_string, format_rfc3339_nano,
};

use crate::controller::{Controller, PriorityLevel};
use crate::fairqueuing::dump::{QueueSetDump, RequestDump};

/// The path prefix of the dumps.
pub const PREFIX: &str = "/debug/api_priority_and_fairness/";
/// Upstream's column separator.
pub const SEPARATOR: &str = ",\t";

/// The dump at `path` (one of the three), or `None` for another path.
pub fn render(controller: &Controller, path: &str, query: &str) -> Option<String> {
    let text = match path.strip_prefix(PREFIX)? {
        "dump_priority_levels" => priority_levels(controller),
        "dump_queues" => queues(controller),
        "dump_requests" => {
            // Upstream: `len(r.URL.Query().Get("includeRequestDetails")) > 0`.
            let details = form_urlencoded::parse(query.as_bytes())
                .find(|(k, _)| k == "includeRequestDetails")
                .is_some_and(|(_, v)| !v.is_empty());
            requests(controller, details)
        }
        _ => return None,
    };
    Some(tabwriter::format(&text, 8, 1))
}

fn dump(level: &PriorityLevel, details: bool) -> QueueSetDump {
    match &level.queues {
        Some(queues) => queues.dump(details),
        None => QueueSetDump {
            executing: level.exempt.executing(),
            seats_in_use: level.exempt.seats_in_use(),
            dispatched: level.exempt.dispatched(),
            ..Default::default()
        },
    }
}

fn line(out: &mut String, cells: &[&str]) {
    out.push_str(&cells.join(SEPARATOR));
    out.push('\n');
}

fn priority_levels(controller: &Controller) -> String {
    let mut out = String::new();
    line(
        &mut out,
        &[
            "PriorityLevelName",
            "ActiveQueues",
            "IsIdle",
            "IsQuiescing",
            "WaitingRequests",
            "ExecutingRequests",
            "DispatchedRequests",
            "RejectedRequests",
            "TimedoutRequests",
            "CancelledRequests",
        ],
    );
    // `levels` is by name, upstream's sorted order.
    for level in controller.levels() {
        let d = dump(&level, false);
        let active = d.queues.iter().filter(|q| !q.requests.is_empty()).count();
        let cells = [
            level.name().to_owned(),
            active.to_string(),
            level.is_idle().to_string(),
            level.is_quiescing().to_string(),
            d.waiting.to_string(),
            d.executing.to_string(),
            d.dispatched.to_string(),
            d.rejected.to_string(),
            d.timedout.to_string(),
            d.cancelled.to_string(),
        ];
        line(&mut out, &cells.each_ref().map(String::as_str));
    }
    out
}

fn queues(controller: &Controller) -> String {
    let mut out = String::new();
    line(
        &mut out,
        &[
            "PriorityLevelName",
            "Index",
            "PendingRequests",
            "ExecutingRequests",
            "SeatsInUse",
            "NextDispatchR",
            "InitialSeatsSum",
            "MaxSeatsSum",
            "TotalWorkSum",
        ],
    );
    for level in controller.levels() {
        for (i, q) in dump(&level, false).queues.iter().enumerate() {
            let cells = [
                level.name().to_owned(),
                i.to_string(),
                q.requests.len().to_string(),
                q.executing_requests.to_string(),
                q.seats_in_use.to_string(),
                q.next_dispatch_r.clone(),
                q.queue_sum.initial_seats_sum.to_string(),
                q.queue_sum.max_seats_sum.to_string(),
                q.queue_sum.total_work_sum.clone(),
            ];
            line(&mut out, &cells.each_ref().map(String::as_str));
        }
    }
    out
}

fn requests(controller: &Controller, details: bool) -> String {
    let mut out = String::new();
    let mut headers = vec![
        "PriorityLevelName",
        "FlowSchemaName",
        "QueueIndex",
        "RequestIndexInQueue",
        "FlowDistingsher",
        "ArriveTime",
        "InitialSeats",
        "FinalSeats",
        "AdditionalLatency",
        "StartTime",
    ];
    if details {
        headers.extend([
            "UserName",
            "Verb",
            "APIPath",
            "Namespace",
            "Name",
            "APIVersion",
            "Resource",
            "SubResource",
        ]);
    }
    line(&mut out, &headers);
    for level in controller.levels() {
        let d = dump(&level, details);
        let mut row = |queue: i64, index: i64, r: &RequestDump| {
            let latency =
                i64::try_from(r.work_estimate.additional_latency.as_nanos()).unwrap_or(i64::MAX);
            let mut cells = vec![
                level.name().to_owned(),
                r.matched_flow_schema.clone(),
                queue.to_string(),
                index.to_string(),
                r.flow_distinguisher.clone(),
                format_rfc3339_nano(Time::from_system_time(r.arrive_time)),
                r.work_estimate.initial_seats.to_string(),
                r.work_estimate.final_seats.to_string(),
                duration_string(GoDuration(latency)),
                // A request still waiting has Go's zero start time.
                format_rfc3339_nano(r.start_time.map_or_else(zero_time, Time::from_system_time)),
            ];
            if details {
                cells.push(r.user_name.clone());
                cells.push(r.request_info.clone());
            }
            line(
                &mut out,
                &cells.iter().map(String::as_str).collect::<Vec<_>>(),
            );
        };
        for (iq, q) in d.queues.iter().enumerate() {
            let iq = i64::try_from(iq).unwrap_or(i64::MAX);
            for (ir, r) in q.requests.iter().enumerate() {
                row(iq, i64::try_from(ir).unwrap_or(i64::MAX), r);
            }
            for r in &q.requests_executing {
                row(iq, -1, r);
            }
        }
        for r in &d.queueless_executing_requests {
            row(-1, -1, r);
        }
    }
    out
}

/// Go's zero `time.Time`: 0001-01-01T00:00:00Z.
fn zero_time() -> Time {
    Time::from_unix(-62_135_596_800, 0)
}
