//! Fair queuing of one priority level's requests (upstream's
//! `k8s.io/apiserver/pkg/util/flowcontrol/fairqueuing` and its `request` helpers).
//!
//! - [`queueset`]: the queue set itself ("fair queuing for server requests").
//! - [`shufflesharding`]: upstream's `Dealer`, which picks the hand of queues for a flow.
//! - [`integrator`]: the time-weighted average of a value (the seat demand).
//! - [`dump`]: the instant dump of a queue set for the debug endpoints.
//!
//! This module holds the configuration and the measure of work shared by them:
//! [`QueuingConfig`], [`DispatchingConfig`], [`WorkEstimate`], [`SeatSeconds`] and the
//! reasons a request is rejected ([`RejectReason`]).

use std::fmt;
use std::time::Duration;

pub mod dump;
pub mod integrator;
pub mod queueset;
pub mod shufflesharding;

/// The queuing aspect of a queue set's configuration (upstream's `QueuingConfig`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueuingConfig {
    /// The priority level's name; it labels the metrics.
    pub name: String,
    /// How many queues the configuration asks for. Zero makes the queue set of the
    /// "Reject" type: no queuing, only the concurrency limit (and the other fields are
    /// ignored, keeping their previous values while old queues drain).
    pub desired_num_queues: usize,
    /// The most requests that may wait in one queue.
    pub queue_length_limit: usize,
    /// The number of queues dealt to a flow by shuffle sharding.
    pub hand_size: usize,
}

/// The dispatching aspect of a queue set's configuration (upstream's `DispatchingConfig`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DispatchingConfig {
    /// The most seats that the queue set's executing requests may occupy.
    pub concurrency_limit: usize,
    /// The denominator of the relative concurrency metrics: the limit unless that is zero.
    pub concurrency_denominator: usize,
}

/// The work of one request (upstream's `request.WorkEstimate`): `initial_seats` while it
/// executes, then `final_seats` for `additional_latency` after it finishes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkEstimate {
    pub initial_seats: u64,
    pub final_seats: u64,
    pub additional_latency: Duration,
}

impl WorkEstimate {
    /// The most seats the request occupies over its phases.
    pub fn max_seats(&self) -> u64 {
        self.initial_seats.max(self.final_seats)
    }

    /// `max_seats` as a count of seats in the queue set's bookkeeping.
    pub(crate) fn max_seats_usize(&self) -> usize {
        usize::try_from(self.max_seats()).unwrap_or(usize::MAX)
    }
}

/// Work measured in seat-seconds, in upstream's fixed-point representation:
/// `SeatSeconds(n)` is `n / 10^8` seat-seconds. Arithmetic wraps, as Go's `uint64` does
/// (the queue set relies on that for a negative correction, see `queueset`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SeatSeconds(pub u64);

const SS_SCALE: u64 = 100_000_000;

impl SeatSeconds {
    /// The largest representable value.
    pub const MAX: SeatSeconds = SeatSeconds(u64::MAX);
    /// The smallest representable value.
    pub const MIN: SeatSeconds = SeatSeconds(0);

    /// `seats * duration` (upstream's `SeatsTimesDuration`), for small increments of work.
    pub fn seats_times_duration(seats: f64, duration: Duration) -> SeatSeconds {
        Self::seats_times_nanos(seats, duration.as_nanos() as f64)
    }

    /// `seats * nanos` nanoseconds, where `nanos` may be negative: the result then wraps
    /// as Go's `SeatSeconds(int64(...))` does, so that adding it subtracts.
    pub(crate) fn seats_times_nanos(seats: f64, nanos: f64) -> SeatSeconds {
        let scaled = (seats * nanos / (1e9 / SS_SCALE as f64)).round();
        // `as` saturates out-of-range floats (and maps NaN to 0): never a panic.
        SeatSeconds((scaled as i64) as u64)
    }

    /// The value in seat-seconds as a float (may lose precision).
    pub fn to_float(self) -> f64 {
        self.0 as f64 / SS_SCALE as f64
    }

    /// The duration per seat of this much work spread over `seats` seats.
    pub fn duration_per_seat(self, seats: f64) -> Duration {
        let secs = self.0 as f64 / seats / SS_SCALE as f64;
        if secs.is_finite() && secs > 0.0 {
            Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX)
        } else {
            Duration::ZERO
        }
    }

    pub(crate) fn wrapping_add(self, other: SeatSeconds) -> SeatSeconds {
        SeatSeconds(self.0.wrapping_add(other.0))
    }

    pub(crate) fn wrapping_sub(self, other: SeatSeconds) -> SeatSeconds {
        SeatSeconds(self.0.wrapping_sub(other.0))
    }
}

impl fmt::Display for SeatSeconds {
    /// Upstream's rendering: `"%d.%08dss"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:08}ss", self.0 / SS_SCALE, self.0 % SS_SCALE)
    }
}

/// Why a request is not executed; `as_str` is the `reason` label of
/// `apiserver_flowcontrol_rejected_requests_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RejectReason {
    /// Its queue was at the length limit while all seats were in use.
    QueueFull,
    /// A queue set of the Reject type (no queues) had no room for it.
    ConcurrencyLimit,
    /// It waited in its queue until its deadline.
    TimeOut,
    /// Its waiter went away while it was queued.
    Cancelled,
}

impl RejectReason {
    pub fn as_str(self) -> &'static str {
        match self {
            RejectReason::QueueFull => "queue-full",
            RejectReason::ConcurrencyLimit => "concurrency-limit",
            RejectReason::TimeOut => "time-out",
            RejectReason::Cancelled => "cancelled",
        }
    }
}

impl fmt::Display for RejectReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seat_seconds_fixed_point() {
        let ss = SeatSeconds::seats_times_duration(3.0, Duration::from_millis(3));
        assert_eq!(ss, SeatSeconds(900_000));
        assert_eq!(ss.to_string(), "0.00900000ss");
        assert_eq!(
            SeatSeconds::seats_times_duration(2.0, Duration::from_secs(5)).to_string(),
            "10.00000000ss"
        );
        assert!((ss.to_float() - 0.009).abs() < 1e-12);
        assert_eq!(ss.duration_per_seat(3.0), Duration::from_millis(3));
        assert_eq!(ss.duration_per_seat(0.0), Duration::ZERO);
        // A negative product wraps, so adding it subtracts.
        let neg = SeatSeconds::seats_times_nanos(1.0, -1_000.0);
        assert_eq!(SeatSeconds(1_000).wrapping_add(neg), SeatSeconds(900));
    }

    #[test]
    fn work_estimate_max_seats() {
        let we = WorkEstimate {
            initial_seats: 2,
            final_seats: 5,
            additional_latency: Duration::from_secs(1),
        };
        assert_eq!(we.max_seats(), 5);
        assert_eq!(RejectReason::QueueFull.as_str(), "queue-full");
        assert_eq!(
            RejectReason::ConcurrencyLimit.to_string(),
            "concurrency-limit"
        );
    }
}
