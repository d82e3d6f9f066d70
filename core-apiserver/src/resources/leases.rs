//! coordination.k8s.io/v1 Lease, after upstream's `pkg/registry/coordination/lease` and
//! `pkg/apis/coordination/validation`.

use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_apimachinery::validation::is_qualified_name;
use kas_apimachinery::validation::meta::name_is_dns_subdomain;
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use kas_registry::{ResourceDescriptor, Scope, TableColumn, Verb};
use serde_json::{Value, json};

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "coordination.k8s.io",
    version: "v1",
    kind: "Lease",
    list_kind: "LeaseList",
    plural: "leases",
    singular: "lease",
    short_names: &[],
    categories: &[],
    scope: Scope::Namespaced,
    verbs: Verb::ALL,
    subresources: &[],
    table_columns: &[TableColumn {
        name: "Holder",
        type_: "string",
        format: "",
        description: "holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.",
        priority: 0,
    }],
    table_name_and_age: true,
    storage_resource: "leases",
    schema: Some(&kas_api::coordination::v1::LEASE),
    list_schema: Some(&kas_api::coordination::v1::LEASE_LIST),
};

/// Upstream `validLeaseStrategies`.
const VALID_STRATEGIES: &[&str] = &["OldestEmulationVersion"];

/// Fields of the CoordinatedLeaderElection feature, off by default in 1.33: dropped on
/// create, and on update unless the stored lease already has them.
const GATED_FIELDS: [&str; 2] = ["strategy", "preferredHolder"];

/// How the role installs this resource.
pub fn install(_: &super::ResourceOptions) -> super::Install {
    super::Install::cached(&DESCRIPTOR, Strategy)
}

pub struct Strategy;

fn int_field(spec: &Value, name: &str) -> Option<i64> {
    spec.get(name).and_then(Value::as_i64)
}

/// Upstream `ValidateCoordinatedLeaseStrategy`. Upstream appends `strategy` to a path that
/// already ends in it; kept, as it is what clients see.
fn validate_lease_strategy(strategy: &str, path: &Path) -> Vec<field::Error> {
    let path = path.child("strategy");
    if !strategy.contains('/') {
        if VALID_STRATEGIES.contains(&strategy) {
            return Vec::new();
        }
        return vec![field::not_supported(&path, strategy, VALID_STRATEGIES)];
    }
    is_qualified_name(strategy)
        .iter()
        .map(|msg| field::invalid(&path, strategy, msg))
        .collect()
}

/// Upstream `ValidateLeaseSpec`.
fn validate_lease_spec(obj: &Value) -> FieldErrors {
    let path = Path::new("spec");
    let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
    let mut errs = Vec::new();
    if let Some(d) = int_field(&spec, "leaseDurationSeconds").filter(|d| *d <= 0) {
        errs.push(field::invalid(
            &path.child("leaseDurationSeconds"),
            d,
            "must be greater than 0",
        ));
    }
    if let Some(t) = int_field(&spec, "leaseTransitions").filter(|t| *t < 0) {
        errs.push(field::invalid(
            &path.child("leaseTransitions"),
            BadValue::Int(t),
            "must be greater than or equal to 0",
        ));
    }
    let strategy = spec.get("strategy").and_then(Value::as_str);
    if let Some(s) = strategy {
        errs.extend(validate_lease_strategy(s, &path.child("strategy")));
    }
    let preferred = spec
        .get("preferredHolder")
        .and_then(Value::as_str)
        .unwrap_or("");
    if !preferred.is_empty() && strategy.unwrap_or("").is_empty() {
        errs.push(field::forbidden(
            &path.child("preferredHolder"),
            "may only be specified if `strategy` is defined",
        ));
    }
    errs.iter().map(field::Error::to_cause).collect()
}

impl kas_registry::Strategy for Strategy {
    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
            for f in GATED_FIELDS {
                spec.remove(f);
            }
        }
    }

    fn validate(&self, obj: &Value) -> FieldErrors {
        let mut errs = validate_object_meta(obj, true, name_is_dns_subdomain);
        errs.extend(validate_lease_spec(obj));
        errs
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) else {
            return;
        };
        for f in GATED_FIELDS {
            let in_use = old
                .get("spec")
                .and_then(|s| s.get(f))
                .is_some_and(|v| !v.is_null());
            if !in_use {
                spec.remove(f);
            }
        }
    }

    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(validate_lease_spec(new));
        errs
    }

    /// Upstream: a PUT may create a lease.
    fn allow_create_on_update(&self) -> bool {
        true
    }

    /// Upstream: an update must name the resourceVersion it replaces.
    fn allow_unconditional_update(&self) -> bool {
        false
    }

    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        let holder = obj
            .pointer("/spec/holderIdentity")
            .and_then(Value::as_str)
            .unwrap_or("");
        vec![json!(holder)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::messages;
    use kas_registry::Strategy as _;

    fn lease(spec: Value) -> Value {
        json!({"metadata": {"name": "kube-scheduler", "namespace": "kube-system"}, "spec": spec})
    }

    #[test]
    fn spec_numbers_are_checked_like_upstream() {
        let ok = lease(
            json!({"holderIdentity": "node-1", "leaseDurationSeconds": 15, "leaseTransitions": 0}),
        );
        assert!(Strategy.validate(&ok).is_empty());
        let bad = lease(json!({"leaseDurationSeconds": 0, "leaseTransitions": -1}));
        assert_eq!(
            messages(&Strategy.validate(&bad)),
            vec![
                "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0",
                "spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0",
            ]
        );
    }

    #[test]
    fn strategy_and_preferred_holder() {
        let errs = validate_lease_spec(&lease(
            json!({"strategy": "Newest", "preferredHolder": "a"}),
        ));
        assert_eq!(
            messages(&errs),
            vec![
                "spec.strategy.strategy: Unsupported value: \"Newest\": supported values: \"OldestEmulationVersion\""
            ]
        );
        let errs = validate_lease_spec(&lease(json!({"preferredHolder": "a"})));
        assert_eq!(
            messages(&errs),
            vec!["spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined"]
        );
        assert!(validate_lease_spec(&lease(json!({"strategy": "example.com/mine"}))).is_empty());
    }

    #[test]
    fn gated_fields_are_dropped_unless_in_use() {
        let mut obj = lease(json!({"strategy": "OldestEmulationVersion", "preferredHolder": "a"}));
        Strategy.prepare_for_create(&mut obj);
        assert_eq!(obj["spec"], json!({}));
        let old = lease(json!({"strategy": "OldestEmulationVersion"}));
        let mut new = lease(json!({"strategy": "OldestEmulationVersion", "preferredHolder": "a"}));
        Strategy.prepare_for_update(&mut new, &old);
        assert_eq!(new["spec"], json!({"strategy": "OldestEmulationVersion"}));
    }

    #[test]
    fn update_rules_and_holder_column() {
        assert!(Strategy.allow_create_on_update());
        assert!(!Strategy.allow_unconditional_update());
        let obj = lease(json!({"holderIdentity": "node-1"}));
        assert_eq!(Strategy.table_cells(&obj), vec![json!("node-1")]);
        assert_eq!(Strategy.table_cells(&lease(json!({}))), vec![json!("")]);
    }
}
