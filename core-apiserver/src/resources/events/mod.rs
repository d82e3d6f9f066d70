//! Events, after upstream's `pkg/registry/core/event`: core/v1 Event here, events.k8s.io/v1
//! Event in [`v1`]. Both are one resource in one store, `/events/<namespace>/<name>`, kept
//! in the core/v1 form (upstream stores both as core/v1, its cohabitating resources);
//! events.k8s.io/v1 converts on the way in and out ([`convert`]).
//!
//! Through the core API upstream runs only `legacyValidateEvent` ("no further validation
//! for backwards compatibility"): names need only be path segments, and the reporting
//! fields are required only for new-style events (those with `eventTime`). Every write of
//! an event expires after `--event-ttl`, as upstream's events store's `TTLFunc` says.

mod convert;
pub mod v1;
mod validation;

use std::collections::BTreeMap;
use std::time::Duration;

use kas_apimachinery::golang::time::parse_rfc3339;
use kas_endpoints::responsewriters::table::age;
use kas_registry::strategy::FieldErrors;
use kas_registry::{ResourceDescriptor, Scope, TableColumn, Verb};
use serde_json::{Value, json};

/// Upstream's `--event-ttl` default.
pub const DEFAULT_EVENT_TTL: Duration = Duration::from_secs(3600);

const fn column(name: &'static str, description: &'static str, priority: i32) -> TableColumn {
    TableColumn {
        name,
        type_: "string",
        format: "",
        description,
        priority,
    }
}

/// Both event APIs' columns: upstream prints either through one printer, which has no
/// leading Name or trailing Age (`table_name_and_age: false`) and ends with a priority-1
/// Name column. The priority-1 columns are upstream's `-o wide` ones, which server-side
/// tables always carry.
const TABLE_COLUMNS: &[TableColumn] = &[
    column(
        "Last Seen",
        "The time at which the most recent occurrence of this event was recorded.",
        0,
    ),
    column(
        "Type",
        "Type of this event (Normal, Warning), new types could be added in the future",
        0,
    ),
    column(
        "Reason",
        "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
        0,
    ),
    column("Object", "The object that this event is about.", 0),
    column(
        "Subobject",
        "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: \"spec.containers{name}\" (where \"name\" refers to the name of the container that triggered the event) or if no container name is specified \"spec.containers[2]\" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.",
        1,
    ),
    column(
        "Source",
        "The component reporting this event. Should be a short machine understandable string.",
        1,
    ),
    column(
        "Message",
        "A human-readable description of the status of this operation.",
        0,
    ),
    column(
        "First Seen",
        "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
        1,
    ),
    column("Count", "The number of times this event has occurred.", 1),
    TableColumn {
        name: "Name",
        type_: "string",
        format: "name",
        description: kas_endpoints::responsewriters::table::NAME_DESCRIPTION,
        priority: 1,
    },
];

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "",
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
    schema: Some(&kas_api::core::v1::EVENT),
    list_schema: Some(&kas_api::core::v1::EVENT_LIST),
};

/// The core/v1 Event strategy. Both event APIs write with the same TTL.
/// How the role installs this resource: no watch cache, a TTL of `--event-ttl`.
pub fn install(opts: &super::ResourceOptions) -> super::Install {
    super::Install {
        descriptor: &DESCRIPTOR,
        strategy: std::sync::Arc::new(Strategy::new(opts.event_ttl)),
        reads: super::Reads::Etcd,
        hooks: None,
    }
}

pub struct Strategy {
    ttl_seconds: Option<i64>,
}

impl Strategy {
    /// Events written under `event_ttl`: whole seconds, as upstream takes them; zero
    /// writes them without expiry, as upstream does.
    pub fn new(event_ttl: Duration) -> Self {
        let seconds = i64::try_from(event_ttl.as_secs()).unwrap_or(i64::MAX);
        Strategy {
            ttl_seconds: (seconds > 0).then_some(seconds),
        }
    }
}

fn str_at<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// A `metav1.Time`/`MicroTime` is zero when absent, null, empty or Go's zero time.
fn time_set(obj: &Value, pointer: &str) -> bool {
    let s = str_at(obj, pointer);
    !s.is_empty() && parse_rfc3339(s).is_none_or(|t| !t.is_zero())
}

/// Upstream `formatEventSource`.
fn event_source(obj: &Value) -> String {
    let first = |a: &'static str, b: &'static str| {
        let v = str_at(obj, a);
        if v.is_empty() { str_at(obj, b) } else { v }
    };
    let component = first("/source/component", "/reportingComponent");
    let instance = first("/source/host", "/reportingInstance");
    if instance.is_empty() {
        component.to_owned()
    } else {
        format!("{component}, {instance}")
    }
}

/// core/v1 Events are also served as events.k8s.io/v1.
static OTHER_VERSIONS: [kas_registry::strategy::OtherVersion; 1] = [(
    "events.k8s.io/v1",
    &convert::EventsV1,
    &kas_api::events::v1::EVENT,
)];

impl kas_registry::Strategy for Strategy {
    /// Upstream's `eventStrategy.DefaultGarbageCollectionPolicy`: events are never
    /// garbage collected; deletes set no finalizer.
    fn default_garbage_collection_policy(
        &self,
    ) -> Option<kas_registry::strategy::GarbageCollectionPolicy> {
        Some(kas_registry::strategy::GarbageCollectionPolicy::Unsupported)
    }

    fn other_versions(&self) -> &'static [kas_registry::strategy::OtherVersion] {
        &OTHER_VERSIONS
    }

    fn validate(&self, obj: &Value) -> FieldErrors {
        validation::before_create(obj, false)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        validation::before_update(new, old, false)
    }

    fn allow_create_on_update(&self) -> bool {
        true
    }

    fn ttl_seconds(&self) -> Option<i64> {
        self.ttl_seconds
    }

    /// Upstream registers a field label conversion function for this kind.
    fn field_label_conversion(&self) -> bool {
        true
    }

    /// Upstream `EventToSelectableFields`, whose keys are also core/v1's field labels.
    fn field_set(&self, obj: &Value) -> BTreeMap<String, String> {
        selectable_fields(obj)
    }

    /// Upstream `printEvent` with `Wide`, as server-side tables are generated.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        print_event(obj)
    }
}

/// Upstream `EventToSelectableFields` of the stored (internal) form.
fn selectable_fields(obj: &Value) -> BTreeMap<String, String> {
    let mut set = kas_registry::meta::default_field_set(obj);
    for f in [
        "kind",
        "namespace",
        "name",
        "uid",
        "apiVersion",
        "resourceVersion",
        "fieldPath",
    ] {
        set.insert(
            format!("involvedObject.{f}"),
            str_at(obj, &format!("/involvedObject/{f}")).to_owned(),
        );
    }
    let mut source = str_at(obj, "/source/component");
    if source.is_empty() {
        source = str_at(obj, "/reportingComponent");
    }
    set.insert("reason".to_owned(), str_at(obj, "/reason").to_owned());
    set.insert(
        "reportingComponent".to_owned(),
        str_at(obj, "/reportingComponent").to_owned(),
    );
    set.insert("source".to_owned(), source.to_owned());
    set.insert("type".to_owned(), str_at(obj, "/type").to_owned());
    set
}

/// Upstream `printEvent` (`Wide`) of the stored (internal) form.
fn print_event(obj: &Value) -> Vec<Value> {
    let first_seen = if time_set(obj, "/firstTimestamp") {
        age(str_at(obj, "/firstTimestamp"))
    } else {
        age(str_at(obj, "/eventTime"))
    };
    let mut last_seen = if time_set(obj, "/lastTimestamp") {
        age(str_at(obj, "/lastTimestamp"))
    } else {
        first_seen.clone()
    };
    let mut count = obj.get("count").and_then(Value::as_i64).unwrap_or(0);
    if let Some(series) = obj.get("series").filter(|s| s.is_object()) {
        last_seen = age(str_at(series, "/lastObservedTime"));
        count = series.get("count").and_then(Value::as_i64).unwrap_or(0);
    } else if count == 0 {
        // Singleton events of the new API carry no count.
        count = 1;
    }
    let kind = str_at(obj, "/involvedObject/kind").to_lowercase();
    let name = str_at(obj, "/involvedObject/name");
    let target = if name.is_empty() {
        kind
    } else {
        format!("{kind}/{name}")
    };
    vec![
        json!(last_seen),
        json!(str_at(obj, "/type")),
        json!(str_at(obj, "/reason")),
        json!(target),
        json!(str_at(obj, "/involvedObject/fieldPath")),
        json!(event_source(obj)),
        json!(str_at(obj, "/message").trim()),
        json!(first_seen),
        json!(count),
        json!(str_at(obj, "/metadata/name")),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use kas_registry::Strategy as _;

    fn strategy() -> Strategy {
        Strategy::new(DEFAULT_EVENT_TTL)
    }

    fn event(ns: &str, involved_ns: &str) -> Value {
        json!({
            "metadata": {"name": "pod-a.17a3b", "namespace": ns},
            "involvedObject": {"kind": "Pod", "name": "pod-a", "namespace": involved_ns},
            "reason": "Started",
            "message": "Started container  ",
            "type": "Normal",
            "source": {"component": "kubelet", "host": "node-1"},
        })
    }

    fn fields(errs: &FieldErrors) -> Vec<&str> {
        errs.iter()
            .map(|c| c.field.as_deref().unwrap_or(""))
            .collect()
    }

    #[test]
    fn involved_object_namespace_must_match() {
        assert!(strategy().validate(&event("default", "default")).is_empty());
        let errs = strategy().validate(&event("default", "other"));
        assert_eq!(fields(&errs), vec!["involvedObject.namespace"]);
        assert_eq!(
            errs[0].message.as_deref(),
            Some("Invalid value: \"other\": does not match event.namespace")
        );
        // Events about cluster-scoped objects may live in "default".
        assert!(strategy().validate(&event("default", "")).is_empty());
        assert_eq!(
            fields(&strategy().validate(&event("apps", ""))),
            vec!["involvedObject.namespace"]
        );
    }

    #[test]
    fn new_style_events_need_reporting_fields() {
        let mut ev = event("default", "default");
        ev["eventTime"] = json!("2024-01-01T00:00:00.000000Z");
        assert_eq!(
            fields(&strategy().validate(&ev)),
            vec![
                "reportingController",
                "reportingController",
                "reportingController",
                "reportingInstance",
                "action"
            ]
        );
        ev["reportingComponent"] = json!("example.com/ctl");
        ev["reportingInstance"] = json!("ctl-1");
        ev["action"] = json!("Start");
        assert!(strategy().validate(&ev).is_empty());
        ev["reason"] = json!("r".repeat(129));
        let errs = strategy().validate(&ev);
        assert_eq!(
            errs[0].message.as_deref(),
            Some("Invalid value: \"\": can have at most 128 characters")
        );
    }

    #[test]
    fn the_event_ttl_is_whole_seconds_and_zero_is_none() {
        assert_eq!(strategy().ttl_seconds(), Some(3600));
        assert_eq!(
            Strategy::new(Duration::from_millis(2500)).ttl_seconds(),
            Some(2)
        );
        assert_eq!(
            Strategy::new(Duration::from_millis(500)).ttl_seconds(),
            None
        );
    }

    #[test]
    fn names_need_only_be_path_segments() {
        let mut ev = event("default", "default");
        ev["metadata"]["name"] = json!("Pod_A.17A3B");
        assert!(strategy().validate(&ev).is_empty());
        ev["metadata"]["name"] = json!("a/b");
        assert_eq!(fields(&strategy().validate(&ev)), vec!["metadata.name"]);
        assert!(strategy().allow_create_on_update());
    }

    #[test]
    fn table_cells_follow_print_event() {
        let cells = strategy().table_cells(&event("default", "default"));
        assert_eq!(cells.len(), DESCRIPTOR.table_columns.len());
        assert_eq!(cells[0], json!("<unknown>"));
        assert_eq!(cells[3], json!("pod/pod-a"));
        assert_eq!(cells[5], json!("kubelet, node-1"));
        assert_eq!(cells[6], json!("Started container"));
        assert_eq!(cells[8], json!(1));
    }

    #[test]
    fn field_labels_include_involved_object() {
        let set = strategy().field_set(&event("default", "default"));
        assert_eq!(set["involvedObject.name"], "pod-a");
        assert_eq!(set["source"], "kubelet");
        assert!(set.contains_key("reportingComponent"));
        let mut ev = event("default", "default");
        ev.as_object_mut().unwrap().remove("source");
        ev["reportingComponent"] = json!("example.com/ctl");
        let set = strategy().field_set(&ev);
        assert_eq!(set["source"], "example.com/ctl");
        assert_eq!(set["reportingComponent"], "example.com/ctl");
        assert!(set.contains_key("metadata.namespace"));
    }
}
