//! OpenAPI v3 validation of custom resources: upstream's `NewSchemaValidator` and
//! `ValidateCustomResource` (`pkg/apiserver/validation/validation.go`) over kube-openapi's
//! schema validator, with its errors turned into `field.Error`s as upstream's
//! `kubeOpenAPIResultToFieldErrors` does.

mod errors;
mod formats;
mod netaddr;
mod ratcheting;
mod regexp;
mod spec;
mod validate;

use kas_apimachinery::golang::json::to_vec;
use kas_apimachinery::validation::field::{self, BadValue, ErrorList, Path};
use serde_json::Value;

use super::Structural;
use super::gofmt::bad_value;
use errors::{Code, OpenApiError};

/// Upstream's schema validator of one CRD version, built once from its
/// `openAPIV3Schema` (a `JSONSchemaProps` in JSON).
#[derive(Clone, Debug)]
pub struct SchemaValidator {
    schema: spec::Spec,
}

impl SchemaValidator {
    /// Upstream `NewSchemaValidator` of an `openAPIV3Schema` in JSON: the schema converted
    /// as `ConvertJSONSchemaPropsWithPostProcess` converts it, the formats 1.33 does not
    /// validate dropped. Never fails: what cannot be read is left unset.
    pub fn new(open_api_v3_schema: &Value) -> SchemaValidator {
        SchemaValidator::from_structural(&Structural::new(open_api_v3_schema))
    }

    /// As [`SchemaValidator::new`], from the structural schema already read.
    pub fn from_structural(s: &Structural) -> SchemaValidator {
        SchemaValidator {
            schema: spec::Spec::from_structural(s),
        }
    }

    /// Upstream `ValidateCustomResource(fldPath, obj, validator)`: the errors of `obj`
    /// against the schema, under `fld_path` (upstream's handlers pass the nil path, so
    /// errors of the root and of anyOf, oneOf, allOf and not read `<nil>: ...`).
    pub fn validate(&self, fld_path: &Path, obj: &Value) -> ErrorList {
        let result = validate::validate(&self.schema, "", obj);
        to_field_errors(fld_path, &result)
    }

    /// Upstream `ValidateCustomResourceUpdate` with ratcheting (always on in 1.33): as
    /// [`SchemaValidator::validate`], but errors in values equal to their `old` values
    /// (correlated through object fields and `map` list keys) are not reported.
    pub fn validate_update(&self, fld_path: &Path, obj: &Value, old: &Value) -> ErrorList {
        let corr = ratcheting::Corr {
            old,
            new: obj,
            spec: &self.schema,
        };
        let result = validate::validate_with(&self.schema, "", obj, Some(&corr));
        to_field_errors(fld_path, &result)
    }
}

fn to_field_errors(fld_path: &Path, result: &validate::Res) -> ErrorList {
    result
        .errors
        .iter()
        .map(|e| to_field_error(fld_path, e))
        .collect()
}

/// The value of a field error: Go's nil becomes `""`.
fn value_or_empty(v: &Value) -> BadValue {
    if v.is_null() {
        BadValue::String(String::new())
    } else {
        bad_value(v)
    }
}

/// Upstream `kubeOpenAPIResultToFieldErrors` for one error.
fn to_field_error(fld_path: &Path, err: &OpenApiError) -> field::Error {
    let OpenApiError::Validation(err) = err else {
        return field::invalid(fld_path, "", err.message());
    };
    let err_path = if err.name.is_empty() || err.name == "." {
        fld_path.clone()
    } else {
        fld_path.child(err.name.strip_prefix('.').unwrap_or(&err.name))
    };
    match err.code {
        Code::Required => field::required(&err_path, ""),
        Code::Enum => {
            let values: Vec<String> = err
                .values
                .iter()
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    v => to_vec(v)
                        .map(|b| String::from_utf8_lossy(&b).into_owned())
                        .unwrap_or_default(),
                })
                .collect();
            let refs: Vec<&str> = values.iter().map(String::as_str).collect();
            field::not_supported(&err_path, bad_value(&err.value), &refs)
        }
        Code::TooLong => field::too_long(&err_path, err.valid.unwrap_or(-1)),
        Code::MaxItems | Code::TooManyProperties => field::too_many(
            &err_path,
            err.value.as_i64().unwrap_or(-1),
            err.valid.unwrap_or(-1),
        ),
        Code::InvalidType => {
            field::type_invalid(&err_path, value_or_empty(&err.value), &err.message)
        }
        _ => field::invalid(&err_path, value_or_empty(&err.value), &err.message),
    }
}

#[cfg(test)]
mod tests;
