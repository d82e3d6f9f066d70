//! The queue set's state behind its mutex, and upstream's algorithm over it (the
//! `...Locked` methods of upstream's `queueSet`). Every method here runs with the lock
//! held; none blocks or awaits.
//!
//! Requests live in one map by id; a queue holds the ids of its waiting requests (oldest
//! first) and of its executing ones. A request keeps the index of its queue, which is
//! fixed up when an excess queue is removed.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::time::Duration;

use tokio::sync::oneshot;
use tokio::time::Instant;

use super::RequestDescr;
use crate::fairqueuing::integrator::Integrator;
use crate::fairqueuing::shufflesharding::Dealer;
use crate::fairqueuing::{
    DispatchingConfig, QueuingConfig, RejectReason, SeatSeconds, WorkEstimate,
};
use crate::metrics::PriorityLevelMetrics;

mod dump;

/// The guess G at every request's service time (upstream's `estimatedServiceDuration`).
pub(super) const ESTIMATED_SERVICE_DURATION: Duration = Duration::from_millis(3);

/// How far R is wound back when it grows large (upstream's `rDecrement`).
pub(super) const R_DECREMENT: SeatSeconds = SeatSeconds(u64::MAX / 2);

/// The R that triggers an epoch advance (upstream's `highR`).
pub(super) const HIGH_R: SeatSeconds = SeatSeconds(R_DECREMENT.0 + R_DECREMENT.0 / 2);

fn signed(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    Waiting,
    Executing,
    /// Finished, but still holding its seats for its additional latency.
    Lingering,
}

/// The sums over a queue's waiting requests (upstream's `queueSum`).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct QueueSum {
    pub initial_seats_sum: usize,
    pub max_seats_sum: usize,
    pub total_work_sum: SeatSeconds,
}

#[derive(Debug, Default)]
pub(super) struct Queue {
    pub waiting: VecDeque<u64>,
    pub sum: QueueSum,
    pub next_dispatch_r: SeatSeconds,
    pub executing: BTreeSet<u64>,
    pub seats_in_use: usize,
}

impl Queue {
    fn is_empty(&self) -> bool {
        self.waiting.is_empty() && self.executing.is_empty()
    }
}

#[derive(Debug)]
pub(super) struct Request {
    pub fs_name: String,
    pub flow_distinguisher: String,
    pub user: String,
    pub descr: String,
    pub arrived: std::time::Instant,
    pub arrival_r: SeatSeconds,
    pub queue: Option<usize>,
    /// The estimate, with the final seats capped at dispatch as upstream does.
    pub work: WorkEstimate,
    pub total_work: SeatSeconds,
    pub final_work: SeatSeconds,
    /// The seats counted as waiting while queued (the uncapped maximum).
    pub queued_seats: usize,
    /// Not a get, list or watch (its `read_vs_write_current_requests` kind).
    pub mutating: bool,
    pub start_time: Option<Instant>,
    pub phase: Phase,
    pub notify: Option<oneshot::Sender<()>>,
}

impl Request {
    fn max_seats(&self) -> usize {
        self.work.max_seats_usize()
    }

    fn initial_seats(&self) -> usize {
        usize::try_from(self.work.initial_seats).unwrap_or(usize::MAX)
    }
}

/// What `Inner::start` decided.
pub(super) enum Started {
    Executing,
    Queued,
    Rejected(RejectReason),
}

pub(super) struct Inner {
    pub q_cfg: QueuingConfig,
    pub d_cfg: DispatchingConfig,
    pub dealer: Option<Dealer>,
    pub queues: Vec<Queue>,
    pub current_r: SeatSeconds,
    pub last_real_time: Instant,
    /// The index of the queue last dispatched from; may be -1 after a queue removal.
    pub robin_index: isize,
    pub tot_requests_waiting: usize,
    pub tot_requests_executing: usize,
    pub tot_seats_in_use: usize,
    /// Queues with a waiting or executing request, and the seats their executing
    /// requests hold plus those their waiting ones ask for: the virtual-time ratio's
    /// inputs, kept as the queues change instead of summed over every queue each time.
    active_queues: usize,
    queued_seats: usize,
    pub tot_seats_waiting: usize,
    pub enqueues: usize,
    pub dispatched: usize,
    pub rejected: usize,
    pub timedout: usize,
    pub cancelled: usize,
    pub requests: HashMap<u64, Request>,
    /// Executing requests of a queue set without queues.
    pub queueless_executing: BTreeSet<u64>,
    pub next_id: u64,
    pub metrics: Option<PriorityLevelMetrics>,
    pub seat_demand: Integrator,
}

/// Upstream's `checkConfig`: the dealer for a configuration with queues.
pub(super) fn check_config(q_cfg: &QueuingConfig) -> Result<Option<Dealer>, String> {
    if q_cfg.desired_num_queues == 0 {
        return Ok(None);
    }
    Dealer::new(q_cfg.desired_num_queues, q_cfg.hand_size)
        .map(Some)
        .map_err(|err| {
            format!(
                "the QueueSetConfig implies an invalid shuffle sharding config (DesiredNumQueues is deckSize): {err}"
            )
        })
}

impl Inner {
    pub fn new(name: &str, metrics: Option<PriorityLevelMetrics>) -> Inner {
        Inner {
            q_cfg: QueuingConfig::default(),
            d_cfg: DispatchingConfig::default(),
            dealer: None,
            queues: Vec::new(),
            current_r: SeatSeconds(0),
            last_real_time: Instant::now(),
            robin_index: 0,
            tot_requests_waiting: 0,
            tot_requests_executing: 0,
            tot_seats_in_use: 0,
            active_queues: 0,
            queued_seats: 0,
            tot_seats_waiting: 0,
            enqueues: 0,
            dispatched: 0,
            rejected: 0,
            timedout: 0,
            cancelled: 0,
            requests: HashMap::new(),
            queueless_executing: BTreeSet::new(),
            next_id: 0,
            metrics,
            seat_demand: Integrator::new(name),
        }
    }

    pub fn is_idle(&self) -> bool {
        self.tot_requests_waiting == 0 && self.tot_requests_executing == 0
    }

    /// The seats in use plus waiting changed: upstream's `seatDemandIntegrator.Set`, a
    /// union of the integrator and `demand_seats`.
    pub(super) fn note_seat_demand(&self) {
        let seats = self.tot_seats_in_use.saturating_add(self.tot_seats_waiting) as f64;
        self.seat_demand.set(seats);
        if let Some(m) = &self.metrics {
            m.set_seat_demand(seats);
        }
    }

    /// Upstream's `setConfiguration` (after `checkConfig` succeeded).
    pub fn set_configuration(
        &mut self,
        q_cfg: &QueuingConfig,
        dealer: Option<Dealer>,
        d_cfg: DispatchingConfig,
    ) {
        let mut q_cfg = q_cfg.clone();
        if q_cfg.desired_num_queues > 0 {
            // More queues take effect at once; fewer by attrition as they go empty.
            while self.queues.len() < q_cfg.desired_num_queues {
                self.queues.push(Queue::default());
            }
        } else {
            q_cfg.queue_length_limit = self.q_cfg.queue_length_limit;
            q_cfg.hand_size = self.q_cfg.hand_size;
        }
        self.q_cfg = q_cfg;
        self.d_cfg = d_cfg;
        self.dealer = dealer;
        if let Some(m) = &self.metrics {
            m.set_queue_set_denominators(&self.q_cfg, d_cfg);
        }
        // Excess queues that are already empty would never be removed by attrition.
        while self.queues.len() > self.q_cfg.desired_num_queues {
            let last = self.queues.len() - 1;
            if !self.removable(last) {
                break;
            }
            self.remove_queue(last);
        }
        self.dispatch_as_much_as_possible();
    }

    /// Upstream's `syncTimeLocked`: advances R over the real time since the last sync.
    pub fn sync_time(&mut self) {
        let now = Instant::now();
        let elapsed = now.saturating_duration_since(self.last_real_time);
        self.last_real_time = now;
        let prev_r = self.current_r;
        let incr_r = SeatSeconds::seats_times_duration(self.virtual_time_ratio(), elapsed);
        self.current_r = prev_r.wrapping_add(incr_r);
        if prev_r > self.current_r {
            tracing::error!(qs = %self.q_cfg.name, %prev_r, %incr_r, "queueset currentR overflow");
        } else if self.current_r >= HIGH_R {
            self.advance_epoch(incr_r);
        }
        if let Some(m) = &self.metrics {
            m.set_current_r(self.current_r.to_float());
        }
    }

    /// Upstream's `advanceEpoch`: winds R and every reading of it back by `R_DECREMENT`.
    fn advance_epoch(&mut self, incr_r: SeatSeconds) {
        let old_r = self.current_r;
        self.current_r = self.current_r.wrapping_sub(R_DECREMENT);
        tracing::info!(qs = %self.q_cfg.name, %old_r, new_r = %self.current_r, %incr_r, "advancing epoch");
        let mut success = true;
        for (index, queue) in self.queues.iter_mut().enumerate() {
            if queue.is_empty() {
                // Possibly stale; the next arrival overwrites it with the current R.
                queue.next_dispatch_r = SeatSeconds(0);
                continue;
            }
            let old = queue.next_dispatch_r;
            queue.next_dispatch_r = old.wrapping_sub(R_DECREMENT);
            if queue.next_dispatch_r > old {
                tracing::error!(qs = %self.q_cfg.name, queue = index, "queue nextDispatchR underflow");
                success = false;
            }
            for id in &queue.waiting {
                if let Some(req) = self.requests.get_mut(id) {
                    let old = req.arrival_r;
                    req.arrival_r = old.wrapping_sub(R_DECREMENT);
                    if req.arrival_r > old {
                        tracing::error!(qs = %self.q_cfg.name, queue = index, "request arrivalR underflow");
                        success = false;
                    }
                }
            }
        }
        if let Some(m) = &self.metrics {
            m.add_epoch_advance(success);
        }
    }

    /// Upstream's `getVirtualTimeRatioLocked`: min(seats requested, C) / non-empty queues.
    fn virtual_time_ratio(&self) -> f64 {
        #[cfg(debug_assertions)]
        {
            let active = self.queues.iter().filter(|q| !q.is_empty()).count();
            let seats: usize = self
                .queues
                .iter()
                .map(|q| q.seats_in_use + q.sum.max_seats_sum)
                .sum();
            debug_assert_eq!((active, seats), (self.active_queues, self.queued_seats));
        }
        if self.active_queues == 0 {
            return 0.0;
        }
        (self.queued_seats as f64).min(self.d_cfg.concurrency_limit as f64)
            / self.active_queues as f64
    }

    /// Upstream's `canAccommodateSeatsLocked`.
    fn can_accommodate(&self, seats: usize) -> bool {
        let limit = self.d_cfg.concurrency_limit;
        if seats > limit {
            // Wider than the whole limit: runs alone.
            return self.tot_requests_executing == 0;
        }
        self.tot_seats_in_use.saturating_add(seats) <= limit
    }

    /// Upstream's `StartRequest` for a new request `id`.
    pub fn start(&mut self, id: u64, descr: RequestDescr, notify: oneshot::Sender<()>) -> Started {
        let fs_name = descr.flow_schema.clone();
        let work = descr.work;
        let (total_work, final_work) = complete_work(&work);
        let mut req = Request {
            fs_name: descr.flow_schema,
            flow_distinguisher: descr.flow_distinguisher,
            user: descr.user,
            descr: descr.descr,
            arrived: descr.arrived,
            arrival_r: self.current_r,
            queue: None,
            work,
            total_work,
            final_work,
            queued_seats: work.max_seats_usize(),
            mutating: descr.mutating,
            start_time: None,
            phase: Phase::Waiting,
            notify: Some(notify),
        };

        if self.q_cfg.desired_num_queues == 0 {
            // The Reject type: only the concurrency limit applies.
            if !self.can_accommodate(req.max_seats()) {
                tracing::debug!(qs = %self.q_cfg.name, fs = %fs_name, seats = req.max_seats(),
                    in_use = self.tot_seats_in_use, limit = self.d_cfg.concurrency_limit,
                    "rejecting request: concurrency limit");
                return self.reject(&fs_name, RejectReason::ConcurrencyLimit);
            }
            self.dispatch_sans_queue(id, req);
            return Started::Executing;
        }

        let Some(qi) = self.shuffle_shard(descr.hash) else {
            return self.reject(&fs_name, RejectReason::QueueFull);
        };
        req.queue = Some(qi);
        let Some(queue) = self.queues.get(qi) else {
            return self.reject(&fs_name, RejectReason::QueueFull);
        };
        if self.tot_seats_in_use >= self.d_cfg.concurrency_limit
            && queue.waiting.len() >= self.q_cfg.queue_length_limit
        {
            tracing::debug!(qs = %self.q_cfg.name, fs = %fs_name, queue = qi, "rejecting request: queue full");
            self.bound_next_dispatch(qi);
            return self.reject(&fs_name, RejectReason::QueueFull);
        }
        self.enqueue(id, qi, req);
        if let (Some(m), Some(queue)) = (&self.metrics, self.queues.get(qi)) {
            m.observe_queue_length(&fs_name, queue.waiting.len());
        }
        self.bound_next_dispatch(qi);
        self.dispatch_as_much_as_possible();
        match self.requests.get(&id).map(|r| r.phase) {
            Some(Phase::Executing) => Started::Executing,
            _ => Started::Queued,
        }
    }

    fn reject(&mut self, fs_name: &str, reason: RejectReason) -> Started {
        self.rejected += 1;
        if let Some(m) = &self.metrics {
            m.add_reject(fs_name, reason.as_str());
        }
        Started::Rejected(reason)
    }

    /// Upstream's `shuffleShardLocked`: of the flow's hand, the queue with the least
    /// waiting work (seat-seconds), visiting the hand from a rotating offset.
    fn shuffle_shard(&mut self, hash: u64) -> Option<usize> {
        let dealer = self.dealer?;
        let mut hand = Vec::with_capacity(dealer.hand_size());
        let hand = dealer.deal_into_hand(hash, &mut hand);
        let hand_size = hand.len();
        if hand_size == 0 {
            return None;
        }
        let offset = self.enqueues % hand_size;
        self.enqueues = self.enqueues.wrapping_add(1);
        let mut best = None;
        let mut min_work = SeatSeconds::MAX;
        for i in 0..hand_size {
            let qi = hand[(offset + i) % hand_size];
            let Some(queue) = self.queues.get(qi) else {
                continue;
            };
            if best.is_none() || queue.sum.total_work_sum < min_work {
                min_work = queue.sum.total_work_sum;
                best = Some(qi);
            }
        }
        best
    }

    /// Upstream's `enqueueToBoundLocked`.
    fn enqueue(&mut self, id: u64, qi: usize, req: Request) {
        let Some(queue) = self.queues.get_mut(qi) else {
            return;
        };
        if queue.is_empty() {
            queue.next_dispatch_r = self.current_r;
            self.active_queues += 1;
        }
        queue.waiting.push_back(id);
        self.queued_seats = self.queued_seats.saturating_add(req.max_seats());
        queue.sum.initial_seats_sum = queue
            .sum
            .initial_seats_sum
            .saturating_add(req.initial_seats());
        queue.sum.max_seats_sum = queue.sum.max_seats_sum.saturating_add(req.max_seats());
        queue.sum.total_work_sum = queue.sum.total_work_sum.wrapping_add(req.total_work);
        self.tot_requests_waiting += 1;
        self.tot_seats_waiting = self.tot_seats_waiting.saturating_add(req.queued_seats);
        if let Some(m) = &self.metrics {
            m.add_requests_in_queues(&req.fs_name, 1);
            m.add_seats_in_queues(&req.fs_name, signed(req.queued_seats));
            m.note_queued(req.mutating, true);
        }
        self.requests.insert(id, req);
        self.note_seat_demand();
    }

    /// Removes `id` from its queue's waiting list and sums; its queue index.
    fn unlink_waiting(&mut self, id: u64) -> Option<usize> {
        let req = self.requests.get(&id)?;
        let qi = req.queue?;
        let queue = self.queues.get_mut(qi)?;
        let pos = queue.waiting.iter().position(|&w| w == id)?;
        queue.waiting.remove(pos);
        if queue.is_empty() {
            self.active_queues = self.active_queues.saturating_sub(1);
        }
        queue.sum.initial_seats_sum = queue
            .sum
            .initial_seats_sum
            .saturating_sub(req.initial_seats());
        let lost = req.max_seats().min(queue.sum.max_seats_sum);
        queue.sum.max_seats_sum -= lost;
        self.queued_seats = self.queued_seats.saturating_sub(lost);
        queue.sum.total_work_sum = queue.sum.total_work_sum.wrapping_sub(req.total_work);
        Some(qi)
    }

    /// Upstream's `dispatchAsMuchAsPossibleLocked`.
    pub fn dispatch_as_much_as_possible(&mut self) {
        while self.tot_requests_waiting != 0
            && self.tot_seats_in_use < self.d_cfg.concurrency_limit
            && self.dispatch()
        {}
    }

    /// Upstream's `dispatchSansQueueLocked`.
    fn dispatch_sans_queue(&mut self, id: u64, mut req: Request) {
        req.start_time = Some(Instant::now());
        req.phase = Phase::Executing;
        let seats = req.max_seats();
        self.tot_requests_executing += 1;
        self.tot_seats_in_use = self.tot_seats_in_use.saturating_add(seats);
        self.queueless_executing.insert(id);
        if let Some(m) = &self.metrics {
            m.add_requests_executing(&req.fs_name, 1);
            m.add_seat_concurrency_in_use(&req.fs_name, signed(seats));
        }
        self.requests.insert(id, req);
        self.note_seat_demand();
    }

    /// Upstream's `dispatchLocked`: dispatches the oldest request of the queue chosen by
    /// `find_dispatch_queue`; false when none can be dispatched now.
    fn dispatch(&mut self) -> bool {
        let Some((qi, id)) = self.find_dispatch_queue() else {
            return false;
        };
        let Some(req) = self.requests.get_mut(&id) else {
            return false;
        };
        self.tot_requests_waiting = self.tot_requests_waiting.saturating_sub(1);
        self.tot_seats_waiting = self.tot_seats_waiting.saturating_sub(req.queued_seats);
        let seats = req.max_seats();
        req.start_time = Some(Instant::now());
        req.phase = Phase::Executing;
        if let Some(tx) = req.notify.take() {
            // The waiter may be gone already; its drop handler then finishes this request.
            let _ = tx.send(());
        }
        self.tot_requests_executing += 1;
        self.tot_seats_in_use = self.tot_seats_in_use.saturating_add(seats);
        if let Some(m) = &self.metrics {
            m.add_requests_in_queues(&req.fs_name, -1);
            m.add_seats_in_queues(&req.fs_name, -signed(req.queued_seats));
            m.note_queued(req.mutating, false);
            m.add_requests_executing(&req.fs_name, 1);
            m.add_seat_concurrency_in_use(&req.fs_name, signed(seats));
        }
        let total_work = req.total_work;
        if total_work.0 > R_DECREMENT.0 / 100 {
            tracing::error!(qs = %self.q_cfg.name, work = %total_work, "dispatching request with implausibly high work");
        }
        if let Some(queue) = self.queues.get_mut(qi) {
            if queue.is_empty() {
                self.active_queues += 1;
            }
            queue.executing.insert(id);
            queue.seats_in_use = queue.seats_in_use.saturating_add(seats);
            self.queued_seats = self.queued_seats.saturating_add(seats);
            queue.next_dispatch_r = queue.next_dispatch_r.wrapping_add(total_work);
        }
        self.note_seat_demand();
        self.bound_next_dispatch(qi);
        true
    }

    /// Upstream's `findDispatchQueueToBoundLocked`: visits the queues round-robin from
    /// the one after the last dispatched and picks the first whose oldest request has the
    /// least virtual finish R; removes that request from its queue if it fits now.
    fn find_dispatch_queue(&mut self) -> Option<(usize, u64)> {
        let nq = self.queues.len();
        if nq == 0 {
            return None;
        }
        let mut min_finish = SeatSeconds::MAX;
        let (mut s_min, mut ds_min) = (SeatSeconds::MAX, SeatSeconds::MAX);
        let (mut s_max, mut ds_max) = (SeatSeconds::MIN, SeatSeconds::MIN);
        let mut chosen: Option<(usize, u64)> = None;
        let nq_signed = isize::try_from(nq).unwrap_or(isize::MAX);
        for _ in 0..nq {
            self.robin_index = (self.robin_index + 1).rem_euclid(nq_signed);
            let qi = usize::try_from(self.robin_index).unwrap_or(0);
            let Some(queue) = self.queues.get(qi) else {
                continue;
            };
            let Some(&head) = queue.waiting.front() else {
                continue;
            };
            let Some(req) = self.requests.get(&head) else {
                continue;
            };
            let ndr = queue.next_dispatch_r;
            s_min = s_min.min(ndr);
            s_max = s_max.max(ndr);
            let in_progress = SeatSeconds::seats_times_duration(
                queue.seats_in_use as f64,
                ESTIMATED_SERVICE_DURATION,
            );
            let discounted = ndr.wrapping_sub(in_progress);
            ds_min = ds_min.min(discounted);
            ds_max = ds_max.max(discounted);
            let finish = ndr.wrapping_add(req.total_work);
            if finish < min_finish || chosen.is_none() {
                min_finish = finish;
                chosen = Some((qi, head));
            }
        }
        let (qi, id) = chosen?;
        let (seats, fs_name) = {
            let req = self.requests.get(&id)?;
            (req.max_seats(), req.fs_name.clone())
        };
        if !self.can_accommodate(seats) {
            tracing::debug!(qs = %self.q_cfg.name, queue = qi, seats, executing = self.tot_requests_executing,
                in_use = self.tot_seats_in_use, limit = self.d_cfg.concurrency_limit,
                "oldest request of the chosen queue does not fit yet");
            if let Some(m) = &self.metrics {
                m.add_dispatch_with_no_accommodation(&fs_name);
            }
            return None;
        }
        self.unlink_waiting(id)?;
        let limit = self.d_cfg.concurrency_limit as u64;
        if let Some(req) = self.requests.get_mut(&id)
            && req.work.final_seats > limit
        {
            // Final seats beyond the limit: fewer seats for longer, the same final work.
            req.work.final_seats = limit;
            req.work.additional_latency = if limit > 0 {
                req.final_work.duration_per_seat(limit as f64)
            } else {
                Duration::ZERO
            };
        }
        self.robin_index = isize::try_from(qi).unwrap_or(0);
        let ndr = self
            .queues
            .get(qi)
            .map(|q| q.next_dispatch_r)
            .unwrap_or_default();
        if let Some(req) = self.requests.get(&id)
            && ndr < req.arrival_r
        {
            tracing::error!(qs = %self.q_cfg.name, queue = qi, "dispatch before arrival");
        }
        if let Some(m) = &self.metrics {
            m.set_dispatch_metrics(
                self.current_r.to_float(),
                ndr.to_float(),
                s_min.to_float(),
                s_max.to_float(),
                ds_min.to_float(),
                ds_max.to_float(),
            );
        }
        Some((qi, id))
    }

    /// Upstream's `boundNextDispatchLocked` (anti-windup): a queue's next dispatch R is no
    /// earlier than the arrival R of its oldest waiting request.
    fn bound_next_dispatch(&mut self, qi: usize) {
        let Some(queue) = self.queues.get(qi) else {
            return;
        };
        let Some(head) = queue.waiting.front() else {
            return;
        };
        let Some(bound) = self.requests.get(head).map(|r| r.arrival_r) else {
            return;
        };
        if let Some(queue) = self.queues.get_mut(qi)
            && queue.next_dispatch_r < bound
        {
            queue.next_dispatch_r = bound;
        }
    }

    /// Upstream's `finishRequestLocked` for an executing request. Returns the additional
    /// latency for which it keeps its seats (`Some` only when `can_linger`); otherwise its
    /// seats are released now.
    pub fn finish(&mut self, id: u64, can_linger: bool) -> Option<Duration> {
        let now = Instant::now();
        let req = self.requests.get_mut(&id)?;
        if req.phase != Phase::Executing {
            return None;
        }
        self.tot_requests_executing = self.tot_requests_executing.saturating_sub(1);
        let actual = req
            .start_time
            .map(|t| now.saturating_duration_since(t))
            .unwrap_or_default();
        let latency = req.work.additional_latency;
        let linger = can_linger && !latency.is_zero();
        req.phase = Phase::Lingering;
        let (queue, initial_seats) = (req.queue, req.initial_seats());
        if let Some(m) = &self.metrics {
            m.add_requests_executing(&req.fs_name, -1);
        }
        match queue {
            Some(qi) => {
                if let Some(q) = self.queues.get_mut(qi) {
                    if q.executing.remove(&id) && q.is_empty() {
                        self.active_queues = self.active_queues.saturating_sub(1);
                    }
                    // Correct the guess G by the actual service time S: R -= (G - S) * seats.
                    let diff_nanos =
                        ESTIMATED_SERVICE_DURATION.as_nanos() as f64 - actual.as_nanos() as f64;
                    let correction =
                        SeatSeconds::seats_times_nanos(initial_seats as f64, diff_nanos);
                    q.next_dispatch_r = q.next_dispatch_r.wrapping_sub(correction);
                }
                self.bound_next_dispatch(qi);
            }
            None => {
                self.queueless_executing.remove(&id);
            }
        }
        if linger {
            Some(latency)
        } else {
            self.release_seats(id);
            None
        }
    }

    /// Releases the seats of a finished request and forgets it (upstream's
    /// `releaseSeatsLocked`, then `removeQueueIfEmptyLocked`).
    pub fn release_seats(&mut self, id: u64) {
        let Some(req) = self.requests.remove(&id) else {
            return;
        };
        let seats = req.max_seats();
        self.tot_seats_in_use = self.tot_seats_in_use.saturating_sub(seats);
        if let Some(m) = &self.metrics {
            m.add_seat_concurrency_in_use(&req.fs_name, -signed(seats));
        }
        self.note_seat_demand();
        if let Some(qi) = req.queue {
            if let Some(q) = self.queues.get_mut(qi) {
                let lost = seats.min(q.seats_in_use);
                q.seats_in_use -= lost;
                self.queued_seats = self.queued_seats.saturating_sub(lost);
            }
            if self.removable(qi) {
                self.remove_queue(qi);
            }
        }
    }

    /// An excess queue with nothing waiting, executing or lingering.
    fn removable(&self, qi: usize) -> bool {
        self.queues.len() > self.q_cfg.desired_num_queues
            && self
                .queues
                .get(qi)
                .is_some_and(|q| q.is_empty() && q.seats_in_use == 0)
    }

    fn remove_queue(&mut self, qi: usize) {
        if qi >= self.queues.len() {
            return;
        }
        self.queues.remove(qi);
        for req in self.requests.values_mut() {
            if let Some(q) = req.queue.as_mut()
                && *q > qi
            {
                *q -= 1;
            }
        }
        // Keep (robin_index + 1) % len the queue after the one last dispatched from.
        if self.robin_index >= isize::try_from(qi).unwrap_or(isize::MAX) {
            self.robin_index -= 1;
        }
    }

    /// Takes a waiting request out of its queue, rejected for `reason` (upstream's
    /// handling of a cancelled decision in `wait`). False if it was not waiting.
    pub fn remove_waiting(&mut self, id: u64, reason: RejectReason) -> bool {
        if self.requests.get(&id).map(|r| r.phase) != Some(Phase::Waiting) {
            return false;
        }
        let qi = self.unlink_waiting(id);
        let Some(req) = self.requests.remove(&id) else {
            return false;
        };
        self.tot_requests_waiting = self.tot_requests_waiting.saturating_sub(1);
        self.tot_seats_waiting = self.tot_seats_waiting.saturating_sub(req.queued_seats);
        self.rejected += 1;
        match reason {
            RejectReason::TimeOut => self.timedout += 1,
            _ => self.cancelled += 1,
        }
        if let Some(m) = &self.metrics {
            m.add_reject(&req.fs_name, reason.as_str());
            m.add_requests_in_queues(&req.fs_name, -1);
            m.add_seats_in_queues(&req.fs_name, -signed(req.queued_seats));
            m.note_queued(req.mutating, false);
        }
        self.note_seat_demand();
        if let Some(qi) = qi {
            self.bound_next_dispatch(qi);
        }
        true
    }

    pub fn phase(&self, id: u64) -> Option<Phase> {
        self.requests.get(&id).map(|r| r.phase)
    }

    /// Counts a request handed to its caller for execution (upstream's
    /// `OnRequestDispatched` and `AddDispatch`).
    pub fn note_handed_out(&mut self, fs_name: &str) {
        self.dispatched += 1;
        if let Some(m) = &self.metrics {
            m.add_dispatch(fs_name);
        }
    }
}

/// Upstream's `completeWorkEstimate`: (total work, final work) of an estimate, with G as
/// the initial phase's duration.
fn complete_work(work: &WorkEstimate) -> (SeatSeconds, SeatSeconds) {
    let initial =
        SeatSeconds::seats_times_duration(work.initial_seats as f64, ESTIMATED_SERVICE_DURATION);
    let final_work =
        SeatSeconds::seats_times_duration(work.final_seats as f64, work.additional_latency);
    (initial.wrapping_add(final_work), final_work)
}
