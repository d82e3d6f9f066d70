//! core/v1 `bindings`, after upstream's `LegacyBindingREST`: the old way for a scheduler
//! to bind a pod (POST a Binding named after the pod to the namespace's `bindings`), the
//! same as `pods/<name>/binding`. Nothing is stored under `bindings`: the create binds the
//! pod in storage and is answered with a `Status` of success.

use std::sync::Arc;

use async_trait::async_trait;
use kas_apimachinery::Status;
use kas_registry::strategy::FieldErrors;
use kas_registry::{ResourceDescriptor, Scope, Verb};
use kas_storage::{
    GetOptions, ListOptions, ListResult, Object, ObjectRef, Preconditions, Storage, UpdateFn,
    ValidateDeletionFn, WatchOptions, WatchStream,
};
use serde_json::Value;

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: "",
    version: "v1",
    kind: "Binding",
    list_kind: "BindingList",
    plural: "bindings",
    singular: "binding",
    short_names: &[],
    categories: &[],
    scope: Scope::Namespaced,
    verbs: &[Verb::Create],
    subresources: &[],
    table_columns: &[],
    table_name_and_age: true,
    storage_resource: "bindings",
    schema: Some(&kas_api::core::v1::BINDING),
    list_schema: None,
};

/// How the role installs this resource: a storage whose create binds the pod.
pub fn install(_: &super::ResourceOptions) -> super::Install {
    super::Install {
        descriptor: &DESCRIPTOR,
        strategy: Arc::new(Strategy),
        reads: super::Reads::Own(|etcd| Arc::new(PodBinder { etcd: etcd.clone() })),
        hooks: None,
    }
}

pub struct Strategy;

impl kas_registry::Strategy for Strategy {
    /// `ValidatePodBinding` runs where the pod is bound, as upstream's.
    fn validate(&self, _obj: &Value) -> FieldErrors {
        FieldErrors::new()
    }

    fn validate_update(&self, _obj: &Value, _old: &Value) -> FieldErrors {
        FieldErrors::new()
    }

    fn create_answers_status(&self) -> bool {
        true
    }
}

/// Binds pods in etcd, where the pods' store and watch cache see it.
struct PodBinder {
    etcd: Arc<dyn Storage>,
}

fn callback(err: kas_registry::Error) -> kas_storage::Error {
    kas_storage::Error::Callback(Box::new(err))
}

fn unsupported() -> kas_storage::Error {
    kas_storage::Error::internal("bindings are only created")
}

#[async_trait]
impl Storage for PodBinder {
    /// `key` is `/bindings/<namespace>/<name>`; the pod is `/pods/<namespace>/<name>`.
    async fn create(
        &self,
        key: &str,
        binding: Value,
        _: Option<i64>,
    ) -> kas_storage::Result<ObjectRef> {
        let pod_key = key.replacen("/bindings/", "/pods/", 1);
        let name = kas_registry::meta::name(&binding).to_owned();
        let now = kas_registry::meta::rfc3339(std::time::SystemTime::now());
        let try_update = |current: Option<&Value>| -> kas_storage::Result<Option<Value>> {
            let Some(pod) = current else {
                return Err(kas_storage::Error::NotFound {
                    key: pod_key.clone(),
                });
            };
            let mut bound =
                crate::resources::pods::binding::assign(&binding, pod, &now).map_err(callback)?;
            // Stored as the pods' store writes: no resourceVersion, Go's zero values.
            if let Some(meta) = bound.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.remove("resourceVersion");
            }
            kas_apimachinery::schema::go_encoded(
                &mut bound,
                &kas_apimachinery::schema::Kind::Message(&kas_api::core::v1::POD),
            );
            Ok(Some(bound))
        };
        let bound = self
            .etcd
            .guaranteed_update(
                &pod_key,
                &Preconditions::default(),
                false,
                &try_update,
                None,
                None,
            )
            .await;
        match bound {
            Ok(_) => Object::unversioned(key, &binding).map(Arc::new),
            Err(kas_storage::Error::NotFound { .. }) => {
                Err(callback(Status::not_found("", "pods", &name).into()))
            }
            Err(e) => Err(e),
        }
    }

    async fn get(&self, _: &str, _: &GetOptions) -> kas_storage::Result<Option<ObjectRef>> {
        Err(unsupported())
    }

    async fn list(&self, _: &str, _: &ListOptions) -> kas_storage::Result<ListResult> {
        Err(unsupported())
    }

    async fn guaranteed_update(
        &self,
        _: &str,
        _: &Preconditions,
        _: bool,
        _: &UpdateFn<'_>,
        _: Option<ObjectRef>,
        _: Option<i64>,
    ) -> kas_storage::Result<ObjectRef> {
        Err(unsupported())
    }

    async fn delete(
        &self,
        _: &str,
        _: &Preconditions,
        _: &ValidateDeletionFn<'_>,
        _: Option<ObjectRef>,
    ) -> kas_storage::Result<ObjectRef> {
        Err(unsupported())
    }

    async fn watch(&self, _: &str, _: &WatchOptions) -> kas_storage::Result<WatchStream> {
        Err(unsupported())
    }

    async fn count(&self, _: &str) -> kas_storage::Result<i64> {
        Ok(0)
    }

    async fn current_revision(&self) -> kas_storage::Result<u64> {
        self.etcd.current_revision().await
    }
}
