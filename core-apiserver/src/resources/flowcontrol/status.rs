//! The `Dangling` condition upstream's APF configuration consumer writes on each
//! FlowSchema (`apf_controller.go`), written here once at start on the FlowSchemas that
//! have none: `False` (`Found`) when the priority level exists, else `True`
//! (`NotFound`). Later changes are not followed (kas runs no APF controller).

use kas_registry::rest::options::WriteOptions;
use kas_registry::store::Store;
use serde_json::{Value, json};

use super::{list, s};

const GROUP: &str = "flowcontrol.apiserver.k8s.io";
/// Upstream's field manager of the consumer's status writes.
const MANAGER: &str = "api-priority-and-fairness-config-consumer-v1";

/// Upstream's condition for a FlowSchema referencing `pl`, which exists or not.
pub fn dangling_condition(pl: &str, exists: bool, now: &str) -> Value {
    let (status, reason, message) = if exists {
        let message = format!(
            "This FlowSchema references the PriorityLevelConfiguration object named {} and it exists",
            super::quote(pl)
        );
        ("False", "Found", message)
    } else {
        let message = format!(
            "This FlowSchema references the PriorityLevelConfiguration object named {} but there is no such object",
            super::quote(pl)
        );
        ("True", "NotFound", message)
    };
    json!({"type": "Dangling", "status": status, "reason": reason, "message": message,
        "lastTransitionTime": now})
}

async fn read(store: &Store, name: &str) -> Option<Value> {
    let object = store.get("", name, None).await.ok()?;
    object.value().ok()
}

/// Marks each named FlowSchema without a `Dangling` condition.
pub async fn mark_dangling(stores: &[Store], names: &[String]) -> Result<(), String> {
    let store = crate::admission::store(stores, GROUP, "flowschemas");
    let levels = crate::admission::store(stores, GROUP, "prioritylevelconfigurations");
    let (Some(store), Some(levels)) = (store, levels) else {
        return Ok(());
    };
    let opts = WriteOptions {
        manager: MANAGER.to_owned(),
        ..Default::default()
    };
    // Each schema on its own, all at once: a start waits for the slowest, not the sum.
    let marks = names.iter().map(|name| {
        let (store, levels, opts) = (&store, &levels, &opts);
        async move {
            let Some(mut schema) = read(store, name).await else {
                return Ok(());
            };
            let conditions = list(&schema, "/status/conditions");
            if conditions.iter().any(|c| s(c, "/type") == "Dangling") {
                return Ok(());
            }
            let pl = s(&schema, "/spec/priorityLevelConfiguration/name").to_owned();
            let exists = read(levels, &pl).await.is_some();
            let now = kas_registry::meta::rfc3339(std::time::SystemTime::now());
            let mut conditions = conditions.to_vec();
            conditions.push(dangling_condition(&pl, exists, &now));
            schema["status"] = json!({"conditions": conditions});
            match store
                .update_subresource("", name, "status", schema, opts)
                .await
            {
                // Another replica marked it first.
                Err(e) if e.to_status().code == 409 => Ok(()),
                Err(e) => {
                    let message = e.to_status().message.unwrap_or_default();
                    Err(format!("marking flowschema {name}: {message}"))
                }
                Ok(_) => Ok(()),
            }
        }
    });
    futures_util::future::try_join_all(marks).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_as_upstream_writes_them() {
        let found = dangling_condition("system", true, "2024-01-01T00:00:00Z");
        assert_eq!(
            found,
            json!({"type": "Dangling", "status": "False", "reason": "Found",
                "message": "This FlowSchema references the PriorityLevelConfiguration object named \"system\" and it exists",
                "lastTransitionTime": "2024-01-01T00:00:00Z"})
        );
        let missing = dangling_condition("gone", false, "t");
        assert_eq!(missing["status"], "True");
        assert_eq!(missing["reason"], "NotFound");
        assert_eq!(
            missing["message"],
            "This FlowSchema references the PriorityLevelConfiguration object named \"gone\" but there is no such object"
        );
    }
}
