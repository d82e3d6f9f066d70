//! core/v1 Service, after upstream's `pkg/registry/core/service` (the strategy with
//! `dropTypeDependentFields`, the status strategy, the REST storage's allocation of
//! cluster IPs and node ports), `SetDefaults_Service`, `ValidateService*` and
//! `printService`.

pub mod alloc;
mod defaults;
pub(crate) mod printer;
mod validation;

use std::collections::BTreeMap;
use std::sync::Arc;

use kas_apimachinery::validation::meta::name_is_dns1035_label;
use kas_registry::strategy::FieldErrors;
use kas_registry::strategy::causes;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, Subresource, Verb};
use serde_json::{Value, json};

pub use defaults::externally_accessible;

/// Where Services are stored (upstream's `services/specs`).
pub const SERVICES_KEY: &str = "/services/specs";

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "",
    version: "v1",
    kind: "Service",
    list_kind: "ServiceList",
    plural: "services",
    singular: "service",
    short_names: &["svc"],
    categories: &["all"],
    scope: Scope::Namespaced,
    verbs: Verb::ALL,
    subresources: &[
        Subresource::proxy("ServiceProxyOptions"),
        Subresource::STATUS,
    ],
    table_columns: printer::COLUMNS,
    table_name_and_age: false,
    storage_resource: "services/specs",
    schema: Some(&kas_api::core::v1::SERVICE),
    list_schema: Some(&kas_api::core::v1::SERVICE_LIST),
};

/// How the role installs this resource: its stores allocate from the ranges the
/// options name, in the etcd store every replica shares.
pub fn install(opts: &super::ResourceOptions) -> super::Install {
    let cidrs = opts.service_cluster_ip_range.clone();
    let ports = opts.service_node_port_range.clone();
    super::Install {
        hooks: Some(Box::new(move |etcd| {
            let allocator = Arc::new(alloc::ServiceAllocator::new(&cidrs, &ports, etcd.clone())?);
            alloc::repair::spawn(allocator.clone(), etcd.clone());
            Ok(Arc::new(alloc::ServiceHooks(allocator)))
        })),
        ..super::Install::cached(&DESCRIPTOR, Strategy)
    }
}

pub struct Strategy;

fn needs_node_port(svc: &Value) -> bool {
    match svc.pointer("/spec/type").and_then(Value::as_str) {
        Some("NodePort") => true,
        Some("LoadBalancer") => svc
            .pointer("/spec/allocateLoadBalancerNodePorts")
            .and_then(Value::as_bool)
            .unwrap_or(true),
        _ => false,
    }
}

fn needs_health_check_port(svc: &Value) -> bool {
    svc.pointer("/spec/type").and_then(Value::as_str) == Some("LoadBalancer")
        && svc
            .pointer("/spec/externalTrafficPolicy")
            .and_then(Value::as_str)
            == Some("Local")
}

fn ty(svc: &Value) -> &str {
    svc.pointer("/spec/type")
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn node_ports(svc: &Value) -> Vec<Value> {
    svc.pointer("/spec/ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|p| p.get("nodePort").cloned().unwrap_or(Value::Null))
        .collect()
}

/// Upstream `dropTypeDependentFields`: what the old type needed and the new one does not,
/// and the client left as it was, is wiped.
fn drop_type_dependent_fields(new: &mut Value, old: &Value) {
    let same = |new: &Value, key: &str| new.pointer(key) == old.pointer(key);
    let Some(spec) = new.get("spec").cloned() else {
        return;
    };
    let new_ty = ty(new).to_owned();
    let old_ty = ty(old);
    let mut remove: Vec<&str> = Vec::new();
    if old_ty != "ExternalName" && new_ty == "ExternalName" {
        if same(new, "/spec/clusterIP") && same(new, "/spec/clusterIPs") {
            remove.extend(["clusterIP", "clusterIPs"]);
        }
        if same(new, "/spec/ipFamilies") {
            remove.push("ipFamilies");
        }
        if same(new, "/spec/ipFamilyPolicy") {
            remove.push("ipFamilyPolicy");
        }
    }
    let wipe_node_ports =
        needs_node_port(old) && !needs_node_port(new) && node_ports(new) == node_ports(old);
    if needs_health_check_port(old)
        && !needs_health_check_port(new)
        && same(new, "/spec/healthCheckNodePort")
    {
        remove.push("healthCheckNodePort");
    }
    if old_ty == "LoadBalancer" && new_ty != "LoadBalancer" {
        let (a, b) = (
            spec.get("allocateLoadBalancerNodePorts"),
            old.pointer("/spec/allocateLoadBalancerNodePorts"),
        );
        if a.is_some_and(|a| !a.is_null()) && a == b {
            remove.push("allocateLoadBalancerNodePorts");
        }
        if same(new, "/spec/loadBalancerClass") {
            remove.push("loadBalancerClass");
        }
    }
    if externally_accessible(&old["spec"])
        && !externally_accessible(&spec)
        && same(new, "/spec/externalTrafficPolicy")
    {
        remove.push("externalTrafficPolicy");
    }
    if let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) {
        for k in remove {
            spec.remove(k);
        }
        if wipe_node_ports && let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut)
        {
            for p in ports.iter_mut().filter_map(Value::as_object_mut) {
                p.remove("nodePort");
            }
        }
    }
    if new_ty != "LoadBalancer"
        && let Some(status) = new.get_mut("status").and_then(Value::as_object_mut)
    {
        status.insert("loadBalancer".into(), json!({}));
    }
}

impl kas_registry::Strategy for Strategy {
    /// Upstream's store sets `ReturnDeletedObject`.
    fn return_deleted_object(&self) -> bool {
        true
    }

    fn reset_fields(&self, subresource: &str) -> &'static [&'static str] {
        match subresource {
            "status" => &["spec"],
            _ => &["status"],
        }
    }

    fn default(&self, obj: &mut Value) {
        defaults::default_service(obj);
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(map) = obj.as_object_mut() {
            map.insert("status".into(), json!({"loadBalancer": {}}));
        }
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        kas_registry::meta::keep_status(new, old);
        drop_type_dependent_fields(new, old);
    }

    /// Upstream `ValidateServiceCreate`; a Service's name is a DNS-1035 label.
    fn validate(&self, obj: &Value) -> FieldErrors {
        let mut errs = validate_object_meta(obj, true, name_is_dns1035_label);
        errs.extend(causes(validation::validate_service(obj)));
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(causes(validation::validate_service_update(new, old)));
        errs
    }

    fn validate_status_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(causes(validation::validate_service_status_update(new, old)));
        errs
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    /// Upstream's Service field labels: `spec.clusterIP` and `spec.type` besides name and
    /// namespace.
    fn field_set(&self, obj: &Value) -> BTreeMap<String, String> {
        let mut set = kas_registry::meta::default_field_set(obj);
        let s = |p: &str| {
            obj.pointer(p)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        set.insert("spec.clusterIP".into(), s("/spec/clusterIP"));
        set.insert("spec.type".into(), s("/spec/type"));
        set
    }

    fn field_label_conversion(&self) -> bool {
        true
    }

    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        printer::cells(obj)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kas_registry::Strategy as _;

    #[test]
    fn a_type_change_wipes_what_the_old_type_needed() {
        let old = json!({"spec": {"type": "NodePort", "clusterIP": "10.0.0.5", "clusterIPs": ["10.0.0.5"],
            "externalTrafficPolicy": "Cluster", "ports": [{"port": 80, "nodePort": 30001}]}});
        let mut new = old.clone();
        new["spec"]["type"] = json!("ClusterIP");
        Strategy.prepare_for_update(&mut new, &old);
        assert!(new["spec"]["ports"][0].get("nodePort").is_none(), "{new}");
        assert!(new["spec"].get("externalTrafficPolicy").is_none(), "{new}");
        assert_eq!(new["spec"]["clusterIP"], "10.0.0.5");
        let mut external = old.clone();
        external["spec"]["type"] = json!("ExternalName");
        Strategy.prepare_for_update(&mut external, &old);
        assert!(external["spec"].get("clusterIP").is_none(), "{external}");
    }

    #[test]
    fn field_selectors_see_the_type_and_cluster_ip() {
        let svc = json!({"metadata": {"name": "web", "namespace": "ns"}, "spec": {"type": "NodePort", "clusterIP": "10.0.0.5"}});
        let set = Strategy.field_set(&svc);
        assert_eq!(set["spec.type"], "NodePort");
        assert_eq!(set["spec.clusterIP"], "10.0.0.5");
    }
}
