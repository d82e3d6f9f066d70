use std::sync::Arc;
use std::time::{Duration, SystemTime};

use kas_storage::latency::Layer;

use super::*;
use crate::backend::testing::Recorder;

fn context(received_ago: Duration, recorder: &Recorder) -> AuditContext {
    let mut event = Event::new();
    event.audit_id = "a".into();
    event.request_received_timestamp = micro_time(SystemTime::now() - received_ago);
    let config = RequestAuditConfig {
        level: Level::Metadata,
        ..RequestAuditConfig::default()
    };
    AuditContext::new(config, Some(Arc::new(recorder.clone())), event)
}

fn completed(
    ctx: &AuditContext,
    recorder: &Recorder,
) -> std::collections::BTreeMap<String, String> {
    assert!(ctx.process_stage(Stage::ResponseComplete));
    let batches = recorder.batches.lock().unwrap();
    batches.last().expect("an event")[0].annotations.clone()
}

#[test]
fn a_request_slower_than_500ms_carries_its_layers_latencies() {
    let recorder = Recorder::default();
    let ctx = context(Duration::from_millis(700), &recorder);
    ctx.track_latency()
        .record(Layer::Storage, Duration::from_micros(1_250));
    ctx.track_latency()
        .record(Layer::MutatingWebhook, Duration::from_millis(600));
    let a = completed(&ctx, &recorder);
    assert_eq!(a["apiserver.latency.k8s.io/etcd"], "1.25ms");
    assert_eq!(a["apiserver.latency.k8s.io/mutating-webhook"], "600ms");
    let total = &a["apiserver.latency.k8s.io/total"];
    assert!(total.starts_with("70") && total.ends_with("ms"), "{total}");
    assert_eq!(a.len(), 3, "{a:?}");
}

#[test]
fn fast_or_untracked_requests_carry_none() {
    let recorder = Recorder::default();
    let fast = context(Duration::from_millis(100), &recorder);
    fast.track_latency()
        .record(Layer::Storage, Duration::from_millis(1));
    assert!(completed(&fast, &recorder).is_empty());
    let untracked = context(Duration::from_millis(700), &recorder);
    assert!(completed(&untracked, &recorder).is_empty());
}

#[test]
fn the_entrys_apf_wait_travels_with_the_hand_off() {
    let recorder = Recorder::default();
    let entry = context(Duration::ZERO, &recorder);
    entry
        .track_latency()
        .record(Layer::ApfQueueWait, Duration::from_millis(42));
    let header = entry.hand_off().expect("a header");
    let handoff = HandOff::decode(&header).expect("decodes");
    assert_eq!(handoff.apf_queue_wait_nanos, 42_000_000);
    let peer = AuditContext::from_handoff(handoff, None, Event::new());
    assert_eq!(
        peer.track_latency().get(Layer::ApfQueueWait),
        Duration::from_millis(42)
    );
}
