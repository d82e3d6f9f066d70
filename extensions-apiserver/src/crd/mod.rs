//! apiextensions.k8s.io/v1 CustomResourceDefinitions, after upstream's
//! `pkg/registry/customresourcedefinition`: the descriptor, the strategy (defaulting and
//! validation are kas-apiextensions'), and the deletion that waits for the custom
//! resources to go (`REST.Delete` adding the cleanup finalizer).

pub mod conditions;

use kas_endpoints::responsewriters::table::{DEFAULT_TABLE_COLUMNS, default_table_cells};
use kas_registry::strategy::{FieldErrors, causes};
use kas_registry::{ResourceDescriptor, Scope, Subresource, Verb};
use serde_json::{Value, json};

pub const GROUP: &str = "apiextensions.k8s.io";

/// Upstream `CustomResourceCleanupFinalizer`: held while the CRD's objects are deleted.
pub const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

pub static DESCRIPTOR: ResourceDescriptor = ResourceDescriptor {
    group: GROUP,
    version: "v1",
    kind: "CustomResourceDefinition",
    list_kind: "CustomResourceDefinitionList",
    plural: "customresourcedefinitions",
    singular: "customresourcedefinition",
    short_names: &["crd", "crds"],
    categories: &["api-extensions"],
    scope: Scope::Cluster,
    verbs: Verb::ALL,
    subresources: &[Subresource::STATUS],
    table_columns: DEFAULT_TABLE_COLUMNS,
    table_name_and_age: false,
    storage_resource: "apiextensions.k8s.io/customresourcedefinitions",
    schema: Some(&kas_api::apiextensions::v1::CUSTOM_RESOURCE_DEFINITION),
    list_schema: Some(&kas_api::apiextensions::v1::CUSTOM_RESOURCE_DEFINITION_LIST),
};

/// CRDs are written as upstream's apiextensions server writes them: JSON in
/// `apiextensions.k8s.io/v1beta1` (its `LegacyCodec`), whatever `--storage-media-type` says,
/// and read defaulted.
pub fn stored_kind() -> kas_storage_etcd::Registration {
    use kas_registry::Strategy as _;
    let (group, version, kind) = DESCRIPTOR.storage_version();
    kas_storage_etcd::Registration {
        storage_resource: DESCRIPTOR.storage_resource,
        kind: kas_storage_etcd::StoredKind {
            group,
            version,
            kind,
            resource: DESCRIPTOR.plural,
            media_type: kas_storage_etcd::MediaType::Json,
        },
        defaults: Some(std::sync::Arc::new(|crd: &mut Value| Strategy.default(crd))),
    }
}

pub struct Strategy;

/// The name of the version marked `storage: true`.
pub fn storage_version(crd: &Value) -> Option<&str> {
    versions(crd)
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        .and_then(|v| v.get("name").and_then(Value::as_str))
}

/// `spec.versions`, in order.
pub fn versions(crd: &Value) -> impl Iterator<Item = &Value> {
    crd.pointer("/spec/versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// Upstream's strategies append the storage version to `status.storedVersions` when it
/// is not there yet.
fn record_stored_version(crd: &mut Value) {
    let Some(storage) = storage_version(crd).map(str::to_owned) else {
        return;
    };
    let status = status_mut(crd);
    let stored = status
        .entry("storedVersions")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Some(stored) = stored.as_array_mut()
        && !stored.iter().any(|v| v.as_str() == Some(storage.as_str()))
    {
        stored.push(Value::String(storage));
    }
}

fn status_mut(crd: &mut Value) -> &mut serde_json::Map<String, Value> {
    if !crd.get("status").is_some_and(Value::is_object) {
        crd["status"] = json!({});
    }
    match crd.get_mut("status") {
        Some(Value::Object(map)) => map,
        _ => unreachable!("status was just made an object"),
    }
}

impl kas_registry::Strategy for Strategy {
    fn reset_fields(&self, subresource: &str) -> &'static [&'static str] {
        match subresource {
            "status" => &["metadata", "spec"],
            _ => &["status"],
        }
    }

    fn default(&self, obj: &mut Value) {
        kas_apiextensions::validation::set_defaults(obj);
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(map) = obj.as_object_mut() {
            map.insert("status".into(), json!({}));
        }
        kas_registry::meta::first_generation(obj);
        record_stored_version(obj);
    }

    fn validate(&self, obj: &Value) -> FieldErrors {
        causes(kas_apiextensions::validation::validate_create(obj))
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        kas_apiextensions::validation::warnings(obj)
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        kas_registry::meta::keep_status(new, old);
        let changed = new.get("spec") != old.get("spec");
        kas_registry::meta::next_generation(new, old, changed);
        record_stored_version(new);
    }

    /// The generic metadata rules first, as upstream's `ValidateCustomResourceDefinitionUpdate`.
    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = kas_registry::validation::validate_object_meta_update(new, old);
        errs.extend(causes(kas_apiextensions::validation::validate_update(
            new, old,
        )));
        errs
    }

    fn validate_status_update(&self, new: &Value, old: &Value) -> FieldErrors {
        causes(kas_apiextensions::validation::validate_status_update(
            new, old,
        ))
    }

    fn warnings_on_update(&self, new: &Value, _old: &Value) -> Vec<String> {
        kas_apiextensions::validation::warnings(new)
    }

    fn allow_unconditional_update(&self) -> bool {
        false
    }

    /// The first deletion only marks the CRD (upstream's `REST.Delete`): the finalizer
    /// controller deletes its objects, then removes [`CLEANUP_FINALIZER`].
    fn custom_delete(&self) -> bool {
        true
    }

    fn holds_deletion(&self, obj: &Value) -> bool {
        obj.pointer("/metadata/deletionTimestamp").is_none()
    }

    fn prepare_for_deletion(&self, obj: &mut Value, _: &kas_registry::rest::options::WriteOptions) {
        let meta = kas_registry::meta::metadata_mut(obj);
        let finalizers = meta
            .entry("finalizers")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Some(list) = finalizers.as_array_mut()
            && !list.iter().any(|f| f == CLEANUP_FINALIZER)
        {
            list.push(json!(CLEANUP_FINALIZER));
        }
        conditions::set(
            obj,
            conditions::Condition::new(
                conditions::TERMINATING,
                "True",
                "InstanceDeletionPending",
                "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
            ),
        );
    }

    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        default_table_cells(obj)
    }
}
