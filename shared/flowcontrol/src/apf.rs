//! The one entry to API Priority and Fairness (upstream's `apf_filter.go` `Handle` and the
//! classification half of `WithPriorityAndFairness`): classify a request, estimate its
//! work, and start it in its priority level — at once, after waiting in a queue, or not at
//! all. The HTTP filter around it is kas-filters'.

use kas_storage::latency::{self, Layer};
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::controller::{Classification, Controller, PriorityLevel};
use crate::dropped_requests::DroppedRequestsTracker;
use crate::fairqueuing::RejectReason;
use crate::fairqueuing::queueset::{Executing, RequestDescr, Start};
use crate::informer::Informer;
use crate::request::{WorkEstimator, WorkRequest};
use crate::rule::RequestDigest;
use crate::watch_tracker::{ForgetWatch, WatchRequest, WatchTracker};
use kas_storage::counts::ObjectCountTracker;

/// Upstream's bound on how long a request may wait in a queue.
const MAX_WAIT: Duration = Duration::from_secs(60);

/// API Priority and Fairness for one server: the controller with its configuration, and
/// what the work estimates read.
pub struct PriorityAndFairness {
    controller: Arc<Controller>,
    /// The informer that keeps the controller's configuration, kept alive here.
    informer: Option<Arc<Informer>>,
    pub estimator: WorkEstimator,
    pub object_counts: Arc<ObjectCountTracker>,
    pub watches: WatchTracker,
    dropped: DroppedRequestsTracker,
    /// `--request-timeout` / 4: the wait limit of a request without a deadline.
    default_wait_limit: Duration,
}

/// One request as APF reads it.
pub struct ApfRequest<'a> {
    pub digest: RequestDigest<'a>,
    /// The raw query, for the list options the estimate reads.
    pub query: &'a str,
    /// The field selector's raw value (watches of pods by node).
    pub field_selector: Option<&'a str>,
    /// When the request must be answered by, if it has a deadline.
    pub deadline: Option<Instant>,
}

/// A request that may execute: its classification and the seats it holds until dropped
/// (and its count among the requests executing of its kind).
pub struct Admitted {
    pub classification: Classification,
    _seats: Seats,
    _kind: ExecutingKind,
}

/// What an admitted request holds; dropping it frees the seats.
#[expect(dead_code, reason = "held only for what its drop frees")]
enum Seats {
    Exempt(ExemptGuard),
    Limited(Executing),
}

/// A request that may not: its classification and upstream's `Retry-After`.
pub struct Rejected {
    pub classification: Classification,
    pub reason: RejectReason,
    pub retry_after: i64,
}

impl PriorityAndFairness {
    pub fn new(
        controller: Arc<Controller>,
        estimator: WorkEstimator,
        object_counts: Arc<ObjectCountTracker>,
        request_timeout: Duration,
    ) -> PriorityAndFairness {
        PriorityAndFairness {
            controller,
            informer: None,
            estimator,
            object_counts,
            watches: WatchTracker::default(),
            dropped: DroppedRequestsTracker::default(),
            default_wait_limit: request_timeout / 4,
        }
    }

    /// Keeps `informer` (which feeds the controller) for as long as this lives.
    pub fn following(mut self, informer: Arc<Informer>) -> PriorityAndFairness {
        self.informer = Some(informer);
        self
    }

    pub fn controller(&self) -> &Arc<Controller> {
        &self.controller
    }

    fn watch_request<'a>(req: &ApfRequest<'a>) -> WatchRequest<'a> {
        WatchRequest {
            api_group: req.digest.api_group,
            resource: req.digest.resource,
            namespace: req.digest.namespace,
            name: req.digest.name,
            verb: req.digest.verb,
            field_selector: req.field_selector,
        }
    }

    /// Registers an admitted watch for the mutating work estimate; forgotten when the
    /// guard drops (the watch ends).
    pub fn register_watch(&self, req: &ApfRequest<'_>) -> Option<ForgetWatch> {
        self.watches.register_watch(Self::watch_request(req))
    }

    /// Classifies `req` and starts it: `Ok` once it may execute (it holds its seats until
    /// the [`Admitted`] drops), `Err` when its level rejects it. `None` only when the
    /// configuration has no level for the matching schema (never after the first digest).
    pub async fn admit(&self, req: &ApfRequest<'_>) -> Option<Result<Admitted, Rejected>> {
        let classification = self.controller().classify(&req.digest)?;
        let level = classification.level.clone();
        let work_request = WorkRequest {
            verb: req.digest.verb,
            resource: req.digest.resource,
            subresource: req.digest.subresource,
            name: req.digest.name,
            api_group: req.digest.api_group,
            query: req.query,
        };
        let work = self.estimator.estimate(
            &work_request,
            level.max_seats(),
            |gr| self.object_counts.get(gr),
            || {
                self.watches
                    .interested_watch_count(Self::watch_request(req))
            },
        );
        let schema = &classification.flow_schema.metadata.name;
        if let Some(metrics) = &level.metrics {
            metrics.observe_work_estimated_seats(schema, work.max_seats());
        }
        let mutating = is_mutating(req.digest.verb);
        let Some(queues) = level.queues.clone() else {
            let guard = ExemptGuard::new(level.clone(), schema, work.initial_seats);
            return Some(Ok(Admitted {
                classification,
                _seats: Seats::Exempt(guard),
                _kind: ExecutingKind::new(&level, mutating),
            }));
        };
        let descr = RequestDescr {
            work,
            hash: classification.hash,
            flow_schema: schema.clone(),
            flow_distinguisher: classification.flow_distinguisher.clone(),
            user: req.digest.user.name.clone(),
            descr: describe(req),
            arrived: std::time::Instant::now(),
            mutating,
        };
        let started = match queues.start_request(descr) {
            Start::Execute(executing) => Ok(executing),
            Start::Queued(queued) => {
                let waiting = Instant::now();
                let waited = queued.wait(self.wait_deadline(req.deadline)).await;
                // Upstream's `TrackAPFQueueWaitLatency`, for the audit event.
                latency::track(Layer::ApfQueueWait, waiting.elapsed());
                waited
            }
            Start::Rejected(reason) => Err(reason),
        };
        Some(match started {
            Ok(executing) => Ok(Admitted {
                classification,
                _seats: Seats::Limited(executing),
                _kind: ExecutingKind::new(&level, mutating),
            }),
            Err(reason) => {
                self.dropped.record_dropped_request(level.name());
                let retry_after = self.dropped.retry_after(level.name());
                Err(Rejected {
                    classification,
                    reason,
                    retry_after,
                })
            }
        })
    }

    /// Upstream's `getRequestWaitContext`: a quarter of the time to the deadline (of the
    /// request timeout without one), at most a minute.
    fn wait_deadline(&self, deadline: Option<Instant>) -> Instant {
        let now = Instant::now();
        let limit = deadline.map_or(self.default_wait_limit, |d| {
            d.saturating_duration_since(now) / 4
        });
        now + limit.min(MAX_WAIT)
    }
}

impl Admitted {
    /// Ends the request's execution now (a watch, once initialized); also on drop.
    pub fn finish(self) {
        drop(self);
    }
}

/// Upstream's filter's `isMutatingRequest`: the verb is not get, list or watch.
fn is_mutating(verb: &str) -> bool {
    !matches!(verb, "get" | "list" | "watch")
}

/// An admitted request in `read_vs_write_current_requests{phase="executing"}` of its kind
/// while held (upstream's filter's `noteExecutingDelta` around `execute`).
struct ExecutingKind(Option<crate::metrics::timing_ratio::RatioedGauge>);

impl ExecutingKind {
    fn new(level: &PriorityLevel, mutating: bool) -> ExecutingKind {
        let gauge = level.metrics.as_ref().map(|m| {
            let gauge = m.metrics().timing.read_write_gauge(false, mutating);
            gauge.add(1.0);
            gauge.clone()
        });
        ExecutingKind(gauge)
    }
}

impl Drop for ExecutingKind {
    fn drop(&mut self) {
        if let Some(gauge) = &self.0 {
            gauge.add(-1.0);
        }
    }
}

/// Seats of the exempt level, counted while held, with the metrics upstream's exempt
/// queue set keeps (dispatched at once, executing requests and seats, execution time).
struct ExemptGuard {
    level: Arc<PriorityLevel>,
    flow_schema: String,
    seats: i64,
    started: std::time::Instant,
}

impl ExemptGuard {
    fn new(level: Arc<PriorityLevel>, flow_schema: &str, seats: u64) -> ExemptGuard {
        level
            .exempt
            .start(usize::try_from(seats).unwrap_or(usize::MAX));
        let seats = i64::try_from(seats).unwrap_or(i64::MAX);
        if let Some(metrics) = &level.metrics {
            metrics.add_dispatch(flow_schema);
            metrics.observe_waiting_duration(flow_schema, true, Duration::ZERO);
            metrics.add_requests_executing(flow_schema, 1);
            metrics.add_seat_concurrency_in_use(flow_schema, seats);
        }
        ExemptGuard {
            level,
            flow_schema: flow_schema.to_owned(),
            seats,
            started: std::time::Instant::now(),
        }
    }
}

impl Drop for ExemptGuard {
    fn drop(&mut self) {
        self.level
            .exempt
            .finish(usize::try_from(self.seats).unwrap_or(0));
        if let Some(metrics) = &self.level.metrics {
            metrics.add_requests_executing(&self.flow_schema, -1);
            metrics.add_seat_concurrency_in_use(&self.flow_schema, -self.seats);
            metrics.observe_execution_duration(&self.flow_schema, false, self.started.elapsed());
        }
    }
}

/// What `dump_requests?includeRequestDetails=1` shows of a request after its user: verb,
/// path, namespace, name, group version, resource, subresource.
fn describe(req: &ApfRequest<'_>) -> String {
    let d = &req.digest;
    let group_version = if d.api_group.is_empty() {
        d.api_version.to_owned()
    } else if d.api_version.is_empty() {
        d.api_group.to_owned()
    } else {
        format!("{}/{}", d.api_group, d.api_version)
    };
    [
        d.verb,
        d.path,
        d.namespace,
        d.name,
        &group_version,
        d.resource,
        d.subresource,
    ]
    .join(crate::debug::SEPARATOR)
}

#[cfg(test)]
#[path = "apf_tests.rs"]
mod tests;
