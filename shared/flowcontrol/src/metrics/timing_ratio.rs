//! Upstream's timing-ratio histograms (`util/flowcontrol/metrics/timing_ratio_histogram.go`
//! over component-base's `prometheusextension/timing_histogram.go` and
//! `weighted_histogram.go`): a gauge of `numerator / denominator` whose scrape is a
//! histogram of the ratio "observed at the end of every nanosecond".
//!
//! - Each member of a [`TimingRatioHistogramVec`] holds the current ratio and, per
//!   bucket, the nanoseconds the ratio has spent in it (the bucket `le` holds values
//!   `<= le` not in an earlier bucket, like Go's `sort.SearchFloat64s`; NaN falls in
//!   `+Inf`). A change of the ratio first credits the time since the last change to the
//!   old value's bucket; a scrape does the same up to now. So `_count` is the
//!   nanoseconds since the member's creation and `_sum` the integral of the ratio over
//!   them (nanoseconds times ratio; upstream's hot/cold summation).
//! - A [`RatioedGauge`] (upstream's `timingRatioHistogramInner`, made by
//!   `NewForLabelValuesSafe`) is one handle on a member: it keeps the numerator and the
//!   denominator, either of which may change (`Set`/`Add`, `SetDenominator`); the member
//!   sees their quotient (a zero denominator gives an infinite ratio, or NaN for 0/0, as
//!   in Go). Handles are made once per label values (per priority level) and updated
//!   without any label lookup: two short mutex holds per change.
//!
//! Time is `tokio::time::Instant`, so a paused tokio clock drives it in tests; the
//! histogram core takes explicit instants.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use prometheus::core::{Collector, Desc, Describer};
use prometheus::proto::{Bucket, Histogram, LabelPair, Metric, MetricFamily, MetricType};
use prometheus::{HistogramOpts, Opts};
use tokio::time::Instant;

/// Upstream's `initialHotCount` (weighted_histogram.go): terms summed into the hot sum
/// before it is considered for transfer into the cold one.
const INITIAL_HOT_COUNT: i32 = -15;

/// 2^26, about half the bits of a float64's precision (upstream's transfer threshold is
/// `|sumCold| / 2^26`).
const TRANSFER_DIVISOR: f64 = 67_108_864.0;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The index of the bucket of `value`: the first bound `>= value`, else `+Inf` (Go's
/// `sort.SearchFloat64s`, which puts NaN in `+Inf`).
fn bucket_index(bounds: &[f64], value: f64) -> usize {
    bounds.partition_point(|&bound| bound < value || value.is_nan())
}

/// One timing histogram: upstream's `timingHistogram` over its `weightedHistogram`, the
/// weight of an observation being the nanoseconds the value held.
#[derive(Debug)]
struct TimingHistogram {
    last_set: Instant,
    value: f64,
    /// Nanoseconds per bucket, not cumulative; the last is `+Inf`.
    buckets: Vec<u64>,
    sum_hot: f64,
    sum_cold: f64,
    transfer_threshold: f64,
    hot_count: i32,
}

impl TimingHistogram {
    fn new(bounds: &[f64], now: Instant, value: f64) -> TimingHistogram {
        TimingHistogram {
            last_set: now,
            value,
            buckets: vec![0; bounds.len() + 1],
            sum_hot: 0.0,
            sum_cold: 0.0,
            transfer_threshold: 0.0,
            hot_count: INITIAL_HOT_COUNT,
        }
    }

    /// Upstream's `update`: credits the time since the last change to the current value,
    /// then takes `value`.
    fn set(&mut self, bounds: &[f64], now: Instant, value: f64) {
        let delta = now.saturating_duration_since(self.last_set);
        if !delta.is_zero() {
            let nanos = u64::try_from(delta.as_nanos()).unwrap_or(u64::MAX);
            self.observe(bounds, self.value, nanos);
            self.last_set = now;
        }
        self.value = value;
    }

    /// Upstream's `weightedHistogram.updateLocked`.
    fn observe(&mut self, bounds: &[f64], value: f64, weight: u64) {
        if let Some(bucket) = self.buckets.get_mut(bucket_index(bounds, value)) {
            *bucket = bucket.wrapping_add(weight);
        }
        let new_sum_hot = self.sum_hot + weight as f64 * value;
        self.hot_count += 1;
        if self.hot_count >= 0 {
            self.hot_count = INITIAL_HOT_COUNT;
            if new_sum_hot.abs() > self.transfer_threshold {
                self.sum_cold += new_sum_hot;
                self.transfer_threshold = (self.sum_cold / TRANSFER_DIVISOR).abs();
                self.sum_hot = 0.0;
                return;
            }
        }
        self.sum_hot = new_sum_hot;
    }

    /// Upstream's `Write` (after crediting the time up to now): cumulative bucket counts,
    /// the count and the sum.
    fn proto(&self, bounds: &[f64]) -> Histogram {
        let mut cumulative = 0u64;
        let mut buckets = Vec::with_capacity(bounds.len());
        for (&bound, &count) in bounds.iter().zip(&self.buckets) {
            cumulative = cumulative.wrapping_add(count);
            let mut bucket = Bucket::default();
            bucket.set_upper_bound(bound);
            bucket.set_cumulative_count(cumulative);
            buckets.push(bucket);
        }
        let inf = self.buckets.last().copied().unwrap_or(0);
        let mut h = Histogram::default();
        h.set_sample_count(cumulative.wrapping_add(inf));
        h.set_sample_sum(self.sum_hot + self.sum_cold);
        h.set_bucket(buckets);
        h
    }
}

/// One member of a vector: its labels (sorted by name) and its histogram.
#[derive(Debug)]
struct Member {
    labels: Vec<LabelPair>,
    bounds: Arc<[f64]>,
    histogram: Mutex<TimingHistogram>,
}

impl Member {
    fn set(&self, value: f64) {
        let mut histogram = lock(&self.histogram);
        histogram.set(&self.bounds, Instant::now(), value);
    }

    fn metric(&self, now: Instant) -> Metric {
        let mut histogram = lock(&self.histogram);
        let value = histogram.value;
        histogram.set(&self.bounds, now, value);
        let mut metric = Metric::default();
        metric.set_label(self.labels.clone());
        metric.set_histogram(histogram.proto(&self.bounds));
        metric
    }
}

#[derive(Debug, Clone, Copy)]
struct Ratio {
    numerator: f64,
    denominator: f64,
}

#[derive(Debug)]
struct Ratioed {
    member: Arc<Member>,
    ratio: Mutex<Ratio>,
}

/// A gauge of a ratio whose numerator and denominator change independently (upstream's
/// `RatioedGauge`), feeding one member of a [`TimingRatioHistogramVec`]. Cheap to clone
/// (the clones share the numerator and denominator); [`RatioedGauge::noop`] feeds nothing.
#[derive(Debug, Clone, Default)]
pub struct RatioedGauge(Option<Arc<Ratioed>>);

impl RatioedGauge {
    /// A gauge that records nothing (upstream's `noopRatioed`).
    pub fn noop() -> RatioedGauge {
        RatioedGauge(None)
    }

    /// The numerator becomes `numerator`.
    pub fn set(&self, numerator: f64) {
        self.update(|ratio| ratio.numerator = numerator);
    }

    /// The numerator changes by `delta`.
    pub fn add(&self, delta: f64) {
        self.update(|ratio| ratio.numerator += delta);
    }

    /// The denominator becomes `denominator` (upstream's `SetDenominator`).
    pub fn set_denominator(&self, denominator: f64) {
        self.update(|ratio| ratio.denominator = denominator);
    }

    fn update(&self, change: impl FnOnce(&mut Ratio)) {
        let Some(ratioed) = &self.0 else {
            return;
        };
        let mut ratio = lock(&ratioed.ratio);
        change(&mut ratio);
        ratioed.member.set(ratio.numerator / ratio.denominator);
    }
}

#[derive(Debug)]
struct VecInner {
    desc: Desc,
    bounds: Arc<[f64]>,
    members: Mutex<BTreeMap<Vec<String>, Arc<Member>>>,
}

/// Upstream's `TimingRatioHistogramVec`: timing histograms of ratios that differ in their
/// variable labels; a collector writing one histogram family. Cheap to clone (shared).
#[derive(Debug, Clone)]
pub struct TimingRatioHistogramVec(Arc<VecInner>);

impl TimingRatioHistogramVec {
    /// The vector for `opts` (its buckets, const and variable labels); an error for
    /// buckets not in increasing order or a bad name or label. A trailing `+Inf` bucket is
    /// implicit and dropped, as upstream does.
    pub fn new(opts: HistogramOpts) -> prometheus::Result<TimingRatioHistogramVec> {
        let desc = opts.describe()?;
        let mut bounds = opts.buckets;
        if bounds.last().is_some_and(|b| b.is_infinite() && *b > 0.0) {
            bounds.pop();
        }
        if let Some(pair) = bounds.windows(2).find(|w| w[0] >= w[1]) {
            return Err(prometheus::Error::Msg(format!(
                "histogram buckets must be in increasing order: {} >= {}",
                pair[0], pair[1]
            )));
        }
        Ok(TimingRatioHistogramVec(Arc::new(VecInner {
            desc,
            bounds: bounds.into(),
            members: Mutex::new(BTreeMap::new()),
        })))
    }

    /// Upstream's `NewForLabelValuesSafe`: a gauge of the member for `label_values`
    /// (created at its first use), whose ratio is set now to `initial_numerator /
    /// initial_denominator`. Meant to be called once per member and kept; a wrong number
    /// of label values gives a noop gauge.
    pub fn new_for_label_values(
        &self,
        initial_numerator: f64,
        initial_denominator: f64,
        label_values: &[&str],
    ) -> RatioedGauge {
        let desc = &self.0.desc;
        if label_values.len() != desc.variable_labels.len() {
            tracing::error!(
                name = %desc.fq_name,
                ?label_values,
                "Failed to extract TimingRatioHistogramVec member, using noop instead"
            );
            return RatioedGauge::noop();
        }
        let key: Vec<String> = label_values.iter().map(|v| (*v).to_owned()).collect();
        let member = lock(&self.0.members)
            .entry(key)
            .or_insert_with_key(|key| Arc::new(self.member(key)))
            .clone();
        member.set(initial_numerator / initial_denominator);
        RatioedGauge(Some(Arc::new(Ratioed {
            member,
            ratio: Mutex::new(Ratio {
                numerator: initial_numerator,
                denominator: initial_denominator,
            }),
        })))
    }

    fn member(&self, label_values: &[String]) -> Member {
        let desc = &self.0.desc;
        let mut labels = desc.const_label_pairs.clone();
        for (name, value) in desc.variable_labels.iter().zip(label_values) {
            let mut pair = LabelPair::default();
            pair.set_name(name.clone());
            pair.set_value(value.clone());
            labels.push(pair);
        }
        labels.sort_by(|a, b| a.name().cmp(b.name()));
        Member {
            labels,
            bounds: self.0.bounds.clone(),
            histogram: Mutex::new(TimingHistogram::new(&self.0.bounds, Instant::now(), 0.0)),
        }
    }
}

impl Collector for TimingRatioHistogramVec {
    fn desc(&self) -> Vec<&Desc> {
        vec![&self.0.desc]
    }

    fn collect(&self) -> Vec<MetricFamily> {
        let now = Instant::now();
        let metrics: Vec<Metric> = lock(&self.0.members)
            .values()
            .map(|member| member.metric(now))
            .collect();
        let mut family = MetricFamily::default();
        family.set_name(self.0.desc.fq_name.clone());
        family.set_help(self.0.desc.help.clone());
        family.set_field_type(MetricType::HISTOGRAM);
        family.set_metric(metrics);
        vec![family]
    }
}

/// The options of a timing-ratio histogram from upstream's (component-base's) pieces: its
/// help is prefixed `EXPERIMENTAL: ` (`wrapTimingHelp`) after the stability annotation.
pub(super) fn timing_opts(opts: Opts, buckets: &[f64]) -> HistogramOpts {
    let help = format!("EXPERIMENTAL: {}", opts.help);
    HistogramOpts::from(Opts { help, ..opts }).buckets(buckets.to_vec())
}

#[cfg(test)]
impl TimingRatioHistogramVec {
    /// The histogram of the member with `label_values` as a scrape now would write it.
    pub(crate) fn scrape(&self, label_values: &[&str]) -> Option<Histogram> {
        let key: Vec<String> = label_values.iter().map(|v| (*v).to_owned()).collect();
        let member = lock(&self.0.members).get(&key)?.clone();
        Some(member.metric(Instant::now()).get_histogram().clone())
    }
}

/// The cumulative count of a histogram's bucket `le` (its count for `+Inf`).
#[cfg(test)]
pub(crate) fn bucket_count(h: &Histogram, le: f64) -> Option<u64> {
    if le == f64::INFINITY {
        return Some(h.get_sample_count());
    }
    let bucket = h.get_bucket().iter().find(|b| b.upper_bound() == le)?;
    Some(bucket.cumulative_count())
}

#[cfg(test)]
#[path = "timing_ratio_tests.rs"]
mod tests;
