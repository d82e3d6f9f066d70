//! Upstream's audit metrics (`k8s.io/apiserver/pkg/audit/metrics.go`), with its names,
//! help texts and labels:
//! - `apiserver_audit_event_total`: events handed to the backend ([`observe_event`]);
//! - `apiserver_audit_error_total{plugin}`: events a backend failed to write
//!   ([`handle_plugin_error`]);
//! - `apiserver_audit_level_total{level}`: the policy level of each request
//!   ([`observe_policy_level`]);
//! - `apiserver_audit_requests_rejected_total`: requests answered with an error because
//!   their RequestReceived event could not be written ([`observe_request_rejected`]).
//!
//! As upstream's, the counters are the process's; each role registers [`collectors`] with
//! its server.

use std::sync::LazyLock;

use prometheus::core::Collector;
use prometheus::{IntCounter, IntCounterVec, Opts};

use crate::event::{Event, Level};
use crate::format::event_string;

struct Metrics {
    events: IntCounter,
    errors: IntCounterVec,
    levels: IntCounterVec,
    rejected: IntCounter,
}

static METRICS: LazyLock<Metrics> = LazyLock::new(|| Metrics {
    events: IntCounter::with_opts(Opts::new(
        "apiserver_audit_event_total",
        "[ALPHA] Counter of audit events generated and sent to the audit backend.",
    ))
    .expect("a valid metric"),
    errors: IntCounterVec::new(
        Opts::new(
            "apiserver_audit_error_total",
            "[ALPHA] Counter of audit events that failed to be audited properly. \
             Plugin identifies the plugin affected by the error.",
        ),
        &["plugin"],
    )
    .expect("a valid metric"),
    levels: IntCounterVec::new(
        Opts::new(
            "apiserver_audit_level_total",
            "[ALPHA] Counter of policy levels for audit events (1 per request).",
        ),
        &["level"],
    )
    .expect("a valid metric"),
    rejected: IntCounter::with_opts(Opts::new(
        "apiserver_audit_requests_rejected_total",
        "[ALPHA] Counter of apiserver requests rejected due to an error \
         in audit logging backend.",
    ))
    .expect("a valid metric"),
});

/// `count` events of `plugin` lost to `err`, whose events are no longer at hand (a
/// combined write of the log backend).
pub fn plugin_errors(plugin: &str, err: &dyn std::fmt::Display, count: usize) {
    METRICS
        .errors
        .with_label_values(&[plugin])
        .inc_by(count as u64);
    tracing::error!("Error in audit plugin '{plugin}' affecting {count} audit events: {err}");
}

/// The audit metrics, for a role's registry.
pub fn collectors() -> Vec<Box<dyn Collector>> {
    vec![
        Box::new(METRICS.events.clone()),
        Box::new(METRICS.errors.clone()),
        Box::new(METRICS.levels.clone()),
        Box::new(METRICS.rejected.clone()),
    ]
}

/// Upstream's `ObserveEvent`: one event handed to the backend.
pub fn observe_event() {
    METRICS.events.inc();
}

/// Upstream's `ObservePolicyLevel`: the level the policy gave a request.
pub fn observe_policy_level(level: Level) {
    METRICS.levels.with_label_values(&[level.as_str()]).inc();
}

/// Upstream's `ApiserverAuditDroppedCounter.Inc()`: a request answered with an error
/// because its RequestReceived event was not written (blocking-strict mode).
pub fn observe_request_rejected() {
    METRICS.rejected.inc();
}

/// Upstream's `HandlePluginError`: counts `impacted` under `plugin` and logs the error
/// with each impacted event's legacy line, as upstream's message.
pub fn handle_plugin_error(plugin: &str, err: &dyn std::fmt::Display, impacted: &[&Event]) {
    METRICS
        .errors
        .with_label_values(&[plugin])
        .inc_by(impacted.len() as u64);
    let mut msg = format!(
        "Error in audit plugin '{plugin}' affecting {} audit events: {err}\nImpacted events:\n",
        impacted.len()
    );
    for ev in impacted {
        msg.push_str(&event_string(ev));
        msg.push('\n');
    }
    tracing::error!("{msg}");
}

/// `apiserver_audit_error_total{plugin}` so far.
#[cfg(test)]
pub(crate) fn error_total(plugin: &str) -> u64 {
    METRICS.errors.with_label_values(&[plugin]).get()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gather_text() -> String {
        let registry = prometheus::Registry::new();
        for c in collectors() {
            registry.register(c).unwrap();
        }
        let mut out = String::new();
        prometheus::TextEncoder::new()
            .encode_utf8(&registry.gather(), &mut out)
            .unwrap();
        out
    }

    #[test]
    fn names_help_and_labels_are_upstreams() {
        observe_event();
        observe_policy_level(Level::RequestResponse);
        observe_request_rejected();
        assert_eq!(error_total("metrics-test"), 0);
        handle_plugin_error("metrics-test", &"boom", &[&Event::new(), &Event::new()]);
        assert_eq!(error_total("metrics-test"), 2);
        let text = gather_text();
        for line in [
            "# HELP apiserver_audit_event_total [ALPHA] Counter of audit events generated and sent to the audit backend.",
            "# TYPE apiserver_audit_event_total counter",
            "# HELP apiserver_audit_error_total [ALPHA] Counter of audit events that failed to be audited properly. Plugin identifies the plugin affected by the error.",
            "apiserver_audit_error_total{plugin=\"metrics-test\"} 2",
            "# HELP apiserver_audit_level_total [ALPHA] Counter of policy levels for audit events (1 per request).",
            "# HELP apiserver_audit_requests_rejected_total [ALPHA] Counter of apiserver requests rejected due to an error in audit logging backend.",
        ] {
            assert!(text.contains(line), "missing {line:?} in\n{text}");
        }
        assert!(text.contains("apiserver_audit_level_total{level=\"RequestResponse\"} "));
    }
}
