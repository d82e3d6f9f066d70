//! Upstream's `Priority` plugin on pod creation: the pod's priority and preemption policy
//! come from its PriorityClass (the two system classes upstream's apiserver creates at
//! start, or one in `priorityclasses`), else from the global default class, else 0 with
//! `PreemptLowerPriority`; a pod that names no known class, or sets a priority or policy
//! of its own that differs, is refused (403).

use futures_util::future::BoxFuture;
use kas_apimachinery::Status;
use kas_registry::ResourceDescriptor;
use kas_registry::admission::Mutate;
use kas_registry::rest::options::ListOptions;
use kas_registry::store::Store;
use serde_json::{Value, json};

/// Upstream `scheduling.SystemPriorityClasses`: name and value.
const SYSTEM_CLASSES: [(&str, i64); 2] = [
    ("system-node-critical", 2_000_001_000),
    ("system-cluster-critical", 2_000_000_000),
];

/// Upstream `DefaultPriorityWhenNoDefaultClassExists`.
const DEFAULT_PRIORITY: i64 = 0;
const DEFAULT_POLICY: &str = "PreemptLowerPriority";

/// The plugin, reading PriorityClasses from their store (through its watch cache).
pub struct Priority {
    pub classes: Option<Store>,
}

fn forbidden(name: &str, err: &str) -> kas_registry::Error {
    Status::forbidden("", "pods", name, err).into()
}

/// A class's value and preemption policy.
fn resolved(class: &Value) -> (i64, String) {
    let value = class.get("value").and_then(Value::as_i64).unwrap_or(0);
    let policy = class
        .get("preemptionPolicy")
        .and_then(Value::as_str)
        .unwrap_or(DEFAULT_POLICY);
    (value, policy.to_owned())
}

impl Priority {
    /// Upstream `getDefaultPriority`: the global default class with the lowest value.
    async fn default_class(&self) -> kas_registry::Result<Option<(String, i64, String)>> {
        let Some(store) = &self.classes else {
            return Ok(None);
        };
        let opts = ListOptions {
            resource_version: Some("0".into()),
            ..Default::default()
        };
        let listed = store.list("", &opts, Default::default()).await?;
        let mut best: Option<(String, i64, String)> = None;
        for item in &listed.items {
            let class = item.value()?;
            if class.get("globalDefault").and_then(Value::as_bool) != Some(true) {
                continue;
            }
            let (value, policy) = resolved(&class);
            if best.as_ref().is_none_or(|(_, v, _)| value < *v) {
                best = Some((kas_registry::meta::name(&class).to_owned(), value, policy));
            }
        }
        Ok(best)
    }

    /// The value and policy of the class `name`, `None` when there is none.
    async fn class(&self, name: &str) -> kas_registry::Result<Option<(i64, String)>> {
        if let Some((_, value)) = SYSTEM_CLASSES.iter().find(|(n, _)| *n == name) {
            return Ok(Some((*value, DEFAULT_POLICY.to_owned())));
        }
        let Some(store) = &self.classes else {
            return Ok(None);
        };
        match store.get_if_exists("", name, Some("0".into())).await? {
            Some(found) => Ok(Some(resolved(&found.value()?))),
            None => Ok(None),
        }
    }

    async fn admit_pod(&self, name: &str, pod: &mut Value) -> kas_registry::Result<()> {
        let class = pod
            .pointer("/spec/priorityClassName")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let (class_name, priority, policy) = if class.is_empty() {
            match self.default_class().await? {
                Some(found) => found,
                None => (String::new(), DEFAULT_PRIORITY, DEFAULT_POLICY.to_owned()),
            }
        } else {
            match self.class(&class).await? {
                Some((value, policy)) => (class.clone(), value, policy),
                None => {
                    return Err(forbidden(
                        name,
                        &format!("no PriorityClass with name {class} was found"),
                    ));
                }
            }
        };
        let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
            return Ok(());
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
        if !class_name.is_empty() {
            spec.insert("priorityClassName".into(), json!(class_name));
        }
        spec.insert("priority".into(), json!(priority));
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

impl Mutate for Priority {
    /// Upstream's `admitPod` on update: an update that leaves out the priority or the
    /// preemption policy set on create keeps them (a change is the update rules' to refuse).
    fn mutate_update(
        &self,
        descriptor: &'static ResourceDescriptor,
        new: &mut Value,
        old: &Value,
    ) -> kas_registry::Result<()> {
        if (descriptor.group, descriptor.plural) != ("", "pods") {
            return Ok(());
        }
        if let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) {
            for key in ["priority", "preemptionPolicy"] {
                let unset = spec.get(key).is_none_or(Value::is_null);
                if let Some(v) = old.pointer(&format!("/spec/{key}")).filter(|_| unset) {
                    spec.insert(key.into(), v.clone());
                }
            }
        }
        Ok(())
    }

    fn mutate<'a>(
        &'a self,
        descriptor: &'static ResourceDescriptor,
        name: &'a str,
        pod: &'a mut Value,
    ) -> BoxFuture<'a, kas_registry::Result<()>> {
        Box::pin(async move {
            if (descriptor.group, descriptor.plural) != ("", "pods") {
                return Ok(());
            }
            self.admit_pod(name, pod).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(pod: &mut Value) -> kas_registry::Result<()> {
        let plugin = Priority { classes: None };
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        rt.block_on(plugin.admit_pod("p", pod))
    }

    #[test]
    fn pods_get_their_class_priority() {
        let mut pod = json!({"spec": {}});
        run(&mut pod).expect("admitted");
        assert_eq!(pod["spec"]["priority"], 0);
        assert_eq!(pod["spec"]["preemptionPolicy"], "PreemptLowerPriority");
        let mut critical = json!({"spec": {"priorityClassName": "system-node-critical"}});
        run(&mut critical).expect("admitted");
        assert_eq!(critical["spec"]["priority"], 2_000_001_000);
        let mut unknown = json!({"spec": {"priorityClassName": "gold"}});
        let err = run(&mut unknown).unwrap_err().to_status();
        assert_eq!(err.code, 403);
        assert_eq!(
            err.message.as_deref(),
            Some("pods \"p\" is forbidden: no PriorityClass with name gold was found")
        );
        let mut own = json!({"spec": {"priority": 7}});
        let err = run(&mut own).unwrap_err().to_status();
        assert!(err.message.as_deref().unwrap_or("").ends_with(
            "the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name"
        ));
    }
}
