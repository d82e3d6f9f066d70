//! `--max-requests-inflight`, `--max-mutating-requests-inflight`, `--request-timeout`,
//! `--shutdown-delay-duration`, and `--enable-priority-and-fairness` (upstream's
//! `FeatureOptions` holds that one; it chooses between the two limiters these flags size).

use std::time::Duration;

use clap::Args;

use super::GoDuration;
use crate::config::Config;

#[derive(Args, Clone, Debug)]
pub struct ServerRunOptions {
    /// The maximum number of non-mutating requests in flight at a given time. When the
    /// server exceeds this, it rejects requests. Zero for no limit.
    #[arg(long, default_value_t = 400)]
    pub max_requests_inflight: usize,
    /// The maximum number of mutating requests in flight at a given time. When the server
    /// exceeds this, it rejects requests. Zero for no limit.
    #[arg(long, default_value_t = 200)]
    pub max_mutating_requests_inflight: usize,
    /// An optional field indicating the duration a handler must keep a request open before
    /// timing it out. This is the default request timeout for requests but may be
    /// overridden by flags such as --min-request-timeout for specific types of requests.
    #[arg(long, default_value = "1m0s")]
    pub request_timeout: GoDuration,
    /// Time to delay the termination. During that time the server keeps serving requests
    /// normally. The endpoints /healthz and /livez will return success, but /readyz
    /// immediately returns failure.
    #[arg(long, default_value = "0s")]
    pub shutdown_delay_duration: GoDuration,
    /// If true, replace the max-in-flight handler with an enhanced one that queues and
    /// dispatches with priority and fairness
    #[arg(long, num_args = 0..=1, default_value = "true", default_missing_value = "true", value_parser = kas_apimachinery::golang::strconv::parse_bool)]
    pub enable_priority_and_fairness: bool,
}

impl ServerRunOptions {
    pub fn validate(&self) -> Vec<String> {
        let mut errs = Vec::new();
        if self.request_timeout.0 == Duration::ZERO {
            errs.push("--request-timeout must be greater than 0".to_owned());
        }
        errs
    }

    pub fn apply_to(&self, config: &mut Config) {
        config.max_requests_inflight = self.max_requests_inflight;
        config.max_mutating_requests_inflight = self.max_mutating_requests_inflight;
        config.request_timeout = self.request_timeout.0;
        config.shutdown_delay = self.shutdown_delay_duration.0;
        config.enable_priority_and_fairness = self.enable_priority_and_fairness;
    }
}
