//! core/v1 Pod, after upstream's `pkg/registry/core/pod` (the pod and pod status
//! strategies, `PodToSelectableFields`), `ValidatePodCreate`, `ValidatePodUpdate`,
//! `ValidatePodStatusUpdate`, `qos.ComputePodQOS` and `printPod`.

pub(crate) mod binding;
mod connect;
pub mod disruption;
mod ephemeral;
mod eviction;
mod printer;
mod resize;
pub(crate) mod update;

use std::collections::BTreeMap;

use kas_apimachinery::resource::Quantity;
use kas_apimachinery::validation::field::{self, Path};
use kas_apimachinery::validation::meta::name_is_dns_subdomain;
use kas_registry::strategy::{FieldErrors, SubresourceEffect};
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, Subresource, Verb};
use serde_json::{Value, json};

use crate::podspec::defaults::default_pod;
use crate::podspec::validation::{validate_pod_spec, validate_pod_spec_only_for_pod};
use kas_registry::strategy::causes;

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "",
    version: "v1",
    kind: "Pod",
    list_kind: "PodList",
    plural: "pods",
    singular: "pod",
    short_names: &["po"],
    categories: &["all"],
    scope: Scope::Namespaced,
    verbs: Verb::ALL,
    subresources: &[
        connect::ATTACH,
        binding::BINDING,
        ephemeral::EPHEMERAL_CONTAINERS,
        eviction::EVICTION,
        connect::EXEC,
        connect::LOG,
        connect::PORT_FORWARD,
        connect::PROXY,
        resize::RESIZE,
        Subresource::STATUS,
    ],
    table_columns: printer::COLUMNS,
    table_name_and_age: false,
    storage_resource: "pods",
    schema: Some(&kas_api::core::v1::POD),
    list_schema: Some(&kas_api::core::v1::POD_LIST),
};

/// How the role installs this resource.
pub fn install(_: &super::ResourceOptions) -> super::Install {
    super::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

/// Upstream `qos.ComputePodQOS`: BestEffort without cpu or memory requests and limits,
/// Guaranteed when every container limits both and the requests equal the limits,
/// else Burstable.
pub fn qos_class(pod: &Value) -> &'static str {
    let mut requests: BTreeMap<&str, i128> = BTreeMap::new();
    let mut limits: BTreeMap<&str, i128> = BTreeMap::new();
    let mut guaranteed = true;
    let containers = ["/spec/containers", "/spec/initContainers"]
        .into_iter()
        .filter_map(|p| pod.pointer(p).and_then(Value::as_array))
        .flatten();
    let positive = |list: Option<&Value>| -> Vec<(&'static str, i128)> {
        ["cpu", "memory"]
            .into_iter()
            .filter_map(|name| {
                let q = list?.get(name)?;
                let text = q.as_str().map_or_else(|| q.to_string(), str::to_owned);
                let milli = Quantity::parse(text.trim()).ok()?.milli_value();
                (milli > 0).then_some((name, milli))
            })
            .collect()
    };
    for container in containers {
        let resources = container.get("resources");
        for (name, v) in positive(resources.and_then(|r| r.get("requests"))) {
            *requests.entry(name).or_default() += v;
        }
        let found = positive(resources.and_then(|r| r.get("limits")));
        if found.len() < 2 {
            guaranteed = false;
        }
        for (name, v) in found {
            *limits.entry(name).or_default() += v;
        }
    }
    if requests.is_empty() && limits.is_empty() {
        return "BestEffort";
    }
    if guaranteed
        && requests.iter().all(|(k, v)| limits.get(k) == Some(v))
        && requests.len() == limits.len()
    {
        return "Guaranteed";
    }
    "Burstable"
}

/// Upstream `ValidatePodCreate`: the pod (`ValidatePod`), and no ephemeral containers
/// before the pod exists.
fn validate_pod(pod: &Value, create: bool) -> Vec<field::Error> {
    let spec = pod.get("spec").unwrap_or(&Value::Null);
    let mut errs = validate_pod_spec(spec, &Path::new("spec"));
    errs.extend(validate_pod_spec_only_for_pod(spec, &Path::new("spec")));
    if create
        && spec
            .get("ephemeralContainers")
            .and_then(Value::as_array)
            .is_some_and(|e| !e.is_empty())
    {
        errs.push(field::forbidden(
            &Path::new("spec").child("ephemeralContainers"),
            "cannot be set on create",
        ));
    }
    errs
}

/// Upstream `updatePodGeneration`: a changed spec is a new generation.
fn update_pod_generation(new: &mut Value, old: &Value) {
    let spec = |o: &Value| {
        o.get("spec")
            .map(crate::resources::persistentvolumes::validation::semantic)
    };
    let changed = spec(new) != spec(old);
    kas_registry::meta::next_generation(new, old, changed);
}

impl kas_registry::Strategy for Strategy {
    /// Upstream's `podStatusStrategy`: the owner references stay (old kubelets corrupt
    /// them); the deletionTimestamp is the stored one, as for every update.
    fn prepare_for_status_update(&self, new: &mut Value, old: &Value) {
        let owners = old.pointer("/metadata/ownerReferences").cloned();
        let meta = kas_registry::meta::metadata_mut(new);
        match owners {
            Some(o) => meta.insert("ownerReferences".into(), o),
            None => meta.remove("ownerReferences"),
        };
    }

    /// Upstream's store sets `ReturnDeletedObject`.
    fn return_deleted_object(&self) -> bool {
        true
    }

    fn reset_fields(&self, subresource: &str) -> &'static [&'static str] {
        match subresource {
            "status" => &[
                "spec",
                "metadata.deletionTimestamp",
                "metadata.ownerReferences",
            ],
            _ => &["status"],
        }
    }

    fn default(&self, obj: &mut Value) {
        default_pod(obj);
        update::sync_status_ips(obj);
    }

    /// A new pod is Pending with its QoS class; a pod with scheduling gates says so in
    /// its PodScheduled condition.
    /// The deprecated `serviceAccount` follows `serviceAccountName`, which admission may
    /// have set after defaulting (upstream writes it in its v1 conversion).
    fn canonicalize(&self, obj: &mut Value) {
        if let Some(spec) = obj.get_mut("spec") {
            crate::podspec::defaults::sync_service_account(spec);
        }
    }

    /// Upstream's `PrepareForCreate`: generation 1 (1.33 counts a pod's spec changes), a
    /// Pending status with the QoS class, the scheduling-gated condition.
    fn prepare_for_create(&self, obj: &mut Value) {
        kas_registry::meta::first_generation(obj);
        let qos = qos_class(obj);
        let gated = obj
            .pointer("/spec/schedulingGates")
            .and_then(Value::as_array)
            .is_some_and(|g| !g.is_empty());
        let mut status = json!({"phase": "Pending", "qosClass": qos});
        if gated {
            status["conditions"] = json!([{
                "type": "PodScheduled",
                "status": "False",
                "reason": "SchedulingGated",
                "message": "Scheduling is blocked due to non-empty scheduling gates",
                "lastProbeTime": null,
                "lastTransitionTime": null,
            }]);
        }
        if let Some(map) = obj.as_object_mut() {
            map.insert("status".into(), status);
        }
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        kas_registry::meta::keep_status(new, old);
        update_pod_generation(new, old);
    }

    fn validate(&self, obj: &Value) -> FieldErrors {
        let mut errs = validate_object_meta(obj, true, name_is_dns_subdomain);
        errs.extend(causes(validate_pod(obj, true)));
        errs
    }

    /// Upstream `ValidatePodUpdate`.
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(causes(validate_pod(new, false)));
        errs.extend(causes(update::validate_spec_update(new, old)));
        errs
    }

    /// Upstream `ValidatePodStatusUpdate`'s metadata and spec rules: the status strategy
    /// keeps the spec, so only the metadata and the node binding are checked here.
    fn validate_status_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(causes(update::validate_status_update(new, old)));
        errs
    }

    /// Upstream's `CheckGracefulDelete` of pods: the requested period, else the pod's
    /// `terminationGracePeriodSeconds`; zero for a pod no node runs or that has finished.
    fn check_graceful_delete(&self, pod: &Value, requested: Option<i64>) -> Option<i64> {
        let mut period = requested.unwrap_or_else(|| {
            pod.pointer("/spec/terminationGracePeriodSeconds")
                .and_then(Value::as_i64)
                .unwrap_or(0)
        });
        let s = |p: &str| pod.pointer(p).and_then(Value::as_str).unwrap_or("");
        if s("/spec/nodeName").is_empty() || matches!(s("/status/phase"), "Failed" | "Succeeded") {
            period = 0;
        }
        Some(if period < 0 { 1 } else { period })
    }

    fn subresource_update(&self, subresource: &str, new: &Value, old: &Value) -> Option<Value> {
        let mut merged = match subresource {
            "ephemeralcontainers" => ephemeral::merge(new, old),
            "resize" => resize::merge(new, old),
            _ => return None,
        };
        update_pod_generation(&mut merged, old);
        Some(merged)
    }

    /// Upstream `ValidatePodEphemeralContainersUpdate` (existing ephemeral containers
    /// unchanged) and `ValidatePodResize`, after the pod's own metadata and spec checks.
    fn validate_subresource_update(
        &self,
        subresource: &str,
        new: &Value,
        old: &Value,
    ) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(causes(validate_pod(new, false)));
        match subresource {
            "ephemeralcontainers" => errs.extend(causes(ephemeral::validate_update(new, old))),
            "resize" => errs.extend(causes(resize::validate(new, old))),
            _ => {}
        }
        errs
    }

    fn subresource_create(
        &self,
        subresource: &str,
        body: &Value,
        current: &Value,
    ) -> Option<kas_registry::Result<SubresourceEffect>> {
        match subresource {
            "binding" => {
                let now = kas_registry::meta::rfc3339(std::time::SystemTime::now());
                Some(binding::assign(body, current, &now).map(SubresourceEffect::Update))
            }
            "eviction" => Some(eviction::evict(body, current)),
            _ => None,
        }
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    /// Upstream `PodToSelectableFields`.
    fn field_set(&self, obj: &Value) -> BTreeMap<String, String> {
        let mut set = kas_registry::meta::default_field_set(obj);
        let s = |p: &str| {
            obj.pointer(p)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        set.insert("spec.nodeName".into(), s("/spec/nodeName"));
        set.insert("spec.restartPolicy".into(), s("/spec/restartPolicy"));
        set.insert("spec.schedulerName".into(), s("/spec/schedulerName"));
        set.insert(
            "spec.serviceAccountName".into(),
            s("/spec/serviceAccountName"),
        );
        let host_network = obj
            .pointer("/spec/hostNetwork")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        set.insert("spec.hostNetwork".into(), host_network.to_string());
        set.insert("status.phase".into(), s("/status/phase"));
        set.insert("status.podIP".into(), s("/status/podIPs/0/ip"));
        set.insert(
            "status.nominatedNodeName".into(),
            s("/status/nominatedNodeName"),
        );
        set
    }

    /// Upstream's `NodeNameTriggerFunc` and `NodeNameIndexFunc`: kubelets watch and list
    /// their node's pods.
    fn index_field(&self) -> Option<&'static str> {
        Some("spec.nodeName")
    }

    fn field_label_conversion(&self) -> bool {
        true
    }

    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        printer::cells(obj)
    }
}

#[cfg(test)]
mod tests;
