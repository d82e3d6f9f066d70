//! Upstream's truncating backend (`plugin/pkg/audit/truncate/truncate.go`,
//! `--audit-<plugin>-truncate-*`): an event larger than the maximum loses its request and
//! response objects (at Request level and above) and is annotated
//! `audit.k8s.io/truncated: "true"`; one still too large is dropped. Batches are split to
//! stay under the maximum batch size. Sizes are those of the event's JSON line, as
//! upstream measures its encoding.

use kas_apimachinery::validation::field::aggregate_strings;

use crate::backend::{Backend, Sink};
use crate::event::{Event, Level};
use crate::metrics::handle_plugin_error;

/// The plugin name in errors and metrics.
pub const PLUGIN_NAME: &str = "truncate";

const ANNOTATION_KEY: &str = "audit.k8s.io/truncated";
const ANNOTATION_VALUE: &str = "true";

/// `--audit-<plugin>-truncate-max-*` (upstream's `truncate.Config`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TruncateConfig {
    /// Bytes an event may take; a larger one is truncated, then dropped.
    pub max_event_size: u64,
    /// Bytes a batch handed to the delegate may take; a larger one is split.
    pub max_batch_size: u64,
}

impl Default for TruncateConfig {
    /// Upstream's `NewAuditTruncateOptions`: 100 KiB events, 10 MiB batches.
    fn default() -> TruncateConfig {
        TruncateConfig {
            max_event_size: 100 * 1024,
            max_batch_size: 10 * 1024 * 1024,
        }
    }
}

/// Upstream's truncate `backend`.
pub struct Truncate {
    delegate: Box<dyn Backend>,
    config: TruncateConfig,
}

impl Truncate {
    pub fn new(delegate: Box<dyn Backend>, config: TruncateConfig) -> Truncate {
        Truncate { delegate, config }
    }

    /// Upstream's `TruncateOptions.wrapBackend`: `delegate` itself unless enabled.
    pub fn wrap(
        delegate: Box<dyn Backend>,
        enabled: bool,
        config: TruncateConfig,
    ) -> Box<dyn Backend> {
        if enabled {
            Box::new(Truncate::new(delegate, config))
        } else {
            delegate
        }
    }

    /// Hands a batch to the delegate: the caller's events as they are when none was
    /// truncated, else a copy.
    fn send(&self, events: &[Event], batch: &mut Vec<Item>) -> bool {
        let items = std::mem::take(batch);
        let all_original = items.iter().all(|item| matches!(item, Item::Original(_)));
        if let (true, Some(Item::Original(a)), Some(Item::Original(b))) =
            (all_original, items.first(), items.last())
        {
            // Indices only grow, so first..=last is the batch when it has no gap.
            if b - a + 1 == items.len() {
                return self.delegate.process_events(&events[*a..=*b]);
            }
        }
        let owned: Vec<Event> = items
            .into_iter()
            .map(|item| match item {
                Item::Original(i) => events[i].clone(),
                Item::Truncated(ev) => *ev,
            })
            .collect();
        self.delegate.process_events(&owned)
    }
}

/// An event of the batch: the caller's (by index) or a truncated copy.
enum Item {
    Original(usize),
    Truncated(Box<Event>),
}

/// The bytes upstream's `calcSize` counts: the event's JSON line.
fn calc_size(ev: &Event) -> serde_json::Result<u64> {
    ev.encode_json_line().map(|line| line.len() as u64)
}

/// Upstream's `truncate`: the event without its request and response objects, annotated.
fn truncate(ev: &Event) -> Event {
    let mut t = ev.clone();
    t.request_object = None;
    t.response_object = None;
    t.annotations
        .insert(ANNOTATION_KEY.to_owned(), ANNOTATION_VALUE.to_owned());
    t
}

impl Sink for Truncate {
    fn process_events(&self, events: &[Event]) -> bool {
        let max_event = self.config.max_event_size;
        let mut errors = Vec::new();
        let mut impacted = Vec::new();
        let mut batch = Vec::new();
        let mut batch_size = 0u64;
        let mut ok = true;
        for (i, ev) in events.iter().enumerate() {
            let mut item = Item::Original(i);
            let mut size = calc_size(ev);
            // Only an event that keeps objects (Request and above) can shrink.
            if matches!(size, Ok(s) if s > max_event) && ev.level >= Level::Request {
                let t = truncate(ev);
                size = calc_size(&t);
                item = Item::Truncated(Box::new(t));
            }
            let size = match size {
                Ok(s) if s <= max_event => s,
                Ok(_) => {
                    errors.push("event is too large even after truncating".to_owned());
                    impacted.push(ev);
                    continue;
                }
                Err(e) => {
                    errors.push(e.to_string());
                    impacted.push(ev);
                    continue;
                }
            };
            if !batch.is_empty() && batch_size + size > self.config.max_batch_size {
                ok &= self.send(events, &mut batch);
                batch_size = 0;
            }
            batch_size += size;
            batch.push(item);
        }
        if !batch.is_empty() {
            ok &= self.send(events, &mut batch);
        }
        if let Some(err) = aggregate_strings(errors) {
            handle_plugin_error(PLUGIN_NAME, &err, &impacted);
        }
        ok
    }
}

impl Backend for Truncate {
    fn shutdown(&self) {
        self.delegate.shutdown();
    }

    fn flush(&self) {
        self.delegate.flush();
    }

    fn name(&self) -> String {
        format!("{PLUGIN_NAME}<{}>", self.delegate.name())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::value::RawValue;

    use super::*;
    use crate::backend::testing::{Recorder, event};
    use crate::metrics::error_total;

    fn with_objects(id: &str, level: Level, object_bytes: usize) -> Event {
        let mut ev = event(id);
        ev.level = level;
        let object = format!("{{\"data\":\"{}\"}}", "x".repeat(object_bytes));
        ev.request_object = Some(RawValue::from_string(object.clone()).unwrap());
        ev.response_object = Some(RawValue::from_string(object).unwrap());
        ev
    }

    fn size(ev: &Event) -> u64 {
        calc_size(ev).unwrap()
    }

    #[test]
    fn too_large_events_lose_their_objects_then_are_dropped() {
        let big = with_objects("big", Level::RequestResponse, 1000);
        let stripped = truncate(&big);
        let max_event_size = size(&stripped) + 10;
        assert!(size(&big) > max_event_size);
        // At Metadata level nothing can be cut: dropped.
        let metadata = with_objects("metadata", Level::Metadata, 1000);
        // Too large even without objects: dropped.
        let mut huge = with_objects("huge", Level::Request, 10);
        huge.user_agent = "u".repeat(2000);
        let mut small = event("small");
        small.level = Level::RequestResponse;
        assert!(size(&small) <= max_event_size);

        let r = Recorder::default();
        let config = TruncateConfig {
            max_event_size,
            max_batch_size: 1 << 20,
        };
        let t = Truncate::new(Box::new(r.clone()), config);
        let before = error_total(PLUGIN_NAME);
        assert!(t.process_events(&[big, metadata, huge, small.clone()]));
        assert_eq!(error_total(PLUGIN_NAME), before + 2);

        assert_eq!(r.ids(), [["big", "small"]]);
        let batches = r.batches.lock().unwrap();
        let sent = &batches[0][0];
        assert!(sent.request_object.is_none() && sent.response_object.is_none());
        assert_eq!(
            sent.annotations.get(ANNOTATION_KEY).map(String::as_str),
            Some("true")
        );
        assert_eq!(
            batches[0][1].encode_json_line().unwrap(),
            small.encode_json_line().unwrap()
        );
    }

    #[test]
    fn batches_are_split_at_the_max_batch_size() {
        let events: Vec<Event> = (1..=5).map(|i| event(&i.to_string())).collect();
        let one = size(&events[0]);
        let r = Recorder::default();
        let config = TruncateConfig {
            max_event_size: one,
            max_batch_size: one * 2 + one / 2,
        };
        let t = Truncate::new(Box::new(r.clone()), config);
        assert!(t.process_events(&events));
        assert_eq!(r.ids(), [vec!["1", "2"], vec!["3", "4"], vec!["5"]]);
        assert_eq!(t.name(), "truncate<recorder>");
    }

    #[test]
    fn a_failing_delegate_fails_the_call_and_wrap_honours_enabled() {
        let failing = Recorder {
            fail: true,
            ..Recorder::default()
        };
        let t = Truncate::wrap(Box::new(failing.clone()), true, TruncateConfig::default());
        assert!(!t.process_events(&[event("a")]));
        let plain = Truncate::wrap(Box::new(failing), false, TruncateConfig::default());
        assert_eq!(plain.name(), "recorder");
    }
}
