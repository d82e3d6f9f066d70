//! A CRD's `status.conditions`, after upstream's `SetCRDCondition`,
//! `FindCRDCondition` and `IsCRDConditionTrue`.

use serde_json::{Value, json};

pub const ESTABLISHED: &str = "Established";
pub const NAMES_ACCEPTED: &str = "NamesAccepted";
pub const NON_STRUCTURAL_SCHEMA: &str = "NonStructuralSchema";
pub const TERMINATING: &str = "Terminating";
pub const KUBERNETES_API_APPROVAL_POLICY_CONFORMANT: &str = "KubernetesAPIApprovalPolicyConformant";

/// One condition to set.
pub struct Condition<'a> {
    pub type_: &'a str,
    pub status: &'a str,
    pub reason: &'a str,
    pub message: &'a str,
}

impl<'a> Condition<'a> {
    pub fn new(type_: &'a str, status: &'a str, reason: &'a str, message: &'a str) -> Self {
        Condition {
            type_,
            status,
            reason,
            message,
        }
    }
}

/// The condition of this type, if the CRD has one.
pub fn find<'v>(crd: &'v Value, type_: &str) -> Option<&'v Value> {
    crd.pointer("/status/conditions")
        .and_then(Value::as_array)?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))
}

/// Whether the condition of this type is `True`.
pub fn is_true(crd: &Value, type_: &str) -> bool {
    find(crd, type_)
        .and_then(|c| c.get("status"))
        .and_then(Value::as_str)
        == Some("True")
}

/// Sets the condition: a new one, or the existing one's status, reason and message; its
/// `lastTransitionTime` moves only when its status changes.
pub fn set(crd: &mut Value, condition: Condition<'_>) {
    let now = kas_registry::meta::rfc3339(std::time::SystemTime::now());
    if !crd.get("status").is_some_and(Value::is_object) {
        crd["status"] = json!({});
    }
    let conditions = &mut crd["status"]["conditions"];
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    let Some(list) = conditions.as_array_mut() else {
        return;
    };
    let fresh = json!({
        "type": condition.type_,
        "status": condition.status,
        "reason": condition.reason,
        "message": condition.message,
        "lastTransitionTime": now,
    });
    match list
        .iter_mut()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(condition.type_))
    {
        None => list.push(fresh),
        Some(existing) => {
            let transition =
                existing.get("status").and_then(Value::as_str) != Some(condition.status);
            let time = if transition {
                json!(now)
            } else {
                existing
                    .get("lastTransitionTime")
                    .cloned()
                    .unwrap_or(json!(now))
            };
            *existing = fresh;
            existing["lastTransitionTime"] = time;
        }
    }
}

/// Removes the condition of this type.
pub fn remove(crd: &mut Value, type_: &str) {
    if let Some(list) = crd
        .pointer_mut("/status/conditions")
        .and_then(Value::as_array_mut)
    {
        list.retain(|c| c.get("type").and_then(Value::as_str) != Some(type_));
    }
}
