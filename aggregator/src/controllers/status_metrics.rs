//! The availability controllers' metrics, after upstream's
//! `pkg/controllers/status/metrics`: `aggregator_unavailable_apiservice` (1 for each
//! APIService whose `Available` condition is not True when last checked, 0 otherwise,
//! forgotten when the APIService goes) and `aggregator_unavailable_apiservice_total`
//! (each time this replica's write turned an APIService unavailable, by reason).

use prometheus::core::Collector;
use prometheus::{GaugeVec, IntCounterVec, Opts};
use serde_json::Value;

use crate::apiservice::conditions;

#[derive(Clone)]
pub struct Metrics {
    unavailable: GaugeVec,
    unavailable_total: IntCounterVec,
}

impl Metrics {
    pub fn new() -> prometheus::Result<Metrics> {
        Ok(Metrics {
            unavailable: GaugeVec::new(
                Opts::new(
                    "aggregator_unavailable_apiservice",
                    "[ALPHA] Gauge of APIServices which are marked as unavailable broken down by APIService name.",
                ),
                &["name"],
            )?,
            unavailable_total: IntCounterVec::new(
                Opts::new(
                    "aggregator_unavailable_apiservice_total",
                    "[ALPHA] Counter of APIServices which are marked as unavailable broken down by APIService name and reason.",
                ),
                &["name", "reason"],
            )?,
        })
    }

    /// What the server registers.
    pub fn collectors(&self) -> Vec<Box<dyn Collector>> {
        vec![
            Box::new(self.unavailable.clone()),
            Box::new(self.unavailable_total.clone()),
        ]
    }

    /// Upstream's `SetUnavailableGauge`, on every check.
    pub fn set_gauge(&self, name: &str, api_service: &Value) {
        let value = if conditions::is_available(api_service) {
            0.0
        } else {
            1.0
        };
        self.unavailable.with_label_values(&[name]).set(value);
    }

    /// Upstream's `SetUnavailableCounter`, after a status write: counts a change to
    /// unavailable, with the new condition's reason.
    pub fn count_change(&self, name: &str, before: &Value, after: &Value) {
        let (was, is) = (
            conditions::is_available(before),
            conditions::is_available(after),
        );
        if was == is || is {
            return;
        }
        let reason =
            conditions::get(after, conditions::AVAILABLE).map_or("UnknownReason", |c| c.reason);
        self.unavailable_total
            .with_label_values(&[name, reason])
            .inc();
    }

    /// Upstream's `ForgetAPIService`: the APIService is gone.
    pub fn forget(&self, name: &str) {
        let _ = self.unavailable.remove_label_values(&[name]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn with_condition(status: &str, reason: &str) -> Value {
        json!({"status": {"conditions": [{"type": "Available", "status": status, "reason": reason}]}})
    }

    fn text(m: &Metrics) -> String {
        let registry = prometheus::Registry::new();
        for c in m.collectors() {
            registry.register(c).unwrap();
        }
        prometheus::TextEncoder::new()
            .encode_to_string(&registry.gather())
            .unwrap()
    }

    #[test]
    fn the_gauge_follows_each_check_and_the_counter_each_change_to_unavailable() {
        let m = Metrics::new().unwrap();
        let (up, down) = (
            with_condition("True", "Passed"),
            with_condition("False", "MissingEndpoints"),
        );
        m.set_gauge("v1.a", &up);
        m.set_gauge("v1.b", &down);
        m.count_change("v1.b", &up, &down);
        // New and not available, unavailable still, and a change to available: not
        // counted.
        m.count_change("v1.b", &json!({}), &down);
        m.count_change("v1.b", &down, &with_condition("False", "ServiceNotFound"));
        m.count_change("v1.a", &down, &up);
        let out = text(&m);
        assert!(
            out.contains("aggregator_unavailable_apiservice{name=\"v1.a\"} 0\n"),
            "{out}"
        );
        assert!(
            out.contains("aggregator_unavailable_apiservice{name=\"v1.b\"} 1\n"),
            "{out}"
        );
        assert!(
            out.contains(
                "aggregator_unavailable_apiservice_total{name=\"v1.b\",reason=\"MissingEndpoints\"} 1\n"
            ),
            "{out}"
        );
        assert_eq!(
            out.matches("aggregator_unavailable_apiservice_total{")
                .count(),
            1
        );
        m.forget("v1.b");
        assert!(!text(&m).contains("aggregator_unavailable_apiservice{name=\"v1.b\"}"));
    }

    #[test]
    fn a_change_to_no_condition_counts_as_an_unknown_reason() {
        let m = Metrics::new().unwrap();
        m.count_change("v1.c", &with_condition("True", "Local"), &json!({}));
        assert!(text(&m).contains("reason=\"UnknownReason\"} 1"));
    }
}
