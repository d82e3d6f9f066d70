//! The PodDisruptionBudget half of upstream's `EvictionREST` (`pkg/registry/core/pod/
//! storage/eviction.go`): before an eviction deletes a pod, the one budget covering it
//! must allow a disruption, which the eviction then charges (`disruptionsAllowed - 1`,
//! the pod in `disruptedPods`) through the budget's `status`. Without a disruption
//! controller a new budget was never observed, so it refuses with upstream's 429 "still
//! being processed", as kube-apiserver alone does.

use async_trait::async_trait;
use kas_apimachinery::labels::from_label_selector;
use kas_apimachinery::{Status, StatusCause};
use kas_registry::hooks::{DeleteGuard, GuardedDelete};
use kas_registry::rest::options::{ListOptions, WriteOptions};
use kas_registry::store::Store;
use serde_json::{Value, json};

/// Upstream's `MaxDisruptedPodSize`.
const MAX_DISRUPTED_PODS: usize = 2000;
/// Upstream retries a budget update on conflict (`EvictionsRetry`).
const ATTEMPTS: usize = 5;
const EVICTION_REFUSED: &str = "Cannot evict pod as it would violate the pod's disruption budget.";

/// The guard on pods' evictions, reading and charging budgets through their store.
pub struct DisruptionGuard {
    pub budgets: Store,
}

fn int(v: &Value, pointer: &str) -> i64 {
    v.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}

fn phase(pod: &Value) -> &str {
    pod.pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn deleting(pod: &Value) -> bool {
    pod.pointer("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null())
}

/// Upstream `canIgnorePDB`: the pod already is no disruption to protect against.
fn can_ignore_budgets(pod: &Value) -> bool {
    matches!(phase(pod), "Succeeded" | "Failed" | "Pending") || deleting(pod)
}

/// Upstream `podutil.IsPodReady`.
fn ready(pod: &Value) -> bool {
    pod.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True")
}

/// Upstream's 429 with a `DisruptionBudget` cause.
fn too_many_requests(message: &str, retry_after: i32) -> kas_registry::Error {
    let mut status = Status::too_many_requests(EVICTION_REFUSED, retry_after);
    if let Some(details) = status.details.as_mut() {
        details.causes.push(StatusCause {
            reason: Some("DisruptionBudget".to_owned()),
            message: Some(message.to_owned()),
            field: None,
        });
    }
    status.into()
}

/// Upstream `createTooManyRequestsError`.
fn still_processing(name: &str) -> kas_registry::Error {
    too_many_requests(
        &format!("The disruption budget {name} is still being processed by the server."),
        10,
    )
}

/// Upstream `UpdateDisruptionAllowedCondition` through `meta.SetStatusCondition`.
fn set_disruption_allowed(budget: &mut Value, now: &str) {
    let allowed = int(budget, "/status/disruptionsAllowed") > 0;
    let (status, reason) = if allowed {
        ("True", "SufficientPods")
    } else {
        ("False", "InsufficientPods")
    };
    let observed = int(budget, "/status/observedGeneration");
    let conditions = &mut budget["status"]["conditions"];
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    let list = conditions.as_array_mut().expect("an array");
    match list.iter_mut().find(|c| c["type"] == "DisruptionAllowed") {
        Some(c) => {
            if c["status"] != status {
                c["status"] = json!(status);
                c["lastTransitionTime"] = json!(now);
            }
            c["reason"] = json!(reason);
            c["message"] = json!("");
            c["observedGeneration"] = json!(observed);
        }
        None => list.push(json!({
            "type": "DisruptionAllowed",
            "status": status,
            "reason": reason,
            "message": "",
            "observedGeneration": observed,
            "lastTransitionTime": now,
        })),
    }
}

impl DisruptionGuard {
    /// Upstream `getPodDisruptionBudgets`: the budgets whose selector (not empty) selects
    /// the pod.
    async fn covering(&self, pod: &Value) -> kas_registry::Result<Vec<Value>> {
        let namespace = kas_registry::meta::namespace(pod);
        let listed = self
            .budgets
            .list(namespace, &ListOptions::default(), Default::default())
            .await?;
        let mut found = Vec::new();
        for item in &listed.items {
            let budget = item.value()?;
            let selector = budget.pointer("/spec/selector").unwrap_or(&Value::Null);
            let Ok(selector) = from_label_selector(selector) else {
                continue;
            };
            if selector.is_empty() || !selector.matches_json(pod) {
                continue;
            }
            found.push(budget);
        }
        Ok(found)
    }

    /// Upstream `checkAndDecrement`, retried on conflict with the budget read again.
    async fn charge(
        &self,
        pod_name: &str,
        budget: Value,
        dry_run: bool,
    ) -> kas_registry::Result<()> {
        let namespace = kas_registry::meta::namespace(&budget).to_owned();
        let name = kas_registry::meta::name(&budget).to_owned();
        let mut budget = budget;
        for attempt in 1..=ATTEMPTS {
            if int(&budget, "/status/observedGeneration") < int(&budget, "/metadata/generation") {
                return Err(still_processing(&name));
            }
            let allowed = int(&budget, "/status/disruptionsAllowed");
            if allowed < 0 {
                return Err(Status::forbidden(
                    "policy",
                    "poddisruptionbudget",
                    &name,
                    "pdb disruptions allowed is negative",
                )
                .into());
            }
            let disrupted = budget
                .pointer("/status/disruptedPods")
                .and_then(Value::as_object)
                .map_or(0, |m| m.len());
            if disrupted > MAX_DISRUPTED_PODS {
                return Err(Status::forbidden(
                    "policy",
                    "poddisruptionbudget",
                    &name,
                    "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
                )
                .into());
            }
            if allowed == 0 {
                return Err(too_many_requests(
                    &format!(
                        "The disruption budget {name} needs {} healthy pods and has {} currently",
                        int(&budget, "/status/desiredHealthy"),
                        int(&budget, "/status/currentHealthy"),
                    ),
                    0,
                ));
            }
            let now = kas_registry::meta::rfc3339(std::time::SystemTime::now());
            budget["status"]["disruptionsAllowed"] = json!(allowed - 1);
            if allowed - 1 == 0 {
                set_disruption_allowed(&mut budget, &now);
            }
            if dry_run {
                return Ok(());
            }
            let disrupted = &mut budget["status"]["disruptedPods"];
            if !disrupted.is_object() {
                *disrupted = json!({});
            }
            disrupted[pod_name] = json!(now);
            let written = self
                .budgets
                .update_subresource(
                    &namespace,
                    &name,
                    "status",
                    budget.clone(),
                    &WriteOptions::default(),
                )
                .await;
            match written {
                Ok(_) => return Ok(()),
                Err(e) if e.to_status().code == 409 && attempt < ATTEMPTS => {
                    budget = self.budgets.get(&namespace, &name, None).await?.value()?;
                }
                Err(e) if e.to_status().code == 409 => {
                    return Err(Status::timeout(
                        &format!("couldn't update PodDisruptionBudget {name:?} due to conflicts"),
                        10,
                    )
                    .into());
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

#[async_trait]
impl DeleteGuard for DisruptionGuard {
    async fn before_delete(
        &self,
        subresource: &str,
        pod: &Value,
        dry_run: bool,
    ) -> kas_registry::Result<GuardedDelete> {
        if subresource != "eviction" {
            return Ok(GuardedDelete::Proceed);
        }
        if can_ignore_budgets(pod) {
            // Upstream `shouldEnforceResourceVersion`: a pending pod must not have become
            // ready meanwhile; a terminal or deleting one may go as it is.
            let enforce = !matches!(phase(pod), "Succeeded" | "Failed") && !deleting(pod);
            return Ok(if enforce {
                GuardedDelete::AtRevision {
                    retry: true,
                    conflict: None,
                }
            } else {
                GuardedDelete::Proceed
            });
        }
        let mut budgets = self.covering(pod).await?;
        if budgets.len() > 1 {
            let mut status = Status::internal_error("");
            status.message = Some(
                "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
                    .to_owned(),
            );
            status.reason = None;
            status.details = None;
            return Err(status.into());
        }
        let Some(budget) = budgets.pop() else {
            return Ok(GuardedDelete::Proceed);
        };
        let name = kas_registry::meta::name(&budget).to_owned();
        if !ready(pod) {
            let always =
                budget.pointer("/spec/unhealthyPodEvictionPolicy") == Some(&json!("AlwaysAllow"));
            let healthy_enough = int(&budget, "/status/currentHealthy")
                >= int(&budget, "/status/desiredHealthy")
                && int(&budget, "/status/desiredHealthy") > 0;
            if always || healthy_enough {
                return Ok(GuardedDelete::AtRevision {
                    retry: false,
                    conflict: Some(still_processing(&name)),
                });
            }
        }
        self.charge(kas_registry::meta::name(pod), budget, dry_run)
            .await?;
        Ok(GuardedDelete::Proceed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_pods_skip_the_budgets() {
        assert!(can_ignore_budgets(&json!({"status": {"phase": "Pending"}})));
        assert!(can_ignore_budgets(
            &json!({"status": {"phase": "Succeeded"}})
        ));
        assert!(can_ignore_budgets(
            &json!({"metadata": {"deletionTimestamp": "2020-01-01T00:00:00Z"}, "status": {"phase": "Running"}})
        ));
        assert!(!can_ignore_budgets(
            &json!({"status": {"phase": "Running"}})
        ));
    }

    #[test]
    fn a_refusal_is_upstreams_429() {
        let status = too_many_requests(
            "The disruption budget web needs 2 healthy pods and has 2 currently",
            0,
        )
        .to_status();
        assert_eq!(status.code, 429);
        assert_eq!(status.message.as_deref(), Some(EVICTION_REFUSED));
        let details = status.details.expect("details");
        assert_eq!(
            details.causes[0].reason.as_deref(),
            Some("DisruptionBudget")
        );
        let status = still_processing("web").to_status();
        assert_eq!(
            status.details.expect("details").retry_after_seconds,
            Some(10)
        );
    }

    #[test]
    fn the_last_allowed_disruption_flips_the_condition() {
        let mut budget = json!({"status": {"disruptionsAllowed": 0, "observedGeneration": 3,
            "conditions": [{"type": "DisruptionAllowed", "status": "True", "reason": "SufficientPods",
                "message": "", "observedGeneration": 3, "lastTransitionTime": "2020-01-01T00:00:00Z"}]}});
        set_disruption_allowed(&mut budget, "2026-01-01T00:00:00Z");
        let c = &budget["status"]["conditions"][0];
        assert_eq!(c["status"], "False");
        assert_eq!(c["reason"], "InsufficientPods");
        assert_eq!(c["lastTransitionTime"], "2026-01-01T00:00:00Z");
    }
}
