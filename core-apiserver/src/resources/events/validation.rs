//! Event validation, after upstream's `pkg/apis/core/validation/events.go`.
//!
//! Upstream validates the internal Event whichever API was asked, so this reads the stored
//! (core/v1) form and names fields as the internal type does: `reportingController` (the
//! core/v1 JSON says `reportingComponent`), `message`, `involvedObject`, `count`. Through
//! core/v1 only the legacy checks run ("no further validation for backwards
//! compatibility"); through events.k8s.io/v1 the strict ones follow.

use kas_apimachinery::golang::time::{Time, ZERO_UNIX, parse_rfc3339};
use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::meta::{name_is_dns_subdomain, validate_path_segment_name};
use kas_apimachinery::validation::{is_dns1123_subdomain, is_qualified_name};
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use serde_json::Value;

use super::{str_at, time_set};
use kas_registry::strategy::causes;

const REPORTING_INSTANCE_LENGTH_LIMIT: usize = 128;
const ACTION_LENGTH_LIMIT: usize = 128;
const REASON_LENGTH_LIMIT: usize = 128;
const NOTE_LENGTH_LIMIT: usize = 1024;

/// What both event strategies check on create (upstream's `BeforeCreate`): the
/// strategy's checks and, only if they pass, the common ObjectMeta checks with
/// path-segment names.
pub(super) fn before_create(obj: &Value, strict: bool) -> FieldErrors {
    let errs = validate_create(obj, strict);
    if !errs.is_empty() {
        return errs;
    }
    validate_object_meta(obj, true, validate_path_segment_name)
}

/// What both event strategies check on update (upstream's `BeforeUpdate`): the common
/// checks (`validateCommonFields`), then the strategy's (which, strict, check the
/// metadata update once more, as upstream's do).
pub(super) fn before_update(new: &Value, old: &Value, strict: bool) -> FieldErrors {
    let mut errs = validate_object_meta(new, true, validate_path_segment_name);
    errs.extend(validate_object_meta_update(new, old));
    errs.extend(validate_update(new, old, strict));
    errs
}

/// Upstream `ValidateEventCreate`; `strict` when asked through events.k8s.io.
pub(super) fn validate_create(obj: &Value, strict: bool) -> FieldErrors {
    let mut errs = causes(legacy(obj));
    if !strict {
        return errs;
    }
    errs.extend(validate_object_meta(obj, true, name_is_dns_subdomain));
    let mut more = series(obj);
    if !time_set(obj, "/eventTime") {
        more.push(field::required(&Path::new("eventTime"), ""));
    }
    let kind = str_at(obj, "/type");
    if kind != "Normal" && kind != "Warning" {
        let detail = format!("has invalid value: {kind}");
        more.push(field::invalid(&Path::new("type"), "", &detail));
    }
    let unset = |name: &str| field::invalid(&Path::new(name), "", "needs to be unset");
    for name in ["firstTimestamp", "lastTimestamp"] {
        if time_set(obj, &format!("/{name}")) {
            more.push(unset(name));
        }
    }
    if obj.get("count").and_then(Value::as_i64).unwrap_or(0) != 0 {
        more.push(unset("count"));
    }
    if !str_at(obj, "/source/component").is_empty() || !str_at(obj, "/source/host").is_empty() {
        more.push(unset("source"));
    }
    errs.extend(causes(more));
    errs
}

/// Upstream `ValidateEventUpdate`; `strict` when asked through events.k8s.io.
pub(super) fn validate_update(new: &Value, old: &Value, strict: bool) -> FieldErrors {
    let mut errs = causes(legacy(new));
    if !strict {
        return errs;
    }
    errs.extend(validate_object_meta_update(new, old));
    let mut more = Vec::new();
    if series_value(new) != series_value(old) {
        more.extend(series(new));
    }
    for (path, key, shape) in IMMUTABLE {
        let value = go_value(*shape, new.get(key));
        if value != go_value(*shape, old.get(key)) {
            more.push(field::invalid(
                &Path::new(path),
                value,
                "field is immutable",
            ));
        }
    }
    errs.extend(causes(more));
    errs
}

/// `len(value) == 0` → Required; `len(value) > limit` → Invalid with an empty value.
fn required_within(errs: &mut Vec<field::Error>, value: &str, path: &str, limit: usize) {
    let path = Path::new(path);
    if value.is_empty() {
        errs.push(field::required(&path, ""));
    }
    if value.len() > limit {
        let detail = format!("can have at most {limit} characters");
        errs.push(field::invalid(&path, "", &detail));
    }
}

/// Upstream `legacyValidateEvent`: what every event must pass, whichever API.
fn legacy(obj: &Value) -> Vec<field::Error> {
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
        let controller = str_at(obj, "/reportingComponent");
        let path = Path::new("reportingController");
        if controller.is_empty() {
            errs.push(field::required(&path, ""));
        }
        for msg in is_qualified_name(controller) {
            errs.push(field::invalid(&path, controller, &msg));
        }
        let instance = str_at(obj, "/reportingInstance");
        let limit = REPORTING_INSTANCE_LENGTH_LIMIT;
        required_within(&mut errs, instance, "reportingInstance", limit);
        let action = str_at(obj, "/action");
        required_within(&mut errs, action, "action", ACTION_LENGTH_LIMIT);
        let reason = str_at(obj, "/reason");
        required_within(&mut errs, reason, "reason", REASON_LENGTH_LIMIT);
        if str_at(obj, "/message").len() > NOTE_LENGTH_LIMIT {
            let detail = format!("can have at most {NOTE_LENGTH_LIMIT} characters");
            errs.push(field::invalid(&Path::new("message"), "", &detail));
        }
    }
    for msg in is_dns1123_subdomain(namespace) {
        errs.push(field::invalid(&Path::new("namespace"), namespace, &msg));
    }
    errs
}

/// Upstream `validateV1EventSeries`.
fn series(obj: &Value) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let Some(series) = obj.get("series").filter(|s| s.is_object()) else {
        return errs;
    };
    if series.get("count").and_then(Value::as_i64).unwrap_or(0) < 2 {
        let path = Path::new("series.count");
        errs.push(field::invalid(&path, "", "should be at least 2"));
    }
    if !time_set(series, "/lastObservedTime") {
        errs.push(field::required(&Path::new("series.lastObservedTime"), ""));
    }
    errs
}

/// A series as upstream's deep equality sees it: absent, or its count and instant.
fn series_value(obj: &Value) -> Option<(i64, BadValue)> {
    let series = obj.get("series").filter(|s| s.is_object())?;
    let count = series.get("count").and_then(Value::as_i64).unwrap_or(0);
    Some((count, go_value(Shape::Time, series.get("lastObservedTime"))))
}

/// The Go type of an internal Event field, which decides how upstream compares and prints it.
#[derive(Clone, Copy)]
enum Shape {
    Str,
    Int,
    /// `metav1.Time` / `MicroTime`: compared as instants, printed by `String()`.
    Time,
    /// `core.ObjectReference`, printed as Go's `%#v`.
    Reference,
    /// `*core.ObjectReference`: nil prints as `"null"`.
    OptionalReference,
    /// `core.EventSource`.
    Source,
}

/// What an update through events.k8s.io may not change, in upstream's order: internal
/// field path, core/v1 JSON key, shape. Upstream checks `reason` twice.
const IMMUTABLE: &[(&str, &str, Shape)] = &[
    ("involvedObject", "involvedObject", Shape::Reference),
    ("reason", "reason", Shape::Str),
    ("message", "message", Shape::Str),
    ("source", "source", Shape::Source),
    ("firstTimestamp", "firstTimestamp", Shape::Time),
    ("lastTimestamp", "lastTimestamp", Shape::Time),
    ("count", "count", Shape::Int),
    ("reason", "reason", Shape::Str),
    ("type", "type", Shape::Str),
    ("eventTime", "eventTime", Shape::Time),
    ("action", "action", Shape::Str),
    ("related", "related", Shape::OptionalReference),
    ("reportingController", "reportingComponent", Shape::Str),
    ("reportingInstance", "reportingInstance", Shape::Str),
];

const REFERENCE_FIELDS: &[(&str, &str)] = &[
    ("Kind", "kind"),
    ("Namespace", "namespace"),
    ("Name", "name"),
    ("UID", "uid"),
    ("APIVersion", "apiVersion"),
    ("ResourceVersion", "resourceVersion"),
    ("FieldPath", "fieldPath"),
];

const SOURCE_FIELDS: &[(&str, &str)] = &[("Component", "component"), ("Host", "host")];

/// A field's value as upstream prints it in an error; two values print alike exactly when
/// upstream's semantic equality holds, so this is also what updates are compared by.
fn go_value(shape: Shape, v: Option<&Value>) -> BadValue {
    let v = v.filter(|v| !v.is_null());
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_owned();
    match shape {
        Shape::Str => BadValue::String(text(v)),
        Shape::Int => BadValue::Int(v.and_then(Value::as_i64).unwrap_or(0)),
        Shape::Time => BadValue::Raw(go_time(&text(v))),
        Shape::Reference => BadValue::Raw(go_struct("core.ObjectReference", REFERENCE_FIELDS, v)),
        Shape::OptionalReference => match v {
            None => BadValue::Null,
            Some(r) => BadValue::Raw(go_struct("core.ObjectReference", REFERENCE_FIELDS, Some(r))),
        },
        Shape::Source => BadValue::Raw(go_struct("core.EventSource", SOURCE_FIELDS, v)),
    }
}

/// Go's `%#v` of a struct of strings: `core.EventSource{Component:"a", Host:""}`.
fn go_struct(name: &str, fields: &[(&str, &str)], v: Option<&Value>) -> String {
    let fields: Vec<String> = fields
        .iter()
        .map(|(go, json)| {
            let value = v.and_then(|v| v.get(json)).and_then(Value::as_str);
            format!(
                "{go}:{}",
                kas_apimachinery::golang::strconv::quote(value.unwrap_or(""))
            )
        })
        .collect();
    format!("{name}{{{}}}", fields.join(", "))
}

/// Go's `time.Time.String()` of a decoded `metav1.Time` in a UTC server:
/// `2024-01-02 03:04:05.123456 +0000 UTC`; absent is Go's zero time. A string that is no
/// RFC 3339 time (it would not have decoded upstream) is kept as it is.
fn go_time(s: &str) -> String {
    let t = if s.is_empty() {
        Time::from_unix(ZERO_UNIX, 0)
    } else {
        match parse_rfc3339(s) {
            Some(t) => t,
            None => return s.to_owned(),
        }
    };
    t.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A valid events.k8s.io event, in the stored (core/v1) form.
    fn new_style() -> Value {
        json!({
            "metadata": {"name": "pod-a.17a3b", "namespace": "default", "uid": "u1"},
            "involvedObject": {"kind": "Pod", "name": "pod-a", "namespace": "default"},
            "eventTime": "2024-01-01T00:00:00.000000Z",
            "reportingComponent": "example.com/ctl",
            "reportingInstance": "ctl-1",
            "action": "Start",
            "reason": "Started",
            "message": "started",
            "type": "Normal",
        })
    }

    fn fields(errs: &FieldErrors) -> Vec<&str> {
        errs.iter()
            .map(|c| c.field.as_deref().unwrap_or(""))
            .collect()
    }

    fn messages(errs: &FieldErrors) -> Vec<&str> {
        errs.iter()
            .map(|c| c.message.as_deref().unwrap_or(""))
            .collect()
    }

    #[test]
    fn strict_create_needs_the_new_fields_and_none_of_the_old() {
        assert!(validate_create(&new_style(), true).is_empty());
        let mut ev = new_style();
        ev["type"] = json!("Odd");
        ev["firstTimestamp"] = json!("2024-01-01T00:00:00Z");
        ev["count"] = json!(3);
        ev["source"] = json!({"component": "kubelet"});
        ev["series"] = json!({"count": 1});
        let errs = validate_create(&ev, true);
        assert_eq!(
            fields(&errs),
            [
                "series.count",
                "series.lastObservedTime",
                "type",
                "firstTimestamp",
                "count",
                "source"
            ]
        );
        assert_eq!(
            messages(&errs)[2],
            "Invalid value: \"\": has invalid value: Odd"
        );
        assert_eq!(messages(&errs)[3], "Invalid value: \"\": needs to be unset");
        // Through core/v1 the same event passes: only the legacy checks run there.
        assert!(validate_create(&ev, false).is_empty());
    }

    #[test]
    fn strict_create_requires_event_time_and_subdomain_names() {
        let mut ev = new_style();
        ev.as_object_mut().unwrap().remove("eventTime");
        ev["metadata"]["name"] = json!("Pod_A");
        // Without an eventTime it is an old-style event to the legacy checks, which pass.
        let errs = validate_create(&ev, true);
        assert_eq!(fields(&errs), ["metadata.name", "eventTime"]);
        assert_eq!(messages(&errs)[1], "Required value");
    }

    #[test]
    fn legacy_checks_read_the_core_reporting_component() {
        let mut ev = new_style();
        ev.as_object_mut().unwrap().remove("reportingComponent");
        let errs = validate_create(&ev, false);
        assert_eq!(
            fields(&errs),
            [
                "reportingController",
                "reportingController",
                "reportingController"
            ]
        );
        ev["reportingComponent"] = json!("example.com/ctl");
        ev["message"] = json!("m".repeat(1025));
        let errs = validate_create(&ev, false);
        assert_eq!(fields(&errs), ["message"]);
        assert_eq!(
            messages(&errs),
            ["Invalid value: \"\": can have at most 1024 characters"]
        );
    }

    #[test]
    fn strict_update_keeps_what_was_reported() {
        let old = new_style();
        let mut new = old.clone();
        new["series"] = json!({"count": 2, "lastObservedTime": "2024-01-01T00:01:00.000000Z"});
        assert!(validate_update(&new, &old, true).is_empty());
        new["involvedObject"]["name"] = json!("pod-b");
        new["reason"] = json!("Again");
        new["eventTime"] = json!("2024-01-01T00:00:01.5Z");
        new["related"] = json!({"kind": "Node", "name": "n"});
        new["metadata"]["uid"] = json!("u2");
        let errs = validate_update(&new, &old, true);
        assert_eq!(
            fields(&errs),
            [
                "metadata.uid",
                "involvedObject",
                "reason",
                "reason",
                "eventTime",
                "related"
            ]
        );
        let msgs = messages(&errs);
        assert_eq!(
            msgs[1],
            "Invalid value: core.ObjectReference{Kind:\"Pod\", Namespace:\"default\", \
             Name:\"pod-b\", UID:\"\", APIVersion:\"\", ResourceVersion:\"\", FieldPath:\"\"}: \
             field is immutable"
        );
        assert_eq!(msgs[2], "Invalid value: \"Again\": field is immutable");
        assert_eq!(
            msgs[4],
            "Invalid value: 2024-01-01 00:00:01.5 +0000 UTC: field is immutable"
        );
        // Only the legacy checks through core/v1.
        assert!(validate_update(&new, &old, false).is_empty());
    }

    #[test]
    fn times_compare_as_instants_and_print_as_go() {
        let a = json!("2024-01-01T00:00:00Z");
        let b = json!("2024-01-01T01:00:00+01:00");
        assert_eq!(
            go_value(Shape::Time, Some(&a)),
            go_value(Shape::Time, Some(&b))
        );
        assert_eq!(
            go_value(Shape::Time, None),
            BadValue::Raw("0001-01-01 00:00:00 +0000 UTC".into())
        );
        assert_eq!(go_value(Shape::OptionalReference, None), BadValue::Null);
        assert_eq!(
            go_value(Shape::Source, Some(&json!({"component": "k"}))),
            BadValue::Raw("core.EventSource{Component:\"k\", Host:\"\"}".into())
        );
    }

    #[test]
    fn a_changed_series_is_validated_again() {
        let mut old = new_style();
        old["series"] = json!({"count": 2, "lastObservedTime": "2024-01-01T00:01:00.000000Z"});
        let mut new = old.clone();
        new["series"]["count"] = json!(1);
        assert_eq!(fields(&validate_update(&new, &old, true)), ["series.count"]);
    }
}
