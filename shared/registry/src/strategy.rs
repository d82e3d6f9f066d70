//! `Strategy`: everything about a resource that is code, after upstream's
//! `RESTCreateStrategy`, `RESTUpdateStrategy`, `RESTDeleteStrategy` and `GetAttrs`.
//! Objects are JSON values; built-in strategies read them through k8s-openapi's typed
//! structs, custom resources through their CRD's structural schema.

use std::collections::BTreeMap;

use kas_apimachinery::StatusCause;
use serde_json::Value;

/// Validation failures, as upstream's `field.ErrorList` becomes `details.causes`.
pub type FieldErrors = Vec<StatusCause>;

/// A validation's field errors as the causes of the Invalid answer.
pub fn causes(errs: Vec<kas_apimachinery::validation::field::Error>) -> FieldErrors {
    errs.iter()
        .map(kas_apimachinery::validation::field::Error::to_cause)
        .collect()
}

/// The conversion of a resource stored in another shape than it is served in, after
/// upstream's conversion to and from its internal version (events.k8s.io/v1 Events are
/// stored as core/v1 Events, which upstream's storage factory calls cohabitating).
/// Conversions are total: what one direction cannot express is left as it is.
pub trait Conversion: Send + Sync {
    /// The stored form of an object in the served shape.
    fn to_stored(&self, served: Value) -> Value;

    /// The served form of a stored object.
    fn to_served(&self, stored: Value) -> Value;

    /// The schema of the stored form, which the store writes as upstream's Go types would
    /// (`schema::go_encoded`); the served form is written with the descriptor's.
    fn stored_schema(&self) -> Option<&'static kas_apimachinery::schema::Message>;
}

/// An API version a resource is also served in: its `apiVersion`, the conversion from
/// the stored form, and the schema of that version.
pub type OtherVersion = (
    &'static str,
    &'static dyn Conversion,
    &'static kas_apimachinery::schema::Message,
);

/// Upstream's `rest.Creater` of a resource that is never stored (the authentication and
/// authorization reviews): the answer to a create, given the object as decoded, defaulted
/// and admitted with its managed fields, the request's namespace and its options (the
/// requesting user among them).
#[async_trait::async_trait]
pub trait Creater: Send + Sync {
    async fn create(
        &self,
        namespace: &str,
        obj: Value,
        opts: &crate::rest::options::WriteOptions,
    ) -> crate::Result<Value>;
}

pub trait Strategy: Send + Sync {
    /// Set for a resource stored in another shape than it is served in. The store converts
    /// right after `default` and before it hands stored objects out, so every other hook
    /// sees the stored form, as upstream's strategies see the internal version; `default`,
    /// `patch_schema` and `table_cells` (tables are built from answers) see the served form.
    fn conversion(&self) -> Option<&dyn Conversion> {
        None
    }

    /// The other API versions this resource's objects are also served in (each with the
    /// conversion from the stored form and its schema), so that field managers that
    /// wrote through them are compared in their version.
    fn other_versions(&self) -> &'static [OtherVersion] {
        &[]
    }

    /// For a resource without a Go type (`ResourceDescriptor::schema` is `None`: custom
    /// resources), the shape field managers and server-side apply compare along (upstream
    /// builds it from the CRD's structural schema); `None` turns both off.
    fn fields_schema(&self) -> Option<&'static kas_apimachinery::schema::Message> {
        None
    }

    /// The list kind's shape to go with `fields_schema` (the OpenAPI documents name it).
    fn fields_list_schema(&self) -> Option<&'static kas_apimachinery::schema::Message> {
        None
    }

    /// For a resource without a Go type, the definitions of its kind and list kind as it
    /// publishes them in the OpenAPI documents of `dialect` (a custom resource's come from
    /// its CRD's schema, as upstream's CRD OpenAPI builder writes them), under the names
    /// of `fields_schema` and `fields_list_schema`; `None` describes those messages.
    fn openapi_definitions(&self, _dialect: OpenApiDialect) -> Option<OpenApiDefinitions> {
        None
    }

    /// For a resource without a Go type, what upstream's decoder drops from a decoded or
    /// patched object (a custom resource's fields its structural schema does not declare),
    /// answering each dropped field's path (`spec.foo`), which `fieldValidation` reports as
    /// `unknown field "spec.foo"`; `None` when nothing is pruned.
    fn prune_unknown(&self, _obj: &mut Value) -> Option<Vec<String>> {
        None
    }

    /// The fields (dotted paths) a write through `subresource` (`""` for the resource itself)
    /// resets, which no field manager owns (upstream's `GetResetFields`).
    fn reset_fields(&self, _subresource: &str) -> &'static [&'static str] {
        &[]
    }

    /// Upstream's scheme defaulting, applied to every decoded object.
    fn default(&self, _obj: &mut Value) {}

    /// Clears what a client may not set on create (e.g. `status`) and sets what the
    /// server owns for this kind.
    fn prepare_for_create(&self, _obj: &mut Value) {}

    /// What a create takes from the requesting user, after `prepare_for_create` (upstream's
    /// `PrepareForCreate` reading the user from the request context: a
    /// CertificateSigningRequest's requestor).
    fn prepare_for_create_by(&self, _obj: &mut Value, _user: Option<&kas_auth::UserInfo>) {}

    fn validate(&self, obj: &Value) -> FieldErrors;

    /// Set for a resource that is not stored: its create is answered by the `Creater`
    /// (validation, metadata and storage are its own), after admission's mutation.
    fn creater(&self) -> Option<&dyn Creater> {
        None
    }

    /// Whether a create is answered with a `Status` of success instead of the object
    /// (upstream's `bindings`, whose REST storage returns one).
    fn create_answers_status(&self) -> bool {
        false
    }

    /// The warning every request to a deprecated API version gets first (upstream's
    /// installer wraps such a resource's handlers with `deprecation.WarningMessage`).
    fn deprecation(&self) -> Option<&'static str> {
        None
    }

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

    /// What a write through the `status` subresource resets of the client's metadata
    /// beyond the generic rules (upstream's status strategy's `PrepareForUpdate`): the
    /// store has taken the client's metadata and status and the stored rest, and recorded
    /// the writer's managed fields, which stay. Most keep the client's metadata; some reset
    /// it with `ResetObjectMetaForStatus` (`crate::meta::reset_object_meta_for_status`) or
    /// keep the stored one (`crate::meta::keep_object_meta`).
    fn prepare_for_status_update(&self, _new: &mut Value, _old: &Value) {}

    /// Validation of a write through the `status` subresource (upstream's status
    /// strategy's `ValidateUpdate`); the main update's by default.
    fn validate_status_update(&self, new: &Value, old: &Value) -> FieldErrors {
        self.validate_update(new, old)
    }

    /// Validation of a write through a custom update subresource (upstream's subresource
    /// strategy's `ValidateUpdate`: a pod's `ephemeralcontainers`); the main update's by
    /// default.
    fn validate_subresource_update(
        &self,
        _subresource: &str,
        new: &Value,
        old: &Value,
    ) -> FieldErrors {
        self.validate_update(new, old)
    }

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

    /// Upstream's `TTLFunc`: every create and update of this resource expires after this
    /// many seconds (events, `--event-ttl`). Upstream's only TTL is that constant, so this
    /// takes no object. Marking an object for deletion keeps no TTL, as upstream's
    /// finalizer update does not.
    fn ttl_seconds(&self) -> Option<i64> {
        None
    }

    /// The fields a field selector may name, with their values (upstream's `GetAttrs`);
    /// `metadata.name` and, when namespaced, `metadata.namespace` are always there. It
    /// reads the stored form, which storage filters.
    fn field_set(&self, obj: &Value) -> BTreeMap<String, String> {
        crate::meta::default_field_set(obj)
    }

    /// The selectable field (one of `field_set`'s) the watch cache files watchers and
    /// objects by: upstream's trigger function and store indexer of the kind's storage,
    /// and its predicates' `IndexFields`, which only pods declare (`spec.nodeName`). A
    /// watch or list whose field selector pins it then costs the objects of that value,
    /// not every object: a kubelet's watch of its node's pods.
    fn index_field(&self) -> Option<&'static str> {
        None
    }

    /// Whether upstream registers a field label conversion function for this kind
    /// (`AddFieldLabelConversionFunc`: Pods, Nodes, Secrets, Namespaces, Events, ...). A
    /// field selector on a field `field_set` lacks is then refused with that function's
    /// `field label not supported: <field>`; without one, upstream's
    /// `DefaultMetaV1FieldSelectorConversion` refuses anything but `metadata.name` and
    /// `metadata.namespace` with its own message.
    fn field_label_conversion(&self) -> bool {
        false
    }

    /// Whether something besides `metadata.finalizers` keeps the object while it is being
    /// deleted (a namespace's `spec.finalizers`).
    fn holds_deletion(&self, _obj: &Value) -> bool {
        false
    }

    /// For a resource whose deletion is its own (`custom_delete`), what its first delete
    /// sets besides the deletionTimestamp (a namespace turns Terminating and takes the
    /// garbage collector's finalizers the options ask for; a CRD takes its cleanup
    /// finalizer).
    fn prepare_for_deletion(&self, _obj: &mut Value, _opts: &crate::rest::options::WriteOptions) {}

    /// Upstream's `GarbageCollectionDeleteStrategy.DefaultGarbageCollectionPolicy`: what a
    /// delete that names no policy does to the object's dependents when its finalizers do
    /// not say either; `None` for a strategy without one (dependents are deleted in the
    /// background).
    fn default_garbage_collection_policy(&self) -> Option<GarbageCollectionPolicy> {
        None
    }

    /// The warning a delete (or deletecollection) that sets neither `propagationPolicy`
    /// nor `orphanDependents` gets (upstream's job `REST.Delete`: a Job's pods are
    /// orphaned by default).
    fn default_policy_warning(&self) -> Option<&'static str> {
        None
    }

    /// Upstream's `Store.ReturnDeletedObject`: whether a delete that removed the object
    /// answers its last state rather than a `Status` of success naming it.
    fn return_deleted_object(&self) -> bool {
        false
    }

    /// Upstream's `RESTGracefulDeleteStrategy.CheckGracefulDelete`: for a resource that
    /// deletes gracefully (pods), the grace period a deletion of `obj` waits, given the
    /// client's `gracePeriodSeconds` (already 1 when it was negative); `None` for a resource
    /// that does not. A period of zero deletes at once, after the object is marked.
    fn check_graceful_delete(&self, _obj: &Value, _requested: Option<i64>) -> Option<i64> {
        None
    }

    /// Whether deletion is the resource's own rather than the generic store's, as upstream's
    /// namespaces' `REST.Delete`: the request's preconditions are checked as storage checks
    /// them (`Precondition failed: UID in precondition: ...`) instead of by `BeforeDelete`,
    /// and marking the object for deletion sets its deletionTimestamp only, without the
    /// grace period and generation bump of `markAsDeleting`.
    fn custom_delete(&self) -> bool {
        false
    }

    /// A custom update subresource (a namespace's `finalize`): the stored object with what
    /// the subresource may change taken from `new`; `None` when there is no such
    /// subresource. `status` is handled by the store for every resource that declares it.
    fn subresource_update(&self, _subresource: &str, _new: &Value, _old: &Value) -> Option<Value> {
        None
    }

    /// A create subresource (a pod's `binding` or `eviction`): what `body` (the
    /// subresource's kind, decoded) does to the stored object `current`, or the refusal;
    /// `None` when there is no such subresource. An update runs inside the compare-and-swap
    /// loop, so this may run more than once.
    fn subresource_create(
        &self,
        _subresource: &str,
        _body: &Value,
        _current: &Value,
    ) -> Option<crate::Result<SubresourceEffect>> {
        None
    }

    /// Patch strategies and merge keys for strategic merge patch, when they are not the
    /// descriptor's schema's (see `Store::patch_schema`).
    fn patch_schema(&self) -> Option<&dyn kas_apimachinery::patch::PatchSchema> {
        None
    }

    /// The cells after the name for each `TableColumn` of the descriptor.
    fn table_cells(&self, _obj: &Value) -> Vec<Value> {
        Vec::new()
    }
}

/// Upstream's `rest.GarbageCollectionPolicy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GarbageCollectionPolicy {
    /// Dependents are deleted (in the background unless the delete asks otherwise).
    DeleteDependents,
    /// Dependents are orphaned unless the delete asks otherwise (the older groups' kinds:
    /// v1 ReplicationControllers, batch/v1 Jobs).
    OrphanDependents,
    /// The resource is never garbage collected: deletes set no finalizer (events).
    Unsupported,
}

/// What a create subresource does to its object.
#[derive(Clone, Debug)]
pub enum SubresourceEffect {
    /// The object, changed (a pod's `binding`).
    Update(Value),
    /// The object deleted with the body's options (a pod's `eviction`).
    Delete {
        preconditions: kas_storage::Preconditions,
        grace_period_seconds: Option<i64>,
        dry_run: bool,
    },
}

/// Which OpenAPI document a definition is written for: references point to
/// `#/definitions/` in Swagger 2.0 and to `#/components/schemas/` in OpenAPI 3.0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenApiDialect {
    V2,
    V3,
}

/// A kind's and its list kind's OpenAPI schema objects (`Strategy::openapi_definitions`).
#[derive(Clone, Debug, PartialEq)]
pub struct OpenApiDefinitions {
    pub kind: Value,
    pub list: Value,
}
