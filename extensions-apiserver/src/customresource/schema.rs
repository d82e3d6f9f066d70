//! A served version's `openAPIV3Schema` and what it does to custom resources, in
//! upstream's order (kas-apiextensions' `schema`): a request body's root metadata is
//! decoded as an ObjectMeta, unknown fields are pruned (their paths reported for
//! `fieldValidation`), nulls of non-nullable fields without defaults dropped, embedded
//! resources' metadata coerced; then the schema's defaults are applied. Validation is
//! the OpenAPI schema's (ratcheting on update), embedded resources' metadata, list-type
//! uniqueness, then the CEL rules (`x-kubernetes-validations`) when nothing else blocks
//! them.

use kas_apiextensions::schema::{
    ObjectMetaOptions, SchemaValidator, Structural, coerce_object_meta, default, get_object_meta,
    prune, prune_defaults, prune_non_nullable_nulls_without_defaults, validate_embedded_resources,
    validate_list_sets_and_maps,
};
use kas_apimachinery::validation::field::{self, ErrorType, Path};
use serde_json::Value;

pub struct VersionSchema {
    structural: Structural,
    /// The schema whose defaults are applied: upstream drops the defaults that pruning
    /// would drop (`PruneDefaults`) before serving a version.
    defaulting: Structural,
    validator: SchemaValidator,
    /// The validator of the `status` property alone, which writes through the `status`
    /// subresource are checked with (upstream's `statusSchemaValidator`).
    status_validator: Option<SchemaValidator>,
    /// The `x-kubernetes-validations` rules, compiled once; `None` without rules.
    rules: Option<kas_apiextensions::cel::Validator>,
    /// The CRD's `spec.preserveUnknownFields` (a CRD kept from `v1beta1`): nothing is
    /// pruned, as upstream's coercer skips pruning then.
    pub preserve_unknown_fields: bool,
}

const DECODING: ObjectMetaOptions = ObjectMetaOptions {
    drop_malformed_fields: true,
    return_unknown_field_paths: true,
};

impl VersionSchema {
    pub fn new(schema: &Value) -> VersionSchema {
        let structural = Structural::new(schema);
        let mut defaulting = structural.clone();
        if prune_defaults(&mut defaulting).is_err() {
            defaulting = structural.clone();
        }
        let rules = kas_apiextensions::cel::Validator::new(schema);
        VersionSchema {
            rules: (!rules.is_empty()).then_some(rules),
            validator: SchemaValidator::from_structural(&structural),
            status_validator: schema
                .pointer("/properties/status")
                .map(SchemaValidator::new),
            structural,
            defaulting,
            preserve_unknown_fields: false,
        }
    }

    /// Drops the fields the schema does not declare (unless the CRD preserves unknown
    /// fields); answers their paths (the root metadata's always).
    pub fn prune(&self, obj: &mut Value) -> Vec<String> {
        let mut unknown = Vec::new();
        if let Some(map) = obj.as_object_mut()
            && let Ok((_, paths)) = get_object_meta(map, &Path::nil(), DECODING)
        {
            unknown.extend(paths);
        }
        if !self.preserve_unknown_fields {
            unknown.extend(prune(obj, &self.structural, true, true));
            prune_non_nullable_nulls_without_defaults(obj, Some(&self.structural));
        }
        if let Ok(paths) = coerce_object_meta(&Path::nil(), obj, &self.structural, false, DECODING)
        {
            unknown.extend(paths);
        }
        unknown
    }

    /// What upstream's storage decoder does to a stored object before anything reads it
    /// (`schemaCoercingDecoder` with `dropInvalidMetadata` and `repairGeneration`, then
    /// the defaulter): unknown fields pruned, malformed metadata dropped, a missing
    /// generation made 1, the schema's defaults applied. A default added to the schema
    /// thus shows on objects stored before it, and a field it no longer declares does not.
    pub fn on_read(&self, obj: &mut Value) {
        self.prune(obj);
        if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut)
            && meta.get("generation").and_then(Value::as_i64).unwrap_or(0) == 0
        {
            meta.insert("generation".to_owned(), Value::from(1));
        }
        self.default(obj);
    }

    /// Applies the schema's defaults.
    pub fn default(&self, obj: &mut Value) {
        default(obj, &self.defaulting);
    }

    /// The OpenAPI schema's validation of `new` (an update's `old` ratchets what was
    /// already invalid), upstream's `ValidateCustomResource`.
    pub fn validate_openapi(&self, new: &Value, old: Option<&Value>) -> Vec<field::Error> {
        let root = Path::nil();
        match old {
            Some(old) => self.validator.validate_update(&root, new, old),
            None => self.validator.validate(&root, new),
        }
    }

    /// Upstream's `ValidateStatusUpdate` of the schema: only `status`, with the status
    /// property's validator, its errors under `status` (their messages name the path
    /// inside it).
    pub fn validate_status_openapi(&self, new: &Value, old: &Value) -> Vec<field::Error> {
        let (Some(validator), Some(status)) = (&self.status_validator, new.get("status")) else {
            return Vec::new();
        };
        let path = Path::new("status");
        match old.get("status") {
            Some(old) => validator.validate_update(&path, status, old),
            None => validator.validate(&path, status),
        }
    }

    /// What the strategy checks after the validator's checks (`errs`, which it extends):
    /// embedded resources (not on a status write, as upstream's status strategy), list
    /// types, then the CEL rules when nothing found so far blocks them.
    pub fn validate_rest(
        &self,
        new: &Value,
        old: Option<&Value>,
        embedded: bool,
        errs: &mut Vec<field::Error>,
    ) {
        let root = Path::nil();
        if embedded {
            errs.extend(validate_embedded_resources(
                &root,
                new,
                &self.structural,
                false,
            ));
        }
        let old_lists_valid = old
            .is_none_or(|old| validate_list_sets_and_maps(&root, &self.structural, old).is_empty());
        if old_lists_valid {
            errs.extend(validate_list_sets_and_maps(&root, &self.structural, new));
        }
        if let Some(rules) = &self.rules {
            // Upstream's `hasBlockingErr`: rules are not run on an object whose shape is
            // already wrong.
            let blocking = errs.iter().any(|e| {
                matches!(
                    e.error_type,
                    ErrorType::NotSupported
                        | ErrorType::Required
                        | ErrorType::TooLong
                        | ErrorType::TooMany
                        | ErrorType::TypeInvalid
                )
            });
            if blocking {
                errs.push(field::invalid(
                    &root,
                    field::BadValue::Null,
                    "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
                ));
            } else {
                errs.extend(rules.validate(&root, new, old));
            }
        }
    }
}
