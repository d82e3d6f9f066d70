//! Upstream's pod quota evaluator (`pkg/quota/v1/evaluator/core/pods.go`): what a pod is
//! charged (`PodUsageFunc` over `PodRequests`/`PodLimits`), its scopes and the
//! cpu/memory `Constraints`.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use kas_apimachinery::golang::time;
use kas_apimachinery::resource::Quantity;
use serde_json::Value;

use super::resources::{self, ResourceList};

/// Upstream `podResources`.
pub const POD_RESOURCES: [&str; 11] = [
    "count/pods",
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
];

/// Upstream `validationSet`: quota'd names every container must request.
const VALIDATION_SET: [&str; 6] = [
    "cpu",
    "memory",
    "requests.cpu",
    "requests.memory",
    "limits.cpu",
    "limits.memory",
];

/// Upstream `helper.IsNativeResource`: unqualified or in `kubernetes.io/`.
fn is_native(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// Upstream `helper.IsExtendedResourceName`.
fn is_extended(name: &str) -> bool {
    if is_native(name) || name.starts_with("requests.") {
        return false;
    }
    kas_apimachinery::validation::is_qualified_name(&format!("requests.{name}")).is_empty()
}

/// Upstream `MatchingResources` for pods.
pub fn matching_resources(input: &[String]) -> Vec<String> {
    let mut result: Vec<String> = input
        .iter()
        .filter(|n| POD_RESOURCES.contains(&n.as_str()))
        .cloned()
        .collect();
    for name in input {
        if name.starts_with("hugepages-") || name.starts_with("requests.hugepages-") {
            result.push(name.clone());
        }
        if !is_native(name) && name.starts_with("requests.") {
            result.push(name.clone());
        }
    }
    result
}

/// Upstream `podComputeUsageHelper`.
fn compute_usage(requests: &ResourceList, limits: &ResourceList) -> ResourceList {
    let mut result = ResourceList::new();
    result.insert("pods".into(), Quantity::from_int(1));
    for (name, plain) in [("cpu", true), ("memory", true), ("ephemeral-storage", true)] {
        if let Some(q) = requests.get(name) {
            if plain {
                result.insert(name.into(), q.clone());
            }
            result.insert(format!("requests.{name}"), q.clone());
        }
        if let Some(q) = limits.get(name) {
            result.insert(format!("limits.{name}"), q.clone());
        }
    }
    for (name, q) in requests {
        if name.starts_with("hugepages-") {
            result.insert(name.clone(), q.clone());
            result.insert(format!("requests.{name}"), q.clone());
        }
        if is_extended(name) {
            result.insert(format!("requests.{name}"), q.clone());
        }
    }
    result
}

fn containers<'a>(pod: &'a Value, field: &str) -> impl Iterator<Item = &'a Value> {
    pod.pointer(&format!("/spec/{field}"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn container_list(container: &Value, which: &str) -> ResourceList {
    resources::from_json(container.pointer(&format!("/resources/{which}")))
}

/// Upstream `maxResourceList`: `list[k] = max(list[k], other[k])`.
fn max_into(list: &mut ResourceList, other: &ResourceList) {
    for (k, v) in other {
        match list.get_mut(k) {
            Some(q) if q.cmp_value(v) == Ordering::Less => *q = v.clone(),
            Some(_) => {}
            None => {
                list.insert(k.clone(), v.clone());
            }
        }
    }
}

/// The container status named `name`, among the pod's container and init container
/// statuses, when it reports resources.
fn status_of<'a>(pod: &'a Value, name: &str) -> Option<&'a Value> {
    ["containerStatuses", "initContainerStatuses"]
        .iter()
        .filter_map(|f| {
            pod.pointer(&format!("/status/{f}"))
                .and_then(Value::as_array)
        })
        .flatten()
        .find(|cs| cs.get("name").and_then(Value::as_str) == Some(name))
        .filter(|cs| cs.get("resources").is_some_and(|r| !r.is_null()))
}

/// Upstream `IsPodResizeInfeasible`.
fn resize_infeasible(pod: &Value) -> bool {
    pod.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("PodResizePending"))
        .is_some_and(|c| c.get("reason").and_then(Value::as_str) == Some("Infeasible"))
}

/// A container's requests or limits as upstream's aggregation counts them with in-place
/// resize on (`UseStatusResources`): with a status reporting resources, the larger of
/// the spec's, the status's and (for requests) the allocated ones; only the status's
/// when the resize is infeasible.
fn counted(pod: &Value, container: &Value, which: &str) -> ResourceList {
    let spec = container_list(container, which);
    let name = container.get("name").and_then(Value::as_str).unwrap_or("");
    let Some(status) = status_of(pod, name) else {
        return spec;
    };
    let reported = container_list(status, which);
    let infeasible = resize_infeasible(pod);
    let mut result = if infeasible { reported } else { spec };
    if !infeasible {
        max_into(&mut result, &container_list(status, which));
    }
    if which == "requests" {
        max_into(
            &mut result,
            &resources::from_json(status.get("allocatedResources")),
        );
    }
    result
}

/// Upstream `PodRequests`/`PodLimits` (`which` is `requests` or `limits`): the
/// containers' sum, sidecars added, at least the largest init container's, plus the
/// overhead (for limits, only of resources limited above zero).
fn pod_totals(pod: &Value, which: &str) -> ResourceList {
    let mut total = ResourceList::new();
    for c in containers(pod, "containers") {
        total = resources::add(&total, &counted(pod, c, which));
    }
    let mut sidecars = ResourceList::new();
    let mut init_max = ResourceList::new();
    for c in containers(pod, "initContainers") {
        let at_start = if c.get("restartPolicy").and_then(Value::as_str) == Some("Always") {
            let own = counted(pod, c, which);
            total = resources::add(&total, &own);
            sidecars = resources::add(&sidecars, &own);
            sidecars.clone()
        } else {
            resources::add(&container_list(c, which), &sidecars)
        };
        max_into(&mut init_max, &at_start);
    }
    max_into(&mut total, &init_max);
    let overhead = resources::from_json(pod.pointer("/spec/overhead"));
    if which == "requests" {
        total = resources::add(&total, &overhead);
    } else {
        for (k, v) in &overhead {
            if let Some(q) = total.get_mut(k).filter(|q| !q.is_zero()) {
                q.add(v);
            }
        }
    }
    total
}

/// Upstream `QuotaV1Pod`: a pod in a terminal phase, or past its deletion grace period,
/// is not charged compute resources.
fn charged(pod: &Value) -> bool {
    if matches!(
        pod.pointer("/status/phase").and_then(Value::as_str),
        Some("Failed" | "Succeeded")
    ) {
        return false;
    }
    let deleted = pod
        .pointer("/metadata/deletionTimestamp")
        .and_then(Value::as_str)
        .and_then(time::parse_rfc3339);
    let grace = pod
        .pointer("/metadata/deletionGracePeriodSeconds")
        .and_then(Value::as_i64);
    let (Some(deleted), Some(grace)) = (deleted, grace) else {
        return true;
    };
    let now = time::Time::from_system_time(std::time::SystemTime::now());
    (now.seconds, now.nanos) <= (deleted.seconds.saturating_add(grace), deleted.nanos)
}

/// Upstream `PodUsageFunc`.
pub fn usage(pod: &Value) -> ResourceList {
    let mut result = ResourceList::new();
    result.insert("count/pods".into(), Quantity::from_int(1));
    if !charged(pod) {
        return result;
    }
    let computed = compute_usage(&pod_totals(pod, "requests"), &pod_totals(pod, "limits"));
    resources::add(&result, &computed)
}

/// Upstream `qos.GetPodQOS(pod) == BestEffort`: the status's class, else no container
/// requests or limits a positive cpu or memory.
fn best_effort(pod: &Value) -> bool {
    if let Some(class) = pod.pointer("/status/qosClass").and_then(Value::as_str)
        && !class.is_empty()
    {
        return class == "BestEffort";
    }
    let zero = Quantity::from_int(0);
    !containers(pod, "containers")
        .chain(containers(pod, "initContainers"))
        .any(|c| {
            ["requests", "limits"].iter().any(|which| {
                let list = container_list(c, which);
                ["cpu", "memory"].iter().any(|r| {
                    list.get(*r)
                        .is_some_and(|q| q.cmp_value(&zero) == Ordering::Greater)
                })
            })
        })
}

fn terminating(pod: &Value) -> bool {
    pod.pointer("/spec/activeDeadlineSeconds")
        .and_then(Value::as_i64)
        .is_some_and(|s| s >= 0)
}

/// Upstream `usesCrossNamespacePodAffinity`.
fn cross_namespace_affinity(pod: &Value) -> bool {
    let cross = |term: &Value| {
        term.get("namespaces")
            .and_then(Value::as_array)
            .is_some_and(|n| !n.is_empty())
            || term.get("namespaceSelector").is_some_and(|s| !s.is_null())
    };
    ["podAffinity", "podAntiAffinity"].iter().any(|kind| {
        let Some(affinity) = pod.pointer(&format!("/spec/affinity/{kind}")) else {
            return false;
        };
        let required = affinity
            .get("requiredDuringSchedulingIgnoredDuringExecution")
            .and_then(Value::as_array);
        let preferred = affinity
            .get("preferredDuringSchedulingIgnoredDuringExecution")
            .and_then(Value::as_array);
        required.into_iter().flatten().any(cross)
            || preferred
                .into_iter()
                .flatten()
                .filter_map(|w| w.get("podAffinityTerm"))
                .any(cross)
    })
}

/// A scope selector requirement: scope name, operator, values.
pub struct ScopeRequirement {
    pub scope: String,
    pub operator: String,
    pub values: Vec<String>,
}

/// Upstream `podMatchesScopeFunc`.
pub fn matches_scope(req: &ScopeRequirement, pod: &Value) -> bool {
    match req.scope.as_str() {
        "Terminating" => terminating(pod),
        "NotTerminating" => !terminating(pod),
        "BestEffort" => best_effort(pod),
        "NotBestEffort" => !best_effort(pod),
        "PriorityClass" => {
            let class = pod
                .pointer("/spec/priorityClassName")
                .and_then(Value::as_str)
                .unwrap_or("");
            let present = !class.is_empty();
            match req.operator.as_str() {
                "Exists" => present,
                "DoesNotExist" => !present,
                "In" => present && req.values.iter().any(|v| v == class),
                "NotIn" => !present || !req.values.iter().any(|v| v == class),
                _ => false,
            }
        }
        "CrossNamespacePodAffinity" => cross_namespace_affinity(pod),
        _ => false,
    }
}

/// Upstream `Constraints`: with cpu or memory quota'd, every container must set them.
pub fn constraints(required: &[String], pod: &Value) -> Result<(), String> {
    let required: BTreeSet<&str> = required
        .iter()
        .map(String::as_str)
        .filter(|r| VALIDATION_SET.contains(r))
        .collect();
    if required.is_empty() {
        return Ok(());
    }
    let mut missing: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for c in containers(pod, "containers").chain(containers(pod, "initContainers")) {
        let usage = compute_usage(&container_list(c, "requests"), &container_list(c, "limits"));
        let name = c.get("name").and_then(Value::as_str).unwrap_or("");
        for r in &required {
            if !usage.contains_key(*r) {
                missing.entry(r).or_default().insert(name.to_owned());
            }
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    let parts: Vec<String> = missing
        .iter()
        .map(|(r, names)| {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            format!("{r} for: {}", names.join(","))
        })
        .collect();
    Err(format!("must specify {}", parts.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(containers: Value) -> Value {
        json!({"metadata": {"name": "p"}, "spec": {"containers": containers}})
    }

    #[test]
    fn usage_sums_containers_and_takes_the_largest_init_container() {
        let mut p = pod(json!([
            {"name": "a", "resources": {"requests": {"cpu": "100m", "memory": "1Gi", "example.com/gpu": "1"},
                                        "limits": {"cpu": "200m"}}},
            {"name": "b", "resources": {"requests": {"cpu": "200m"}}}
        ]));
        p["spec"]["initContainers"] = json!([
            {"name": "i", "resources": {"requests": {"cpu": "1"}}}
        ]);
        assert_eq!(
            resources::pretty_print(&usage(&p)),
            "count/pods=1,cpu=1,limits.cpu=200m,memory=1Gi,pods=1,requests.cpu=1,requests.example.com/gpu=1,requests.memory=1Gi"
        );
        // A resized container counts the larger of spec, status and allocation.
        p["status"] = json!({"containerStatuses": [{"name": "b",
            "resources": {"requests": {"cpu": "1500m"}}, "allocatedResources": {"cpu": "2"}}]});
        assert_eq!(
            resources::pretty_print(&pod_totals(&p, "requests")),
            "cpu=2100m,example.com/gpu=1,memory=1Gi"
        );
        p["status"] = json!({"phase": "Succeeded"});
        assert_eq!(resources::pretty_print(&usage(&p)), "count/pods=1");
    }

    #[test]
    fn scopes_and_constraints() {
        let p = pod(json!([{"name": "a"}, {"name": "b", "resources": {"requests": {"cpu": "1"}}}]));
        let req = |scope: &str, op: &str, values: &[&str]| ScopeRequirement {
            scope: scope.into(),
            operator: op.into(),
            values: values.iter().map(|v| v.to_string()).collect(),
        };
        assert!(!matches_scope(&req("BestEffort", "Exists", &[]), &p));
        assert!(matches_scope(&req("NotTerminating", "Exists", &[]), &p));
        assert!(matches_scope(&req("PriorityClass", "NotIn", &["high"]), &p));
        assert!(!matches_scope(&req("PriorityClass", "In", &["high"]), &p));
        assert_eq!(
            constraints(
                &["requests.cpu".into(), "limits.memory".into(), "pods".into()],
                &p
            ),
            Err("must specify limits.memory for: a,b; requests.cpu for: a".into())
        );
    }
}
