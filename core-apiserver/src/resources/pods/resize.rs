//! `pods/resize`, after upstream's `ResizeREST` and `podResizeStrategy` (in-place pod
//! vertical scaling, beta and on in 1.33): a write of the subresource changes only the
//! containers' (and sidecars') `resources` and `resizePolicy` (`dropNonResizeUpdates`),
//! and `ValidatePodResize` decides what may change: cpu and memory only, no request or
//! limit removed, the same QoS class, no memory limit decreased or added unless the
//! container restarts for memory, no static, Windows or pod-level-resources pod.

use kas_apimachinery::resource::Quantity;
use kas_apimachinery::validation::field::{self, Path};
use kas_registry::descriptor::SubresourceHandler;
use kas_registry::{Subresource, Verb};
use serde_json::{Map, Value};

pub const RESIZE: Subresource = Subresource {
    name: "resize",
    verbs: &[Verb::Get, Verb::Patch, Verb::Update],
    kind: None,
    handler: SubresourceHandler::StrategyUpdate,
};

const MIRROR_ANNOTATION: &str = "kubernetes.io/config.mirror";

fn containers<'a>(pod: &'a Value, kind: &str) -> &'a [Value] {
    pod.pointer(&format!("/spec/{kind}"))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn name(container: &Value) -> &str {
    container.get("name").and_then(Value::as_str).unwrap_or("")
}

/// An init container that keeps running beside the others (a sidecar).
fn restartable(container: &Value) -> bool {
    container.get("restartPolicy").and_then(Value::as_str) == Some("Always")
}

/// Upstream `dropNonResizeUpdatesForContainers`: the stored containers with the written
/// resources and resize policies; `None` when a container was added, removed, renamed
/// or moved (the written ones then go to validation as they are).
fn merged_containers(new: &[Value], old: &[Value]) -> Option<Vec<Value>> {
    if new.is_empty() {
        return Some(Vec::new());
    }
    let mut merged = old.to_vec();
    for (target, written) in merged.iter_mut().zip(new) {
        if name(target) != name(written) {
            return None;
        }
        for key in ["resources", "resizePolicy"] {
            match written.get(key) {
                Some(v) => target[key] = v.clone(),
                None => {
                    if let Some(map) = target.as_object_mut() {
                        map.remove(key);
                    }
                }
            }
        }
    }
    Some(merged)
}

/// Upstream `dropNonResizeUpdates`: the stored pod with only the resize fields written.
pub fn merge(new: &Value, old: &Value) -> Value {
    let kinds = ["containers", "initContainers"];
    if kinds
        .iter()
        .any(|k| containers(new, k).len() != containers(old, k).len())
    {
        return new.clone();
    }
    let mut merged = old.clone();
    for kind in kinds {
        let Some(list) = merged_containers(containers(new, kind), containers(old, kind)) else {
            return new.clone();
        };
        if let Some(spec) = merged.get_mut("spec").and_then(Value::as_object_mut)
            && spec.contains_key(kind)
        {
            spec.insert(kind.into(), Value::Array(list));
        }
    }
    merged
}

/// Whether two resource lists hold the same quantities (upstream's semantic equality).
fn same_list(a: Option<&Value>, b: Option<&Value>) -> bool {
    let map = |v: Option<&Value>| v.and_then(Value::as_object).cloned().unwrap_or_default();
    let (a, b) = (map(a), map(b));
    a.len() == b.len()
        && a.iter().all(|(k, va)| {
            b.get(k).is_some_and(|vb| {
                match (
                    va.as_str().and_then(|s| Quantity::parse(s).ok()),
                    vb.as_str().and_then(|s| Quantity::parse(s).ok()),
                ) {
                    (Some(x), Some(y)) => x.cmp_value(&y).is_eq(),
                    _ => va == vb,
                }
            })
        })
}

/// Whether two containers are the same, resources compared by value.
fn same_container(a: &Value, b: &Value) -> bool {
    let strip = |c: &Value| {
        let mut c = c.clone();
        if let Some(map) = c.as_object_mut() {
            map.remove("resources");
        }
        c
    };
    let res = |c: &Value, k: &str| c.pointer(&format!("/resources/{k}")).cloned();
    strip(a) == strip(b)
        && ["requests", "limits", "claims"].iter().all(|k| {
            if *k == "claims" {
                res(a, k) == res(b, k)
            } else {
                same_list(res(a, k).as_ref(), res(b, k).as_ref())
            }
        })
}

/// Upstream `dropCPUMemoryResourcesFromContainer`: `container` with the old cpu and
/// memory values in place of the written ones.
fn without_cpu_memory_changes(container: &Value, old: &Value) -> Value {
    let mut c = container.clone();
    let mut resources = Map::new();
    for list in ["limits", "requests"] {
        let Some(old_list) = old
            .pointer(&format!("/resources/{list}"))
            .and_then(Value::as_object)
        else {
            continue;
        };
        let mut munged = container
            .pointer(&format!("/resources/{list}"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        for name in ["cpu", "memory"] {
            munged.remove(name);
            if let Some(v) = old_list.get(name) {
                munged.insert(name.into(), v.clone());
            }
        }
        resources.insert(list.into(), Value::Object(munged));
    }
    c["resources"] = Value::Object(resources);
    c
}

/// Upstream `resourcesRemoved`.
fn removed(new: Option<&Value>, old: Option<&Value>) -> bool {
    let keys = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    };
    let (n, o) = (keys(new), keys(old));
    o.len() > n.len() || o.iter().any(|k| !n.contains(k))
}

/// Upstream `validateContainerResize`.
fn validate_container(new: &Value, old: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let list = |c: &Value, k: &str| c.pointer(&format!("/resources/{k}")).cloned();
    if removed(
        list(new, "requests").as_ref(),
        list(old, "requests").as_ref(),
    ) {
        errs.push(field::forbidden(
            &path.child("requests"),
            "resource requests cannot be removed",
        ));
    }
    if removed(list(new, "limits").as_ref(), list(old, "limits").as_ref()) {
        errs.push(field::forbidden(
            &path.child("limits"),
            "resource limits cannot be removed",
        ));
    }
    let memory_policy = new
        .get("resizePolicy")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|p| p.get("resourceName").and_then(Value::as_str) == Some("memory"))
        .and_then(|p| p.get("restartPolicy").and_then(Value::as_str))
        .unwrap_or("");
    if matches!(memory_policy, "NotRequired" | "") {
        let limit = |c: &Value| {
            c.pointer("/resources/limits/memory")
                .and_then(Value::as_str)
                .and_then(|s| Quantity::parse(s).ok())
        };
        let at = path.child("limits").key("memory");
        match (limit(new), limit(old)) {
            (Some(n), Some(o)) if n.cmp_value(&o).is_lt() => errs.push(field::forbidden(
                &at,
                "memory limits cannot be decreased unless resizePolicy is RestartContainer",
            )),
            (Some(_), None) => errs.push(field::forbidden(
                &at,
                "memory limits cannot be added unless resizePolicy is RestartContainer",
            )),
            _ => {}
        }
    }
    errs
}

/// Upstream `isPodResizeRequestSupported`: a running container must report its
/// resources (its node supports resizing).
fn resize_supported(old: &Value) -> bool {
    let statuses = old
        .pointer("/status/containerStatuses")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    match statuses
        .iter()
        .find(|s| s.pointer("/state/running").is_some())
    {
        Some(s) => s.get("resources").is_some_and(|r| !r.is_null()),
        None => true,
    }
}

/// The part of upstream `ValidatePodResize` after the metadata and spec checks.
pub fn validate(new: &Value, old: &Value) -> Vec<field::Error> {
    let root = Path::new("");
    let pod_level = |p: &Value| {
        ["requests", "limits"].iter().any(|k| {
            p.pointer(&format!("/spec/resources/{k}"))
                .and_then(Value::as_object)
                .is_some_and(|m| !m.is_empty())
        })
    };
    if pod_level(old) || pod_level(new) {
        return vec![field::forbidden(
            &root,
            "pods with pod-level resources cannot be resized",
        )];
    }
    if old
        .pointer(&format!(
            "/metadata/annotations/{}",
            MIRROR_ANNOTATION.replace('/', "~1")
        ))
        .is_some()
    {
        return vec![field::forbidden(&root, "static pods cannot be resized")];
    }
    if old.pointer("/spec/os/name").and_then(Value::as_str) == Some("windows") {
        return vec![field::forbidden(&root, "windows pods cannot be resized")];
    }
    let spec = Path::new("spec");
    let mut errs = Vec::new();
    let old_qos = old
        .pointer("/status/qosClass")
        .and_then(Value::as_str)
        .filter(|q| !q.is_empty())
        .unwrap_or_else(|| super::qos_class(old));
    if old_qos != super::qos_class(new) {
        let shown = new
            .pointer("/status/qosClass")
            .and_then(Value::as_str)
            .unwrap_or("");
        errs.push(field::invalid(
            &spec,
            shown,
            "Pod QOS Class may not change as a result of resizing",
        ));
    }
    if !resize_supported(old) {
        errs.push(field::forbidden(
            &spec,
            "Pod running on node without support for resize",
        ));
    }
    let (new_init, old_init) = (
        containers(new, "initContainers"),
        containers(old, "initContainers"),
    );
    for (ix, old_c) in old_init.iter().enumerate() {
        if let Some(new_c) = new_init.get(ix).filter(|_| restartable(old_c)) {
            let at = spec.child("initContainers").index(ix).child("resources");
            errs.extend(validate_container(new_c, old_c, &at));
        }
    }
    let (new_main, old_main) = (containers(new, "containers"), containers(old, "containers"));
    for (ix, old_c) in old_main.iter().enumerate() {
        if let Some(new_c) = new_main.get(ix) {
            let at = spec.child("containers").index(ix).child("resources");
            errs.extend(validate_container(new_c, old_c, &at));
        }
    }
    let mut munged = new.get("spec").cloned().unwrap_or(Value::Null);
    let mut munged_main = Vec::new();
    for (ix, c) in new_main.iter().enumerate() {
        let dropped = match old_main.get(ix) {
            Some(o) => without_cpu_memory_changes(c, o),
            None => c.clone(),
        };
        if old_main
            .get(ix)
            .is_none_or(|o| !same_container(&dropped, o))
        {
            errs.push(field::forbidden(
                &spec,
                "only cpu and memory resources are mutable",
            ));
        }
        munged_main.push(dropped);
    }
    let mut munged_init = Vec::new();
    for (ix, c) in new_init.iter().enumerate() {
        let old_c = old_init.get(ix);
        if restartable(c) {
            let dropped = match old_c {
                Some(o) => without_cpu_memory_changes(c, o),
                None => c.clone(),
            };
            if old_c.is_none_or(|o| !same_container(&dropped, o)) {
                errs.push(field::forbidden(
                    &spec,
                    "only cpu and memory resources for sidecar containers are mutable",
                ));
            }
            munged_init.push(dropped);
        } else {
            if old_c.is_none_or(|o| !same_container(c, o)) {
                errs.push(field::forbidden(
                    &spec,
                    "resources for non-sidecar init containers are immutable",
                ));
            }
            munged_init.push(c.clone());
        }
    }
    if !errs.is_empty() {
        return errs;
    }
    if let Some(map) = munged.as_object_mut() {
        if map.contains_key("containers") {
            map.insert("containers".into(), Value::Array(munged_main));
        }
        if map.contains_key("initContainers") {
            map.insert("initContainers".into(), Value::Array(munged_init));
        }
    }
    let old_spec = old.get("spec").cloned().unwrap_or(Value::Null);
    if !same_spec(&munged, &old_spec) {
        errs.push(field::forbidden(
            &spec,
            "only cpu and memory resources are mutable",
        ));
    }
    errs
}

/// Whether two specs are the same, container resources compared by value.
fn same_spec(a: &Value, b: &Value) -> bool {
    let strip = |s: &Value| {
        let mut s = s.clone();
        if let Some(map) = s.as_object_mut() {
            map.remove("containers");
            map.remove("initContainers");
        }
        s
    };
    let pairs = |k: &str| {
        let (x, y) = (
            a.get(k)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            b.get(k)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
        );
        x.len() == y.len() && x.iter().zip(&y).all(|(p, q)| same_container(p, q))
    };
    strip(a) == strip(b) && pairs("containers") && pairs("initContainers")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(resources: Value) -> Value {
        json!({
            "metadata": {"name": "p", "namespace": "ns"},
            "spec": {"containers": [{"name": "c", "image": "nginx", "resources": resources}]},
            "status": {"qosClass": super::super::qos_class(&json!({
                "spec": {"containers": [{"name": "c", "resources": resources}]}}))},
        })
    }

    fn messages(errs: &[field::Error]) -> Vec<String> {
        errs.iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn only_resources_are_taken_from_the_write() {
        let old = pod(json!({"requests": {"cpu": "100m"}}));
        let mut new = pod(json!({"requests": {"cpu": "200m"}}));
        new["spec"]["containers"][0]["image"] = json!("evil");
        new["metadata"]["labels"] = json!({"a": "b"});
        let merged = merge(&new, &old);
        assert_eq!(merged["spec"]["containers"][0]["image"], "nginx");
        assert_eq!(
            merged["spec"]["containers"][0]["resources"]["requests"]["cpu"],
            "200m"
        );
        assert!(merged["metadata"].get("labels").is_none());
        assert!(
            validate(&merged, &old).is_empty(),
            "{:?}",
            messages(&validate(&merged, &old))
        );
    }

    #[test]
    fn upstreams_resize_rules() {
        let guaranteed = pod(
            json!({"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}),
        );
        let only_requests = merge(
            &pod(
                json!({"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}),
            ),
            &guaranteed,
        );
        assert_eq!(
            messages(&validate(&only_requests, &guaranteed)),
            [
                "spec: Invalid value: \"Guaranteed\": Pod QOS Class may not change as a result of resizing"
            ]
        );
        let burstable =
            pod(json!({"requests": {"cpu": "100m", "memory": "1Gi"}, "limits": {"memory": "2Gi"}}));
        let smaller = merge(
            &pod(
                json!({"requests": {"cpu": "100m", "memory": "1Gi"}, "limits": {"memory": "1Gi"}}),
            ),
            &burstable,
        );
        assert_eq!(
            messages(&validate(&smaller, &burstable)),
            [
                "spec.containers[0].resources.limits[memory]: Forbidden: memory limits cannot be decreased unless resizePolicy is RestartContainer"
            ]
        );
        let gone = merge(
            &pod(json!({"requests": {"cpu": "100m", "memory": "1Gi"}})),
            &burstable,
        );
        assert_eq!(
            messages(&validate(&gone, &burstable)),
            ["spec.containers[0].resources.limits: Forbidden: resource limits cannot be removed"]
        );
        let storage = merge(
            &pod(
                json!({"requests": {"cpu": "100m", "memory": "1Gi", "ephemeral-storage": "1Gi"}, "limits": {"memory": "2Gi"}}),
            ),
            &burstable,
        );
        assert_eq!(
            messages(&validate(&storage, &burstable)),
            ["spec: Forbidden: only cpu and memory resources are mutable"]
        );
    }
}
