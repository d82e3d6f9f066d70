//! apiregistration.k8s.io/v1 APIServices, after upstream's
//! `k8s.io/kube-aggregator/pkg/registry/apiservice`: the descriptor, the strategy (its
//! `status` subresource keeps the spec and the metadata a status write may not change), the
//! defaults of `v1/defaults.go` and the table of `etcd.go`'s `ConvertToTable`. Validation
//! is upstream's `ValidateAPIService` (`validation`); the `Available` condition helpers are
//! `conditions`.

pub mod builtin;
pub mod conditions;
pub mod validation;

use kas_registry::strategy::FieldErrors;
use kas_registry::{ResourceDescriptor, Scope, Subresource, TableColumn, Verb};
use serde_json::{Value, json};

pub const GROUP: &str = "apiregistration.k8s.io";
pub const VERSION: &str = "v1";

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: GROUP,
    version: VERSION,
    kind: "APIService",
    list_kind: "APIServiceList",
    plural: "apiservices",
    singular: "apiservice",
    short_names: &[],
    categories: &["api-extensions"],
    scope: Scope::Cluster,
    verbs: Verb::ALL,
    subresources: &[Subresource::STATUS],
    table_columns: &[
        TableColumn {
            name: "Service",
            type_: "string",
            format: "",
            description: "The reference to the service that hosts this API endpoint.",
            priority: 0,
        },
        TableColumn {
            name: "Available",
            type_: "string",
            format: "",
            description: "Whether this service is available.",
            priority: 0,
        },
    ],
    table_name_and_age: true,
    storage_resource: "apiregistration.k8s.io/apiservices",
    schema: Some(&kas_api::apiregistration::v1::API_SERVICE),
    list_schema: Some(&kas_api::apiregistration::v1::API_SERVICE_LIST),
};

/// Upstream's `SetDefaults_ServiceReference`: a service's port is 443 unless given.
const DEFAULT_SERVICE_PORT: i64 = 443;

/// What an APIService's `spec.service` names, with its defaulted port.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ServiceReference {
    pub namespace: String,
    pub name: String,
    pub port: i64,
}

/// `spec.service`, when the APIService has one (a local one has none).
pub fn service(api_service: &Value) -> Option<ServiceReference> {
    let svc = api_service.pointer("/spec/service")?;
    if svc.is_null() {
        return None;
    }
    let text = |k: &str| svc.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    Some(ServiceReference {
        namespace: text("namespace"),
        name: text("name"),
        port: svc
            .get("port")
            .and_then(Value::as_i64)
            .unwrap_or(DEFAULT_SERVICE_PORT),
    })
}

/// `spec.group` and `spec.version`.
pub fn group_version(api_service: &Value) -> (&str, &str) {
    let text = |p: &str| api_service.pointer(p).and_then(Value::as_str).unwrap_or("");
    (text("/spec/group"), text("/spec/version"))
}

/// `spec.groupPriorityMinimum` and `spec.versionPriority`.
pub fn priorities(api_service: &Value) -> (i64, i64) {
    let int = |p: &str| api_service.pointer(p).and_then(Value::as_i64).unwrap_or(0);
    (
        int("/spec/groupPriorityMinimum"),
        int("/spec/versionPriority"),
    )
}

pub struct Strategy;

impl kas_registry::Strategy for Strategy {
    fn default(&self, obj: &mut Value) {
        if let Some(svc) = obj
            .pointer_mut("/spec/service")
            .and_then(Value::as_object_mut)
            && !svc.get("port").is_some_and(Value::is_i64)
        {
            svc.insert("port".into(), json!(DEFAULT_SERVICE_PORT));
        }
    }

    /// Upstream's `PrepareForCreate`: the status is the server's; a local APIService is
    /// available at once.
    fn prepare_for_create(&self, obj: &mut Value) {
        let Some(map) = obj.as_object_mut() else {
            return;
        };
        map.insert("status".into(), json!({}));
        if service(obj).is_none() {
            conditions::set(obj, conditions::local_available());
        }
    }

    fn validate(&self, obj: &Value) -> FieldErrors {
        validation::validate_api_service(obj)
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        kas_registry::meta::keep_status(new, old);
    }

    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = kas_registry::validation::validate_object_meta_update(new, old);
        errs.extend(validation::validate_api_service(new));
        errs
    }

    /// Upstream's `apiServerStatusStrategy.PrepareForUpdate`: a status write keeps the
    /// stored labels, annotations, finalizers and owner references (the spec is the
    /// store's already).
    fn prepare_for_status_update(&self, new: &mut Value, old: &Value) {
        let old_meta = kas_registry::meta::metadata(old)
            .cloned()
            .unwrap_or_default();
        let meta = kas_registry::meta::metadata_mut(new);
        for key in ["labels", "annotations", "finalizers", "ownerReferences"] {
            match old_meta.get(key) {
                Some(v) => meta.insert(key.to_owned(), v.clone()),
                None => meta.remove(key),
            };
        }
    }

    fn validate_status_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = kas_registry::validation::validate_object_meta_update(new, old);
        errs.extend(validation::validate_status(new));
        errs
    }

    fn allow_unconditional_update(&self) -> bool {
        false
    }

    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        let service = match service(obj) {
            Some(s) => format!("{}/{}", s.namespace, s.name),
            None => "Local".to_owned(),
        };
        let available = match conditions::get(obj, conditions::AVAILABLE) {
            None => "Unknown".to_owned(),
            Some(c) if c.status == "True" => c.status.to_owned(),
            Some(c) if !c.reason.is_empty() => format!("{} ({})", c.status, c.reason),
            Some(c) => c.status.to_owned(),
        };
        vec![Value::String(service), Value::String(available)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kas_registry::Strategy as _;

    #[test]
    fn a_local_api_service_is_available_on_create() {
        let mut obj = json!({"metadata": {"name": "v1.apps"},
            "spec": {"group": "apps", "version": "v1"}, "status": {"conditions": []}});
        Strategy.prepare_for_create(&mut obj);
        let c = conditions::get(&obj, conditions::AVAILABLE).unwrap();
        assert_eq!((c.status, c.reason), ("True", "Local"));
        assert_eq!(Strategy.table_cells(&obj), [json!("Local"), json!("True")]);
    }

    #[test]
    fn a_status_write_keeps_the_stored_labels_and_annotations() {
        let old = json!({"metadata": {"name": "v1.example.com", "labels": {"a": "1"}}});
        let mut new = json!({"metadata": {"name": "v1.example.com", "labels": {"a": "2"},
            "annotations": {"b": "x"}}, "status": {}});
        Strategy.prepare_for_status_update(&mut new, &old);
        assert_eq!(
            new["metadata"],
            json!({"name": "v1.example.com", "labels": {"a": "1"}})
        );
    }

    #[test]
    fn a_service_backed_one_starts_without_conditions_and_port_443() {
        let mut obj = json!({"metadata": {"name": "v1.example.com"},
            "spec": {"group": "example.com", "version": "v1",
                     "service": {"namespace": "ns", "name": "api"}}});
        Strategy.default(&mut obj);
        Strategy.prepare_for_create(&mut obj);
        assert_eq!(obj["status"], json!({}));
        assert_eq!(service(&obj).unwrap().port, 443);
        assert_eq!(
            Strategy.table_cells(&obj),
            [json!("ns/api"), json!("Unknown")]
        );
        conditions::set(
            &mut obj,
            conditions::Condition::new("False", "MissingEndpoints", "no endpoints"),
        );
        assert_eq!(
            Strategy.table_cells(&obj)[1],
            json!("False (MissingEndpoints)")
        );
    }
}
