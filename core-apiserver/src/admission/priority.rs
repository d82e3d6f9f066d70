//! Upstream's `Priority` plugin on pod creation: the pod's priority comes from its
//! PriorityClass, or from the global default class, else is 0 with `PreemptLowerPriority`;
//! a pod that names no known class, or sets a priority of its own that differs, is
//! refused (403). scheduling.k8s.io PriorityClasses are not served yet: the classes known
//! are the two upstream's apiserver creates at start (`SystemPriorityClasses`).

use kas_apimachinery::Status;
use kas_registry::ResourceDescriptor;
use kas_registry::admission::Mutate;
use serde_json::{Value, json};

/// Upstream `scheduling.SystemPriorityClasses`: name and value.
const SYSTEM_CLASSES: [(&str, i64); 2] = [
    ("system-node-critical", 2_000_001_000),
    ("system-cluster-critical", 2_000_000_000),
];

/// Upstream `DefaultPriorityWhenNoDefaultClassExists`.
const DEFAULT_PRIORITY: i64 = 0;

pub struct Priority;

fn forbidden(name: &str, err: &str) -> kas_registry::Error {
    Status::forbidden("", "pods", name, err).into()
}

impl Mutate for Priority {
    fn mutate(
        &self,
        descriptor: &'static ResourceDescriptor,
        name: &str,
        pod: &mut Value,
    ) -> kas_registry::Result<()> {
        if (descriptor.group, descriptor.plural) != ("", "pods") {
            return Ok(());
        }
        let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
            return Ok(());
        };
        let class = spec
            .get("priorityClassName")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let priority = if class.is_empty() {
            DEFAULT_PRIORITY
        } else {
            match SYSTEM_CLASSES.iter().find(|(n, _)| *n == class) {
                Some((_, value)) => *value,
                None => {
                    return Err(forbidden(
                        name,
                        &format!("no PriorityClass with name {class} was found"),
                    ));
                }
            }
        };
        if let Some(given) = spec.get("priority").and_then(Value::as_i64)
            && given != priority
        {
            return Err(forbidden(
                name,
                &format!(
                    "the integer value of priority ({given}) must not be provided in pod spec; priority admission controller computed {priority} from the given PriorityClass name"
                ),
            ));
        }
        spec.insert("priority".into(), json!(priority));
        let policy = "PreemptLowerPriority";
        if let Some(given) = spec.get("preemptionPolicy").and_then(Value::as_str)
            && given != policy
        {
            return Err(forbidden(
                name,
                &format!(
                    "the string value of PreemptionPolicy ({given}) must not be provided in pod spec; priority admission controller computed {policy} from the given PriorityClass name"
                ),
            ));
        }
        spec.insert("preemptionPolicy".into(), json!(policy));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::pods::DESCRIPTOR;

    #[test]
    fn pods_get_their_class_priority() {
        let mut pod = json!({"spec": {}});
        Priority
            .mutate(&DESCRIPTOR, "p", &mut pod)
            .expect("admitted");
        assert_eq!(pod["spec"]["priority"], 0);
        assert_eq!(pod["spec"]["preemptionPolicy"], "PreemptLowerPriority");
        let mut critical = json!({"spec": {"priorityClassName": "system-node-critical"}});
        Priority
            .mutate(&DESCRIPTOR, "p", &mut critical)
            .expect("admitted");
        assert_eq!(critical["spec"]["priority"], 2_000_001_000);
        let mut unknown = json!({"spec": {"priorityClassName": "gold"}});
        let err = Priority
            .mutate(&DESCRIPTOR, "p", &mut unknown)
            .unwrap_err()
            .to_status();
        assert_eq!(err.code, 403);
        assert_eq!(
            err.message.as_deref(),
            Some("pods \"p\" is forbidden: no PriorityClass with name gold was found")
        );
        let mut own = json!({"spec": {"priority": 7}});
        let err = Priority
            .mutate(&DESCRIPTOR, "p", &mut own)
            .unwrap_err()
            .to_status();
        assert!(err.message.as_deref().unwrap_or("").ends_with(
            "the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name"
        ));
    }
}
