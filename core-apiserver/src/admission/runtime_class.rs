//! Upstream's `RuntimeClass` plugin (`plugin/pkg/admission/runtimeclass`): a pod created
//! with `spec.runtimeClassName` must name an existing RuntimeClass; on admission it gets the
//! class's `overhead.podFixed` as `spec.overhead` (a different overhead already set is
//! refused), the class's `scheduling.nodeSelector` merged into its own (a conflicting value
//! is refused) and the class's `scheduling.tolerations` merged into its own (upstream
//! `tolerations.MergeTolerations`). Validation refuses a pod whose overhead does not match
//! its class's.

use futures_util::future::BoxFuture;
use kas_apimachinery::Status;
use kas_apimachinery::resource::Quantity;
use kas_registry::ResourceDescriptor;
use kas_registry::admission::{Attributes, Mutate, Operation, Validate};
use kas_registry::store::Store;
use serde_json::{Map, Value};

const MISMATCH: &str = "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead";
const NO_CLASS_OVERHEAD: &str =
    "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead";

/// The plugin, reading RuntimeClasses from their store.
pub struct RuntimeClass {
    pub classes: Option<Store>,
}

fn is_pods(descriptor: &ResourceDescriptor) -> bool {
    (descriptor.group, descriptor.plural) == ("", "pods")
}

fn forbidden(name: &str, message: &str) -> kas_registry::Error {
    Status::forbidden("", "pods", name, message).into()
}

/// A non-empty resource list, as upstream's `len(list) > 0`.
fn non_empty(list: Option<&Value>) -> Option<&Map<String, Value>> {
    list.and_then(Value::as_object).filter(|m| !m.is_empty())
}

/// Upstream `apiequality.Semantic.DeepEqual` over two resource lists (nil equals empty;
/// quantities compare by value).
fn same_resources(a: Option<&Value>, b: Option<&Value>) -> bool {
    let (a, b) = (non_empty(a), non_empty(b));
    let (Some(a), Some(b)) = (a, b) else {
        return a.is_none() && b.is_none();
    };
    let quantity = |v: &Value| v.as_str().and_then(|s| Quantity::parse(s).ok());
    a.len() == b.len()
        && a.iter().all(|(k, va)| {
            b.get(k)
                .is_some_and(|vb| match (quantity(va), quantity(vb)) {
                    (Some(x), Some(y)) => x.cmp_value(&y).is_eq(),
                    _ => va == vb,
                })
        })
}

/// The class's `overhead.podFixed`, `None` when the class has no overhead.
fn class_overhead(class: &Value) -> Option<Option<&Value>> {
    let overhead = class.get("overhead").filter(|o| !o.is_null())?;
    Some(overhead.get("podFixed").filter(|p| !p.is_null()))
}

/// A toleration's fields, absent ones empty.
fn field<'a>(t: &'a Value, key: &str) -> &'a str {
    t.get(key).and_then(Value::as_str).unwrap_or("")
}

fn seconds(t: &Value) -> Option<i64> {
    t.get("tolerationSeconds").and_then(Value::as_i64)
}

fn same_toleration(a: &Value, b: &Value) -> bool {
    ["key", "operator", "value", "effect"]
        .iter()
        .all(|k| field(a, k) == field(b, k))
        && seconds(a) == seconds(b)
}

/// Upstream `isSuperset`: whether `ss` tolerates a superset of `t`.
fn is_superset(ss: &Value, t: &Value) -> bool {
    if same_toleration(ss, t) {
        return true;
    }
    let ss_op = field(ss, "operator");
    if field(t, "key") != field(ss, "key") && (!field(ss, "key").is_empty() || ss_op != "Exists") {
        return false;
    }
    let effect = field(ss, "effect");
    if field(t, "effect") != effect && !effect.is_empty() {
        return false;
    }
    if effect == "NoExecute"
        && let Some(limit) = seconds(ss)
        && seconds(t).is_none_or(|s| s > limit)
    {
        return false;
    }
    match ss_op {
        "Equal" | "" => field(t, "operator") == "Equal" && field(t, "value") == field(ss, "value"),
        "Exists" => true,
        _ => false,
    }
}

/// Upstream `tolerations.MergeTolerations`: both lists with redundant entries dropped.
fn merge_tolerations(first: &[Value], second: &[Value]) -> Vec<Value> {
    let all = first.iter().chain(second).collect::<Vec<_>>();
    let mut merged: Vec<Value> = Vec::new();
    for (i, t) in all.iter().enumerate() {
        if merged.iter().any(|m| is_superset(m, t)) {
            continue;
        }
        if all[i + 1..]
            .iter()
            .any(|t2| !same_toleration(t, t2) && is_superset(t2, t))
        {
            continue;
        }
        merged.push((*t).clone());
    }
    merged
}

/// Upstream `setOverhead` and `setScheduling` on the pod's spec.
fn admit(name: &str, spec: &mut Map<String, Value>, class: &Value) -> kas_registry::Result<()> {
    if let Some(pod_fixed) = class_overhead(class) {
        if non_empty(spec.get("overhead")).is_some()
            && !same_resources(pod_fixed, spec.get("overhead"))
        {
            return Err(forbidden(name, MISMATCH));
        }
        match pod_fixed {
            Some(fixed) => spec.insert("overhead".into(), fixed.clone()),
            None => spec.remove("overhead"),
        };
    }
    let Some(scheduling) = class.get("scheduling").filter(|s| !s.is_null()) else {
        return Ok(());
    };
    let class_selector = scheduling.get("nodeSelector").and_then(Value::as_object);
    let selector = match spec.get("nodeSelector").and_then(Value::as_object) {
        None => class_selector.cloned(),
        Some(own) => {
            let mut own = own.clone();
            for (key, class_value) in class_selector.into_iter().flatten() {
                let class_value = class_value.as_str().unwrap_or("");
                if let Some(pod_value) = own.get(key).and_then(Value::as_str)
                    && pod_value != class_value
                {
                    return Err(forbidden(
                        name,
                        &format!(
                            "conflict: runtimeClass.scheduling.nodeSelector[{key}] = {class_value}; pod.spec.nodeSelector[{key}] = {pod_value}"
                        ),
                    ));
                }
                own.insert(key.clone(), Value::from(class_value));
            }
            Some(own)
        }
    };
    let list = |v: Option<&Value>| v.and_then(Value::as_array).cloned().unwrap_or_default();
    let tolerations = merge_tolerations(
        &list(spec.get("tolerations")),
        &list(scheduling.get("tolerations")),
    );
    match selector {
        Some(s) => spec.insert("nodeSelector".into(), Value::Object(s)),
        None => spec.remove("nodeSelector"),
    };
    if tolerations.is_empty() {
        spec.remove("tolerations");
    } else {
        spec.insert("tolerations".into(), Value::Array(tolerations));
    }
    Ok(())
}

/// Upstream `validateOverhead`.
fn validate_overhead(name: &str, pod: &Value, class: Option<&Value>) -> kas_registry::Result<()> {
    let overhead = pod.pointer("/spec/overhead");
    if non_empty(overhead).is_none() {
        return Ok(());
    }
    match class.and_then(class_overhead) {
        Some(fixed) if same_resources(fixed, overhead) => Ok(()),
        Some(_) => Err(forbidden(name, MISMATCH)),
        None => Err(forbidden(name, NO_CLASS_OVERHEAD)),
    }
}

impl RuntimeClass {
    /// Upstream `prepareObjects`: the pod's RuntimeClass, from the watch cache then (on a
    /// miss) from storage; a missing class is refused.
    async fn class(&self, name: &str, pod: &Value) -> kas_registry::Result<Option<Value>> {
        let Some(class_name) = pod
            .pointer("/spec/runtimeClassName")
            .and_then(Value::as_str)
        else {
            return Ok(None);
        };
        let Some(store) = &self.classes else {
            return Ok(None);
        };
        let found = match store.get("", class_name, Some("0".into())).await {
            Err(e) if e.to_status().code == 404 => store.get("", class_name, None).await,
            other => other,
        };
        match found {
            Ok(found) => Ok(Some(found.value()?)),
            Err(e) if e.to_status().code == 404 => Err(forbidden(
                name,
                &format!("pod rejected: RuntimeClass {class_name:?} not found"),
            )),
            Err(e) => Err(e),
        }
    }
}

impl Mutate for RuntimeClass {
    fn mutate<'a>(
        &'a self,
        descriptor: &'static ResourceDescriptor,
        name: &'a str,
        pod: &'a mut Value,
    ) -> BoxFuture<'a, kas_registry::Result<()>> {
        Box::pin(async move {
            if !is_pods(descriptor) {
                return Ok(());
            }
            let Some(class) = self.class(name, pod).await? else {
                return Ok(());
            };
            match pod.get_mut("spec").and_then(Value::as_object_mut) {
                Some(spec) => admit(name, spec, &class),
                None => Ok(()),
            }
        })
    }
}

impl Validate for RuntimeClass {
    fn handles(
        &self,
        descriptor: &'static ResourceDescriptor,
        _namespace: &str,
        subresource: &str,
        operation: Operation,
    ) -> bool {
        is_pods(descriptor) && subresource.is_empty() && operation == Operation::Create
    }

    fn validate<'a>(
        &'a self,
        attributes: &'a Attributes<'a>,
    ) -> BoxFuture<'a, kas_registry::Result<()>> {
        Box::pin(async move {
            let Some(pod) = attributes.object else {
                return Ok(());
            };
            let class = self.class(attributes.name, pod).await?;
            validate_overhead(attributes.name, pod, class.as_ref())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn the_class_overhead_and_scheduling_are_applied() {
        let class = json!({
            "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}},
            "scheduling": {
                "nodeSelector": {"sandbox": "true"},
                "tolerations": [{"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}]
            }
        });
        let mut pod = spec(json!({
            "nodeSelector": {"zone": "a"},
            "tolerations": [{"key": "sandbox", "operator": "Equal", "value": "x", "effect": "NoSchedule"}, {"key": "other", "operator": "Exists"}]
        }));
        admit("p", &mut pod, &class).unwrap();
        assert_eq!(pod["overhead"], json!({"cpu": "250m", "memory": "120Mi"}));
        assert_eq!(pod["nodeSelector"], json!({"sandbox": "true", "zone": "a"}));
        // The class's Exists toleration covers the pod's Equal one, which is dropped.
        assert_eq!(
            pod["tolerations"],
            json!([{"key": "other", "operator": "Exists"}, {"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}])
        );
        // An equal overhead (by value) is accepted; a different one refused.
        let mut same = spec(json!({"overhead": {"cpu": "0.25", "memory": "120Mi"}}));
        admit("p", &mut same, &class).unwrap();
        let mut other = spec(json!({"overhead": {"cpu": "1"}}));
        let err = admit("p", &mut other, &class).unwrap_err().to_status();
        assert_eq!(err.code, 403);
        assert_eq!(
            err.message.as_deref(),
            Some(
                "pods \"p\" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"
            )
        );
    }

    #[test]
    fn a_conflicting_node_selector_is_refused() {
        let class = json!({"scheduling": {"nodeSelector": {"sandbox": "true"}}});
        let mut pod = spec(json!({"nodeSelector": {"sandbox": "false"}}));
        let err = admit("p", &mut pod, &class).unwrap_err().to_status();
        assert_eq!(
            err.message.as_deref(),
            Some(
                "pods \"p\" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = true; pod.spec.nodeSelector[sandbox] = false"
            )
        );
        let mut bare = spec(json!({}));
        admit("p", &mut bare, &class).unwrap();
        assert_eq!(bare["nodeSelector"], json!({"sandbox": "true"}));
        assert!(!bare.contains_key("tolerations"));
    }

    #[test]
    fn validation_checks_the_overhead_against_the_class() {
        let pod = json!({"spec": {"overhead": {"cpu": "1"}}});
        let class = json!({"overhead": {"podFixed": {"cpu": "1000m"}}});
        validate_overhead("p", &pod, Some(&class)).unwrap();
        let message = |r: kas_registry::Result<()>| r.unwrap_err().to_status().message.unwrap();
        assert!(message(validate_overhead("p", &pod, None)).ends_with(NO_CLASS_OVERHEAD));
        assert!(
            message(validate_overhead("p", &pod, Some(&json!({})))).ends_with(NO_CLASS_OVERHEAD)
        );
        let other = json!({"overhead": {"podFixed": {"cpu": "2"}}});
        assert!(message(validate_overhead("p", &pod, Some(&other))).ends_with(MISMATCH));
        validate_overhead("p", &json!({"spec": {}}), None).unwrap();
    }

    #[test]
    fn merge_tolerations_keeps_supersets_and_the_first_of_equals() {
        let a = || json!({"key": "k", "operator": "Equal", "value": "v"});
        let wide = || json!({"operator": "Exists"});
        assert_eq!(merge_tolerations(&[a()], &[a()]), vec![a()]);
        assert_eq!(merge_tolerations(&[a()], &[wide()]), vec![wide()]);
        let timed = || json!({"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 10});
        let longer = || json!({"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 20});
        assert_eq!(merge_tolerations(&[longer()], &[timed()]), vec![longer()]);
        assert_eq!(merge_tolerations(&[timed()], &[longer()]), vec![longer()]);
    }
}
