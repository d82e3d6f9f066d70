//! Upstream's queue set (`fairqueuing/queueset`): "fair queuing for server requests" for
//! one priority level.
//!
//! Virtual time R counts the seat-seconds each non-empty queue has been allotted; it
//! advances at `min(C, seats in use + seats waiting) / non-empty queues` per second (C is
//! the concurrency limit), and winds back by half its range when it grows large (an
//! "epoch advance"). Each queue has a next dispatch R; a request's work is its initial
//! seats times a guessed 3 ms (G) plus its final seats times its additional latency.
//! Dispatch visits the queues round-robin and picks the first whose oldest request has the
//! least virtual finish R (the queue's next dispatch R plus that request's work); it runs
//! if its seats fit (seats in use + its seats <= C, or nothing executes when it is wider
//! than C). When a request finishes, its queue's next dispatch R is corrected by
//! `(G - actual service time) * initial seats`, and no queue's next dispatch R precedes
//! the arrival R of its oldest request (anti-windup). Arrivals are shuffle-sharded to the
//! queue of their hand with the least waiting work; one is rejected ("queue-full") when
//! all seats are in use and its queue holds `queue_length_limit` requests. With zero
//! queues (the Reject type) a request executes if it fits and is otherwise rejected
//! ("concurrency-limit").
//!
//! Rust shape: a [`QueueSet`] is shared as `Arc<QueueSet>`, its state behind a
//! `std::sync::Mutex` that is never held across an `.await`. [`QueueSet::start_request`]
//! answers [`Start`]: an [`Executing`] handle holding the seats, a [`Queued`] handle whose
//! [`Queued::wait`] resolves at dispatch or deadline, or a [`RejectReason`]. Dropping a
//! `Queued` (or its wait future) cancels the request ("cancelled"); if it had just been
//! dispatched its seats are released as a finished request's. Dropping an `Executing` (or
//! [`Executing::finish`]) ends execution; a request with an additional latency keeps its
//! seats that long in a spawned tokio task (released at once without a runtime).
//!
//! Differences from upstream, all deliberate:
//! - A request removed for its deadline is counted in the dump's `timedout`, and one
//!   whose waiter went away in `cancelled` with the reject reason "cancelled" (upstream
//!   counts both as cancelled with reason "time-out").
//! - When a request's final seats are capped at the limit, the waiting-seat counters
//!   are decremented by the seats they were incremented by (upstream uses the capped
//!   count, which leaks).
//! - A queue is not removed while a finished request lingers on its seats, and excess
//!   queues already empty are removed at reconfiguration (upstream's attrition alone
//!   would keep them for ever).
//! - The wait, dispatch and execution metrics that upstream's filter records
//!   (`request_wait_duration_seconds`, `dispatched_requests_total`,
//!   `request_execution_seconds` with type "regular") are recorded here.
//! - No `queueNoteFn`: the caller sees queuing as [`Start::Queued`]; what upstream's
//!   filter's note function does, counting the request in
//!   `read_vs_write_current_requests{phase="waiting"}` of its kind
//!   ([`RequestDescr::mutating`]), is done here as it enters and leaves its queue.

mod state;
#[cfg(test)]
mod tests;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::oneshot;
use tokio::time::Instant;

use self::state::{Inner, Phase, Started, check_config};
use super::dump::QueueSetDump;
use super::integrator::IntegratorResults;
use super::{DispatchingConfig, QueuingConfig, RejectReason, WorkEstimate};
use crate::metrics::PriorityLevelMetrics;

/// A request as the queue set needs it.
#[derive(Debug, Clone)]
pub struct RequestDescr {
    pub work: WorkEstimate,
    /// The flow's hash (flow schema and distinguisher), the entropy of shuffle sharding.
    pub hash: u64,
    pub flow_schema: String,
    pub flow_distinguisher: String,
    pub user: String,
    /// A description of the request, for the detailed dump.
    pub descr: String,
    pub arrived: std::time::Instant,
    /// Not a get, list or watch: the request kind its waiting counts under in
    /// `read_vs_write_current_requests` (upstream's filter's `isMutatingRequest`).
    pub mutating: bool,
}

/// What became of a request at its start.
#[derive(Debug)]
pub enum Start {
    Execute(Executing),
    Queued(Queued),
    Rejected(RejectReason),
}

/// The fair-queuing queue set of one priority level.
#[derive(Debug)]
pub struct QueueSet {
    name: String,
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inner")
            .field("q_cfg", &self.q_cfg)
            .field("d_cfg", &self.d_cfg)
            .field("waiting", &self.tot_requests_waiting)
            .field("executing", &self.tot_requests_executing)
            .field("seats_in_use", &self.tot_seats_in_use)
            .finish_non_exhaustive()
    }
}

impl QueueSet {
    /// A queue set for the configuration (upstream's `BeginConstruction` + `Complete`);
    /// an error for a hand size shuffle sharding cannot do.
    pub fn new(
        queuing: &QueuingConfig,
        dispatching: DispatchingConfig,
        metrics: Option<PriorityLevelMetrics>,
    ) -> Result<Arc<QueueSet>, String> {
        let dealer = check_config(queuing)?;
        let mut inner = Inner::new(&queuing.name, metrics);
        inner.q_cfg = queuing.clone();
        inner.set_configuration(queuing, dealer, dispatching);
        Ok(Arc::new(QueueSet {
            name: queuing.name.clone(),
            inner: Mutex::new(inner),
        }))
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Locks and brings virtual time up to now, before any change of state.
    fn lock_and_sync(&self) -> MutexGuard<'_, Inner> {
        let mut inner = self.lock();
        inner.sync_time();
        inner
    }

    /// Reconfigures (upstream's `BeginConfigChange` + `Complete`): more queues at once,
    /// fewer as the excess ones drain; then dispatches whatever fits now. With zero queues
    /// the queue length limit and hand size keep their values.
    pub fn set_config(
        &self,
        queuing: &QueuingConfig,
        dispatching: DispatchingConfig,
    ) -> Result<(), String> {
        let dealer = check_config(queuing)?;
        self.lock_and_sync()
            .set_configuration(queuing, dealer, dispatching);
        Ok(())
    }

    pub fn queuing_config(&self) -> QueuingConfig {
        self.lock().q_cfg.clone()
    }

    pub fn dispatching_config(&self) -> DispatchingConfig {
        self.lock().d_cfg
    }

    /// Starts handling a request: executes it, queues it or rejects it.
    pub fn start_request(self: &Arc<Self>, req: RequestDescr) -> Start {
        let wait_start = Instant::now();
        let fs_name = req.flow_schema.clone();
        let (tx, rx) = oneshot::channel();
        let mut inner = self.lock_and_sync();
        let id = inner.next_id;
        inner.next_id = inner.next_id.wrapping_add(1);
        let started = inner.start(id, req, tx);
        if let Started::Executing = started {
            inner.note_handed_out(&fs_name);
        }
        let metrics = inner.metrics.clone();
        drop(inner);
        match started {
            Started::Executing => {
                if let Some(m) = &metrics {
                    m.observe_waiting_duration(&fs_name, true, wait_start.elapsed());
                }
                Start::Execute(Executing::new(Arc::clone(self), id, fs_name))
            }
            Started::Queued => Start::Queued(Queued {
                qs: Arc::clone(self),
                id,
                fs_name,
                wait_start,
                rx: Some(rx),
                armed: true,
            }),
            Started::Rejected(reason) => {
                if let Some(m) = &metrics {
                    m.observe_waiting_duration(&fs_name, false, wait_start.elapsed());
                }
                Start::Rejected(reason)
            }
        }
    }

    /// Whether nothing waits and nothing executes.
    pub fn is_idle(&self) -> bool {
        self.lock().is_idle()
    }

    /// Brings virtual time and the seat demand's integral up to now.
    pub fn update_observations(&self) {
        self.lock_and_sync().note_seat_demand();
    }

    /// The seat demand (seats in use plus seats waiting) since the last call; starts a
    /// new period.
    pub fn seat_demand(&self) -> IntegratorResults {
        self.lock().seat_demand.reset()
    }

    pub fn dump(&self, include_details: bool) -> QueueSetDump {
        self.lock().dump(include_details)
    }

    /// Requests executing (not counting those lingering on their final seats).
    pub fn executing_requests(&self) -> usize {
        self.lock().tot_requests_executing
    }

    /// Seats occupied, lingering requests' included.
    pub fn executing_seats(&self) -> usize {
        self.lock().tot_seats_in_use
    }

    pub fn waiting_requests(&self) -> usize {
        self.lock().tot_requests_waiting
    }

    /// Ends a request's execution; keeps its seats for its additional latency.
    fn finish_request(self: &Arc<Self>, id: u64) {
        let runtime = tokio::runtime::Handle::try_current().ok();
        let mut inner = self.lock_and_sync();
        let linger = inner.finish(id, runtime.is_some());
        inner.dispatch_as_much_as_possible();
        drop(inner);
        if let (Some(latency), Some(runtime)) = (linger, runtime) {
            let qs = Arc::clone(self);
            runtime.spawn(async move {
                tokio::time::sleep(latency).await;
                let mut inner = qs.lock_and_sync();
                inner.release_seats(id);
                inner.dispatch_as_much_as_possible();
            });
        }
    }

    /// After a wait: the request's fate under the lock.
    fn conclude_wait(
        self: &Arc<Self>,
        id: u64,
        fs_name: String,
        wait_start: Instant,
    ) -> Result<Executing, RejectReason> {
        let mut inner = self.lock_and_sync();
        let result = match inner.phase(id) {
            Some(Phase::Executing) => {
                inner.note_handed_out(&fs_name);
                Ok(())
            }
            Some(Phase::Waiting) => {
                inner.remove_waiting(id, RejectReason::TimeOut);
                Err(RejectReason::TimeOut)
            }
            _ => Err(RejectReason::Cancelled),
        };
        let metrics = inner.metrics.clone();
        drop(inner);
        if let Some(m) = &metrics {
            m.observe_waiting_duration(&fs_name, result.is_ok(), wait_start.elapsed());
        }
        result.map(|()| Executing::new(Arc::clone(self), id, fs_name))
    }

    /// The waiter of a queued request went away.
    fn cancel_waiting(self: &Arc<Self>, id: u64, fs_name: &str, wait_start: Instant) {
        let mut inner = self.lock_and_sync();
        let phase = inner.phase(id);
        match phase {
            Some(Phase::Waiting) => {
                inner.remove_waiting(id, RejectReason::Cancelled);
            }
            Some(Phase::Executing) => {
                // Dispatched just before the drop: release as a finished request.
                drop(inner);
                self.finish_request(id);
                inner = self.lock();
            }
            _ => {}
        }
        let metrics = inner.metrics.clone();
        drop(inner);
        if let Some(m) = &metrics {
            m.observe_waiting_duration(fs_name, false, wait_start.elapsed());
        }
    }
}

/// A request waiting in a queue.
#[derive(Debug)]
pub struct Queued {
    qs: Arc<QueueSet>,
    id: u64,
    fs_name: String,
    wait_start: Instant,
    rx: Option<oneshot::Receiver<()>>,
    /// Whether dropping this handle must cancel the request.
    armed: bool,
}

impl Queued {
    /// Waits for dispatch until `deadline`; at the deadline the request leaves its queue,
    /// rejected for time-out. Dropping the future before it resolves cancels the request.
    pub async fn wait(mut self, deadline: Instant) -> Result<Executing, RejectReason> {
        if let Some(rx) = self.rx.as_mut() {
            // Either dispatched (or the sender is gone) or the deadline passed: the state
            // under the lock decides.
            let _ = tokio::time::timeout_at(deadline, rx).await;
        }
        self.armed = false;
        let qs = Arc::clone(&self.qs);
        qs.conclude_wait(self.id, std::mem::take(&mut self.fs_name), self.wait_start)
    }
}

impl Drop for Queued {
    fn drop(&mut self) {
        if self.armed {
            self.armed = false;
            let qs = Arc::clone(&self.qs);
            qs.cancel_waiting(self.id, &self.fs_name, self.wait_start);
        }
    }
}

/// An executing request, holding its seats until finished or dropped.
#[derive(Debug)]
pub struct Executing {
    qs: Arc<QueueSet>,
    id: u64,
    fs_name: String,
    started: Instant,
    done: bool,
}

impl Executing {
    fn new(qs: Arc<QueueSet>, id: u64, fs_name: String) -> Executing {
        Executing {
            qs,
            id,
            fs_name,
            started: Instant::now(),
            done: false,
        }
    }

    /// How long the request has been executing.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Ends execution (the same as dropping the handle).
    pub fn finish(mut self) {
        self.end();
    }

    fn end(&mut self) {
        if self.done {
            return;
        }
        self.done = true;
        let metrics = self.qs.lock().metrics.clone();
        if let Some(m) = &metrics {
            m.observe_execution_duration(&self.fs_name, false, self.started.elapsed());
        }
        self.qs.finish_request(self.id);
    }
}

impl Drop for Executing {
    fn drop(&mut self) {
        self.end();
    }
}
