use std::time::Duration;

use prometheus::{Encoder, Registry};

use super::*;

const SECOND: u64 = 1_000_000_000;

fn counts(h: &Histogram) -> Vec<u64> {
    h.get_bucket()
        .iter()
        .map(|b| b.cumulative_count())
        .collect()
}

#[test]
fn bucket_index_is_go_search_float64s() {
    let bounds = [0.0, 0.5, 1.0];
    assert_eq!(bucket_index(&bounds, -1.0), 0);
    assert_eq!(bucket_index(&bounds, 0.0), 0);
    assert_eq!(bucket_index(&bounds, 0.25), 1);
    // Upper bounds are inclusive.
    assert_eq!(bucket_index(&bounds, 0.5), 1);
    assert_eq!(bucket_index(&bounds, 1.0), 2);
    assert_eq!(bucket_index(&bounds, 1.5), 3);
    assert_eq!(bucket_index(&bounds, f64::INFINITY), 3);
    assert_eq!(bucket_index(&bounds, f64::NAN), 3);
}

#[test]
fn time_weighted_buckets_at_explicit_instants() {
    let bounds = [0.0, 0.5, 1.0];
    let t0 = Instant::now();
    let at = |millis: u64| t0 + Duration::from_millis(millis);
    let mut h = TimingHistogram::new(&bounds, t0, 0.0);
    h.set(&bounds, at(1000), 0.3); // 0 held for 1 s
    h.set(&bounds, at(3000), 2.0); // 0.3 held for 2 s
    h.set(&bounds, at(3000), 0.5); // no time passed: 2.0 is never credited
    h.set(&bounds, at(3250), 2.0); // 0.5 (inclusive bound) held for 0.25 s
    h.set(&bounds, at(4250), 1.0); // 2.0 held for 1 s, into +Inf
    h.set(&bounds, at(4750), 1.0); // 1.0 held for 0.5 s
    let p = h.proto(&bounds);
    let bounds_out: Vec<f64> = p.get_bucket().iter().map(|b| b.upper_bound()).collect();
    assert_eq!(bounds_out, bounds);
    assert_eq!(counts(&p), [SECOND, 3_250_000_000, 3_750_000_000]);
    assert_eq!(p.get_sample_count(), 4_750_000_000);
    // The integral of the value over nanoseconds.
    let sum = 0.3 * 2e9 + 0.5 * 0.25e9 + 2.0 * 1e9 + 1.0 * 0.5e9;
    assert!(
        (p.get_sample_sum() - sum).abs() < 1e-3,
        "{}",
        p.get_sample_sum()
    );
    // NaN (0/0) is held in +Inf and poisons the sum, as in Go.
    h.set(&bounds, at(4750), f64::NAN);
    h.set(&bounds, at(5750), 0.0);
    let p = h.proto(&bounds);
    assert_eq!(counts(&p), [SECOND, 3_250_000_000, 3_750_000_000]);
    assert_eq!(p.get_sample_count(), 5_750_000_000);
    assert!(p.get_sample_sum().is_nan());
}

#[test]
fn hot_and_cold_sums_add_up() {
    let bounds = [1.0];
    let t0 = Instant::now();
    let mut h = TimingHistogram::new(&bounds, t0, 1.0);
    for i in 1..=1000u64 {
        h.set(&bounds, t0 + Duration::from_nanos(i), 1.0);
    }
    assert!(h.sum_cold > 0.0, "transfers happened");
    let p = h.proto(&bounds);
    assert_eq!(p.get_sample_sum(), 1000.0);
    assert_eq!(counts(&p), [1000]);
}

fn vec_for_test(labels: &[&str]) -> TimingRatioHistogramVec {
    let opts = Opts::new("ratio", "[ALPHA] A ratio")
        .namespace("test")
        .const_label("phase", "executing")
        .variable_labels(labels.iter().map(|l| (*l).to_owned()).collect());
    TimingRatioHistogramVec::new(timing_opts(opts, &[0.25, 0.5, 1.0])).expect("vec")
}

fn only_histogram(vec: &TimingRatioHistogramVec) -> Histogram {
    let families = vec.collect();
    assert_eq!(families.len(), 1);
    assert_eq!(families[0].get_field_type(), MetricType::HISTOGRAM);
    let metrics = families[0].get_metric();
    assert_eq!(metrics.len(), 1);
    metrics[0].get_histogram().clone()
}

#[tokio::test(start_paused = true)]
async fn ratio_over_time_with_a_changing_denominator() {
    let vec = vec_for_test(&["priority_level"]);
    // Upstream's RequestsExecuting: numerator 0, denominator 1 until configured.
    let gauge = vec.new_for_label_values(0.0, 1.0, &["pl"]);
    gauge.set_denominator(4.0);
    tokio::time::advance(Duration::from_secs(1)).await; // 0/4 = 0 for 1 s
    gauge.add(1.0);
    tokio::time::advance(Duration::from_secs(2)).await; // 1/4 for 2 s: le 0.25
    gauge.set_denominator(2.0);
    tokio::time::advance(Duration::from_secs(3)).await; // 1/2 for 3 s: le 0.5
    gauge.add(2.0);
    tokio::time::advance(Duration::from_secs(1)).await; // 3/2 for 1 s: +Inf
    gauge.set(1.0);
    gauge.set_denominator(1.0);
    tokio::time::advance(Duration::from_secs(4)).await; // 1/1 for 4 s (up to the scrape)
    let h = only_histogram(&vec);
    assert_eq!(counts(&h), [3 * SECOND, 6 * SECOND, 10 * SECOND]);
    assert_eq!(h.get_sample_count(), 11 * SECOND);
    let sum = (0.25 * 2.0 + 0.5 * 3.0 + 1.5 + 1.0 * 4.0) * 1e9;
    assert!(
        (h.get_sample_sum() - sum).abs() < 1e-3,
        "{}",
        h.get_sample_sum()
    );
    // A scrape credits the time up to now, and a later one continues from there.
    tokio::time::advance(Duration::from_secs(1)).await;
    assert_eq!(only_histogram(&vec).get_sample_count(), 12 * SECOND);

    // A new handle on the same member starts from its own initial ratio, keeping the
    // member's history; the old handle's numerator and denominator are its own.
    let again = vec.new_for_label_values(0.0, 1.0, &["pl"]);
    tokio::time::advance(Duration::from_secs(1)).await;
    let h = only_histogram(&vec);
    assert_eq!(counts(&h)[0], 4 * SECOND, "held 0 since the new handle");
    gauge.add(1.0); // 2/1: the old handle's ratio
    again.add(1.0); // 1/1: the new one's
    assert_eq!(only_histogram(&vec).get_sample_count(), 13 * SECOND);
}

#[tokio::test(start_paused = true)]
async fn noop_gauges_and_bad_buckets() {
    let vec = vec_for_test(&["priority_level"]);
    let wrong = vec.new_for_label_values(1.0, 1.0, &["a", "b"]);
    wrong.add(1.0);
    RatioedGauge::noop().set(3.0);
    assert!(vec.collect()[0].get_metric().is_empty());
    let opts = Opts::new("bad", "help");
    assert!(TimingRatioHistogramVec::new(timing_opts(opts.clone(), &[1.0, 1.0])).is_err());
    let inf = TimingRatioHistogramVec::new(timing_opts(opts, &[1.0, f64::INFINITY]));
    assert_eq!(&*inf.expect("trailing +Inf dropped").0.bounds, &[1.0]);
}

#[tokio::test(start_paused = true)]
async fn text_exposition() {
    let vec = vec_for_test(&["priority_level"]);
    let registry = Registry::new();
    registry.register(Box::new(vec.clone())).expect("register");
    let gauge = vec.new_for_label_values(0.0, 2.0, &["workload-low"]);
    gauge.add(1.0);
    tokio::time::advance(Duration::from_millis(1500)).await;
    let mut buf = Vec::new();
    prometheus::TextEncoder::new()
        .encode(&registry.gather(), &mut buf)
        .expect("encode");
    let text = String::from_utf8(buf).expect("utf8");
    let labels = "phase=\"executing\",priority_level=\"workload-low\"";
    let want = format!(
        "# HELP test_ratio EXPERIMENTAL: [ALPHA] A ratio\n\
         # TYPE test_ratio histogram\n\
         test_ratio_bucket{{{labels},le=\"0.25\"}} 0\n\
         test_ratio_bucket{{{labels},le=\"0.5\"}} 1500000000\n\
         test_ratio_bucket{{{labels},le=\"1\"}} 1500000000\n\
         test_ratio_bucket{{{labels},le=\"+Inf\"}} 1500000000\n\
         test_ratio_sum{{{labels}}} 750000000\n\
         test_ratio_count{{{labels}}} 1500000000\n"
    );
    assert_eq!(text, want);
}
