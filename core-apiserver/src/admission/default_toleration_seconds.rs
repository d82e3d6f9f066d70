//! Upstream's `DefaultTolerationSeconds` plugin: a pod that does not tolerate the
//! `NoExecute` taints of a not-ready or unreachable node gets tolerations for them lasting
//! `--default-not-ready-toleration-seconds` and `--default-unreachable-toleration-seconds`
//! (300 s each by default), so its node's trouble evicts it after five minutes.

use futures_util::future::BoxFuture;
use kas_registry::ResourceDescriptor;
use kas_registry::admission::Mutate;
use serde_json::{Value, json};

/// Upstream's defaults of both flags.
pub const DEFAULT_SECONDS: i64 = 300;

const NOT_READY: &str = "node.kubernetes.io/not-ready";
const UNREACHABLE: &str = "node.kubernetes.io/unreachable";

pub struct DefaultTolerationSeconds {
    pub not_ready_seconds: i64,
    pub unreachable_seconds: i64,
}

impl Default for DefaultTolerationSeconds {
    fn default() -> Self {
        DefaultTolerationSeconds {
            not_ready_seconds: DEFAULT_SECONDS,
            unreachable_seconds: DEFAULT_SECONDS,
        }
    }
}

/// Whether `t` tolerates the `NoExecute` taint `key` (an empty key or effect matches any).
fn tolerates(t: &Value, key: &str) -> bool {
    let s = |k: &str| t.get(k).and_then(Value::as_str).unwrap_or("");
    (s("key") == key || s("key").is_empty())
        && (s("effect") == "NoExecute" || s("effect").is_empty())
}

impl Mutate for DefaultTolerationSeconds {
    fn mutate<'a>(
        &'a self,
        descriptor: &'static ResourceDescriptor,
        _name: &'a str,
        pod: &'a mut Value,
    ) -> BoxFuture<'a, kas_registry::Result<()>> {
        self.add_tolerations(descriptor, pod);
        Box::pin(std::future::ready(Ok(())))
    }

    /// Upstream's plugin handles updates as creates.
    fn mutate_update(
        &self,
        descriptor: &'static ResourceDescriptor,
        new: &mut Value,
        _old: &Value,
    ) -> kas_registry::Result<()> {
        self.add_tolerations(descriptor, new);
        Ok(())
    }
}

impl DefaultTolerationSeconds {
    fn add_tolerations(&self, descriptor: &'static ResourceDescriptor, pod: &mut Value) {
        if (descriptor.group, descriptor.plural) != ("", "pods") {
            return;
        }
        let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
            return;
        };
        let tolerations = spec.entry("tolerations").or_insert_with(|| json!([]));
        if !tolerations.is_array() {
            *tolerations = json!([]);
        }
        let Some(list) = tolerations.as_array_mut() else {
            return;
        };
        for (key, seconds) in [
            (NOT_READY, self.not_ready_seconds),
            (UNREACHABLE, self.unreachable_seconds),
        ] {
            if !list.iter().any(|t| tolerates(t, key)) {
                list.push(
                    json!({"key": key, "operator": "Exists", "effect": "NoExecute",
                    "tolerationSeconds": seconds}),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::pods::DESCRIPTOR;

    #[test]
    fn pods_get_the_tolerations_they_lack() {
        let plugin = DefaultTolerationSeconds::default();
        let mut pod =
            json!({"spec": {"tolerations": [{"key": UNREACHABLE, "operator": "Exists"}]}});
        plugin.add_tolerations(&DESCRIPTOR, &mut pod);
        assert_eq!(
            pod["spec"]["tolerations"],
            json!([{"key": UNREACHABLE, "operator": "Exists"},
                {"key": NOT_READY, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}])
        );
        let mut tolerant = json!({"spec": {"tolerations": [{"operator": "Exists"}]}});
        plugin.add_tolerations(&DESCRIPTOR, &mut tolerant);
        assert_eq!(
            tolerant["spec"]["tolerations"],
            json!([{"operator": "Exists"}])
        );
    }
}
