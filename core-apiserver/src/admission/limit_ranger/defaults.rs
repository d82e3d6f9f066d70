//! Upstream `PodMutateLimitFunc`: the default requests and limits of a LimitRange's
//! Container items on the containers of a created pod, and the annotation saying what
//! was set.

use serde_json::{Map, Value};

use super::rules::{item_type, items};

/// Upstream `limitRangerAnnotation`.
pub const ANNOTATION: &str = "kubernetes.io/limit-ranger";

/// Upstream `defaultContainerResourceRequirements`: the raw `defaultRequest` and
/// `default` of the Container items (a later item's value wins).
fn container_defaults(limit_range: &Value) -> (Map<String, Value>, Map<String, Value>) {
    let (mut requests, mut limits) = (Map::new(), Map::new());
    for item in items(limit_range) {
        if item_type(item) != "Container" {
            continue;
        }
        for (key, into) in [("defaultRequest", &mut requests), ("default", &mut limits)] {
            if let Some(m) = item.get(key).and_then(Value::as_object) {
                into.extend(m.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
    }
    (requests, limits)
}

/// Upstream `mergeContainerResources`: the defaults a container lacks, and the notes of
/// what was set.
fn merge_container(
    container: &mut Value,
    requests: &Map<String, Value>,
    limits: &Map<String, Value>,
    prefix: &str,
    notes: &mut Vec<String>,
) {
    let name = container
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let Some(c) = container.as_object_mut() else {
        return;
    };
    let mut set = |key: &str, defaults: &Map<String, Value>| -> Vec<String> {
        let have = |k: &str| {
            c.get("resources")
                .and_then(|r| r.get(key))
                .and_then(|l| l.get(k))
                .is_some()
        };
        let mut added: Vec<String> = defaults.keys().filter(|k| !have(k)).cloned().collect();
        if added.is_empty() {
            return added;
        }
        let resources = c
            .entry("resources")
            .or_insert_with(|| Value::Object(Map::new()));
        if !resources.is_object() {
            *resources = Value::Object(Map::new());
        }
        if let Some(resources) = resources.as_object_mut() {
            let target = resources
                .entry(key)
                .or_insert_with(|| Value::Object(Map::new()));
            if !target.is_object() {
                *target = Value::Object(Map::new());
            }
            if let Some(target) = target.as_object_mut() {
                for k in &added {
                    target.insert(k.clone(), defaults[k].clone());
                }
            }
        }
        added.sort();
        added
    };
    let set_limits = set("limits", limits);
    let set_requests = set("requests", requests);
    if !set_requests.is_empty() {
        notes.push(format!(
            "{} request for {prefix} {name}",
            set_requests.join(", ")
        ));
    }
    if !set_limits.is_empty() {
        notes.push(format!(
            "{} limit for {prefix} {name}",
            set_limits.join(", ")
        ));
    }
}

/// Upstream `PodMutateLimitFunc`: the Container defaults of `limit_range` on every
/// container and init container lacking them, and the annotation saying what was set.
pub fn mutate_pod(limit_range: &Value, pod: &mut Value) {
    let (requests, limits) = container_defaults(limit_range);
    let mut notes = Vec::new();
    for (key, prefix) in [
        ("containers", "container"),
        ("initContainers", "init container"),
    ] {
        let Some(list) = pod
            .pointer_mut(&format!("/spec/{key}"))
            .and_then(Value::as_array_mut)
        else {
            continue;
        };
        for c in list {
            merge_container(c, &requests, &limits, prefix, &mut notes);
        }
    }
    if notes.is_empty() {
        return;
    }
    let Some(meta) = pod.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let annotations = meta
        .entry("annotations")
        .or_insert_with(|| Value::Object(Map::new()));
    if !annotations.is_object() {
        *annotations = Value::Object(Map::new());
    }
    if let Some(a) = annotations.as_object_mut() {
        a.insert(
            ANNOTATION.into(),
            Value::String(format!("LimitRanger plugin set: {}", notes.join("; "))),
        );
    }
}
