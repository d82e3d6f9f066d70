//! core/v1 Event ↔ events.k8s.io/v1 Event, after upstream's
//! `pkg/apis/events/v1/conversion.go`. Upstream converts through the internal Event, whose
//! fields are core/v1's; between the two JSON forms that leaves renames only. Every other
//! field has the same name and shape in both, the series included (`count` and
//! `lastObservedTime` in both), so it passes through untouched.

use kas_registry::strategy::Conversion;
use serde_json::Value;

/// (core/v1 field, events.k8s.io/v1 field).
const RENAMED: &[(&str, &str)] = &[
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
    // The core/v1 JSON name of the internal `ReportingController`.
    ("reportingComponent", "reportingController"),
];

/// events.k8s.io/v1 over the core/v1 storage of events.
pub(super) struct EventsV1;

impl Conversion for EventsV1 {
    fn to_stored(&self, served: Value) -> Value {
        rename(served, |(core, v1)| (v1, core))
    }

    fn to_served(&self, stored: Value) -> Value {
        rename(stored, |(core, v1)| (core, v1))
    }

    fn stored_schema(&self) -> Option<&'static kas_apimachinery::schema::Message> {
        Some(&kas_api::core::v1::EVENT)
    }
}

type Pair = (&'static str, &'static str);

/// Moves each renamed field from its `(from, to)` name to the other.
fn rename(mut obj: Value, direction: fn(Pair) -> Pair) -> Value {
    if let Some(map) = obj.as_object_mut() {
        for pair in RENAMED {
            let (from, to) = direction(*pair);
            if let Some(v) = map.remove(from) {
                map.insert(to.to_owned(), v);
            }
        }
    }
    obj
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn core() -> Value {
        json!({
            "metadata": {"name": "e", "namespace": "default", "resourceVersion": "7"},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
            "related": {"kind": "Node", "name": "n"},
            "reason": "Started",
            "message": "Started container",
            "source": {"component": "kubelet", "host": "node-1"},
            "firstTimestamp": "2024-01-01T00:00:00Z",
            "lastTimestamp": "2024-01-01T00:01:00Z",
            "count": 2,
            "type": "Normal",
            "eventTime": "2024-01-01T00:00:00.000000Z",
            "series": {"count": 2, "lastObservedTime": "2024-01-01T00:01:00.000000Z"},
            "action": "Start",
            "reportingComponent": "kubelet",
            "reportingInstance": "node-1",
        })
    }

    #[test]
    fn core_fields_are_served_under_their_events_v1_names() {
        let served = EventsV1.to_served(core());
        assert_eq!(
            served,
            json!({
                "metadata": {"name": "e", "namespace": "default", "resourceVersion": "7"},
                "regarding": {"kind": "Pod", "name": "p", "namespace": "default"},
                "related": {"kind": "Node", "name": "n"},
                "reason": "Started",
                "note": "Started container",
                "deprecatedSource": {"component": "kubelet", "host": "node-1"},
                "deprecatedFirstTimestamp": "2024-01-01T00:00:00Z",
                "deprecatedLastTimestamp": "2024-01-01T00:01:00Z",
                "deprecatedCount": 2,
                "type": "Normal",
                "eventTime": "2024-01-01T00:00:00.000000Z",
                "series": {"count": 2, "lastObservedTime": "2024-01-01T00:01:00.000000Z"},
                "action": "Start",
                "reportingController": "kubelet",
                "reportingInstance": "node-1",
            })
        );
        assert_eq!(EventsV1.to_stored(served), core());
    }

    #[test]
    fn absent_fields_stay_absent() {
        let v1 = json!({"metadata": {"name": "e"}, "note": "hi"});
        let stored = EventsV1.to_stored(v1.clone());
        assert_eq!(stored, json!({"metadata": {"name": "e"}, "message": "hi"}));
        assert_eq!(EventsV1.to_served(stored), v1);
        assert_eq!(EventsV1.to_served(json!(null)), json!(null));
    }
}
