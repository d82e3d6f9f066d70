//! core/v1 Event, after upstream's `pkg/registry/core/event` and
//! `pkg/apis/core/validation/events.go`.
//!
//! Through the core API upstream runs only `legacyValidateEvent` ("no further validation
//! for backwards compatibility"): names need only be path segments, and the reporting
//! fields are required only for new-style events (those with `eventTime`).

use std::collections::BTreeMap;

use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::meta::validate_path_segment_name;
use kas_apimachinery::validation::{is_dns1123_subdomain, is_qualified_name};
use kas_registry::rest::table::age;
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, TableColumn, Verb};
use serde_json::{Value, json};

const fn column(name: &'static str, description: &'static str, priority: i32) -> TableColumn {
    TableColumn {
        name,
        type_: "string",
        format: "",
        description,
        priority,
    }
}

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
    // Upstream's printer has no leading Name or trailing Age for events, and ends with a
    // priority-1 Name column; the table writer adds Name and Age to every resource, so
    // that last column is left out here. The priority-1 columns are upstream's `-o wide`
    // ones, which server-side tables always carry.
    table_columns: &[
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
    ],
    storage_resource: "events",
    schema: Some(&kas_api::core::v1::EVENT),
    list_schema: Some(&kas_api::core::v1::EVENT_LIST),
};

const REPORTING_INSTANCE_LENGTH_LIMIT: usize = 128;
const ACTION_LENGTH_LIMIT: usize = 128;
const REASON_LENGTH_LIMIT: usize = 128;
const NOTE_LENGTH_LIMIT: usize = 1024;

pub struct Strategy;

fn str_at<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// A `metav1.Time`/`MicroTime` is zero when absent, null or empty.
fn time_set(obj: &Value, pointer: &str) -> bool {
    !str_at(obj, pointer).is_empty()
}

/// `len(value) == 0` → Required; `len(value) > limit` → Invalid with an empty value.
fn required_within(errs: &mut Vec<field::Error>, obj: &Value, name: &str, limit: usize) {
    let value = str_at(obj, &format!("/{name}"));
    let path = Path::new(name);
    if value.is_empty() {
        errs.push(field::required(&path, ""));
    }
    if value.len() > limit {
        errs.push(field::invalid(
            &path,
            "",
            &format!("can have at most {limit} characters"),
        ));
    }
}

/// Upstream `legacyValidateEvent`.
fn legacy_validate_event(obj: &Value) -> FieldErrors {
    let mut errs = Vec::new();
    let namespace = kas_registry::meta::namespace(obj);
    let involved_ns = str_at(obj, "/involvedObject/namespace");
    let ns_path = Path::new("involvedObject").child("namespace");
    let mismatch = || field::invalid(&ns_path, involved_ns, "does not match event.namespace");
    if !time_set(obj, "/eventTime") {
        // Old-style events: the namespaces agree, or a cluster-scoped object's event lives
        // in "" or "default".
        if involved_ns.is_empty() {
            if !namespace.is_empty() && namespace != "default" {
                errs.push(mismatch());
            }
        } else if namespace != involved_ns {
            errs.push(mismatch());
        }
    } else {
        if involved_ns.is_empty() && namespace != "default" && namespace != "kube-system" {
            errs.push(mismatch());
        }
        let controller = str_at(obj, "/reportingController");
        let path = Path::new("reportingController");
        if controller.is_empty() {
            errs.push(field::required(&path, ""));
        }
        for msg in is_qualified_name(controller) {
            errs.push(field::invalid(&path, controller, &msg));
        }
        required_within(
            &mut errs,
            obj,
            "reportingInstance",
            REPORTING_INSTANCE_LENGTH_LIMIT,
        );
        required_within(&mut errs, obj, "action", ACTION_LENGTH_LIMIT);
        required_within(&mut errs, obj, "reason", REASON_LENGTH_LIMIT);
        if str_at(obj, "/message").len() > NOTE_LENGTH_LIMIT {
            let detail = format!("can have at most {NOTE_LENGTH_LIMIT} characters");
            errs.push(field::invalid(&Path::new("message"), "", &detail));
        }
    }
    for msg in is_dns1123_subdomain(namespace) {
        errs.push(field::invalid(&Path::new("namespace"), namespace, &msg));
    }
    errs.iter().map(field::Error::to_cause).collect()
}

/// Upstream `formatEventSource`.
fn event_source(obj: &Value) -> String {
    let first = |a: &'static str, b: &'static str| {
        let v = str_at(obj, a);
        if v.is_empty() { str_at(obj, b) } else { v }
    };
    let component = first("/source/component", "/reportingController");
    let instance = first("/source/host", "/reportingInstance");
    if instance.is_empty() {
        component.to_owned()
    } else {
        format!("{component}, {instance}")
    }
}

impl kas_registry::Strategy for Strategy {
    /// Upstream `BeforeCreate` runs the strategy's checks, then, only if they pass, the
    /// common ObjectMeta checks with path-segment names.
    fn validate(&self, obj: &Value) -> FieldErrors {
        let errs = legacy_validate_event(obj);
        if !errs.is_empty() {
            return errs;
        }
        validate_object_meta(obj, true, validate_path_segment_name)
    }

    /// Upstream `BeforeUpdate`: the common checks (`validateCommonFields`), then the
    /// strategy's.
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta(new, true, validate_path_segment_name);
        errs.extend(validate_object_meta_update(new, old));
        errs.extend(legacy_validate_event(new));
        errs
    }

    fn allow_create_on_update(&self) -> bool {
        true
    }

    /// Upstream `EventToSelectableFields`, whose keys are also the v1 field labels.
    fn field_set(&self, obj: &Value) -> BTreeMap<String, String> {
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
            source = str_at(obj, "/reportingController");
        }
        set.insert("reason".to_owned(), str_at(obj, "/reason").to_owned());
        set.insert(
            "reportingComponent".to_owned(),
            str_at(obj, "/reportingController").to_owned(),
        );
        set.insert("source".to_owned(), source.to_owned());
        set.insert("type".to_owned(), str_at(obj, "/type").to_owned());
        set
    }

    fn patch_schema(&self) -> Option<&dyn kas_apimachinery::patch::PatchSchema> {
        kas_apimachinery::patch::builtin_schema("", "v1", "Event")
            .map(|s| s as &dyn kas_apimachinery::patch::PatchSchema)
    }

    /// Upstream `printEvent` with `Wide`, as server-side tables are generated.
    fn table_cells(&self, obj: &Value) -> Vec<Value> {
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
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kas_registry::Strategy as _;

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
        assert!(Strategy.validate(&event("default", "default")).is_empty());
        let errs = Strategy.validate(&event("default", "other"));
        assert_eq!(fields(&errs), vec!["involvedObject.namespace"]);
        assert_eq!(
            errs[0].message.as_deref(),
            Some("Invalid value: \"other\": does not match event.namespace")
        );
        // Events about cluster-scoped objects may live in "default".
        assert!(Strategy.validate(&event("default", "")).is_empty());
        assert_eq!(
            fields(&Strategy.validate(&event("apps", ""))),
            vec!["involvedObject.namespace"]
        );
    }

    #[test]
    fn new_style_events_need_reporting_fields() {
        let mut ev = event("default", "default");
        ev["eventTime"] = json!("2024-01-01T00:00:00.000000Z");
        assert_eq!(
            fields(&Strategy.validate(&ev)),
            vec![
                "reportingController",
                "reportingController",
                "reportingController",
                "reportingInstance",
                "action"
            ]
        );
        ev["reportingController"] = json!("example.com/ctl");
        ev["reportingInstance"] = json!("ctl-1");
        ev["action"] = json!("Start");
        assert!(Strategy.validate(&ev).is_empty());
        ev["reason"] = json!("r".repeat(129));
        let errs = Strategy.validate(&ev);
        assert_eq!(
            errs[0].message.as_deref(),
            Some("Invalid value: \"\": can have at most 128 characters")
        );
    }

    #[test]
    fn names_need_only_be_path_segments() {
        let mut ev = event("default", "default");
        ev["metadata"]["name"] = json!("Pod_A.17A3B");
        assert!(Strategy.validate(&ev).is_empty());
        ev["metadata"]["name"] = json!("a/b");
        assert_eq!(fields(&Strategy.validate(&ev)), vec!["metadata.name"]);
        assert!(Strategy.allow_create_on_update());
    }

    #[test]
    fn table_cells_follow_print_event() {
        let cells = Strategy.table_cells(&event("default", "default"));
        assert_eq!(cells.len(), DESCRIPTOR.table_columns.len());
        assert_eq!(cells[0], json!("<unknown>"));
        assert_eq!(cells[3], json!("pod/pod-a"));
        assert_eq!(cells[5], json!("kubelet, node-1"));
        assert_eq!(cells[6], json!("Started container"));
        assert_eq!(cells[8], json!(1));
    }

    #[test]
    fn field_labels_include_involved_object() {
        let set = Strategy.field_set(&event("default", "default"));
        assert_eq!(set["involvedObject.name"], "pod-a");
        assert_eq!(set["source"], "kubelet");
        assert!(set.contains_key("reportingComponent"));
        assert!(set.contains_key("metadata.namespace"));
    }
}
