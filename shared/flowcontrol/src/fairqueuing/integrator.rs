//! Upstream's `Integrator` (`fairqueuing/integrator.go`): follows a value that changes at
//! instants of time and reports, over a period, its time-weighted average and standard
//! deviation and its minimum and maximum. The controller reads each priority level's seat
//! demand (seats in use plus seats waiting) this way, resetting it at each read.
//!
//! Time is `tokio::time::Instant`, so a paused tokio clock drives it in tests (outside a
//! runtime it is the ordinary monotonic clock).

use std::sync::{Mutex, PoisonError};
use tokio::time::Instant;

/// What an integrator observed over a period (upstream's `IntegratorResults`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct IntegratorResults {
    /// The length of the period, in seconds.
    pub duration: f64,
    /// The time-weighted average (NaN over an empty period).
    pub average: f64,
    /// The time-weighted standard deviation (NaN over an empty period).
    pub deviation: f64,
    pub min: f64,
    pub max: f64,
}

impl IntegratorResults {
    /// Equality that takes two NaN averages (or deviations) as equal, like upstream's `Equal`.
    pub fn same_as(&self, other: &IntegratorResults) -> bool {
        let eq = |a: f64, b: f64| a == b || (a.is_nan() && b.is_nan());
        self.duration == other.duration
            && self.min == other.min
            && self.max == other.max
            && eq(self.average, other.average)
            && eq(self.deviation, other.deviation)
    }
}

/// The integrals of 1, x and x² over time (upstream's `Moments`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Moments {
    pub elapsed_seconds: f64,
    pub integral_x: f64,
    pub integral_xx: f64,
}

impl Moments {
    /// The moments of the constant `x` held for `dt` seconds.
    pub fn constant(dt: f64, x: f64) -> Moments {
        Moments {
            elapsed_seconds: dt,
            integral_x: x * dt,
            integral_xx: x * x * dt,
        }
    }

    /// The average and standard deviation (NaNs over no time; a NaN deviation when
    /// rounding makes the variance negative).
    pub fn avg_and_std_dev(self) -> (f64, f64) {
        if self.elapsed_seconds <= 0.0 {
            return (f64::NAN, f64::NAN);
        }
        let avg = self.integral_x / self.elapsed_seconds;
        let variance = self.integral_xx / self.elapsed_seconds - avg * avg;
        if variance >= 0.0 {
            (avg, variance.sqrt())
        } else {
            (avg, f64::NAN)
        }
    }
}

#[derive(Debug)]
struct State {
    last_time: Instant,
    x: f64,
    moments: Moments,
    min: f64,
    max: f64,
}

impl State {
    fn update(&mut self) {
        let now = Instant::now();
        let dt = now.saturating_duration_since(self.last_time).as_secs_f64();
        self.last_time = now;
        self.moments = self.moments + Moments::constant(dt, self.x);
    }

    fn set(&mut self, x: f64) {
        self.update();
        self.x = x;
        if x < self.min {
            self.min = x;
        }
        if x > self.max {
            self.max = x;
        }
    }

    fn results(&mut self) -> IntegratorResults {
        self.update();
        let (average, deviation) = self.moments.avg_and_std_dev();
        IntegratorResults {
            duration: self.moments.elapsed_seconds,
            average,
            deviation,
            min: self.min,
            max: self.max,
        }
    }
}

impl std::ops::Add for Moments {
    type Output = Moments;

    fn add(self, o: Moments) -> Moments {
        Moments {
            elapsed_seconds: self.elapsed_seconds + o.elapsed_seconds,
            integral_x: self.integral_x + o.integral_x,
            integral_xx: self.integral_xx + o.integral_xx,
        }
    }
}

impl std::ops::Sub for Moments {
    type Output = Moments;

    fn sub(self, o: Moments) -> Moments {
        Moments {
            elapsed_seconds: self.elapsed_seconds - o.elapsed_seconds,
            integral_x: self.integral_x - o.integral_x,
            integral_xx: self.integral_xx - o.integral_xx,
        }
    }
}

/// A thread-safe integrator of one value, starting at 0 (upstream's `NewNamedIntegrator`).
#[derive(Debug)]
pub struct Integrator {
    name: String,
    state: Mutex<State>,
}

impl Integrator {
    pub fn new(name: impl Into<String>) -> Integrator {
        Integrator {
            name: name.into(),
            state: Mutex::new(State {
                last_time: Instant::now(),
                x: 0.0,
                moments: Moments::default(),
                min: 0.0,
                max: 0.0,
            }),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The value changes to `x` now.
    pub fn set(&self, x: f64) {
        self.lock().set(x);
    }

    /// The value changes by `delta_x` now.
    pub fn add(&self, delta_x: f64) {
        let mut state = self.lock();
        let x = state.x + delta_x;
        state.set(x);
    }

    /// The results since the last reset (or creation).
    pub fn get_results(&self) -> IntegratorResults {
        self.lock().results()
    }

    /// The results since the last reset; then starts a new period, whose minimum and
    /// maximum start at the current value.
    pub fn reset(&self) -> IntegratorResults {
        let mut state = self.lock();
        let results = state.results();
        state.moments = Moments::default();
        state.min = state.x;
        state.max = state.x;
        results
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn upstream_vectors() {
        let igr = Integrator::new("testee");
        igr.add(3.0);
        tokio::time::advance(Duration::from_secs(1)).await;
        let results = igr.get_results();
        let r_too = igr.reset();
        let want = IntegratorResults {
            duration: 1.0,
            average: 3.0,
            deviation: 0.0,
            min: 0.0,
            max: 3.0,
        };
        assert!(want.same_as(&results), "{results:?}");
        assert!(results.same_as(&r_too), "{r_too:?}");

        igr.set(2.0);
        let results = igr.get_results();
        let want = IntegratorResults {
            duration: 0.0,
            average: f64::NAN,
            deviation: f64::NAN,
            min: 2.0,
            max: 3.0,
        };
        assert!(want.same_as(&results), "{results:?}");

        tokio::time::advance(Duration::from_millis(1)).await;
        igr.add(-1.0);
        tokio::time::advance(Duration::from_millis(1)).await;
        let results = igr.get_results();
        assert!((results.duration - 0.002).abs() < 1e-12, "{results:?}");
        assert!((results.average - 1.5).abs() < 1e-9, "{results:?}");
        assert!((results.deviation - 0.5).abs() < 1e-6, "{results:?}");
        assert_eq!((results.min, results.max), (1.0, 3.0));
    }

    #[test]
    fn moments() {
        let m = Moments::constant(2.0, 3.0) + Moments::constant(2.0, 1.0);
        let (avg, dev) = m.avg_and_std_dev();
        assert_eq!((avg, dev), (2.0, 1.0));
        assert_eq!(m - Moments::constant(2.0, 1.0), Moments::constant(2.0, 3.0));
        assert!(Moments::default().avg_and_std_dev().0.is_nan());
    }
}
