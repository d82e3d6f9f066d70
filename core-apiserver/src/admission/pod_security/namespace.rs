//! Upstream `EvaluatePodsInNamespace`: when a namespace update tightens the enforce level,
//! the namespace's existing pods are evaluated against it (at most 3000, within one
//! second, one pod per controller first) and the violations come back as warnings.

use std::time::{Duration, Instant};

use kas_apimachinery::golang::strconv::quote;
use kas_registry::rest::options::ListOptions;
use serde_json::Value;

use super::PodSecurity;
use super::api::LevelVersion;
use super::policy::{Aggregate, evaluate_pod};

/// Upstream `defaultNamespaceMaxPodsToCheck` and `defaultNamespacePodCheckTimeout`.
const NAMESPACE_MAX_PODS_TO_CHECK: usize = 3000;
const NAMESPACE_POD_CHECK_TIMEOUT: Duration = Duration::from_secs(1);

impl PodSecurity {
    /// Upstream `EvaluatePodsInNamespace`: the warnings for the namespace's pods under the
    /// new enforce level, one line per distinct set of reasons.
    pub(super) async fn evaluate_pods_in_namespace(
        &self,
        namespace: &str,
        enforce: LevelVersion,
    ) -> Vec<String> {
        let deadline = Instant::now() + NAMESPACE_POD_CHECK_TIMEOUT;
        let listed = match &self.pods {
            Some(store) => {
                let opts = ListOptions {
                    resource_version: Some("0".into()),
                    ..Default::default()
                };
                store.list(namespace, &opts, Default::default()).await
            }
            None => return Vec::new(),
        };
        let pods: Option<Vec<Value>> = listed
            .ok()
            .and_then(|l| l.items.iter().map(|i| i.value().ok()).collect());
        let Some(pods) = pods else {
            return vec!["failed to list pods while checking new PodSecurity enforce level".into()];
        };
        namespace_warnings(namespace, enforce, prioritize_pods(pods), deadline)
    }
}

/// The warnings of `EvaluatePodsInNamespace` for pods already prioritized.
pub(super) fn namespace_warnings(
    namespace: &str,
    enforce: LevelVersion,
    mut pods: Vec<Value>,
    deadline: Instant,
) -> Vec<String> {
    let total = pods.len();
    pods.truncate(NAMESPACE_MAX_PODS_TO_CHECK);
    let mut checked = pods.len();
    // reason -> (lexically first pod name, pod count), in order of first appearance.
    let mut seen: Vec<(String, String, usize)> = Vec::new();
    for (i, pod) in pods.iter().enumerate() {
        let spec = pod.get("spec").unwrap_or(&Value::Null);
        let metadata = pod.get("metadata").unwrap_or(&Value::Null);
        let result = Aggregate::of(evaluate_pod(enforce, metadata, spec));
        if !result.allowed() {
            let reason = result.reason();
            let name = kas_registry::meta::name(pod).to_owned();
            match seen.iter_mut().find(|(r, _, _)| *r == reason) {
                Some((_, first, count)) => {
                    if name < *first {
                        *first = name;
                    }
                    *count += 1;
                }
                None => seen.push((reason, name, 1)),
            }
        }
        if Instant::now() >= deadline {
            checked = i + 1;
            break;
        }
    }
    let mut warnings = Vec::new();
    if checked < total {
        warnings.push(format!(
            "new PodSecurity enforce level only checked against the first {checked} of {total} existing pods"
        ));
    }
    if !seen.is_empty() {
        warnings.push(format!(
            "existing pods in namespace {} violate the new PodSecurity enforce level {}",
            quote(namespace),
            quote(&enforce.to_string())
        ));
    }
    let mut lines: Vec<String> = seen
        .into_iter()
        .map(|(reason, name, count)| match count {
            1 => format!("{name}: {reason}"),
            2 => format!("{name} (and 1 other pod): {reason}"),
            n => format!("{name} (and {} other pods): {reason}", n - 1),
        })
        .collect();
    lines.sort();
    warnings.extend(lines);
    warnings
}

/// Upstream `prioritizePods`: one pod per controller first, the other replicas after.
pub(super) fn prioritize_pods(pods: Vec<Value>) -> Vec<Value> {
    let mut first = Vec::with_capacity(pods.len());
    let mut duplicates = Vec::new();
    let mut controllers: Vec<String> = Vec::new();
    for pod in pods {
        let controller = pod
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
            .map(|r| {
                r.get("uid")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned()
            });
        match controller {
            Some(uid) if controllers.contains(&uid) => duplicates.push(pod),
            Some(uid) => {
                controllers.push(uid);
                first.push(pod);
            }
            None => first.push(pod),
        }
    }
    first.extend(duplicates);
    first
}
