//! Upstream's four timing-ratio histograms of `util/flowcontrol/metrics/metrics.go`
//! (names, labels, buckets, help) and the gauges that feed them:
//!
//! - `priority_level_seat_utilization{priority_level}` (const label `phase="executing"`):
//!   seats executing (any stage, initial for a watch) / the level's concurrency
//!   denominator (upstream's `execSeatsObs`);
//! - `priority_level_request_utilization{phase,priority_level}`: requests waiting / the
//!   queue capacity, and requests executing / the concurrency denominator (upstream's
//!   `reqsGaugePair`);
//! - `demand_seats{priority_level}`: seats executing plus waiting / the concurrency
//!   denominator (upstream's `seatDemandRatioedGauge`);
//! - `read_vs_write_current_requests{phase,request_kind}`: requests waiting, over all the
//!   levels, / their total queue capacity, and requests in their regular stage of
//!   execution / the sum of the nominal limits, by `readOnly` (get, list, watch) or
//!   `mutating` request kind (upstream's filter's watermark gauges).
//!
//! The level gauges (`LevelGauges`) are made once per priority level, as upstream's
//! controller makes them for a new level (numerators 0, denominators 1); the read/write
//! ones once with [`TimingRatioMetrics`].

use prometheus::Opts;
use prometheus::core::Collector;

use super::timing_ratio::{RatioedGauge, TimingRatioHistogramVec, timing_opts};
use super::{PRIORITY_LEVEL, Stability, opts};
use crate::fairqueuing::{DispatchingConfig, QueuingConfig};

const PHASE: &str = "phase";
const WAITING: &str = "waiting";
const EXECUTING: &str = "executing";

/// Both 0.99 and 1 so that `histogram_quantile` reveals saturation (upstream's comment).
const SEAT_UTILIZATION_BUCKETS: &[f64] = &[
    0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0,
];
const REQUEST_UTILIZATION_BUCKETS: &[f64] =
    &[0.0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.25, 0.5, 0.75, 1.0];
const READ_VS_WRITE_BUCKETS: &[f64] = &[
    0.0, 0.001, 0.01, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0,
];
/// Evenly spaced to 1, then roughly powers of 2^(1/4) to 2 and of 2^(1/2) to 6.
const DEMAND_SEATS_BUCKETS: &[f64] = &[0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.7, 2.0, 2.8, 4.0, 6.0];

/// An ALPHA timing-ratio histogram vector (upstream's `NewTimingRatioHistogramVec`).
fn timing(
    opts: Opts,
    buckets: &[f64],
    labels: &[&str],
) -> prometheus::Result<TimingRatioHistogramVec> {
    let labels = labels.iter().map(|l| (*l).to_owned()).collect();
    TimingRatioHistogramVec::new(timing_opts(opts.variable_labels(labels), buckets))
}

/// The four timing-ratio histogram vectors, and the read/write gauges.
#[derive(Clone, Debug)]
pub struct TimingRatioMetrics {
    /// Upstream's `PriorityLevelExecutionSeatsGaugeVec`.
    pub priority_level_seat_utilization: TimingRatioHistogramVec,
    /// Upstream's `PriorityLevelConcurrencyGaugeVec`.
    pub priority_level_request_utilization: TimingRatioHistogramVec,
    /// Upstream's `readWriteConcurrencyGaugeVec`.
    pub read_vs_write_current_requests: TimingRatioHistogramVec,
    /// Upstream's `ApiserverSeatDemands`.
    pub demand_seats: TimingRatioHistogramVec,
    /// `[waiting, executing][read-only, mutating]`.
    read_write: [[RatioedGauge; 2]; 2],
}

impl TimingRatioMetrics {
    pub(super) fn new() -> prometheus::Result<TimingRatioMetrics> {
        use Stability::Alpha;
        let pl = &[PRIORITY_LEVEL];
        let read_vs_write_current_requests = timing(
            opts(
                "read_vs_write_current_requests",
                Alpha,
                "Observations, at the end of every nanosecond, of the number of requests (as a fraction of the relevant limit) waiting or in regular stage of execution",
            ),
            READ_VS_WRITE_BUCKETS,
            &[PHASE, "request_kind"],
        )?;
        // Upstream's `indexOnce` gauges: numerator 0, denominator 1 until the first digest.
        let read_write = [WAITING, EXECUTING].map(|phase| {
            ["readOnly", "mutating"].map(|kind| {
                read_vs_write_current_requests.new_for_label_values(0.0, 1.0, &[phase, kind])
            })
        });
        Ok(TimingRatioMetrics {
            priority_level_seat_utilization: timing(
                opts(
                    "priority_level_seat_utilization",
                    Alpha,
                    "Observations, at the end of every nanosecond, of utilization of seats for any stage of execution (but only initial stage for WATCHes)",
                )
                .const_label(PHASE, EXECUTING),
                SEAT_UTILIZATION_BUCKETS,
                pl,
            )?,
            priority_level_request_utilization: timing(
                opts(
                    "priority_level_request_utilization",
                    Alpha,
                    "Observations, at the end of every nanosecond, of number of requests (as a fraction of the relevant limit) waiting or in any stage of execution (but only initial stage for WATCHes)",
                ),
                REQUEST_UTILIZATION_BUCKETS,
                &[PHASE, PRIORITY_LEVEL],
            )?,
            read_vs_write_current_requests,
            demand_seats: timing(
                opts(
                    "demand_seats",
                    Alpha,
                    "Observations, at the end of every nanosecond, of (the number of seats each priority level could use) / (nominal number of seats for that level)",
                ),
                DEMAND_SEATS_BUCKETS,
                pl,
            )?,
            read_write,
        })
    }

    pub(super) fn collectors(&self) -> [Box<dyn Collector>; 4] {
        [
            Box::new(self.priority_level_seat_utilization.clone()),
            Box::new(self.priority_level_request_utilization.clone()),
            Box::new(self.read_vs_write_current_requests.clone()),
            Box::new(self.demand_seats.clone()),
        ]
    }

    /// The gauges of a new priority level `name`.
    pub(super) fn level_gauges(&self, name: &str) -> LevelGauges {
        let requests = &self.priority_level_request_utilization;
        LevelGauges {
            requests_waiting: requests.new_for_label_values(0.0, 1.0, &[WAITING, name]),
            requests_executing: requests.new_for_label_values(0.0, 1.0, &[EXECUTING, name]),
            seats_executing: self.priority_level_seat_utilization.new_for_label_values(
                0.0,
                1.0,
                &[name],
            ),
            seat_demand: self.demand_seats.new_for_label_values(0.0, 1.0, &[name]),
        }
    }

    /// The `read_vs_write_current_requests` gauge of the requests waiting (or executing)
    /// of a kind (upstream's `Get{Waiting,Executing}{Readonly,Mutating}Concurrency`).
    pub fn read_write_gauge(&self, waiting: bool, mutating: bool) -> &RatioedGauge {
        &self.read_write[usize::from(!waiting)][usize::from(mutating)]
    }

    /// Upstream's digest of a configuration: the `read_vs_write_current_requests`
    /// denominators, the levels' total queue capacity (`queues × queueLengthLimit`) for
    /// waiting and the sum of their nominal limits for executing.
    pub fn set_read_write_denominators(&self, max_waiting: f64, max_executing: f64) {
        for mutating in [false, true] {
            self.read_write_gauge(true, mutating)
                .set_denominator(max_waiting);
            self.read_write_gauge(false, mutating)
                .set_denominator(max_executing);
        }
    }
}

/// The timing-ratio gauges of one priority level (upstream's `priorityLevelState`
/// `reqsGaugePair`, `execSeatsObs` and `seatDemandRatioedGauge`).
#[derive(Debug)]
pub(super) struct LevelGauges {
    pub requests_waiting: RatioedGauge,
    pub requests_executing: RatioedGauge,
    pub seats_executing: RatioedGauge,
    pub seat_demand: RatioedGauge,
}

impl LevelGauges {
    /// The denominators of `priority_level_request_utilization` (waiting, executing) and
    /// of `priority_level_seat_utilization` (executing).
    pub fn set_utilization_denominators(&self, waiting: f64, executing: f64) {
        self.requests_waiting.set_denominator(waiting);
        self.requests_executing.set_denominator(executing);
        self.seats_executing.set_denominator(executing);
    }

    /// Upstream's queue set `setConfiguration`: waiting requests over the queue capacity
    /// (`max(1, queueLengthLimit)`, times the queues if any), executing requests and seats
    /// over the concurrency denominator.
    pub fn set_queue_set_denominators(&self, q_cfg: &QueuingConfig, d_cfg: DispatchingConfig) {
        let mut capacity = q_cfg.queue_length_limit.max(1);
        if q_cfg.desired_num_queues > 0 {
            capacity = capacity.saturating_mul(q_cfg.desired_num_queues);
        }
        let denominator = d_cfg.concurrency_denominator as f64;
        self.set_utilization_denominators(capacity as f64, denominator);
    }
}
