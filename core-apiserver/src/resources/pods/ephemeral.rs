//! `pods/ephemeralcontainers`, after upstream's `EphemeralContainersREST` and its
//! strategy: a write of the subresource changes the pod's `spec.ephemeralContainers` only
//! (what `kubectl debug` adds), and an ephemeral container once added is never removed or
//! changed (`ValidatePodEphemeralContainersUpdate`).

use std::collections::BTreeMap;

use kas_apimachinery::validation::field::{self, Path};
use kas_registry::descriptor::SubresourceHandler;
use kas_registry::{Subresource, Verb};
use serde_json::Value;

pub const EPHEMERAL_CONTAINERS: Subresource = Subresource {
    name: "ephemeralcontainers",
    verbs: &[Verb::Get, Verb::Patch, Verb::Update],
    kind: None,
    handler: SubresourceHandler::StrategyUpdate,
};

/// Upstream `dropNonEphemeralContainerUpdates`: the stored pod with the written ephemeral
/// containers.
pub fn merge(new: &Value, old: &Value) -> Value {
    let mut merged = old.clone();
    if let Some(spec) = merged.get_mut("spec").and_then(Value::as_object_mut) {
        match new.pointer("/spec/ephemeralContainers") {
            Some(e) if !e.is_null() => spec.insert("ephemeralContainers".into(), e.clone()),
            _ => spec.remove("ephemeralContainers"),
        };
    }
    merged
}

/// The second half of upstream `ValidatePodEphemeralContainersUpdate`: existing ephemeral
/// containers stay as they are; static pods take none.
pub fn validate_update(new: &Value, old: &Value) -> Vec<field::Error> {
    if old
        .pointer("/metadata/annotations/kubernetes.io~1config.mirror")
        .is_some()
    {
        return vec![field::forbidden(
            &Path::new(""),
            "static pods do not support ephemeral containers",
        )];
    }
    let path = Path::new("spec").child("ephemeralContainers");
    let by_name = |pod: &Value| -> BTreeMap<String, Value> {
        pod.pointer("/spec/ephemeralContainers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|c| {
                let name = c.get("name").and_then(Value::as_str).unwrap_or("");
                (name.to_owned(), c.clone())
            })
            .collect()
    };
    let new_containers = by_name(new);
    let mut errs = Vec::new();
    let olds = old
        .pointer("/spec/ephemeralContainers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    for old_container in olds {
        let name = old_container
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let quoted = kas_apimachinery::golang::strconv::quote(name);
        match new_containers.get(name) {
            None => errs.push(field::forbidden(
                &path,
                &format!("existing ephemeral containers {quoted} may not be removed\n"),
            )),
            Some(new_container) if new_container != old_container => {
                let diff = super::update::struct_diff(
                    "core.EphemeralContainer",
                    old_container,
                    new_container,
                );
                errs.push(field::forbidden(
                    &path,
                    &format!("existing ephemeral containers {quoted} may not be changed\n{diff}"),
                ));
            }
            Some(_) => {}
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_ephemeral_containers_change_and_none_goes() {
        let old = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}],
            "ephemeralContainers": [{"name": "debug", "image": "busybox"}]}});
        let sent = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "changed"}],
            "ephemeralContainers": [{"name": "debug", "image": "busybox"}, {"name": "d2", "image": "alpine"}]}});
        let merged = merge(&sent, &old);
        assert_eq!(merged["spec"]["containers"], json!([{"name": "a"}]));
        assert_eq!(merged["spec"]["ephemeralContainers"][1]["name"], "d2");
        assert!(validate_update(&merged, &old).is_empty());
        let removed = merge(&json!({"spec": {}}), &old);
        let errs = validate_update(&removed, &old);
        assert_eq!(
            errs[0].to_string(),
            "spec.ephemeralContainers: Forbidden: existing ephemeral containers \"debug\" may not be removed\n"
        );
        let mut changed = old.clone();
        changed["spec"]["ephemeralContainers"][0]["image"] = json!("alpine");
        let errs = validate_update(&changed, &old);
        assert!(
            errs[0]
                .to_string()
                .contains("existing ephemeral containers \"debug\" may not be changed")
        );
    }
}
