//! kube-openapi's `pkg/validation/errors` as the schema validator raises them (always
//! `in` = `body`), and the plain composite errors of `validate/schema_messages.go`.

use kas_apimachinery::golang::fmt::sprint_v;
use kas_apimachinery::golang::strconv::format_float;
use serde_json::Value;

/// The codes of kube-openapi's `errors.Validation` that matter here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Code {
    InvalidType,
    Required,
    TooLong,
    TooShort,
    Pattern,
    Enum,
    MultipleOf,
    Max,
    Min,
    Unique,
    MaxItems,
    MinItems,
    TooFewProperties,
    TooManyProperties,
    UnallowedProperty,
    MultipleOfMustBePositive,
}

/// One error of a validation result.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum OpenApiError {
    /// `*errors.Validation`.
    Validation(Validation),
    /// An `errors.New(CompositeErrorCode, ...)` (anyOf, oneOf, allOf, not).
    Composite(String),
}

impl OpenApiError {
    pub(super) fn message(&self) -> &str {
        match self {
            OpenApiError::Validation(v) => &v.message,
            OpenApiError::Composite(m) => m,
        }
    }
}

/// `errors.Validation`: `value` is Go's `Value interface{}` (JSON null for nil), `valid`
/// its `Valid` when that is an `int64`, `values` the enum.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Validation {
    pub code: Code,
    pub name: String,
    pub value: Value,
    pub valid: Option<i64>,
    pub values: Vec<Value>,
    pub message: String,
}

fn validation(code: Code, name: &str, value: Value, message: String) -> OpenApiError {
    OpenApiError::Validation(Validation {
        code,
        name: name.to_owned(),
        value,
        valid: None,
        values: Vec::new(),
        message,
    })
}

fn with_valid(e: OpenApiError, valid: i64) -> OpenApiError {
    match e {
        OpenApiError::Validation(mut v) => {
            v.valid = Some(valid);
            OpenApiError::Validation(v)
        }
        e => e,
    }
}

/// Go's `%v` of a float64.
pub(super) fn go_float(f: f64) -> String {
    format_float(f, b'g', 64)
}

/// A bound as `%v` prints it: an int64 bound of the integer checks or a float64 one.
#[derive(Clone, Copy, Debug)]
pub(super) enum Bound {
    Int(i64),
    Float(f64),
}

impl std::fmt::Display for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Bound::Int(i) => write!(f, "{i}"),
            Bound::Float(x) => f.write_str(&go_float(*x)),
        }
    }
}

/// `InvalidType(name, in, typeName, value)` with a string value (the only kind raised
/// here): `... must be of type T: "v"`.
pub(super) fn invalid_type(name: &str, type_name: &str, value: &str) -> OpenApiError {
    let message = format!(
        "{name} in body must be of type {type_name}: {}",
        kas_apimachinery::golang::strconv::quote(value)
    );
    validation(Code::InvalidType, name, Value::from(value), message)
}

pub(super) fn required(name: &str) -> OpenApiError {
    validation(
        Code::Required,
        name,
        Value::Null,
        format!("{name} in body is required"),
    )
}

pub(super) fn too_long(name: &str, max: i64, value: &str) -> OpenApiError {
    let message = format!("{name} in body should be at most {max} chars long");
    with_valid(
        validation(Code::TooLong, name, Value::from(value), message),
        max,
    )
}

pub(super) fn too_short(name: &str, min: i64, value: &str) -> OpenApiError {
    let message = format!("{name} in body should be at least {min} chars long");
    with_valid(
        validation(Code::TooShort, name, Value::from(value), message),
        min,
    )
}

pub(super) fn failed_pattern(name: &str, pattern: &str, value: &str) -> OpenApiError {
    let message = format!("{name} in body should match '{pattern}'");
    validation(Code::Pattern, name, Value::from(value), message)
}

pub(super) fn enum_fail(name: &str, value: &Value, values: &[Value]) -> OpenApiError {
    let message = format!(
        "{name} in body should be one of {}",
        sprint_v(&Value::Array(values.to_vec()))
    );
    match validation(Code::Enum, name, value.clone(), message) {
        OpenApiError::Validation(mut v) => {
            v.values = values.to_vec();
            OpenApiError::Validation(v)
        }
        e => e,
    }
}

pub(super) fn not_multiple_of(name: &str, factor: Bound, value: &Value) -> OpenApiError {
    let message = format!("{name} in body should be a multiple of {factor}");
    validation(Code::MultipleOf, name, value.clone(), message)
}

pub(super) fn multiple_of_must_be_positive(name: &str, factor: Bound) -> OpenApiError {
    let message = format!("factor MultipleOf declared for {name} must be positive: {factor}");
    let value = match factor {
        Bound::Int(i) => Value::from(i),
        Bound::Float(f) => Value::from(f),
    };
    validation(Code::MultipleOfMustBePositive, name, value, message)
}

pub(super) fn exceeds_maximum(
    name: &str,
    max: Bound,
    exclusive: bool,
    value: &Value,
) -> OpenApiError {
    let message = if exclusive {
        format!("{name} in body should be less than {max}")
    } else {
        format!("{name} in body should be less than or equal to {max}")
    };
    validation(Code::Max, name, value.clone(), message)
}

pub(super) fn exceeds_minimum(
    name: &str,
    min: Bound,
    exclusive: bool,
    value: &Value,
) -> OpenApiError {
    let message = if exclusive {
        format!("{name} in body should be greater than {min}")
    } else {
        format!("{name} in body should be greater than or equal to {min}")
    };
    validation(Code::Min, name, value.clone(), message)
}

pub(super) fn duplicate_items(name: &str) -> OpenApiError {
    let message = format!("{name} in body shouldn't contain duplicates");
    validation(Code::Unique, name, Value::Null, message)
}

pub(super) fn too_many_items(name: &str, max: i64, size: i64) -> OpenApiError {
    let message = format!("{name} in body should have at most {max} items");
    with_valid(
        validation(Code::MaxItems, name, Value::from(size), message),
        max,
    )
}

pub(super) fn too_few_items(name: &str, min: i64, size: i64) -> OpenApiError {
    let message = format!("{name} in body should have at least {min} items");
    with_valid(
        validation(Code::MinItems, name, Value::from(size), message),
        min,
    )
}

pub(super) fn too_few_properties(name: &str, min: i64, size: i64) -> OpenApiError {
    let message = format!("{name} in body should have at least {min} properties");
    with_valid(
        validation(Code::TooFewProperties, name, Value::from(size), message),
        min,
    )
}

pub(super) fn too_many_properties(name: &str, max: i64, size: i64) -> OpenApiError {
    let message = format!("{name} in body should have at most {max} properties");
    with_valid(
        validation(Code::TooManyProperties, name, Value::from(size), message),
        max,
    )
}

pub(super) fn property_not_allowed(name: &str, key: &str) -> OpenApiError {
    let message = format!("{name}.{key} in body is a forbidden property");
    validation(Code::UnallowedProperty, name, Value::from(key), message)
}

pub(super) fn must_validate_at_least_one_schema(path: &str) -> OpenApiError {
    OpenApiError::Composite(format!(
        "{} must validate at least one schema (anyOf)",
        kas_apimachinery::golang::strconv::quote(path)
    ))
}

pub(super) fn must_validate_only_one_schema(path: &str, additional: &str) -> OpenApiError {
    OpenApiError::Composite(format!(
        "{} must validate one and only one schema (oneOf). {additional}",
        kas_apimachinery::golang::strconv::quote(path)
    ))
}

pub(super) fn must_validate_all_schemas(path: &str, additional: &str) -> OpenApiError {
    OpenApiError::Composite(format!(
        "{} must validate all the schemas (allOf){additional}",
        kas_apimachinery::golang::strconv::quote(path)
    ))
}

pub(super) fn must_not_validate_schema(path: &str) -> OpenApiError {
    OpenApiError::Composite(format!(
        "{} must not validate the schema (not)",
        kas_apimachinery::golang::strconv::quote(path)
    ))
}
