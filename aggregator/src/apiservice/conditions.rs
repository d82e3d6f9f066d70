//! An APIService's status conditions, after upstream's `apiregistration` helpers
//! (`SetAPIServiceCondition`, `NewLocalAvailableAPIServiceCondition`,
//! `IsAPIServiceConditionTrue`).

use serde_json::{Value, json};

/// The one condition type upstream defines.
pub const AVAILABLE: &str = "Available";

/// A condition as read from an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Observed<'a> {
    pub status: &'a str,
    pub reason: &'a str,
    pub message: &'a str,
}

/// The `Available` condition to set: its status, reason and message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Condition {
    pub status: String,
    pub reason: String,
    pub message: String,
}

impl Condition {
    pub fn new(status: &str, reason: &str, message: &str) -> Condition {
        Condition {
            status: status.to_owned(),
            reason: reason.to_owned(),
            message: message.to_owned(),
        }
    }
}

/// Upstream's `NewLocalAvailableAPIServiceCondition`.
pub fn local_available() -> Condition {
    Condition::new("True", "Local", "Local APIServices are always available")
}

fn conditions(obj: &Value) -> impl Iterator<Item = &Value> {
    obj.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// The condition of type `type_`, if the object has one.
pub fn get<'a>(obj: &'a Value, type_: &str) -> Option<Observed<'a>> {
    let c = conditions(obj).find(|c| c.get("type").and_then(Value::as_str) == Some(type_))?;
    let text = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("");
    Some(Observed {
        status: text("status"),
        reason: text("reason"),
        message: text("message"),
    })
}

/// Upstream's `IsAPIServiceConditionTrue` for `Available`.
pub fn is_available(obj: &Value) -> bool {
    get(obj, AVAILABLE).is_some_and(|c| c.status == "True")
}

/// Upstream's `SetAPIServiceCondition` for `Available`: a new condition is appended; an
/// existing one takes the reason and message, and the status with a new transition time
/// only when the status changes.
pub fn set(obj: &mut Value, condition: Condition) {
    let now = kas_registry::meta::rfc3339(std::time::SystemTime::now());
    if !obj.get("status").is_some_and(Value::is_object) {
        obj["status"] = json!({});
    }
    let status = &mut obj["status"];
    if !status.get("conditions").is_some_and(Value::is_array) {
        status["conditions"] = json!([]);
    }
    let Some(list) = status["conditions"].as_array_mut() else {
        return;
    };
    let existing = list
        .iter_mut()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(AVAILABLE));
    let Some(existing) = existing else {
        list.push(json!({
            "type": AVAILABLE,
            "status": condition.status,
            "lastTransitionTime": now,
            "reason": condition.reason,
            "message": condition.message,
        }));
        return;
    };
    if existing.get("status").and_then(Value::as_str) != Some(condition.status.as_str()) {
        existing["status"] = json!(condition.status);
        existing["lastTransitionTime"] = json!(now);
    }
    existing["reason"] = json!(condition.reason);
    existing["message"] = json!(condition.message);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_transition_time_moves_only_with_the_status() {
        let mut obj = json!({});
        set(&mut obj, Condition::new("False", "A", "a"));
        obj["status"]["conditions"][0]["lastTransitionTime"] = json!("2020-01-01T00:00:00Z");
        set(&mut obj, Condition::new("False", "B", "b"));
        let c = &obj["status"]["conditions"][0];
        assert_eq!(c["lastTransitionTime"], "2020-01-01T00:00:00Z");
        assert_eq!((&c["reason"], &c["message"]), (&json!("B"), &json!("b")));
        set(
            &mut obj,
            Condition::new("True", "Passed", "all checks passed"),
        );
        let c = &obj["status"]["conditions"][0];
        assert_ne!(c["lastTransitionTime"], "2020-01-01T00:00:00Z");
        assert!(is_available(&obj));
        assert_eq!(obj["status"]["conditions"].as_array().unwrap().len(), 1);
    }
}
