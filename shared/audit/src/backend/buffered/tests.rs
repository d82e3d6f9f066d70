use std::sync::mpsc::{Receiver, Sender, channel};

use super::*;
use crate::backend::testing::{Recorder, event};
use crate::metrics::error_total;

/// The tests that count `buffered` errors run one at a time.
static COUNTING: Mutex<()> = Mutex::new(());

fn config(buffer_size: usize, max_batch_size: usize, max_batch_wait: Duration) -> BatchConfig {
    BatchConfig {
        buffer_size,
        max_batch_size,
        max_batch_wait,
        ..BatchConfig::log_default()
    }
}

/// A delegate that says when a batch arrives and waits to be let go.
struct Gate {
    arrived: Mutex<Sender<Vec<String>>>,
    release: Mutex<Receiver<()>>,
}

impl Sink for Gate {
    fn process_events(&self, events: &[Event]) -> bool {
        let ids = events.iter().map(|e| e.audit_id.clone()).collect();
        let _ = self.arrived.lock().unwrap().send(ids);
        let _ = self.release.lock().unwrap().recv();
        true
    }
}

impl Backend for Gate {
    fn shutdown(&self) {}

    fn name(&self) -> String {
        "gate".to_owned()
    }
}

#[test]
fn a_full_buffer_drops_the_event_instead_of_waiting() {
    let _counting = COUNTING.lock().unwrap_or_else(|e| e.into_inner());
    let (arrived_tx, arrived) = channel();
    let (release, release_rx) = channel();
    let gate = Gate {
        arrived: Mutex::new(arrived_tx),
        release: Mutex::new(release_rx),
    };
    let b = Buffered::new(Box::new(gate), config(2, 1, Duration::ZERO));
    assert!(b.process_events(&[event("1")]));
    // The thread holds event 1 in the delegate; 2 and 3 fill the buffer.
    assert_eq!(arrived.recv().unwrap(), ["1"]);
    let before = error_total(PLUGIN_NAME);
    let started = Instant::now();
    assert!(b.process_events(&[event("2"), event("3"), event("4"), event("5")]));
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(error_total(PLUGIN_NAME), before + 2);
    for _ in 0..3 {
        release.send(()).unwrap();
    }
    b.shutdown();
    let rest: Vec<Vec<String>> = arrived.try_iter().collect();
    assert_eq!(rest, [["2"], ["3"]]);
}

#[test]
fn events_after_shutdown_are_dropped_and_reported() {
    let _counting = COUNTING.lock().unwrap_or_else(|e| e.into_inner());
    let r = Recorder::default();
    let b = Buffered::new(Box::new(r.clone()), BatchConfig::log_default());
    b.shutdown();
    assert!(*r.shut_down.lock().unwrap());
    let before = error_total(PLUGIN_NAME);
    assert!(!b.process_events(&[event("late")]));
    assert_eq!(error_total(PLUGIN_NAME), before + 1);
    assert!(r.ids().is_empty());
}

#[test]
fn batches_hold_up_to_the_max_and_shutdown_flushes_the_rest() {
    let r = Recorder::default();
    let b = Buffered::new(Box::new(r.clone()), config(100, 3, Duration::from_secs(60)));
    let events: Vec<Event> = (1..=7).map(|i| event(&i.to_string())).collect();
    assert!(b.process_events(&events));
    b.shutdown();
    assert_eq!(
        r.ids(),
        [vec!["1", "2", "3"], vec!["4", "5", "6"], vec!["7"]]
    );
    assert!(*r.shut_down.lock().unwrap());
    assert_eq!(b.name(), "buffered<recorder>");
}

#[test]
fn a_partial_batch_is_sent_when_its_wait_ends() {
    let r = Recorder::default();
    let b = Buffered::new(
        Box::new(r.clone()),
        config(100, 10, Duration::from_millis(20)),
    );
    assert!(b.process_events(&[event("1")]));
    let deadline = Instant::now() + Duration::from_secs(5);
    while r.ids().is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(r.ids(), [["1"]]);
    b.shutdown();
}

#[test]
fn async_batches_are_awaited_at_shutdown() {
    struct Slow(Recorder);
    impl Sink for Slow {
        fn process_events(&self, events: &[Event]) -> bool {
            std::thread::sleep(Duration::from_millis(30));
            self.0.process_events(events)
        }
    }
    impl Backend for Slow {
        fn shutdown(&self) {
            self.0.shutdown();
        }
        fn name(&self) -> String {
            "slow".to_owned()
        }
    }
    let r = Recorder::default();
    let cfg = BatchConfig {
        async_delegate: true,
        ..config(100, 1, Duration::ZERO)
    };
    let b = Buffered::new(Box::new(Slow(r.clone())), cfg);
    let events: Vec<Event> = (1..=4).map(|i| event(&i.to_string())).collect();
    assert!(b.process_events(&events));
    b.shutdown();
    let mut ids: Vec<String> = r.ids().into_iter().flatten().collect();
    ids.sort();
    assert_eq!(ids, ["1", "2", "3", "4"]);
}

#[test]
fn the_throttle_allows_a_burst_then_the_rate() {
    let mut t = TokenBucket::new(10.0, 2);
    let start = Instant::now();
    assert_eq!(t.reserve(start), Duration::ZERO);
    assert_eq!(t.reserve(start), Duration::ZERO);
    let wait = t.reserve(start);
    assert!((wait.as_secs_f64() - 0.1).abs() < 1e-9, "{wait:?}");
    // A second after, the bucket is full again (two tokens, not ten).
    let later = start + Duration::from_secs(1);
    assert_eq!(t.reserve(later), Duration::ZERO);
    assert_eq!(t.reserve(later), Duration::ZERO);
    assert!(t.reserve(later) > Duration::ZERO);
}

#[test]
fn defaults_are_upstreams() {
    let log = BatchConfig::log_default();
    assert_eq!(
        (log.buffer_size, log.max_batch_size, log.async_delegate),
        (10_000, 1, false)
    );
    let webhook = BatchConfig::webhook_default();
    assert_eq!(
        (
            webhook.max_batch_size,
            webhook.max_batch_wait,
            webhook.throttle_burst
        ),
        (400, Duration::from_secs(30), 15)
    );
    assert!(webhook.throttle_enable && webhook.async_delegate);
}
