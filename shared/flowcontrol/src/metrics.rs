//! The `apiserver_flowcontrol_*` metrics (upstream's `util/flowcontrol/metrics/metrics.go`):
//! the same names, label names, buckets and help texts, the help prefixed with the
//! stability level (and the deprecation) as upstream's component-base registry prints it.
//!
//! [`Metrics`] owns the collectors; [`Metrics::priority_level`] gives the handles one
//! priority level's queue set uses ([`PriorityLevelMetrics`]), which look up the label
//! values for each flow schema.
//!
//! Upstream's timing-ratio histograms ([`timing_ratio`]: the time-weighted histogram of a
//! ratio whose denominator may change) are in [`utilization`]:
//! `priority_level_seat_utilization`, `priority_level_request_utilization`,
//! `read_vs_write_current_requests` and `demand_seats`; their help has component-base's
//! `EXPERIMENTAL: ` prefix before the stability level. A level's gauges of them are made
//! with its [`PriorityLevelMetrics`] and updated with the flow-schema gauges they go
//! with. `request_concurrency_limit` (deprecated in 1.30) and `request_concurrency_in_use`
//! (deprecated in 1.31) exist and are updated, but as upstream 1.33 hides them they are
//! in [`Metrics::hidden_collectors`], not in [`Metrics::collectors`].

pub mod timing_ratio;
pub mod utilization;

use std::time::Duration;

use prometheus::core::Collector;
use prometheus::{
    Gauge, GaugeVec, HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts, Registry,
};

use self::utilization::{LevelGauges, TimingRatioMetrics};

const NAMESPACE: &str = "apiserver";
const SUBSYSTEM: &str = "flowcontrol";

const PRIORITY_LEVEL: &str = "priority_level";
const FLOW_SCHEMA: &str = "flow_schema";

const QUEUE_LENGTH_BUCKETS: &[f64] = &[0.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0];
const REQUEST_DURATION_SECONDS_BUCKETS: &[f64] = &[
    0.0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0,
];

#[derive(Clone, Copy)]
enum Stability {
    Alpha,
    Beta,
}

fn help(stability: Stability, deprecated: Option<&str>, text: &str) -> String {
    let level = match stability {
        Stability::Alpha => "ALPHA",
        Stability::Beta => "BETA",
    };
    match deprecated {
        Some(version) => format!("[{level}] (Deprecated since {version}) {text}"),
        None => format!("[{level}] {text}"),
    }
}

fn opts(name: &str, stability: Stability, text: &str) -> Opts {
    Opts::new(name, help(stability, None, text))
        .namespace(NAMESPACE)
        .subsystem(SUBSYSTEM)
}

fn deprecated_opts(name: &str, version: &str, text: &str) -> Opts {
    Opts::new(name, help(Stability::Alpha, Some(version), text))
        .namespace(NAMESPACE)
        .subsystem(SUBSYSTEM)
}

fn hopts(name: &str, stability: Stability, text: &str, buckets: &[f64]) -> HistogramOpts {
    HistogramOpts::new(name, help(stability, None, text))
        .namespace(NAMESPACE)
        .subsystem(SUBSYSTEM)
        .buckets(buckets.to_vec())
}

/// The flow-control collectors.
#[derive(Clone)]
pub struct Metrics {
    pub rejected_requests_total: IntCounterVec,
    pub dispatched_requests_total: IntCounterVec,
    pub current_r: GaugeVec,
    pub dispatch_r: GaugeVec,
    pub latest_s: GaugeVec,
    pub next_s_bounds: GaugeVec,
    pub next_discounted_s_bounds: GaugeVec,
    pub current_inqueue_requests: IntGaugeVec,
    pub current_inqueue_seats: IntGaugeVec,
    pub request_queue_length_after_enqueue: HistogramVec,
    /// Hidden in upstream 1.33 (deprecated since 1.30.0).
    pub request_concurrency_limit: IntGaugeVec,
    /// Hidden in upstream 1.33 (deprecated since 1.31.0).
    pub request_concurrency_in_use: IntGaugeVec,
    pub current_executing_seats: IntGaugeVec,
    pub current_executing_requests: IntGaugeVec,
    pub request_wait_duration_seconds: HistogramVec,
    pub request_execution_seconds: HistogramVec,
    pub watch_count_samples: HistogramVec,
    pub epoch_advance_total: IntCounterVec,
    pub work_estimated_seats: HistogramVec,
    pub request_dispatch_no_accommodation_total: IntCounterVec,
    pub nominal_limit_seats: IntGaugeVec,
    pub lower_limit_seats: IntGaugeVec,
    pub upper_limit_seats: IntGaugeVec,
    pub demand_seats_high_watermark: GaugeVec,
    pub demand_seats_average: GaugeVec,
    pub demand_seats_stdev: GaugeVec,
    pub demand_seats_smoothed: GaugeVec,
    pub target_seats: GaugeVec,
    pub seat_fair_frac: Gauge,
    pub current_limit_seats: IntGaugeVec,
    /// The timing-ratio histograms.
    pub timing: TimingRatioMetrics,
}

impl Metrics {
    pub fn new() -> prometheus::Result<Metrics> {
        use Stability::{Alpha, Beta};
        let pl_fs = &[PRIORITY_LEVEL, FLOW_SCHEMA];
        let pl = &[PRIORITY_LEVEL];
        let pl_bound = &[PRIORITY_LEVEL, "bound"];
        Ok(Metrics {
            rejected_requests_total: IntCounterVec::new(
                opts(
                    "rejected_requests_total",
                    Beta,
                    "Number of requests rejected by API Priority and Fairness subsystem",
                ),
                &[PRIORITY_LEVEL, FLOW_SCHEMA, "reason"],
            )?,
            dispatched_requests_total: IntCounterVec::new(
                opts(
                    "dispatched_requests_total",
                    Beta,
                    "Number of requests executed by API Priority and Fairness subsystem",
                ),
                pl_fs,
            )?,
            current_r: GaugeVec::new(opts("current_r", Alpha, "R(time of last change)"), pl)?,
            dispatch_r: GaugeVec::new(opts("dispatch_r", Alpha, "R(time of last dispatch)"), pl)?,
            latest_s: GaugeVec::new(
                opts("latest_s", Alpha, "S(most recently dispatched request)"),
                pl,
            )?,
            next_s_bounds: GaugeVec::new(
                opts(
                    "next_s_bounds",
                    Alpha,
                    "min and max, over queues, of S(oldest waiting request in queue)",
                ),
                pl_bound,
            )?,
            next_discounted_s_bounds: GaugeVec::new(
                opts(
                    "next_discounted_s_bounds",
                    Alpha,
                    "min and max, over queues, of S(oldest waiting request in queue) - estimated work in progress",
                ),
                pl_bound,
            )?,
            current_inqueue_requests: IntGaugeVec::new(
                opts(
                    "current_inqueue_requests",
                    Beta,
                    "Number of requests currently pending in queues of the API Priority and Fairness subsystem",
                ),
                pl_fs,
            )?,
            current_inqueue_seats: IntGaugeVec::new(
                opts(
                    "current_inqueue_seats",
                    Alpha,
                    "Number of seats currently pending in queues of the API Priority and Fairness subsystem",
                ),
                pl_fs,
            )?,
            request_queue_length_after_enqueue: HistogramVec::new(
                hopts(
                    "request_queue_length_after_enqueue",
                    Alpha,
                    "Length of queue in the API Priority and Fairness subsystem, as seen by each request after it is enqueued",
                    QUEUE_LENGTH_BUCKETS,
                ),
                pl_fs,
            )?,
            request_concurrency_limit: IntGaugeVec::new(
                deprecated_opts(
                    "request_concurrency_limit",
                    "1.30.0",
                    "Nominal number of execution seats configured for each priority level",
                ),
                pl,
            )?,
            request_concurrency_in_use: IntGaugeVec::new(
                deprecated_opts(
                    "request_concurrency_in_use",
                    "1.31.0",
                    "Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem",
                ),
                pl_fs,
            )?,
            current_executing_seats: IntGaugeVec::new(
                opts(
                    "current_executing_seats",
                    Beta,
                    "Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem",
                ),
                pl_fs,
            )?,
            current_executing_requests: IntGaugeVec::new(
                opts(
                    "current_executing_requests",
                    Beta,
                    "Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem",
                ),
                pl_fs,
            )?,
            request_wait_duration_seconds: HistogramVec::new(
                hopts(
                    "request_wait_duration_seconds",
                    Beta,
                    "Length of time a request spent waiting in its queue",
                    REQUEST_DURATION_SECONDS_BUCKETS,
                ),
                &[PRIORITY_LEVEL, FLOW_SCHEMA, "execute"],
            )?,
            request_execution_seconds: HistogramVec::new(
                hopts(
                    "request_execution_seconds",
                    Alpha,
                    "Duration of initial stage (for a WATCH) or any (for a non-WATCH) stage of request execution in the API Priority and Fairness subsystem",
                    REQUEST_DURATION_SECONDS_BUCKETS,
                ),
                &[PRIORITY_LEVEL, FLOW_SCHEMA, "type"],
            )?,
            watch_count_samples: HistogramVec::new(
                hopts(
                    "watch_count_samples",
                    Alpha,
                    "count of watchers for mutating requests in API Priority and Fairness",
                    &[0.0, 1.0, 10.0, 100.0, 1000.0, 10000.0],
                ),
                pl_fs,
            )?,
            epoch_advance_total: IntCounterVec::new(
                opts(
                    "epoch_advance_total",
                    Alpha,
                    "Number of times the queueset's progress meter jumped backward",
                ),
                &[PRIORITY_LEVEL, "success"],
            )?,
            work_estimated_seats: HistogramVec::new(
                hopts(
                    "work_estimated_seats",
                    Alpha,
                    "Number of estimated seats (maximum of initial and final seats) associated with requests in API Priority and Fairness",
                    &[1.0, 2.0, 4.0, 10.0],
                ),
                pl_fs,
            )?,
            request_dispatch_no_accommodation_total: IntCounterVec::new(
                opts(
                    "request_dispatch_no_accommodation_total",
                    Alpha,
                    "Number of times a dispatch attempt resulted in a non accommodation due to lack of available seats",
                ),
                pl_fs,
            )?,
            nominal_limit_seats: IntGaugeVec::new(
                opts(
                    "nominal_limit_seats",
                    Beta,
                    "Nominal number of execution seats configured for each priority level",
                ),
                pl,
            )?,
            lower_limit_seats: IntGaugeVec::new(
                opts(
                    "lower_limit_seats",
                    Alpha,
                    "Configured lower bound on number of execution seats available to each priority level",
                ),
                pl,
            )?,
            upper_limit_seats: IntGaugeVec::new(
                opts(
                    "upper_limit_seats",
                    Alpha,
                    "Configured upper bound on number of execution seats available to each priority level",
                ),
                pl,
            )?,
            demand_seats_high_watermark: GaugeVec::new(
                opts(
                    "demand_seats_high_watermark",
                    Alpha,
                    "High watermark, over last adjustment period, of demand_seats",
                ),
                pl,
            )?,
            demand_seats_average: GaugeVec::new(
                opts(
                    "demand_seats_average",
                    Alpha,
                    "Time-weighted average, over last adjustment period, of demand_seats",
                ),
                pl,
            )?,
            demand_seats_stdev: GaugeVec::new(
                opts(
                    "demand_seats_stdev",
                    Alpha,
                    "Time-weighted standard deviation, over last adjustment period, of demand_seats",
                ),
                pl,
            )?,
            demand_seats_smoothed: GaugeVec::new(
                opts("demand_seats_smoothed", Alpha, "Smoothed seat demands"),
                pl,
            )?,
            target_seats: GaugeVec::new(
                opts("target_seats", Alpha, "Seat allocation targets"),
                pl,
            )?,
            seat_fair_frac: Gauge::with_opts(opts(
                "seat_fair_frac",
                Alpha,
                "Fair fraction of server's concurrency to allocate to each priority level that can use it",
            ))?,
            current_limit_seats: IntGaugeVec::new(
                opts(
                    "current_limit_seats",
                    Alpha,
                    "current derived number of execution seats available to each priority level",
                ),
                pl,
            )?,
            timing: TimingRatioMetrics::new()?,
        })
    }

    /// The collectors upstream 1.33 exports by default.
    pub fn collectors(&self) -> Vec<Box<dyn Collector>> {
        let mut collectors: Vec<Box<dyn Collector>> = vec![
            Box::new(self.rejected_requests_total.clone()),
            Box::new(self.dispatched_requests_total.clone()),
            Box::new(self.current_r.clone()),
            Box::new(self.dispatch_r.clone()),
            Box::new(self.latest_s.clone()),
            Box::new(self.next_s_bounds.clone()),
            Box::new(self.next_discounted_s_bounds.clone()),
            Box::new(self.current_inqueue_requests.clone()),
            Box::new(self.current_inqueue_seats.clone()),
            Box::new(self.request_queue_length_after_enqueue.clone()),
            Box::new(self.current_executing_seats.clone()),
            Box::new(self.current_executing_requests.clone()),
            Box::new(self.request_wait_duration_seconds.clone()),
            Box::new(self.request_execution_seconds.clone()),
            Box::new(self.watch_count_samples.clone()),
            Box::new(self.epoch_advance_total.clone()),
            Box::new(self.work_estimated_seats.clone()),
            Box::new(self.request_dispatch_no_accommodation_total.clone()),
            Box::new(self.nominal_limit_seats.clone()),
            Box::new(self.lower_limit_seats.clone()),
            Box::new(self.upper_limit_seats.clone()),
            Box::new(self.demand_seats_high_watermark.clone()),
            Box::new(self.demand_seats_average.clone()),
            Box::new(self.demand_seats_stdev.clone()),
            Box::new(self.demand_seats_smoothed.clone()),
            Box::new(self.target_seats.clone()),
            Box::new(self.seat_fair_frac.clone()),
            Box::new(self.current_limit_seats.clone()),
        ];
        collectors.extend(self.timing.collectors());
        collectors
    }

    /// The deprecated collectors upstream 1.33 hides (shown there only with
    /// `--show-hidden-metrics-for-version`).
    pub fn hidden_collectors(&self) -> Vec<Box<dyn Collector>> {
        vec![
            Box::new(self.request_concurrency_limit.clone()),
            Box::new(self.request_concurrency_in_use.clone()),
        ]
    }

    /// Registers [`Metrics::collectors`].
    pub fn register(&self, registry: &Registry) -> prometheus::Result<()> {
        for collector in self.collectors() {
            registry.register(collector)?;
        }
        Ok(())
    }

    /// The handles of one priority level, with new timing-ratio gauges (upstream's for a
    /// new level: numerators 0, denominators 1).
    pub fn priority_level(&self, name: &str) -> PriorityLevelMetrics {
        PriorityLevelMetrics {
            name: name.into(),
            m: std::sync::Arc::new(self.clone()),
            gauges: std::sync::Arc::new(self.timing.level_gauges(name)),
        }
    }

    /// Upstream's `SetFairFrac`.
    pub fn set_fair_frac(&self, fair_frac: f64) {
        self.seat_fair_frac.set(fair_frac);
    }
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn int(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The metrics of one priority level (its name is the `priority_level` label). Cheap to
/// clone: the queue set takes a copy per request.
#[derive(Clone)]
pub struct PriorityLevelMetrics {
    name: std::sync::Arc<str>,
    m: std::sync::Arc<Metrics>,
    gauges: std::sync::Arc<LevelGauges>,
}

impl PriorityLevelMetrics {
    pub fn priority_level(&self) -> &str {
        &self.name
    }

    /// The server's collectors.
    pub fn metrics(&self) -> &Metrics {
        &self.m
    }

    /// Upstream's `AddRequestsInQueues`, with the queue set's
    /// `reqsGaugePair.RequestsWaiting.Add` that goes with it everywhere.
    pub fn add_requests_in_queues(&self, flow_schema: &str, delta: i64) {
        self.m
            .current_inqueue_requests
            .with_label_values(&[&*self.name, flow_schema])
            .add(delta);
        self.gauges.requests_waiting.add(delta as f64);
    }

    /// A request of the kind `mutating` enters (`in_queue`) or leaves a queue: upstream's
    /// `request.NoteQueued`, whose note function (the filter's) counts it in
    /// `read_vs_write_current_requests{phase="waiting"}`.
    pub fn note_queued(&self, mutating: bool, in_queue: bool) {
        let delta = if in_queue { 1.0 } else { -1.0 };
        self.m.timing.read_write_gauge(true, mutating).add(delta);
    }

    /// The seats executing plus waiting became `seats`: upstream's union gauge of the
    /// seat-demand integrator and `demand_seats`, here the latter.
    pub fn set_seat_demand(&self, seats: f64) {
        self.gauges.seat_demand.set(seats);
    }

    /// Upstream's `seatDemandRatioedGauge.SetDenominator` at each concurrency adjustment.
    pub fn set_seat_demand_denominator(&self, denominator: f64) {
        self.gauges.seat_demand.set_denominator(denominator);
    }

    /// The denominators of the level's requests waiting and executing and seats executing.
    pub fn set_utilization_denominators(&self, waiting: f64, executing: f64) {
        self.gauges.set_utilization_denominators(waiting, executing);
    }

    /// The denominators a queue set's configuration gives (upstream's `setConfiguration`).
    pub fn set_queue_set_denominators(
        &self,
        q_cfg: &crate::fairqueuing::QueuingConfig,
        d_cfg: crate::fairqueuing::DispatchingConfig,
    ) {
        self.gauges.set_queue_set_denominators(q_cfg, d_cfg);
    }

    /// Upstream's `AddSeatsInQueues`.
    pub fn add_seats_in_queues(&self, flow_schema: &str, delta: i64) {
        self.m
            .current_inqueue_seats
            .with_label_values(&[&*self.name, flow_schema])
            .add(delta);
    }

    /// Upstream's `AddRequestsExecuting`, with the queue set's
    /// `reqsGaugePair.RequestsExecuting.Add` that goes with it everywhere.
    pub fn add_requests_executing(&self, flow_schema: &str, delta: i64) {
        self.m
            .current_executing_requests
            .with_label_values(&[&*self.name, flow_schema])
            .add(delta);
        self.gauges.requests_executing.add(delta as f64);
    }

    /// Upstream's `AddSeatConcurrencyInUse`, with the queue set's `execSeatsGauge.Add`
    /// that goes with it everywhere.
    pub fn add_seat_concurrency_in_use(&self, flow_schema: &str, delta: i64) {
        self.gauges.seats_executing.add(delta as f64);
        let labels = [&*self.name, flow_schema];
        self.m
            .current_executing_seats
            .with_label_values(&labels)
            .add(delta);
        self.m
            .request_concurrency_in_use
            .with_label_values(&labels)
            .add(delta);
    }

    /// Upstream's `AddReject`.
    pub fn add_reject(&self, flow_schema: &str, reason: &str) {
        self.m
            .rejected_requests_total
            .with_label_values(&[&*self.name, flow_schema, reason])
            .inc();
    }

    /// Upstream's `AddDispatch`.
    pub fn add_dispatch(&self, flow_schema: &str) {
        self.m
            .dispatched_requests_total
            .with_label_values(&[&*self.name, flow_schema])
            .inc();
    }

    /// Upstream's `ObserveQueueLength`.
    pub fn observe_queue_length(&self, flow_schema: &str, length: usize) {
        self.m
            .request_queue_length_after_enqueue
            .with_label_values(&[&*self.name, flow_schema])
            .observe(length as f64);
    }

    /// Upstream's `ObserveWaitingDuration` (`execute` is the label `"true"`/`"false"`).
    pub fn observe_waiting_duration(&self, flow_schema: &str, execute: bool, wait: Duration) {
        let execute = if execute { "true" } else { "false" };
        self.m
            .request_wait_duration_seconds
            .with_label_values(&[&*self.name, flow_schema, execute])
            .observe(secs(wait));
    }

    /// Upstream's `ObserveExecutionDuration`: `watch` picks the `type` label `"watch"`
    /// instead of `"regular"`.
    pub fn observe_execution_duration(&self, flow_schema: &str, watch: bool, execution: Duration) {
        let kind = if watch { "watch" } else { "regular" };
        self.m
            .request_execution_seconds
            .with_label_values(&[&*self.name, flow_schema, kind])
            .observe(secs(execution));
    }

    /// Upstream's `ObserveWatchCount`.
    pub fn observe_watch_count(&self, flow_schema: &str, count: usize) {
        self.m
            .watch_count_samples
            .with_label_values(&[&*self.name, flow_schema])
            .observe(count as f64);
    }

    /// Upstream's `ObserveWorkEstimatedSeats`.
    pub fn observe_work_estimated_seats(&self, flow_schema: &str, seats: u64) {
        self.m
            .work_estimated_seats
            .with_label_values(&[&*self.name, flow_schema])
            .observe(seats as f64);
    }

    /// Upstream's `AddDispatchWithNoAccommodation`.
    pub fn add_dispatch_with_no_accommodation(&self, flow_schema: &str) {
        self.m
            .request_dispatch_no_accommodation_total
            .with_label_values(&[&*self.name, flow_schema])
            .inc();
    }

    /// Upstream's `SetCurrentR`.
    pub fn set_current_r(&self, r: f64) {
        self.m.current_r.with_label_values(&[&*self.name]).set(r);
    }

    /// Upstream's `SetDispatchMetrics`.
    pub fn set_dispatch_metrics(
        &self,
        r: f64,
        s: f64,
        s_min: f64,
        s_max: f64,
        ds_min: f64,
        ds_max: f64,
    ) {
        let pl = &*self.name;
        self.m.dispatch_r.with_label_values(&[pl]).set(r);
        self.m.latest_s.with_label_values(&[pl]).set(s);
        self.m
            .next_s_bounds
            .with_label_values(&[pl, "min"])
            .set(s_min);
        self.m
            .next_s_bounds
            .with_label_values(&[pl, "max"])
            .set(s_max);
        self.m
            .next_discounted_s_bounds
            .with_label_values(&[pl, "min"])
            .set(ds_min);
        self.m
            .next_discounted_s_bounds
            .with_label_values(&[pl, "max"])
            .set(ds_max);
    }

    /// Upstream's `AddEpochAdvance`.
    pub fn add_epoch_advance(&self, success: bool) {
        let success = if success { "true" } else { "false" };
        self.m
            .epoch_advance_total
            .with_label_values(&[&*self.name, success])
            .inc();
    }

    /// Upstream's `SetPriorityLevelConfiguration`.
    pub fn set_priority_level_configuration(&self, nominal: usize, lower: usize, upper: usize) {
        let pl = [&*self.name];
        self.m
            .request_concurrency_limit
            .with_label_values(&pl)
            .set(int(nominal));
        self.m
            .nominal_limit_seats
            .with_label_values(&pl)
            .set(int(nominal));
        self.m
            .lower_limit_seats
            .with_label_values(&pl)
            .set(int(lower));
        self.m
            .upper_limit_seats
            .with_label_values(&pl)
            .set(int(upper));
    }

    /// Upstream's `NotePriorityLevelConcurrencyAdjustment`.
    pub fn note_concurrency_adjustment(
        &self,
        high_watermark: f64,
        average: f64,
        stdev: f64,
        smoothed: f64,
        target: f64,
        current_limit: usize,
    ) {
        let pl = [&*self.name];
        self.m
            .demand_seats_high_watermark
            .with_label_values(&pl)
            .set(high_watermark);
        self.m
            .demand_seats_average
            .with_label_values(&pl)
            .set(average);
        self.m.demand_seats_stdev.with_label_values(&pl).set(stdev);
        self.m
            .demand_seats_smoothed
            .with_label_values(&pl)
            .set(smoothed);
        self.m.target_seats.with_label_values(&pl).set(target);
        self.m
            .current_limit_seats
            .with_label_values(&pl)
            .set(int(current_limit));
    }
}

#[cfg(test)]
mod tests;
