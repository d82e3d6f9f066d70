//! Upstream's buffered backend (`plugin/pkg/audit/buffered/buffered.go`), behind batch
//! mode: events go into a bounded buffer and a thread of its own hands them to the
//! delegate in batches, so a request never waits for the delegate. A full buffer drops
//! the event (counted as `apiserver_audit_error_total{plugin="buffered"}` and logged).

use std::sync::mpsc::{
    Receiver, RecvTimeoutError, SyncSender, TryRecvError, TrySendError, sync_channel,
};
use std::sync::{Arc, Mutex, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::backend::{Backend, Sink};
use crate::event::Event;
use crate::metrics::handle_plugin_error;

/// How long the buffer's thread lets events gather after one woke it.
const COALESCE: Duration = Duration::from_millis(1);

/// The plugin name in errors and metrics.
pub const PLUGIN_NAME: &str = "buffered";

/// `--audit-<plugin>-batch-*` (upstream's `BatchConfig`).
#[derive(Clone, Debug, PartialEq)]
pub struct BatchConfig {
    /// Events buffered before new ones are dropped.
    pub buffer_size: usize,
    /// Events in a batch at most.
    pub max_batch_size: usize,
    /// How long a batch waits to fill before it is sent anyway (when batches hold more
    /// than one event).
    pub max_batch_wait: Duration,
    /// Whether batches sent per second are limited.
    pub throttle_enable: bool,
    /// Batches per second, on average.
    pub throttle_qps: f32,
    /// Batches sent at once when the rate was not used.
    pub throttle_burst: usize,
    /// Whether each batch goes to the delegate from a thread of its own.
    pub async_delegate: bool,
}

impl BatchConfig {
    /// Upstream's `defaultLogBatchConfig`: one event a batch, written by the buffer's
    /// thread.
    pub fn log_default() -> BatchConfig {
        BatchConfig {
            buffer_size: 10_000,
            max_batch_size: 1,
            max_batch_wait: Duration::ZERO,
            throttle_enable: false,
            throttle_qps: 0.0,
            throttle_burst: 0,
            async_delegate: false,
        }
    }

    /// Upstream's `defaultWebhookBatchConfig`.
    pub fn webhook_default() -> BatchConfig {
        BatchConfig {
            buffer_size: 10_000,
            max_batch_size: 400,
            max_batch_wait: Duration::from_secs(30),
            throttle_enable: true,
            throttle_qps: 10.0,
            throttle_burst: 15,
            async_delegate: true,
        }
    }
}

/// Upstream's `bufferedBackend`.
pub struct Buffered {
    delegate: Arc<dyn Backend>,
    /// Taken at shutdown, which closes the buffer.
    buffer: RwLock<Option<SyncSender<Event>>>,
    worker: Mutex<Option<JoinHandle<()>>>,
}

impl Buffered {
    /// Starts the thread that drains the buffer into `delegate` (upstream's `NewBackend`
    /// and `Run`). The options are validated before (sizes and throttle positive).
    pub fn new(delegate: Box<dyn Backend>, config: BatchConfig) -> Buffered {
        let delegate: Arc<dyn Backend> = Arc::from(delegate);
        let (tx, rx) = sync_channel(config.buffer_size);
        let worker = Worker {
            delegate: delegate.clone(),
            max_batch_size: config.max_batch_size.max(1),
            max_batch_wait: config.max_batch_wait,
            throttle: config
                .throttle_enable
                .then(|| TokenBucket::new(f64::from(config.throttle_qps), config.throttle_burst)),
            async_delegate: config.async_delegate,
            in_flight: Vec::new(),
        };
        let thread = std::thread::Builder::new()
            .name("audit-buffered".to_owned())
            .spawn(move || worker.run(&rx))
            .expect("starting the audit buffer's thread");
        Buffered {
            delegate,
            buffer: RwLock::new(Some(tx)),
            worker: Mutex::new(Some(thread)),
        }
    }
}

impl Sink for Buffered {
    /// Buffers copies of the events without waiting. A full buffer drops the rest and
    /// still answers true, as upstream; a closed one answers false.
    fn process_events(&self, events: &[Event]) -> bool {
        let buffer = self.buffer.read().unwrap_or_else(|e| e.into_inner());
        let Some(tx) = buffer.as_ref() else {
            drop_events("audit backend shut down", events);
            return false;
        };
        for (i, ev) in events.iter().enumerate() {
            match tx.try_send(ev.clone()) {
                Ok(()) => {}
                Err(TrySendError::Full(_)) => {
                    drop_events("audit buffer queue blocked", &events[i..]);
                    return true;
                }
                Err(TrySendError::Disconnected(_)) => {
                    drop_events("audit backend shut down", &events[i..]);
                    return false;
                }
            }
        }
        true
    }

    fn process_owned(&self, events: Vec<Event>) -> bool {
        let buffer = self.buffer.read().unwrap_or_else(|e| e.into_inner());
        let Some(tx) = buffer.as_ref() else {
            drop_events("audit backend shut down", &events);
            return false;
        };
        for ev in events {
            if let Err(closed) = self.buffer(tx, ev) {
                return !closed;
            }
        }
        true
    }
}

impl Buffered {
    /// Buffers one event; false when it was dropped, with whether the buffer is closed.
    fn buffer(&self, tx: &SyncSender<Event>, ev: Event) -> Result<(), bool> {
        match tx.try_send(ev) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(ev)) => {
                drop_events("audit buffer queue blocked", std::slice::from_ref(&ev));
                Err(false)
            }
            Err(TrySendError::Disconnected(ev)) => {
                drop_events("audit backend shut down", std::slice::from_ref(&ev));
                Err(true)
            }
        }
    }
}

fn drop_events(err: &str, events: &[Event]) {
    let impacted: Vec<&Event> = events.iter().collect();
    handle_plugin_error(PLUGIN_NAME, &err, &impacted);
}

impl Backend for Buffered {
    /// Closes the buffer, waits until everything buffered reached the delegate, then
    /// shuts the delegate down.
    fn shutdown(&self) {
        drop(
            self.buffer
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .take(),
        );
        let worker = self.worker.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(worker) = worker
            && worker.join().is_err()
        {
            tracing::error!("the audit buffer's thread panicked");
        }
        self.delegate.shutdown();
    }

    fn name(&self) -> String {
        format!("{PLUGIN_NAME}<{}>", self.delegate.name())
    }
}

/// The thread that drains the buffer (upstream's goroutine in `Run`).
struct Worker {
    delegate: Arc<dyn Backend>,
    max_batch_size: usize,
    max_batch_wait: Duration,
    throttle: Option<TokenBucket>,
    async_delegate: bool,
    /// Batches sent from threads of their own (upstream's `wg`).
    in_flight: Vec<JoinHandle<()>>,
}

impl Worker {
    fn run(mut self, rx: &Receiver<Event>) {
        loop {
            let (events, closed) = self.collect_events(rx);
            self.process_events(events);
            if closed {
                break;
            }
        }
        for batch in self.in_flight.drain(..) {
            let _ = batch.join();
        }
    }

    /// Upstream's `collectEvents`: up to a batch of events, fewer when the batch's wait
    /// ends (only for batches of more than one event) or the buffer is closed and empty
    /// (`true`).
    fn collect_events(&self, rx: &Receiver<Event>) -> (Vec<Event>, bool) {
        let deadline = (self.max_batch_size > 1).then(|| Instant::now() + self.max_batch_wait);
        let mut events = Vec::new();
        while events.len() < self.max_batch_size {
            let next = match deadline {
                Some(d) => rx.recv_timeout(d.saturating_duration_since(Instant::now())),
                None => self.next_event(rx),
            };
            match next {
                Ok(ev) => events.push(ev),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return (events, true),
            }
        }
        (events, false)
    }

    /// The next event of a batch without a wait: one at hand, else, once the delegate
    /// wrote out what it holds back, the next to come. A thread woken by an event lets a
    /// burst gather for [`COALESCE`] before it goes on, so that a busy server wakes it a
    /// thousand times a second rather than once an event (the events are written that
    /// much later; none is held longer).
    fn next_event(&self, rx: &Receiver<Event>) -> Result<Event, RecvTimeoutError> {
        match rx.try_recv() {
            Ok(ev) => return Ok(ev),
            Err(TryRecvError::Disconnected) => return Err(RecvTimeoutError::Disconnected),
            Err(TryRecvError::Empty) => {}
        }
        self.delegate.flush();
        let ev = rx.recv().map_err(|_| RecvTimeoutError::Disconnected)?;
        std::thread::sleep(COALESCE);
        Ok(ev)
    }

    /// Upstream's `processEvents`: the batch to the delegate, after the throttle, here or
    /// from a thread of its own.
    fn process_events(&mut self, events: Vec<Event>) {
        if events.is_empty() {
            return;
        }
        if let Some(throttle) = &mut self.throttle {
            std::thread::sleep(throttle.reserve(Instant::now()));
        }
        if !self.async_delegate {
            self.delegate.process_events(&events);
            return;
        }
        self.in_flight.retain(|t| !t.is_finished());
        let delegate = self.delegate.clone();
        let events = Arc::new(events);
        let batch = events.clone();
        let spawned = std::thread::Builder::new()
            .name("audit-batch".to_owned())
            .spawn(move || {
                delegate.process_events(&batch);
            });
        match spawned {
            Ok(t) => self.in_flight.push(t),
            // No thread to be had: send it from here.
            Err(_) => {
                self.delegate.process_events(&events);
            }
        }
    }
}

/// client-go's `NewTokenBucketRateLimiter(qps, burst)` (`x/time/rate`): starts full, one
/// token a batch, waiting for a token when there is none.
struct TokenBucket {
    qps: f64,
    burst: f64,
    tokens: f64,
    last: Option<Instant>,
}

impl TokenBucket {
    fn new(qps: f64, burst: usize) -> TokenBucket {
        let burst = burst.max(1) as f64;
        TokenBucket {
            qps,
            burst,
            tokens: burst,
            last: None,
        }
    }

    /// Takes a token at `now`; how long to wait before using it.
    fn reserve(&mut self, now: Instant) -> Duration {
        if let Some(last) = self.last {
            let refill = now.saturating_duration_since(last).as_secs_f64() * self.qps;
            self.tokens = (self.tokens + refill).min(self.burst);
        }
        self.last = Some(now);
        self.tokens -= 1.0;
        if self.tokens >= 0.0 || self.qps <= 0.0 {
            return Duration::ZERO;
        }
        Duration::from_secs_f64(-self.tokens / self.qps)
    }
}

#[cfg(test)]
mod tests;
