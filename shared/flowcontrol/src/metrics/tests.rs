use super::*;
use prometheus::Encoder;

#[test]
fn names_help_and_labels() {
    let metrics = Metrics::new().expect("metrics");
    let registry = Registry::new();
    metrics.register(&registry).expect("register");
    let pl = metrics.priority_level("workload-low");
    pl.add_reject("fs", "queue-full");
    pl.add_requests_executing("fs", 1);
    pl.observe_waiting_duration("fs", true, Duration::from_millis(3));
    pl.set_priority_level_configuration(10, 5, 20);
    let mut buf = Vec::new();
    prometheus::TextEncoder::new()
        .encode(&registry.gather(), &mut buf)
        .expect("encode");
    let text = String::from_utf8(buf).expect("utf8");
    for want in [
        "# HELP apiserver_flowcontrol_rejected_requests_total [BETA] Number of requests rejected by API Priority and Fairness subsystem",
        "apiserver_flowcontrol_rejected_requests_total{flow_schema=\"fs\",priority_level=\"workload-low\",reason=\"queue-full\"} 1",
        "apiserver_flowcontrol_current_executing_requests{flow_schema=\"fs\",priority_level=\"workload-low\"} 1",
        "apiserver_flowcontrol_request_wait_duration_seconds_bucket{execute=\"true\",flow_schema=\"fs\",priority_level=\"workload-low\",le=\"0.005\"} 1",
        "apiserver_flowcontrol_nominal_limit_seats{priority_level=\"workload-low\"} 10",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
    assert!(!text.contains("request_concurrency_limit"));
    assert_eq!(metrics.hidden_collectors().len(), 2);
    let desc = metrics.request_concurrency_limit.desc();
    assert_eq!(
        desc[0].help,
        "[ALPHA] (Deprecated since 1.30.0) Nominal number of execution seats configured for each priority level"
    );
}

#[tokio::test(start_paused = true)]
async fn timing_ratio_names_help_buckets_and_labels() {
    use crate::fairqueuing::{DispatchingConfig, QueuingConfig};
    let metrics = Metrics::new().expect("metrics");
    let registry = Registry::new();
    metrics.register(&registry).expect("register");
    assert_eq!(metrics.collectors().len(), 32);
    let pl = metrics.priority_level("workload-low");
    // 8 queues of 5 requests; a concurrency denominator of 4.
    let queuing = QueuingConfig {
        name: "workload-low".into(),
        desired_num_queues: 8,
        queue_length_limit: 5,
        hand_size: 2,
    };
    let dispatching = DispatchingConfig {
        concurrency_limit: 4,
        concurrency_denominator: 4,
    };
    pl.set_queue_set_denominators(&queuing, dispatching);
    pl.set_seat_demand_denominator(4.0);
    pl.add_requests_in_queues("fs", 4); // 4 / 40
    pl.add_requests_executing("fs", 1); // 1 / 4
    pl.add_seat_concurrency_in_use("fs", 2); // 2 / 4
    pl.set_seat_demand(6.0); // 6 / 4
    pl.note_queued(true, true); // 1 / 1
    tokio::time::advance(Duration::from_millis(2)).await;
    let mut buf = Vec::new();
    prometheus::TextEncoder::new()
        .encode(&registry.gather(), &mut buf)
        .expect("encode");
    let text = String::from_utf8(buf).expect("utf8");
    let seats = "apiserver_flowcontrol_priority_level_seat_utilization";
    let requests = "apiserver_flowcontrol_priority_level_request_utilization";
    let demand = "apiserver_flowcontrol_demand_seats";
    let rw = "apiserver_flowcontrol_read_vs_write_current_requests";
    let pl = "priority_level=\"workload-low\"";
    let wants = [
        format!(
            "# HELP {seats} EXPERIMENTAL: [ALPHA] Observations, at the end of every nanosecond, of utilization of seats for any stage of execution (but only initial stage for WATCHes)\n# TYPE {seats} histogram\n"
        ),
        format!(
            "{seats}_bucket{{phase=\"executing\",{pl},le=\"0.4\"}} 0\n{seats}_bucket{{phase=\"executing\",{pl},le=\"0.5\"}} 2000000\n"
        ),
        format!(
            "{seats}_sum{{phase=\"executing\",{pl}}} 1000000\n{seats}_count{{phase=\"executing\",{pl}}} 2000000\n"
        ),
        format!(
            "# HELP {requests} EXPERIMENTAL: [ALPHA] Observations, at the end of every nanosecond, of number of requests (as a fraction of the relevant limit) waiting or in any stage of execution (but only initial stage for WATCHes)\n# TYPE {requests} histogram\n"
        ),
        format!(
            "{requests}_bucket{{phase=\"executing\",{pl},le=\"0.1\"}} 0\n{requests}_bucket{{phase=\"executing\",{pl},le=\"0.25\"}} 2000000\n"
        ),
        format!(
            "{requests}_bucket{{phase=\"waiting\",{pl},le=\"0.03\"}} 0\n{requests}_bucket{{phase=\"waiting\",{pl},le=\"0.1\"}} 2000000\n"
        ),
        format!(
            "# HELP {demand} EXPERIMENTAL: [ALPHA] Observations, at the end of every nanosecond, of (the number of seats each priority level could use) / (nominal number of seats for that level)\n# TYPE {demand} histogram\n"
        ),
        format!(
            "{demand}_bucket{{{pl},le=\"1.4\"}} 0\n{demand}_bucket{{{pl},le=\"1.7\"}} 2000000\n"
        ),
        format!("{demand}_sum{{{pl}}} 3000000\n"),
        format!(
            "# HELP {rw} EXPERIMENTAL: [ALPHA] Observations, at the end of every nanosecond, of the number of requests (as a fraction of the relevant limit) waiting or in regular stage of execution\n# TYPE {rw} histogram\n"
        ),
        format!(
            "{rw}_bucket{{phase=\"waiting\",request_kind=\"mutating\",le=\"0.99\"}} 0\n{rw}_bucket{{phase=\"waiting\",request_kind=\"mutating\",le=\"1\"}} 2000000\n"
        ),
        format!("{rw}_bucket{{phase=\"executing\",request_kind=\"readOnly\",le=\"0\"}} 2000000\n"),
        format!("{rw}_count{{phase=\"waiting\",request_kind=\"readOnly\"}} 2000000\n"),
    ];
    for want in &wants {
        assert!(text.contains(want.as_str()), "missing {want:?} in\n{text}");
    }
}
