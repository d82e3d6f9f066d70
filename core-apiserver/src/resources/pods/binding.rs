//! `pods/binding`, after upstream's `BindingREST` (`pkg/registry/core/pod/storage`):
//! a scheduler binds a pod to a node by POSTing a Binding; the pod gets the node's name,
//! the binding's annotations and a true `PodScheduled` condition. `ValidatePodBinding`'s
//! errors and the refusals of `setPodNodeAndMetadata` are plain Go errors upstream, so
//! they reach the client as 500s without a reason.

use kas_apimachinery::Status;
use kas_apimachinery::validation::field::{self, Path};
use kas_registry::descriptor::{SubresourceHandler, SubresourceKind};
use kas_registry::{Subresource, Verb};
use serde_json::{Value, json};

pub const BINDING: Subresource = Subresource {
    name: "binding",
    verbs: &[Verb::Create],
    kind: Some(SubresourceKind {
        group: "",
        version: "v1",
        kind: "Binding",
        schema: &kas_api::core::v1::BINDING,
    }),
    handler: SubresourceHandler::StrategyCreate,
};

fn s<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// Upstream `ValidatePodBinding`.
fn validate(binding: &Value) -> Vec<field::Error> {
    let target = Path::new("target");
    let mut errs = Vec::new();
    let kind = s(binding, "/target/kind");
    if !kind.is_empty() && kind != "Node" {
        errs.push(field::not_supported(
            &target.child("kind"),
            kind,
            &["Node", "<empty>"],
        ));
    }
    if s(binding, "/target/name").is_empty() {
        errs.push(field::required(&target.child("name"), ""));
    }
    errs
}

/// The pod `pod` bound as `binding` asks, or the refusal.
pub fn assign(binding: &Value, pod: &Value, now: &str) -> kas_registry::Result<Value> {
    let name = kas_registry::meta::name(pod);
    if kas_registry::meta::name(binding) != name {
        return Err(
            Status::bad_request("name in URL does not match name in Binding object").into(),
        );
    }
    let errs = validate(binding);
    if let Some(message) = field::aggregate_message(&errs) {
        return Err(Status::from_plain_error(message).into());
    }
    if pod
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null())
    {
        return Err(Status::from_plain_error(format!(
            "pod {name} is being deleted, cannot be assigned to a host"
        ))
        .into());
    }
    let node = s(pod, "/spec/nodeName");
    if !node.is_empty() {
        return Err(Status::conflict(
            "",
            "pods/binding",
            name,
            &format!(
                "pod {name} is already assigned to node {}",
                kas_apimachinery::golang::strconv::quote(node)
            ),
        )
        .into());
    }
    if pod
        .pointer("/spec/schedulingGates")
        .and_then(Value::as_array)
        .is_some_and(|g| !g.is_empty())
    {
        return Err(Status::from_plain_error(format!(
            "pod {name} has non-empty .spec.schedulingGates"
        ))
        .into());
    }
    let mut pod = pod.clone();
    pod["spec"]["nodeName"] = json!(s(binding, "/target/name"));
    if let Some(annotations) = binding
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .filter(|a| !a.is_empty())
    {
        let meta = kas_registry::meta::metadata_mut(&mut pod);
        let target = meta.entry("annotations").or_insert_with(|| json!({}));
        if !target.is_object() {
            *target = json!({});
        }
        if let Some(target) = target.as_object_mut() {
            for (k, v) in annotations {
                target.insert(k.clone(), v.clone());
            }
        }
    }
    set_scheduled(&mut pod, now);
    Ok(pod)
}

/// Upstream `UpdatePodCondition` with `PodScheduled: True`: the transition time moves
/// only when the status changes.
fn set_scheduled(pod: &mut Value, now: &str) {
    let Some(pod) = pod.as_object_mut() else {
        return;
    };
    let status = pod.entry("status").or_insert_with(|| json!({}));
    if !status.is_object() {
        *status = json!({});
    }
    let conditions = status
        .as_object_mut()
        .map(|s| s.entry("conditions").or_insert_with(|| json!([])));
    let Some(conditions) = conditions else {
        return;
    };
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    let Some(list) = conditions.as_array_mut() else {
        return;
    };
    let fresh = json!({"type": "PodScheduled", "status": "True", "lastProbeTime": null,
        "lastTransitionTime": now});
    match list
        .iter_mut()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("PodScheduled"))
    {
        Some(existing) => {
            if existing.get("status").and_then(Value::as_str) != Some("True") {
                *existing = fresh;
            } else if let Some(e) = existing.as_object_mut() {
                for k in ["reason", "message"] {
                    e.remove(k);
                }
            }
        }
        None => list.push(fresh),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod() -> Value {
        json!({"metadata": {"name": "web"}, "spec": {"containers": [{"name": "c"}]},
            "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                "reason": "Unschedulable", "lastTransitionTime": "2020-01-01T00:00:00Z"}]}})
    }

    #[test]
    fn binding_sets_the_node_annotations_and_condition() {
        let binding = json!({"metadata": {"name": "web", "annotations": {"a": "b"}},
            "target": {"kind": "Node", "name": "n1"}});
        let bound = assign(&binding, &pod(), "2024-05-06T07:08:09Z").expect("bound");
        assert_eq!(bound["spec"]["nodeName"], "n1");
        assert_eq!(bound["metadata"]["annotations"], json!({"a": "b"}));
        assert_eq!(
            bound["status"]["conditions"],
            json!([{"type": "PodScheduled", "status": "True", "lastProbeTime": null,
                "lastTransitionTime": "2024-05-06T07:08:09Z"}])
        );
    }

    #[test]
    fn refusals_are_upstreams() {
        let binding = json!({"metadata": {"name": "web"}, "target": {"kind": "Pod"}});
        let err = assign(&binding, &pod(), "t").unwrap_err().to_status();
        assert_eq!(err.code, 500);
        assert_eq!(
            err.message.as_deref(),
            Some(
                "[target.kind: Unsupported value: \"Pod\": supported values: \"Node\", \"<empty>\", target.name: Required value]"
            )
        );
        let other = json!({"metadata": {"name": "db"}, "target": {"name": "n1"}});
        assert_eq!(
            assign(&other, &pod(), "t").unwrap_err().to_status().code,
            400
        );
        let mut bound = pod();
        bound["spec"]["nodeName"] = json!("n2");
        let err = assign(
            &json!({"metadata": {"name": "web"}, "target": {"name": "n1"}}),
            &bound,
            "t",
        )
        .unwrap_err()
        .to_status();
        assert_eq!(err.code, 409);
        assert_eq!(
            err.message.as_deref(),
            Some(
                "Operation cannot be fulfilled on pods/binding \"web\": pod web is already assigned to node \"n2\""
            )
        );
    }
}
