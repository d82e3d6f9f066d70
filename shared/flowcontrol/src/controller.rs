//! The configuration controller (upstream's `apf_controller.go`): digests the stored
//! FlowSchemas and PriorityLevelConfigurations into the classification order and one
//! queue set per priority level with its concurrency limits, and classifies and starts
//! requests.
//!
//! Limits, as upstream computes them from the server's total concurrency limit (`--max-
//! requests-inflight` + `--max-mutating-requests-inflight`, 600 by default):
//! - nominal: `ceil(total × shares / sum of every level's shares)`;
//! - lendable: `round(nominal × lendablePercent / 100)`, so the lower limit is
//!   `nominal - lendable`; the upper limit is `nominal + round(nominal ×
//!   borrowingLimitPercent / 100)`, or `nominal + total` without a borrowing limit;
//! - current: every 10 s (`update_borrowing`), each level's seat demand (its average plus
//!   deviation, smoothed, at least its high watermark up to nominal) is a target, and the
//!   levels share the sum of the nominal limits fairly between their bounds
//!   (`conc_alloc`). A new level starts at `nominal - lendable / 2`.
//!
//! The mandatory `exempt` and `catch-all` levels and schemas are imagined when they are not
//! stored; a schema whose level does not exist is left out of classification.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use crate::conc_alloc::{AllocProblemItem, compute_concurrency_allocation};
use crate::config::{
    BY_NAMESPACE, BY_USER, CATCH_ALL, EXEMPT, FlowSchema, PriorityLevelConfiguration,
    mandatory_flow_schema, mandatory_priority_level,
};
use crate::fairqueuing::integrator::{Integrator, IntegratorResults};
use crate::fairqueuing::queueset::QueueSet;
use crate::fairqueuing::{DispatchingConfig, QueuingConfig};
use crate::rule::{RequestDigest, matches_flow_schema};

/// Upstream's `priorityLevelMaxSeatsPercent`.
const MAX_SEATS_FRACTION: f64 = 0.15;
/// Upstream's `seatDemandSmoothingCoefficient`.
const SMOOTHING: f64 = 0.977;

/// One priority level: its configuration, limits and queues. Kept across
/// reconfigurations by name, so a changed level keeps its waiting requests.
pub struct PriorityLevel {
    name: String,
    config: RwLock<Arc<PriorityLevelConfiguration>>,
    /// The Limited level's queue set (`None` for the exempt level).
    pub queues: Option<Arc<QueueSet>>,
    /// The exempt level's requests and seats now executing, with their integral.
    pub exempt: ExemptSeats,
    limits: Mutex<Limits>,
    /// Upstream's `MaxSeatsTracker` entry: the most seats one request may take here.
    max_seats: AtomicUsize,
    /// No longer configured, kept until its requests are done.
    quiescing: std::sync::atomic::AtomicBool,
    /// The level's `apiserver_flowcontrol_*` series.
    pub metrics: Option<crate::metrics::PriorityLevelMetrics>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Limits {
    pub nominal: usize,
    pub lower: usize,
    pub upper: usize,
    pub current: usize,
    demand: SeatDemand,
    /// Set once the level had its first limits (its current limit then starts between
    /// nominal and lower).
    initialized: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct SeatDemand {
    avg: f64,
    std_dev: f64,
    high_watermark: usize,
    smoothed: f64,
}

impl SeatDemand {
    fn update(&mut self, obs: &IntegratorResults) {
        self.high_watermark = obs.max.round().max(0.0) as usize;
        if obs.duration <= 0.0 {
            return;
        }
        let deviation = if obs.deviation.is_nan() {
            0.0
        } else {
            obs.deviation
        };
        self.avg = obs.average;
        self.std_dev = deviation;
        let envelope = obs.average + deviation;
        self.smoothed = envelope.max(SMOOTHING * self.smoothed + (1.0 - SMOOTHING) * envelope);
    }
}

/// The exempt level runs everything at once; it counts what runs for its dump (requests,
/// seats, dispatches, as upstream's queue set without queues counts them) and for its
/// seat demand (the integrator and `demand_seats`, as upstream's exempt queue set does).
pub struct ExemptSeats {
    state: Mutex<ExemptState>,
    metrics: Option<crate::metrics::PriorityLevelMetrics>,
}

struct ExemptState {
    seats: usize,
    requests: usize,
    dispatched: usize,
    integrator: Integrator,
}

impl ExemptSeats {
    fn new(name: &str, metrics: Option<crate::metrics::PriorityLevelMetrics>) -> ExemptSeats {
        ExemptSeats {
            state: Mutex::new(ExemptState {
                seats: 0,
                requests: 0,
                dispatched: 0,
                integrator: Integrator::new(name),
            }),
            metrics,
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, ExemptState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A request of `seats` starts executing.
    pub fn start(&self, seats: usize) {
        let mut state = self.state();
        state.requests += 1;
        state.dispatched += 1;
        state.seats += seats;
        self.note_seats(&mut state);
    }

    /// A request of `seats` is done.
    pub fn finish(&self, seats: usize) {
        let mut state = self.state();
        state.requests = state.requests.saturating_sub(1);
        state.seats = state.seats.saturating_sub(seats);
        self.note_seats(&mut state);
    }

    fn note_seats(&self, state: &mut ExemptState) {
        state.integrator.set(state.seats as f64);
        if let Some(metrics) = &self.metrics {
            metrics.set_seat_demand(state.seats as f64);
        }
    }

    /// The requests executing now.
    pub fn executing(&self) -> usize {
        self.state().requests
    }

    /// The seats in use now.
    pub fn seats_in_use(&self) -> usize {
        self.state().seats
    }

    /// The requests started since the level was made.
    pub fn dispatched(&self) -> usize {
        self.state().dispatched
    }

    fn reset(&self) -> IntegratorResults {
        self.state().integrator.reset()
    }
}

impl PriorityLevel {
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The level's configuration now.
    pub fn config(&self) -> Arc<PriorityLevelConfiguration> {
        self.config
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub fn limits(&self) -> Limits {
        *self.limits.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn max_seats(&self) -> u64 {
        self.max_seats.load(Ordering::Relaxed) as u64
    }

    fn seat_demand(&self) -> IntegratorResults {
        match &self.queues {
            Some(queues) => queues.seat_demand(),
            None => self.exempt.reset(),
        }
    }

    pub fn is_quiescing(&self) -> bool {
        self.quiescing.load(Ordering::Relaxed)
    }

    pub fn is_idle(&self) -> bool {
        match &self.queues {
            Some(queues) => queues.is_idle(),
            None => self.exempt.executing() == 0,
        }
    }
}

/// A request's classification.
#[derive(Clone)]
pub struct Classification {
    pub flow_schema: Arc<FlowSchema>,
    pub level: Arc<PriorityLevel>,
    pub flow_distinguisher: String,
    /// Upstream's `hashFlowID` of the schema and distinguisher (0 with one queue or none).
    pub hash: u64,
}

#[derive(Default)]
struct Digest {
    flow_schemas: Vec<Arc<FlowSchema>>,
    levels: BTreeMap<String, Arc<PriorityLevel>>,
    nominal_sum: usize,
}

/// The controller: the current digest of the configuration, swapped whole on each change.
pub struct Controller {
    server_concurrency_limit: usize,
    digest: RwLock<Arc<Digest>>,
    metrics: Option<Arc<crate::metrics::Metrics>>,
}

impl Controller {
    /// A controller with only the mandatory configuration, until [`Controller::digest`].
    pub fn new(
        server_concurrency_limit: usize,
        metrics: Option<Arc<crate::metrics::Metrics>>,
    ) -> Controller {
        let controller = Controller {
            server_concurrency_limit,
            digest: RwLock::new(Arc::default()),
            metrics,
        };
        controller.digest(Vec::new(), Vec::new());
        controller
    }

    pub fn server_concurrency_limit(&self) -> usize {
        self.server_concurrency_limit
    }

    fn current(&self) -> Arc<Digest> {
        self.digest
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The priority levels now configured, by name.
    pub fn levels(&self) -> Vec<Arc<PriorityLevel>> {
        self.current().levels.values().cloned().collect()
    }

    /// The flow schemas in classification order.
    pub fn flow_schemas(&self) -> Vec<Arc<FlowSchema>> {
        self.current().flow_schemas.clone()
    }

    /// Upstream's `lockAndDigestConfigObjects`: the new configuration, with the levels and
    /// queue sets of the old one reused by name.
    pub fn digest(&self, levels: Vec<PriorityLevelConfiguration>, schemas: Vec<FlowSchema>) {
        let mut guard = self.digest.write().unwrap_or_else(PoisonError::into_inner);
        let old = guard.clone();
        let mut new: BTreeMap<String, Arc<PriorityLevel>> = BTreeMap::new();
        for config in levels {
            if let Err(err) = config.check_structure() {
                tracing::warn!(
                    level = %config.metadata.name,
                    "Ignoring PriorityLevelConfiguration object because its spec is broken: {err}"
                );
                continue;
            }
            let name = config.metadata.name.clone();
            match self.level(old.levels.get(&name), config) {
                Ok(level) => {
                    new.insert(name, level);
                }
                Err(err) => {
                    tracing::warn!(level = %name, "Ignoring PriorityLevelConfiguration object: {err}")
                }
            }
        }
        // Levels no longer configured stay while requests wait or run in them; the
        // mandatory ones stay (or are imagined) regardless.
        for (name, level) in &old.levels {
            let mandatory = name == EXEMPT || name == CATCH_ALL;
            if !new.contains_key(name) && (mandatory || !level.is_idle()) {
                level.quiescing.store(!mandatory, Ordering::Relaxed);
                new.insert(name.clone(), level.clone());
            }
        }
        for name in [EXEMPT, CATCH_ALL] {
            if !new.contains_key(name)
                && let Some(config) = mandatory_priority_level(name)
                && let Ok(level) = self.level(None, config)
            {
                new.insert(name.to_owned(), level);
            }
        }
        let flow_schemas = order_flow_schemas(schemas, &new);
        let (nominal_sum, max_waiting) = self.set_nominal_limits(&new);
        let digest = Digest {
            flow_schemas,
            levels: new,
            nominal_sum,
        };
        self.update_borrowing(&digest);
        *guard = Arc::new(digest);
        if let Some(metrics) = &self.metrics {
            metrics
                .timing
                .set_read_write_denominators(max_waiting as f64, nominal_sum as f64);
        }
    }

    /// The level for `config`: `old` reconfigured in place (its waiting and running
    /// requests keep their queue set), or a new one.
    fn level(
        &self,
        old: Option<&Arc<PriorityLevel>>,
        config: PriorityLevelConfiguration,
    ) -> Result<Arc<PriorityLevel>, String> {
        let queuing = queuing_config(&config);
        if let Some(old) = old
            && old.queues.is_some() == queuing.is_some()
        {
            if let (Some(queues), Some(queuing)) = (&old.queues, &queuing) {
                queues.set_config(queuing, queues.dispatching_config())?;
            }
            *old.config.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(config);
            old.quiescing.store(false, Ordering::Relaxed);
            return Ok(old.clone());
        }
        let name = config.metadata.name.clone();
        let metrics = self.metrics.as_ref().map(|m| m.priority_level(&name));
        let queues = match &queuing {
            None => None,
            Some(queuing) => {
                let dispatching = DispatchingConfig {
                    concurrency_limit: 0,
                    concurrency_denominator: 1,
                };
                Some(QueueSet::new(queuing, dispatching, metrics.clone())?)
            }
        };
        Ok(Arc::new(PriorityLevel {
            config: RwLock::new(Arc::new(config)),
            queues,
            exempt: ExemptSeats::new(&name, metrics.clone()),
            limits: Mutex::new(Limits::default()),
            max_seats: AtomicUsize::new(0),
            quiescing: Default::default(),
            metrics,
            name,
        }))
    }

    /// Upstream's `finishQueueSetReconfigsLocked`: nominal, lower and upper limits and max
    /// seats; the sums of the nominal limits and of the queue capacities (`queues ×
    /// queueLengthLimit`, upstream's `maxExecutingRequests` and `maxWaitingRequests`).
    fn set_nominal_limits(&self, levels: &BTreeMap<String, Arc<PriorityLevel>>) -> (usize, i64) {
        let share_sum: f64 = levels
            .values()
            .map(|l| f64::from(l.config().commons().0))
            .sum();
        let server = self.server_concurrency_limit as f64;
        let (mut nominal_sum, mut max_waiting) = (0, 0i64);
        for level in levels.values() {
            let config = level.config();
            let (shares, lendable_percent, borrowing_percent) = config.commons();
            let nominal = if share_sum > 0.0 {
                (server * f64::from(shares) / share_sum).ceil() as usize
            } else {
                0
            };
            let percent_of =
                |p: i32| (nominal as f64 * f64::from(p) / 100.0).round().max(0.0) as usize;
            let lendable = lendable_percent.map_or(0, percent_of).min(nominal);
            let borrowing = borrowing_percent.map_or(self.server_concurrency_limit, percent_of);
            let mut limits = level.limits.lock().unwrap_or_else(PoisonError::into_inner);
            let fresh = !std::mem::replace(&mut limits.initialized, true);
            limits.nominal = nominal;
            limits.lower = nominal - lendable;
            limits.upper = nominal + borrowing;
            if fresh {
                limits.current = nominal - lendable / 2;
                limits.demand = SeatDemand::default();
            }
            drop(limits);
            if let Some(queuing) = config.queuing() {
                max_waiting += i64::from(queuing.queues) * i64::from(queuing.queue_length_limit);
                let hand = usize::try_from(queuing.hand_size).unwrap_or(1).max(1);
                let by_share = (nominal as f64 * MAX_SEATS_FRACTION).ceil();
                let by_hand = (nominal / hand) as f64;
                let max_seats = by_share.min(by_hand).max(1.0) as usize;
                level.max_seats.store(max_seats, Ordering::Relaxed);
            }
            if let Some(metrics) = &level.metrics {
                metrics.set_priority_level_configuration(
                    nominal,
                    nominal - lendable,
                    nominal + borrowing,
                );
            }
            nominal_sum += nominal;
        }
        (nominal_sum, max_waiting)
    }

    /// Upstream's periodic `updateBorrowing` (every 10 s).
    pub fn adjust_borrowing(&self) {
        let digest = self.current();
        self.update_borrowing(&digest);
    }

    fn update_borrowing(&self, digest: &Digest) {
        let mut items = Vec::new();
        let mut non_exempt = Vec::new();
        let mut exempt_current = HashMap::new();
        let (mut min_sum, mut min_current_sum) = (0usize, 0usize);
        let mut remaining = digest.nominal_sum as i64;
        for level in digest.levels.values() {
            let obs = level.seat_demand();
            let mut limits = level.limits.lock().unwrap_or_else(PoisonError::into_inner);
            limits.demand.update(&obs);
            if level.config().is_exempt() {
                let min_current = limits.lower.max(limits.demand.high_watermark);
                exempt_current.insert(level.name().to_owned(), min_current);
                remaining -= min_current as i64;
            } else {
                let min_current = limits
                    .lower
                    .max(limits.nominal.min(limits.demand.high_watermark));
                non_exempt.push(level.clone());
                items.push(AllocProblemItem {
                    lower_bound: min_current as f64,
                    upper_bound: limits.upper as f64,
                    target: (min_current as f64).max(limits.demand.smoothed),
                });
                min_sum += limits.lower;
                min_current_sum += min_current;
            }
        }
        let remaining = usize::try_from(remaining).unwrap_or(0);
        let mut share_frac = 0.0;
        let mut allocs = None;
        if remaining <= min_sum {
            if let Some(metrics) = &self.metrics {
                metrics.set_fair_frac(0.0);
            }
        } else if remaining <= min_current_sum {
            share_frac = (remaining - min_sum) as f64 / (min_current_sum - min_sum) as f64;
        } else {
            let required = i32::try_from(digest.nominal_sum).unwrap_or(i32::MAX);
            match compute_concurrency_allocation(required, &items) {
                Ok((a, fair_frac)) => {
                    allocs = Some(a);
                    if let Some(metrics) = &self.metrics {
                        metrics.set_fair_frac(fair_frac);
                    }
                }
                Err(err) => tracing::error!("Unable to derive new concurrency limits: {err}"),
            }
        }
        let server = self.server_concurrency_limit as f64;
        for level in digest.levels.values() {
            let mut limits = level.limits.lock().unwrap_or_else(PoisonError::into_inner);
            let current = if let Some(c) = exempt_current.get(level.name()) {
                *c
            } else if remaining <= min_sum {
                limits.lower
            } else if remaining <= min_current_sum {
                let min_current = limits
                    .lower
                    .max(limits.nominal.min(limits.demand.high_watermark));
                limits.lower + ((min_current - limits.lower) as f64 * share_frac).round() as usize
            } else {
                let idx = non_exempt.iter().position(|l| Arc::ptr_eq(l, level));
                match (&allocs, idx) {
                    (Some(allocs), Some(i)) => allocs
                        .get(i)
                        .map_or(limits.current, |a| a.round().max(0.0) as usize),
                    _ => limits.current,
                }
            };
            limits.current = current;
            if let Some(metrics) = &level.metrics {
                let target = non_exempt
                    .iter()
                    .position(|l| Arc::ptr_eq(l, level))
                    .and_then(|i| items.get(i))
                    .map_or(0.0, |item| item.target);
                let demand = limits.demand;
                metrics.note_concurrency_adjustment(
                    demand.high_watermark as f64,
                    demand.avg,
                    demand.std_dev,
                    demand.smoothed,
                    target,
                    current,
                );
            }
            drop(limits);
            let denominator = if current > 0 {
                current
            } else {
                (server / 10.0).round().max(1.0) as usize
            };
            if let Some(metrics) = &level.metrics {
                metrics.set_seat_demand_denominator(denominator as f64);
                if level.queues.is_none() {
                    // Upstream's exempt queue set: no queues (a waiting capacity of 1).
                    metrics.set_utilization_denominators(1.0, denominator as f64);
                }
            }
            if let Some(queues) = &level.queues
                && let Some(queuing) = queuing_config(&level.config())
            {
                let dispatching = DispatchingConfig {
                    concurrency_limit: current,
                    concurrency_denominator: denominator,
                };
                if let Err(err) = queues.set_config(&queuing, dispatching) {
                    tracing::error!(level = %level.name(), "{err}");
                }
            }
        }
    }

    /// Upstream's classification in `startRequest`: the first schema (by precedence, then
    /// name) that matches, else catch-all.
    pub fn classify(&self, digest: &RequestDigest<'_>) -> Option<Classification> {
        let current = self.current();
        let schema = current
            .flow_schemas
            .iter()
            .find(|fs| matches_flow_schema(digest, fs))
            .or_else(|| {
                current
                    .flow_schemas
                    .iter()
                    .find(|fs| fs.metadata.name == CATCH_ALL)
            })?
            .clone();
        let level = current
            .levels
            .get(&schema.spec.priority_level_configuration.name)?
            .clone();
        let config = level.config();
        let queues = config.queuing().map_or(0, |q| q.queues);
        let (flow_distinguisher, hash) = if !config.is_exempt() && queues > 1 {
            let distinguisher = match schema
                .spec
                .distinguisher_method
                .as_ref()
                .map(|m| m.kind.as_str())
            {
                Some(BY_USER) => digest.user.name.clone(),
                Some(BY_NAMESPACE) => digest.namespace.to_owned(),
                _ => String::new(),
            };
            let hash = hash_flow_id(&schema.metadata.name, &distinguisher);
            (distinguisher, hash)
        } else {
            (String::new(), 0)
        };
        Some(Classification {
            flow_schema: schema,
            level,
            flow_distinguisher,
            hash,
        })
    }
}

/// The queuing configuration of a Limited level (zero queues: Reject).
fn queuing_config(config: &PriorityLevelConfiguration) -> Option<QueuingConfig> {
    let limited = config.spec.limited.as_ref()?;
    let queuing = limited.limit_response.queuing.clone().unwrap_or_default();
    Some(QueuingConfig {
        name: config.metadata.name.clone(),
        desired_num_queues: usize::try_from(queuing.queues).unwrap_or(0),
        queue_length_limit: usize::try_from(queuing.queue_length_limit).unwrap_or(0),
        hand_size: usize::try_from(queuing.hand_size).unwrap_or(0),
    })
}

/// The schemas whose level exists, by precedence then name, with the mandatory exempt
/// schema first and catch-all last when they are not stored.
fn order_flow_schemas(
    schemas: Vec<FlowSchema>,
    levels: &BTreeMap<String, Arc<PriorityLevel>>,
) -> Vec<Arc<FlowSchema>> {
    let mut kept: Vec<FlowSchema> = schemas
        .into_iter()
        .filter(|fs| levels.contains_key(&fs.spec.priority_level_configuration.name))
        .collect();
    kept.sort_by(|a, b| {
        (a.spec.matching_precedence, &a.metadata.name)
            .cmp(&(b.spec.matching_precedence, &b.metadata.name))
    });
    let has = |name: &str, kept: &[FlowSchema]| kept.iter().any(|fs| fs.metadata.name == name);
    if !has(EXEMPT, &kept)
        && let Some(fs) = mandatory_flow_schema(EXEMPT)
    {
        kept.insert(0, fs);
    }
    if !has(CATCH_ALL, &kept)
        && let Some(fs) = mandatory_flow_schema(CATCH_ALL)
    {
        kept.push(fs);
    }
    kept.into_iter().map(Arc::new).collect()
}

/// Upstream's `hashFlowID`: the first 8 bytes, little-endian, of the SHA-256 of the
/// schema's name, a zero byte and the distinguisher.
pub fn hash_flow_id(schema: &str, distinguisher: &str) -> u64 {
    let mut ctx = aws_lc_rs::digest::Context::new(&aws_lc_rs::digest::SHA256);
    ctx.update(schema.as_bytes());
    ctx.update(&[0]);
    ctx.update(distinguisher.as_bytes());
    let sum = ctx.finish();
    let mut first = [0u8; 8];
    first.copy_from_slice(&sum.as_ref()[..8]);
    u64::from_le_bytes(first)
}

#[cfg(test)]
#[path = "controller_tests.rs"]
mod tests;
