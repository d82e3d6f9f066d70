use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::state::{HIGH_R, R_DECREMENT};
use super::*;
use crate::fairqueuing::SeatSeconds;
use crate::metrics::Metrics;

fn qcfg(queues: usize, queue_length_limit: usize, hand_size: usize) -> QueuingConfig {
    QueuingConfig {
        name: "pl".into(),
        desired_num_queues: queues,
        queue_length_limit,
        hand_size,
    }
}

fn dcfg(limit: usize) -> DispatchingConfig {
    DispatchingConfig {
        concurrency_limit: limit,
        concurrency_denominator: limit.max(1),
    }
}

fn req(hash: u64, seats: u64, name: &str) -> RequestDescr {
    RequestDescr {
        work: WorkEstimate {
            initial_seats: seats,
            final_seats: 0,
            additional_latency: Duration::ZERO,
        },
        hash,
        flow_schema: "fs".into(),
        flow_distinguisher: format!("flow-{hash}"),
        user: "alice".into(),
        descr: name.into(),
        arrived: std::time::Instant::now(),
        mutating: false,
    }
}

fn execute(start: Start) -> Executing {
    match start {
        Start::Execute(e) => e,
        other => panic!("expected execution, got {other:?}"),
    }
}

fn queued(start: Start) -> Queued {
    match start {
        Start::Queued(q) => q,
        other => panic!("expected queuing, got {other:?}"),
    }
}

fn rejected(start: Start) -> RejectReason {
    match start {
        Start::Rejected(r) => r,
        other => panic!("expected rejection, got {other:?}"),
    }
}

fn far() -> Instant {
    Instant::now() + Duration::from_secs(3600)
}

/// The names (descr) of the executing requests, from the detailed dump.
fn executing_names(qs: &QueueSet) -> Vec<String> {
    let d = qs.dump(true);
    let mut names: Vec<String> = d
        .queues
        .iter()
        .flat_map(|q| q.requests_executing.iter())
        .chain(d.queueless_executing_requests.iter())
        .map(|r| r.request_info.clone())
        .collect();
    names.sort();
    names
}

#[tokio::test(start_paused = true)]
async fn executes_when_seats_are_free() {
    let qs = QueueSet::new(&qcfg(8, 10, 2), dcfg(2), None).expect("queue set");
    assert!(qs.is_idle());
    let a = execute(qs.start_request(req(1, 1, "a")));
    let b = execute(qs.start_request(req(2, 1, "b")));
    assert_eq!((qs.executing_requests(), qs.executing_seats()), (2, 2));
    a.finish();
    drop(b);
    assert!(qs.is_idle());
    assert_eq!(qs.executing_seats(), 0);
    assert_eq!(qs.dump(false).dispatched, 2);
}

#[tokio::test(start_paused = true)]
async fn bad_hand_size_is_an_error() {
    let err = QueueSet::new(&qcfg(4, 10, 5), dcfg(2), None).expect_err("hand > deck");
    assert_eq!(
        err,
        "the QueueSetConfig implies an invalid shuffle sharding config (DesiredNumQueues is deckSize): handSize 5 is greater than deckSize 4"
    );
    let qs = QueueSet::new(&qcfg(4, 10, 2), dcfg(2), None).expect("queue set");
    assert!(qs.set_config(&qcfg(4, 10, 0), dcfg(2)).is_err());
}

/// Two queues (hand size 1, so flow `h` lands in queue `h % 2`), one seat. The heavy flow
/// queues three requests before the light flow queues two; dispatch follows the virtual
/// finish R, ties going round-robin to the queue after the last dispatched from.
#[tokio::test(start_paused = true)]
async fn dispatch_order_follows_virtual_finish_time() {
    let qs = QueueSet::new(&qcfg(2, 10, 1), dcfg(1), None).expect("queue set");
    let first = execute(qs.start_request(req(0, 1, "h0")));
    let mut waiting: Vec<(String, Queued)> = Vec::new();
    for name in ["h1", "h2", "h3"] {
        waiting.push((name.into(), queued(qs.start_request(req(0, 1, name)))));
    }
    for name in ["l1", "l2"] {
        waiting.push((name.into(), queued(qs.start_request(req(1, 1, name)))));
    }
    assert_eq!(qs.waiting_requests(), 5);
    let mut current = first;
    let mut order = Vec::new();
    while !waiting.is_empty() {
        tokio::time::sleep(Duration::from_millis(10)).await;
        current.finish();
        let names = executing_names(&qs);
        assert_eq!(names.len(), 1, "one seat: {names:?}");
        let pos = waiting
            .iter()
            .position(|(n, _)| *n == names[0])
            .expect("dispatched request is a waiter");
        let (name, q) = waiting.remove(pos);
        current = q.wait(far()).await.expect("dispatched");
        order.push(name);
    }
    current.finish();
    assert_eq!(order, ["l1", "h1", "l2", "h2", "h3"]);
    assert!(qs.is_idle());
}

/// Many queues, shuffle sharding with hands: a light flow's requests are not stuck behind
/// a heavy flow's backlog.
#[tokio::test(start_paused = true)]
async fn light_flow_is_not_starved() {
    let qs = QueueSet::new(&qcfg(16, 50, 4), dcfg(2), None).expect("queue set");
    let mut running: Vec<Executing> = (0..2)
        .map(|i| execute(qs.start_request(req(7, 1, &format!("heavy-run-{i}")))))
        .collect();
    let mut waiting: Vec<(String, Queued)> = Vec::new();
    for i in 0..30 {
        let name = format!("heavy-{i:02}");
        waiting.push((name.clone(), queued(qs.start_request(req(7, 1, &name)))));
    }
    for i in 0..2 {
        let name = format!("light-{i}");
        waiting.push((
            name.clone(),
            queued(qs.start_request(req(1234567, 1, &name))),
        ));
    }
    let mut order = Vec::new();
    while !waiting.is_empty() {
        tokio::time::sleep(Duration::from_millis(5)).await;
        running.remove(0).finish();
        for name in executing_names(&qs) {
            if let Some(pos) = waiting.iter().position(|(n, _)| *n == name) {
                let (name, q) = waiting.remove(pos);
                running.push(q.wait(far()).await.expect("dispatched"));
                order.push(name);
            }
        }
    }
    drop(running);
    let light_positions: Vec<usize> = order
        .iter()
        .enumerate()
        .filter(|(_, n)| n.starts_with("light"))
        .map(|(i, _)| i)
        .collect();
    assert!(
        light_positions.iter().all(|&p| p < 6),
        "light flow starved: {order:?}"
    );
    assert!(qs.is_idle());
}

#[tokio::test(start_paused = true)]
async fn queue_full_at_the_length_limit() {
    let metrics = Metrics::new().expect("metrics");
    let qs = QueueSet::new(&qcfg(1, 2, 1), dcfg(1), Some(metrics.priority_level("pl")))
        .expect("queue set");
    let a = execute(qs.start_request(req(0, 1, "a")));
    let b = queued(qs.start_request(req(0, 1, "b")));
    let c = queued(qs.start_request(req(0, 1, "c")));
    assert_eq!(
        rejected(qs.start_request(req(0, 1, "d"))),
        RejectReason::QueueFull
    );
    assert_eq!(qs.dump(false).rejected, 1);
    let rejects = metrics
        .rejected_requests_total
        .with_label_values(&["pl", "fs", "queue-full"])
        .get();
    assert_eq!(rejects, 1);
    assert_eq!(
        metrics
            .current_inqueue_requests
            .with_label_values(&["pl", "fs"])
            .get(),
        2
    );
    drop(a);
    let b = b.wait(far()).await.expect("b dispatched");
    assert_eq!(
        metrics
            .current_inqueue_requests
            .with_label_values(&["pl", "fs"])
            .get(),
        1
    );
    drop(b);
    drop(c.wait(far()).await.expect("c dispatched"));
    assert!(qs.is_idle());
    assert_eq!(
        metrics
            .current_executing_seats
            .with_label_values(&["pl", "fs"])
            .get(),
        0
    );
    assert_eq!(
        metrics
            .dispatched_requests_total
            .with_label_values(&["pl", "fs"])
            .get(),
        3
    );
}

#[tokio::test(start_paused = true)]
async fn reject_type_rejects_over_the_limit() {
    let qs = QueueSet::new(&qcfg(0, 0, 0), dcfg(2), None).expect("queue set");
    let a = execute(qs.start_request(req(0, 1, "a")));
    let b = execute(qs.start_request(req(0, 1, "b")));
    assert_eq!(
        rejected(qs.start_request(req(0, 1, "c"))),
        RejectReason::ConcurrencyLimit
    );
    assert_eq!(RejectReason::ConcurrencyLimit.as_str(), "concurrency-limit");
    assert_eq!(qs.dump(false).queueless_executing_requests.len(), 2);
    drop(a);
    let c = execute(qs.start_request(req(0, 1, "c")));
    drop((b, c));
    assert!(qs.is_idle());
}

#[tokio::test(start_paused = true)]
async fn deadline_times_out_and_leaves_the_queue() {
    let qs = QueueSet::new(&qcfg(1, 10, 1), dcfg(1), None).expect("queue set");
    let a = execute(qs.start_request(req(0, 1, "a")));
    let b = queued(qs.start_request(req(0, 1, "b")));
    let deadline = Instant::now() + Duration::from_secs(1);
    assert_eq!(b.wait(deadline).await.err(), Some(RejectReason::TimeOut));
    assert_eq!(Instant::now(), deadline);
    assert_eq!(qs.waiting_requests(), 0);
    let d = qs.dump(false);
    assert_eq!((d.timedout, d.rejected, d.seats_waiting), (1, 1, 0));
    assert!(d.queues[0].requests.is_empty());
    a.finish();
    assert!(qs.is_idle());
}

#[tokio::test(start_paused = true)]
async fn dropped_waiter_is_cancelled_without_leaking_seats() {
    let qs = QueueSet::new(&qcfg(1, 10, 1), dcfg(1), None).expect("queue set");
    let a = execute(qs.start_request(req(0, 1, "a")));
    let b = queued(qs.start_request(req(0, 1, "b")));
    drop(b);
    assert_eq!(qs.waiting_requests(), 0);
    assert_eq!(qs.dump(false).cancelled, 1);

    // Dropping the wait future cancels as well.
    let c = queued(qs.start_request(req(0, 1, "c")));
    let task = tokio::spawn(c.wait(far()));
    tokio::time::sleep(Duration::from_millis(1)).await;
    task.abort();
    assert!(task.await.is_err());
    assert_eq!(qs.waiting_requests(), 0);
    assert_eq!(qs.dump(false).cancelled, 2);

    a.finish();
    assert!(qs.is_idle());
    assert_eq!(qs.executing_seats(), 0);
}

#[tokio::test(start_paused = true)]
async fn drop_after_dispatch_releases_the_seats() {
    let qs = QueueSet::new(&qcfg(1, 10, 1), dcfg(1), None).expect("queue set");
    let a = execute(qs.start_request(req(0, 1, "a")));
    let b = queued(qs.start_request(req(0, 1, "b")));
    let c = queued(qs.start_request(req(0, 1, "c")));
    a.finish();
    // b is dispatched, but its waiter goes away before taking it.
    assert_eq!(executing_names(&qs), ["b"]);
    drop(b);
    // Its seat went to c.
    assert_eq!(executing_names(&qs), ["c"]);
    let c = c.wait(far()).await.expect("c dispatched");
    c.finish();
    assert!(qs.is_idle());
    assert_eq!(qs.executing_seats(), 0);
    assert_eq!(qs.dump(false).cancelled, 0);
}

#[tokio::test(start_paused = true)]
async fn wide_request_waits_for_enough_seats() {
    let qs = QueueSet::new(&qcfg(4, 10, 1), dcfg(4), None).expect("queue set");
    let a = execute(qs.start_request(req(0, 2, "a")));
    let w = queued(qs.start_request(req(1, 3, "w")));
    assert_eq!(qs.executing_seats(), 2);
    a.finish();
    let w = w.wait(far()).await.expect("w dispatched");
    assert_eq!(qs.executing_seats(), 3);
    w.finish();

    // Wider than the limit: executes alone when nothing else runs.
    let x = execute(qs.start_request(req(2, 10, "x")));
    assert_eq!(qs.executing_seats(), 10);
    let y = queued(qs.start_request(req(3, 1, "y")));
    assert_eq!(qs.waiting_requests(), 1);
    x.finish();
    let y = y.wait(far()).await.expect("y dispatched");
    let z = queued(qs.start_request(req(2, 10, "z")));
    // The wide one waits until everything else finishes.
    assert_eq!(qs.waiting_requests(), 1);
    y.finish();
    let z = z.wait(far()).await.expect("z dispatched");
    z.finish();
    assert!(qs.is_idle());
}

#[tokio::test(start_paused = true)]
async fn final_seats_are_held_for_the_additional_latency() {
    let qs = QueueSet::new(&qcfg(2, 10, 1), dcfg(2), None).expect("queue set");
    let mut descr = req(0, 1, "a");
    descr.work.final_seats = 2;
    descr.work.additional_latency = Duration::from_secs(1);
    let a = execute(qs.start_request(descr));
    assert_eq!(qs.executing_seats(), 2);
    a.finish();
    assert_eq!(qs.executing_requests(), 0);
    assert_eq!(qs.executing_seats(), 2);
    let b = queued(qs.start_request(req(1, 1, "b")));
    tokio::time::sleep(Duration::from_millis(999)).await;
    assert_eq!(qs.waiting_requests(), 1);
    let b = b
        .wait(Instant::now() + Duration::from_secs(10))
        .await
        .expect("b dispatched after the latency");
    assert_eq!(qs.executing_seats(), 1);
    b.finish();
    assert!(qs.is_idle());
    assert_eq!(qs.executing_seats(), 0);
}

#[test]
fn final_seats_released_at_once_without_a_runtime() {
    let qs = QueueSet::new(&qcfg(0, 0, 0), dcfg(2), None).expect("queue set");
    let mut descr = req(0, 1, "a");
    descr.work.final_seats = 2;
    descr.work.additional_latency = Duration::from_secs(1);
    let a = execute(qs.start_request(descr));
    drop(a);
    assert_eq!(qs.executing_seats(), 0);
    assert!(qs.is_idle());
}

#[tokio::test(start_paused = true)]
async fn final_seats_capped_at_the_limit() {
    let qs = QueueSet::new(&qcfg(1, 10, 1), dcfg(2), None).expect("queue set");
    let a = execute(qs.start_request(req(0, 1, "a")));
    let mut descr = req(0, 1, "wide-final");
    descr.work.final_seats = 4;
    descr.work.additional_latency = Duration::from_secs(1);
    let w = queued(qs.start_request(descr));
    assert_eq!(qs.dump(false).seats_waiting, 4);
    a.finish();
    let w = w.wait(far()).await.expect("dispatched");
    let d = qs.dump(true);
    let we = d.queues[0].requests_executing[0].work_estimate;
    assert_eq!(we.final_seats, 2);
    assert_eq!(we.additional_latency, Duration::from_secs(2));
    assert_eq!((d.seats_waiting, d.seats_in_use), (0, 2));
    w.finish();
    tokio::time::sleep(Duration::from_millis(1999)).await;
    assert_eq!(qs.executing_seats(), 2);
    tokio::time::sleep(Duration::from_millis(2)).await;
    assert_eq!(qs.executing_seats(), 0);
}

#[tokio::test(start_paused = true)]
async fn raising_the_limit_dispatches_waiters() {
    let qs = QueueSet::new(&qcfg(4, 10, 2), dcfg(1), None).expect("queue set");
    let a = execute(qs.start_request(req(0, 1, "a")));
    let b = queued(qs.start_request(req(1, 1, "b")));
    let c = queued(qs.start_request(req(2, 1, "c")));
    qs.set_config(&qcfg(4, 10, 2), dcfg(3)).expect("config");
    assert_eq!(qs.waiting_requests(), 0);
    assert_eq!(qs.executing_requests(), 3);
    let b = b.wait(far()).await.expect("b");
    let c = c.wait(far()).await.expect("c");
    drop((a, b, c));
    assert!(qs.is_idle());
}

#[tokio::test(start_paused = true)]
async fn shrinking_keeps_busy_queues_until_they_drain() {
    let qs = QueueSet::new(&qcfg(4, 10, 1), dcfg(1), None).expect("queue set");
    let a = execute(qs.start_request(req(3, 1, "a")));
    let b = queued(qs.start_request(req(3, 1, "b")));
    qs.set_config(&qcfg(2, 10, 1), dcfg(1)).expect("config");
    assert_eq!(qs.dump(false).queues.len(), 4);
    a.finish();
    let b = b.wait(far()).await.expect("b");
    assert_eq!(qs.dump(false).queues.len(), 4);
    b.finish();
    assert_eq!(qs.dump(false).queues.len(), 3);

    // Zero queues keeps the old length limit and hand size.
    qs.set_config(&qcfg(0, 99, 9), dcfg(1)).expect("config");
    let cfg = qs.queuing_config();
    assert_eq!((cfg.queue_length_limit, cfg.hand_size), (10, 1));
    assert!(qs.dump(false).queues.len() <= 3);
}

#[tokio::test(start_paused = true)]
async fn seat_demand_is_integrated() {
    let qs = QueueSet::new(&qcfg(1, 10, 1), dcfg(1), None).expect("queue set");
    let _ = qs.seat_demand();
    let a = execute(qs.start_request(req(0, 1, "a")));
    let b = queued(qs.start_request(req(0, 1, "b")));
    tokio::time::sleep(Duration::from_secs(1)).await;
    qs.update_observations();
    let demand = qs.seat_demand();
    assert!((demand.duration - 1.0).abs() < 1e-9, "{demand:?}");
    assert!((demand.average - 2.0).abs() < 1e-9, "{demand:?}");
    assert_eq!(demand.max, 2.0);
    drop(b);
    drop(a);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let demand = qs.seat_demand();
    assert_eq!((demand.min, demand.max), (0.0, 2.0));
    assert!(demand.average < 0.01, "{demand:?}");
}

#[tokio::test(start_paused = true)]
async fn virtual_time_advances_and_epoch_winds_back() {
    let qs = QueueSet::new(&qcfg(2, 10, 1), dcfg(1), None).expect("queue set");
    let a = execute(qs.start_request(req(0, 1, "a")));
    let b = queued(qs.start_request(req(0, 1, "b")));
    // One active queue, one seat requested... min(2, 1) / 1 = 1 seat-second per second.
    tokio::time::sleep(Duration::from_secs(2)).await;
    qs.update_observations();
    assert_eq!(qs.lock().current_r, SeatSeconds(200_000_000));

    {
        let mut inner = qs.lock();
        inner.current_r = SeatSeconds(HIGH_R.0 - 100_000_000);
        inner.queues[0].next_dispatch_r = SeatSeconds(HIGH_R.0 - 50_000_000);
        inner.queues[1].next_dispatch_r = SeatSeconds(12345);
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    qs.update_observations();
    {
        let inner = qs.lock();
        assert_eq!(
            inner.current_r,
            SeatSeconds(HIGH_R.0 + 100_000_000 - R_DECREMENT.0)
        );
        assert_eq!(
            inner.queues[0].next_dispatch_r,
            SeatSeconds(HIGH_R.0 - 50_000_000 - R_DECREMENT.0)
        );
        assert_eq!(inner.queues[1].next_dispatch_r, SeatSeconds(0));
    }
    a.finish();
    b.wait(far()).await.expect("b").finish();
    assert!(qs.is_idle());
}

#[tokio::test(start_paused = true)]
async fn dump_shows_queues_and_requests() {
    let qs = QueueSet::new(&qcfg(2, 10, 1), dcfg(1), None).expect("queue set");
    let a = execute(qs.start_request(req(0, 1, "a")));
    let b = queued(qs.start_request(req(1, 2, "b")));
    let d = qs.dump(false);
    assert_eq!(d.queues.len(), 2);
    assert_eq!(
        (d.waiting, d.executing, d.seats_in_use, d.seats_waiting),
        (1, 1, 1, 2)
    );
    assert_eq!(d.queues[0].executing_requests, 1);
    assert_eq!(d.queues[0].next_dispatch_r, "0.00300000ss");
    assert_eq!(d.queues[1].queue_sum.max_seats_sum, 2);
    assert_eq!(d.queues[1].queue_sum.total_work_sum, "0.00600000ss");
    let r = &d.queues[1].requests[0];
    assert_eq!(
        (r.flow_distinguisher.as_str(), r.user_name.as_str()),
        ("flow-1", "")
    );
    assert!(r.start_time.is_none());
    let detailed = qs.dump(true);
    assert_eq!(detailed.queues[1].requests[0].user_name, "alice");
    assert_eq!(detailed.queues[0].requests_executing[0].request_info, "a");
    drop(b);
    drop(a);
    let qs2: Arc<QueueSet> = Arc::clone(&qs);
    assert!(qs2.is_idle());
}

/// The timing-ratio gauges: requests waiting over queues × length limit, requests and
/// seats executing over the concurrency denominator, which a reconfiguration changes;
/// seat demand over the controller's denominator (1 until it sets one).
#[tokio::test(start_paused = true)]
async fn utilization_denominators_follow_the_configuration() {
    use crate::metrics::timing_ratio::bucket_count;
    let metrics = Metrics::new().expect("metrics");
    let qs = QueueSet::new(&qcfg(2, 3, 1), dcfg(2), Some(metrics.priority_level("pl")))
        .expect("queue set");
    let a = execute(qs.start_request(req(0, 1, "a")));
    let b = execute(qs.start_request(req(0, 1, "b")));
    let c = queued(qs.start_request(req(0, 1, "c")));
    tokio::time::advance(Duration::from_secs(1)).await; // 2 / 2 executing, 1 / 6 waiting
    qs.set_config(&qcfg(2, 3, 1), dcfg(4)).expect("config"); // c runs: 3 / 4
    tokio::time::advance(Duration::from_secs(1)).await;
    let t = &metrics.timing;
    let counts = |h: Option<prometheus::proto::Histogram>, les: &[f64]| -> Vec<u64> {
        let h = h.expect("member");
        les.iter()
            .map(|&le| bucket_count(&h, le).expect("bucket") / 1_000_000)
            .collect()
    };
    let requests = &t.priority_level_request_utilization;
    let waiting = counts(requests.scrape(&["waiting", "pl"]), &[0.0, 0.1, 0.25]);
    assert_eq!(waiting, [1000, 1000, 2000]);
    let executing = counts(requests.scrape(&["executing", "pl"]), &[0.5, 0.75, 1.0]);
    assert_eq!(executing, [0, 1000, 2000]);
    let seats = counts(
        t.priority_level_seat_utilization.scrape(&["pl"]),
        &[0.7, 0.8, 1.0],
    );
    assert_eq!(seats, [0, 1000, 2000]);
    let demand = counts(t.demand_seats.scrape(&["pl"]), &[2.8, 4.0]);
    assert_eq!(demand, [0, 2000]);
    let c = c.wait(far()).await.expect("c dispatched");
    drop((a, b, c));
    assert!(qs.is_idle());
}
