//! What a CRD version's structural schema does to custom resources, after upstream's
//! `k8s.io/apiextensions-apiserver/pkg/apiserver/schema` and kube-openapi's `validate`:
//!
//! - [`Structural`]: the schema as upstream's `NewStructural` reads a `JSONSchemaProps`
//!   (`structural`), lenient with input that CRD validation would have refused, and
//!   [`Structural::unfold`] (`unfold`);
//! - [`prune`]: unknown fields dropped, their paths reported as upstream reports them for
//!   `fieldValidation` (`pruning`);
//! - [`prune_defaults`], [`prune_non_nullable_nulls_without_defaults`] and [`default`]
//!   (`defaulting`);
//! - [`SchemaValidator`]: OpenAPI v3 validation of a custom resource with upstream's
//!   `field.Error`s, on create and (ratcheting) on update (`openapi`, kube-openapi's
//!   validator behind `ValidateCustomResource`);
//! - [`validate_list_sets_and_maps`]: `x-kubernetes-list-type` set and map uniqueness
//!   (`listtype`);
//! - [`Structural::to_kube_openapi`] and [`Structural::to_openapi_v2`]: the schema as a CRD
//!   publishes it in OpenAPI v3 and v2 (`kubeopenapi`);
//! - [`get_object_meta`], [`coerce_object_meta`] and [`validate_embedded_resources`]:
//!   TypeMeta and ObjectMeta of the resource and of embedded resources (`objectmeta`).
//!
//! Upstream's order on a request body (`unstructuredSchemaCoercer.apply`): root metadata
//! through [`get_object_meta`] (its unknown paths first), [`prune`] with
//! `is_resource_root`, [`prune_non_nullable_nulls_without_defaults`], then
//! [`coerce_object_meta`] of embedded resources (not the root); then [`default`] (with
//! the schema after [`prune_defaults`]). On create and update the strategy checks
//! [`validate_embedded_resources`] and [`validate_list_sets_and_maps`], the validator
//! [`SchemaValidator::validate`] or [`SchemaValidator::validate_update`].

mod defaulting;
mod gofmt;
mod kubeopenapi;
mod listtype;
mod objectmeta;
mod openapi;
mod props;
mod pruning;
mod structural;
mod unfold;

pub use defaulting::{default, prune_defaults, prune_non_nullable_nulls_without_defaults};
pub use gofmt::bad_value;
pub use listtype::validate_list_sets_and_maps;
pub use objectmeta::{
    ObjectMetaOptions, coerce as coerce_object_meta, get_object_meta, validate_embedded_resources,
};
pub use openapi::SchemaValidator;
pub use pruning::prune;
pub use structural::{
    Extensions, Generic, NestedValueValidation, Structural, StructuralOrBool, ValueValidation,
};
