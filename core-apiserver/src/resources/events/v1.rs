//! events.k8s.io/v1 Event: the core Event resource in its newer shape, after upstream's
//! `pkg/registry/events/rest` (the core events store served in a second group). It
//! reads and writes the same `/events/<namespace>/<name>` keys in the core/v1 form;
//! [`super::convert`] renames fields on the way in and out, so an event written through
//! one API reads through the other. Validation is upstream's strict one for this group,
//! field selectors take this group's names, and tables are the core printer's.

use std::collections::BTreeMap;
use std::time::Duration;

use kas_registry::strategy::{Conversion, FieldErrors};
use kas_registry::{ResourceDescriptor, Scope, Verb};
use serde_json::Value;

use super::{TABLE_COLUMNS, convert, print_event, selectable_fields, validation};

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "events.k8s.io",
    version: "v1",
    kind: "Event",
    list_kind: "EventList",
    plural: "events",
    singular: "event",
    short_names: &["ev"],
    categories: &[],
    scope: Scope::Namespaced,
    verbs: Verb::ALL,
    subresources: &[],
    table_columns: TABLE_COLUMNS,
    table_name_and_age: false,
    storage_resource: "events",
    schema: Some(&kas_api::events::v1::EVENT),
    list_schema: Some(&kas_api::events::v1::EVENT_LIST),
};

/// Upstream's field label conversion for this group: each label it takes, and the
/// selectable field of the internal Event it stands for.
const FIELD_LABELS: &[(&str, &str)] = &[
    ("metadata.name", "metadata.name"),
    ("metadata.namespace", "metadata.namespace"),
    ("reason", "reason"),
    ("regarding.kind", "involvedObject.kind"),
    ("regarding.namespace", "involvedObject.namespace"),
    ("regarding.name", "involvedObject.name"),
    ("regarding.uid", "involvedObject.uid"),
    ("regarding.apiVersion", "involvedObject.apiVersion"),
    (
        "regarding.resourceVersion",
        "involvedObject.resourceVersion",
    ),
    ("regarding.fieldPath", "involvedObject.fieldPath"),
    ("reportingController", "reportingComponent"),
    ("source", "source"),
    ("type", "type"),
];

/// The events.k8s.io/v1 strategy; its TTL is core events' (one `--event-ttl`).
/// How the role installs this resource: no watch cache, a TTL of `--event-ttl`.
pub fn install(opts: &crate::resources::ResourceOptions) -> crate::resources::Install {
    crate::resources::Install {
        descriptor: &DESCRIPTOR,
        strategy: std::sync::Arc::new(Strategy::new(opts.event_ttl)),
        reads: crate::resources::Reads::Etcd,
        hooks: None,
    }
}

pub struct Strategy {
    core: super::Strategy,
}

impl Strategy {
    pub fn new(event_ttl: Duration) -> Self {
        Strategy {
            core: super::Strategy::new(event_ttl),
        }
    }
}

impl kas_registry::Strategy for Strategy {
    /// Upstream's `eventStrategy.DefaultGarbageCollectionPolicy`: events are never
    /// garbage collected; deletes set no finalizer.
    fn default_garbage_collection_policy(
        &self,
    ) -> Option<kas_registry::strategy::GarbageCollectionPolicy> {
        Some(kas_registry::strategy::GarbageCollectionPolicy::Unsupported)
    }

    fn conversion(&self) -> Option<&dyn Conversion> {
        Some(&convert::EventsV1)
    }

    fn validate(&self, obj: &Value) -> FieldErrors {
        validation::before_create(obj, true)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        validation::before_update(new, old, true)
    }

    fn allow_create_on_update(&self) -> bool {
        true
    }

    fn ttl_seconds(&self) -> Option<i64> {
        kas_registry::Strategy::ttl_seconds(&self.core)
    }

    /// Upstream registers a field label conversion function for this kind.
    fn field_label_conversion(&self) -> bool {
        true
    }

    /// This group's field labels over the internal selectable fields of the stored event.
    fn field_set(&self, obj: &Value) -> BTreeMap<String, String> {
        let internal = selectable_fields(obj);
        FIELD_LABELS
            .iter()
            .map(|(label, field)| {
                let value = internal.get(*field).cloned().unwrap_or_default();
                ((*label).to_owned(), value)
            })
            .collect()
    }

    /// Upstream prints the internal Event whichever group was asked.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        print_event(&convert::EventsV1.to_stored(obj.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kas_registry::Strategy as _;
    use serde_json::json;

    fn strategy() -> Strategy {
        Strategy::new(super::super::DEFAULT_EVENT_TTL)
    }

    /// An events.k8s.io/v1 event as a client sends it.
    fn served() -> Value {
        json!({
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": "pod-a.17a3b", "namespace": "default"},
            "regarding": {"kind": "Pod", "name": "pod-a", "namespace": "default"},
            "eventTime": "2024-01-01T00:00:00.000000Z",
            "reportingController": "example.com/ctl",
            "reportingInstance": "ctl-1",
            "action": "Start",
            "reason": "Started",
            "note": "Started container",
            "type": "Normal",
        })
    }

    fn stored() -> Value {
        convert::EventsV1.to_stored(served())
    }

    #[test]
    fn validates_the_stored_form_with_the_strict_rules() {
        let s = strategy();
        assert!(s.validate(&stored()).is_empty());
        let mut ev = served();
        ev["deprecatedCount"] = json!(4);
        ev["reportingController"] = json!("");
        let errs = s.validate(&convert::EventsV1.to_stored(ev));
        let fields: Vec<_> = errs.iter().filter_map(|c| c.field.as_deref()).collect();
        assert_eq!(
            fields,
            [
                "reportingController",
                "reportingController",
                "reportingController",
                "count"
            ]
        );
        assert!(s.allow_create_on_update());
    }

    #[test]
    fn updates_may_not_rewrite_the_note() {
        let s = strategy();
        let old = stored();
        let mut new = old.clone();
        new["message"] = json!("changed");
        let errs = s.validate_update(&new, &old);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field.as_deref(), Some("message"));
        assert_eq!(
            errs[0].message.as_deref(),
            Some("Invalid value: \"changed\": field is immutable")
        );
    }

    #[test]
    fn field_labels_are_this_groups() {
        let s = strategy();
        let set = s.field_set(&stored());
        let labels: Vec<_> = set.keys().map(String::as_str).collect();
        let mut expected: Vec<_> = FIELD_LABELS.iter().map(|(l, _)| *l).collect();
        expected.sort_unstable();
        assert_eq!(labels, expected);
        assert_eq!(set["regarding.name"], "pod-a");
        assert_eq!(set["reportingController"], "example.com/ctl");
        // No source: upstream selects on the reporting controller instead.
        assert_eq!(set["source"], "example.com/ctl");
        assert!(!set.contains_key("involvedObject.name"));
    }

    #[test]
    fn tables_print_the_served_form_as_core_events() {
        let cells = strategy().table_cells(&served());
        assert_eq!(cells.len(), TABLE_COLUMNS.len());
        assert_eq!(cells[3], json!("pod/pod-a"));
        assert_eq!(cells[5], json!("example.com/ctl, ctl-1"));
        assert_eq!(cells[6], json!("Started container"));
        assert_eq!(cells[8], json!(1));
    }

    #[test]
    fn writes_share_the_event_ttl_and_discovery_names_the_core_storage() {
        assert_eq!(strategy().ttl_seconds(), Some(3600));
        assert_eq!(Strategy::new(Duration::from_secs(2)).ttl_seconds(), Some(2));
        // A real 1.33 kube-apiserver's /apis/events.k8s.io/v1: the hash of the core/v1
        // Event it is stored as.
        let list =
            kas_endpoints::discovery::api_resource_list("events.k8s.io", "v1", &[&DESCRIPTOR]);
        assert_eq!(list["resources"][0]["storageVersionHash"], "r2yiGXH7wu8=");
        assert_eq!(list["resources"][0]["shortNames"], json!(["ev"]));
    }
}
