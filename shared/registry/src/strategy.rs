//! `Strategy`: everything about a resource that is code, after upstream's
//! `RESTCreateStrategy`, `RESTUpdateStrategy`, `RESTDeleteStrategy` and `GetAttrs`.
//! Objects are JSON values; built-in strategies read them through k8s-openapi's typed
//! structs, custom resources through their CRD's structural schema.

use std::collections::BTreeMap;

use kas_apimachinery::StatusCause;
use serde_json::Value;

/// Validation failures, as upstream's `field.ErrorList` becomes `details.causes`.
pub type FieldErrors = Vec<StatusCause>;

pub trait Strategy: Send + Sync {
    /// Upstream's scheme defaulting, applied to every decoded object.
    fn default(&self, _obj: &mut Value) {}

    /// Clears what a client may not set on create (e.g. `status`) and sets what the
    /// server owns for this kind.
    fn prepare_for_create(&self, _obj: &mut Value) {}

    fn validate(&self, obj: &Value) -> FieldErrors;

    /// Non-fatal problems, sent as `Warning` headers.
    fn warnings_on_create(&self, _obj: &Value) -> Vec<String> {
        Vec::new()
    }

    /// Normalizes after validation (upstream's `Canonicalize`).
    fn canonicalize(&self, _obj: &mut Value) {}

    /// Copies what an update of the main resource may not change (e.g. `status`) from
    /// `old` into `new`.
    fn prepare_for_update(&self, _new: &mut Value, _old: &Value) {}

    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors;

    fn warnings_on_update(&self, _new: &Value, _old: &Value) -> Vec<String> {
        Vec::new()
    }

    /// Whether PUT of a missing object creates it.
    fn allow_create_on_update(&self) -> bool {
        false
    }

    /// Whether PUT without `metadata.resourceVersion` is allowed.
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    /// The fields a field selector may name, with their values (upstream's `GetAttrs`);
    /// `metadata.name` and, when namespaced, `metadata.namespace` are always there.
    fn field_set(&self, obj: &Value) -> BTreeMap<String, String> {
        crate::meta::default_field_set(obj)
    }

    /// Whether something besides `metadata.finalizers` keeps the object while it is being
    /// deleted (a namespace's `spec.finalizers`).
    fn holds_deletion(&self, _obj: &Value) -> bool {
        false
    }

    /// Marks an object whose deletion is pending (a namespace turns Terminating).
    fn prepare_for_deletion(&self, _obj: &mut Value) {}

    /// A custom update subresource (a namespace's `finalize`): the stored object with what
    /// the subresource may change taken from `new`; `None` when there is no such
    /// subresource. `status` is handled by the store for every resource that declares it.
    fn subresource_update(&self, _subresource: &str, _new: &Value, _old: &Value) -> Option<Value> {
        None
    }

    /// Patch strategies and merge keys for strategic merge patch; `None` (custom
    /// resources) makes strategic merge patch a 415, as upstream.
    fn patch_schema(&self) -> Option<&dyn kas_apimachinery::patch::PatchSchema> {
        None
    }

    /// The cells after the name for each `TableColumn` of the descriptor.
    fn table_cells(&self, _obj: &Value) -> Vec<Value> {
        Vec::new()
    }
}
