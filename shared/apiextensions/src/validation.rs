//! CustomResourceDefinition (`apiextensions.k8s.io/v1`) defaulting and validation over the
//! v1 JSON form, after upstream's `pkg/apis/apiextensions/v1/defaults.go` and
//! `pkg/apis/apiextensions/validation/validation.go` (with `pkg/apiserver/schema`'s
//! structural rules and `pkg/apihelpers`' API-approval policy).
//!
//! Upstream validates the internal version, so errors carry its field paths: identical
//! per-version schemas, subresources, columns and selectable fields are checked at the top
//! level (`spec.validation.openAPIV3Schema...`), a column's path is `JSONPath`, and the
//! conversion webhook's parts are `spec.conversion.webhookClientConfig` and
//! `spec.conversion.conversionReviewVersions` (see `internal`).
//!
//! CEL rules compile through `crate::cel::compile_errors`. Not here yet: the pruning and
//! validity of `default`s (`structural::validate_default` reports nothing until
//! `crate::schema` can prune and validate values).

mod approval;
mod conversion;
mod default_values;
mod defaults;
mod fieldpath;
mod gostruct;
mod internal;
mod listtype;
mod names;
mod openapi;
mod regexp;
mod spec;
mod structural;
mod update;
mod url;
mod util;
mod versions;

use kas_apimachinery::validation::field::{self, Error, Path};
use serde_json::Value;

pub use approval::{ApiApprovalState, api_approval_state, is_protected_community_group};
pub use defaults::set_defaults;
pub use openapi::has_invalid_types;
pub use structural::{new_structural_error, validate_structural};
pub use update::validate_update;

/// Upstream `validationOptions`, without the CEL parts.
#[derive(Clone, Debug)]
pub(crate) struct Options {
    pub allow_defaults: bool,
    pub require_recognized_conversion_review_version: bool,
    pub require_immutable_names: bool,
    pub require_openapi_schema: bool,
    pub require_valid_property_type: bool,
    pub require_structural_schema: bool,
    pub require_pruned_defaults: bool,
    pub require_atomic_set_type: bool,
    pub require_map_list_keys_map_set_validation: bool,
    pub allow_invalid_ca_bundle: bool,
}

impl Options {
    /// The options of `ValidateCustomResourceDefinition` (create).
    pub fn create() -> Options {
        Options {
            allow_defaults: true,
            require_recognized_conversion_review_version: true,
            require_immutable_names: false,
            require_openapi_schema: true,
            require_valid_property_type: true,
            require_structural_schema: true,
            require_pruned_defaults: true,
            require_atomic_set_type: true,
            require_map_list_keys_map_set_validation: true,
            allow_invalid_ca_bundle: true,
        }
    }
}

/// Upstream `ValidateCustomResourceDefinition`: everything a create checks, in upstream's
/// order (metadata, spec, status, stored versions, API approval, preserveUnknownFields).
pub fn validate_create(crd: &Value) -> Vec<Error> {
    let spec = internal::spec(crd);
    let plural = util::str_of(spec.names, "plural");
    let mut errs = names::validate_object_meta(crd, plural, spec.group);
    errs.extend(spec::validate_spec(
        &spec,
        &Options::create(),
        &Path::new("spec"),
    ));
    errs.extend(names::validate_status(crd));
    errs.extend(names::validate_stored_versions(crd, &spec.versions));
    errs.extend(approval::validate_api_approval(crd, None, spec.group));
    errs.extend(validate_preserve_unknown_fields(crd, None));
    errs
}

/// Upstream `ValidateUpdateCustomResourceDefinitionStatus`, without the generic metadata
/// update rules (the caller's `ValidateObjectMetaUpdate`).
pub fn validate_status_update(new: &Value, _old: &Value) -> Vec<Error> {
    names::validate_status(new)
}

/// Upstream's create and update warnings for CRDs: `WarningsOnCreate`/`WarningsOnUpdate` of
/// `pkg/registry/customresourcedefinition` return none in 1.33. (A deprecated version's
/// warning is sent with requests for its custom resources, not with the CRD.)
pub fn warnings(_crd: &Value) -> Vec<String> {
    Vec::new()
}

/// Upstream `validatePreserveUnknownFields`.
fn validate_preserve_unknown_fields(crd: &Value, old: Option<&Value>) -> Vec<Error> {
    let preserve =
        |c: &Value| util::obj(c, "spec").is_some_and(|s| util::bool_of(s, "preserveUnknownFields"));
    if old.is_some_and(preserve) || !preserve(crd) {
        return Vec::new();
    }
    vec![field::invalid(
        &Path::new("spec").child("preserveUnknownFields"),
        true,
        "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
    )]
}

#[cfg(test)]
mod tests;
