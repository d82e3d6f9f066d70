//! The namespaces custom resources live in, read from core-apiserver's storage on the same
//! etcd through a watch cache, for upstream's `NamespaceLifecycle` admission plugin: a
//! custom resource is not created in a namespace that does not exist or is terminating.
//! Only read here; core-apiserver owns the resource.

use std::sync::Arc;

use kas_registry::store::Store;
use kas_registry::{ResourceDescriptor, Scope, Verb};
use serde_json::Value;

/// core/v1 namespaces as core stores them (`/registry/namespaces/<name>`).
pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "",
    version: "v1",
    kind: "Namespace",
    list_kind: "NamespaceList",
    plural: "namespaces",
    singular: "namespace",
    short_names: &[],
    categories: &[],
    scope: Scope::Cluster,
    verbs: &[Verb::Get, Verb::List, Verb::Watch],
    subresources: &[],
    table_columns: &[],
    table_name_and_age: true,
    storage_resource: "namespaces",
    schema: Some(&kas_api::core::v1::NAMESPACE),
    list_schema: Some(&kas_api::core::v1::NAMESPACE_LIST),
};

/// Reads only: nothing here writes a namespace (nor a webhook configuration).
pub(crate) struct ReadOnly;

impl kas_registry::Strategy for ReadOnly {
    fn validate(&self, _obj: &Value) -> kas_registry::strategy::FieldErrors {
        Vec::new()
    }

    fn validate_update(&self, _new: &Value, _old: &Value) -> kas_registry::strategy::FieldErrors {
        Vec::new()
    }
}

/// The namespaces store over `storage` (a watch cache of `/namespaces`) and its
/// attributes function for that cache.
pub fn store(storage: Arc<dyn kas_storage::Storage>) -> Store {
    Store::new(&DESCRIPTOR, Arc::new(ReadOnly), storage)
}

/// The attributes the namespaces' watch cache keeps.
pub fn attrs() -> kas_storage::AttrsFunc {
    kas_registry::store::get_attrs(&(Arc::new(ReadOnly) as Arc<dyn kas_registry::Strategy>))
}
