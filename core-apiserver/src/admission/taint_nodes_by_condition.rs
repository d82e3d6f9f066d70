//! Upstream's `TaintNodesByCondition` plugin (`plugin/pkg/admission/nodetaint`): a node is
//! created with the `node.kubernetes.io/not-ready:NoSchedule` taint, so that no pod is
//! scheduled onto it before the node lifecycle controller sees it ready and removes it.

use futures_util::future::BoxFuture;
use kas_registry::ResourceDescriptor;
use kas_registry::admission::Mutate;
use serde_json::{Value, json};

/// Upstream `v1.TaintNodeNotReady`.
const NOT_READY: &str = "node.kubernetes.io/not-ready";

pub struct TaintNodesByCondition;

/// Upstream `addNotReadyTaint`: appended unless a taint with the same key and effect
/// (`Taint.MatchTaint`) is there already.
fn add_not_ready_taint(node: &mut Value) {
    let Some(object) = node.as_object_mut() else {
        return;
    };
    let spec = object.entry("spec").or_insert_with(|| json!({}));
    let Some(spec) = spec.as_object_mut() else {
        return;
    };
    let taints = spec.entry("taints").or_insert_with(|| json!([]));
    if !taints.is_array() {
        *taints = json!([]);
    }
    let Some(list) = taints.as_array_mut() else {
        return;
    };
    let matches = |t: &Value| {
        t.get("key").and_then(Value::as_str) == Some(NOT_READY)
            && t.get("effect").and_then(Value::as_str) == Some("NoSchedule")
    };
    if !list.iter().any(matches) {
        list.push(json!({"key": NOT_READY, "effect": "NoSchedule"}));
    }
}

impl Mutate for TaintNodesByCondition {
    fn mutate<'a>(
        &'a self,
        descriptor: &'static ResourceDescriptor,
        _name: &'a str,
        node: &'a mut Value,
    ) -> BoxFuture<'a, kas_registry::Result<()>> {
        if (descriptor.group, descriptor.plural) == ("", "nodes") {
            add_not_ready_taint(node);
        }
        Box::pin(std::future::ready(Ok(())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_nodes_get_the_not_ready_taint_once() {
        let mut node = json!({"metadata": {"name": "n"}});
        add_not_ready_taint(&mut node);
        assert_eq!(
            node["spec"]["taints"],
            json!([{"key": NOT_READY, "effect": "NoSchedule"}])
        );
        let mut tainted = json!({"spec": {"taints": [
            {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
            {"key": NOT_READY, "effect": "NoSchedule", "value": "x"},
        ]}});
        let before = tainted.clone();
        add_not_ready_taint(&mut tainted);
        assert_eq!(tainted, before);
        // Another effect of the same key is another taint.
        let mut other = json!({"spec": {"taints": [{"key": NOT_READY, "effect": "NoExecute"}]}});
        add_not_ready_taint(&mut other);
        assert_eq!(other["spec"]["taints"].as_array().map(Vec::len), Some(2));
    }
}
