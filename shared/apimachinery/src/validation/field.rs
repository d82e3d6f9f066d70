//! Field paths and field-level validation errors, after upstream's
//! `k8s.io/apimachinery/pkg/util/validation/field`, with the exact texts upstream puts in
//! `Status` messages and causes.

use std::fmt;

use crate::golang::strconv::quote;
use crate::status::{Status, StatusCause};

#[derive(Clone, Debug, PartialEq, Eq)]
enum Segment {
    Name(String),
    Index(String),
}

/// Upstream `field.Path`: the way from some root to one field.
///
/// The empty path stands for upstream's nil `*Path`, which renders as `<nil>`; children of
/// it behave as upstream's children of nil do (`Path::nil().child("key")` is `key`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Path {
    segments: Vec<Segment>,
}

impl Path {
    /// Upstream `NewPath(name, moreNames...)`.
    pub fn new(name: &str) -> Path {
        Path::nil().child(name)
    }

    /// Upstream's nil path.
    pub fn nil() -> Path {
        Path::default()
    }

    /// True for upstream's nil path.
    pub fn is_nil(&self) -> bool {
        self.segments.is_empty()
    }

    /// Upstream `Child(name)`.
    pub fn child(&self, name: &str) -> Path {
        self.push(Segment::Name(name.to_owned()))
    }

    /// Upstream `Index(i)`: `[i]`.
    pub fn index(&self, index: usize) -> Path {
        self.push(Segment::Index(index.to_string()))
    }

    /// Upstream `Key(key)`: `[key]`, unquoted.
    pub fn key(&self, key: &str) -> Path {
        self.push(Segment::Index(key.to_owned()))
    }

    fn push(&self, segment: Segment) -> Path {
        let mut segments = self.segments.clone();
        segments.push(segment);
        Path { segments }
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.segments.is_empty() {
            return f.write_str("<nil>");
        }
        for (i, segment) in self.segments.iter().enumerate() {
            match segment {
                // Upstream writes an empty name as an (empty) subscript.
                Segment::Name(name) if !name.is_empty() => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(name)?;
                }
                Segment::Name(_) => f.write_str("[]")?,
                Segment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// Upstream `field.ErrorType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorType {
    NotFound,
    Required,
    Duplicate,
    Invalid,
    NotSupported,
    Forbidden,
    TooLong,
    TooMany,
    Internal,
    TypeInvalid,
}

impl ErrorType {
    /// The machine-readable value, which becomes a `StatusCause`'s `reason`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorType::NotFound => "FieldValueNotFound",
            ErrorType::Required => "FieldValueRequired",
            ErrorType::Duplicate => "FieldValueDuplicate",
            ErrorType::Invalid => "FieldValueInvalid",
            ErrorType::NotSupported => "FieldValueNotSupported",
            ErrorType::Forbidden => "FieldValueForbidden",
            ErrorType::TooLong => "FieldValueTooLong",
            ErrorType::TooMany => "FieldValueTooMany",
            ErrorType::Internal => "InternalError",
            ErrorType::TypeInvalid => "FieldValueTypeInvalid",
        }
    }

    /// Upstream `ErrorType.String()`: the human-readable text.
    pub fn message(self) -> &'static str {
        match self {
            ErrorType::NotFound => "Not found",
            ErrorType::Required => "Required value",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::Invalid | ErrorType::TypeInvalid => "Invalid value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::TooLong => "Too long",
            ErrorType::TooMany => "Too many",
            ErrorType::Internal => "Internal error",
        }
    }
}

/// Upstream's `BadValue interface{}`, reduced to the shapes whose rendering matters:
/// strings print as Go's `%q`, numbers and booleans as `%v`, string slices as Go's `%#v`.
#[derive(Clone, Debug, PartialEq)]
pub enum BadValue {
    /// Upstream's `omitValue`: only the type is written.
    Omit,
    /// A nil value, which upstream writes as the string `"null"`.
    Null,
    String(String),
    Int(i64),
    Bool(bool),
    /// `[]string`; `None` is a nil slice (`[]string(nil)`).
    Strings(Option<Vec<String>>),
    /// Already rendered (what upstream's `%v`/`%#v`/`String()` would print).
    Raw(String),
}

impl From<&str> for BadValue {
    fn from(s: &str) -> BadValue {
        BadValue::String(s.to_owned())
    }
}

impl From<String> for BadValue {
    fn from(s: String) -> BadValue {
        BadValue::String(s)
    }
}

impl From<i64> for BadValue {
    fn from(n: i64) -> BadValue {
        BadValue::Int(n)
    }
}

impl From<bool> for BadValue {
    fn from(b: bool) -> BadValue {
        BadValue::Bool(b)
    }
}

impl fmt::Display for BadValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BadValue::Omit => Ok(()),
            BadValue::Null => f.write_str(&quote("null")),
            BadValue::String(s) => f.write_str(&quote(s)),
            BadValue::Int(n) => write!(f, "{n}"),
            BadValue::Bool(b) => write!(f, "{b}"),
            BadValue::Strings(None) => f.write_str("[]string(nil)"),
            BadValue::Strings(Some(v)) => {
                let items: Vec<String> = v.iter().map(|s| quote(s)).collect();
                write!(f, "[]string{{{}}}", items.join(", "))
            }
            BadValue::Raw(s) => f.write_str(s),
        }
    }
}

/// Upstream `field.Error`. `Display` is upstream's `Error()`: `<field>: <body>`.
#[derive(Clone, Debug, PartialEq)]
pub struct Error {
    pub error_type: ErrorType,
    /// The rendered path (upstream keeps a string too).
    pub field: String,
    pub bad_value: BadValue,
    pub detail: String,
}

impl Error {
    fn new(error_type: ErrorType, path: &Path, bad_value: BadValue, detail: &str) -> Error {
        Error {
            error_type,
            field: path.to_string(),
            bad_value,
            detail: detail.to_owned(),
        }
    }

    /// Upstream `ErrorBody()`: the message without the field, which becomes a cause's
    /// `message`.
    pub fn body(&self) -> String {
        let value_hidden = matches!(
            self.error_type,
            ErrorType::Required | ErrorType::Forbidden | ErrorType::TooLong | ErrorType::Internal
        ) || self.bad_value == BadValue::Omit;
        let mut s = if value_hidden {
            self.error_type.message().to_owned()
        } else {
            format!("{}: {}", self.error_type.message(), self.bad_value)
        };
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }

    /// This error as a `StatusCause`, as upstream's `NewInvalid` builds it.
    pub fn to_cause(&self) -> StatusCause {
        StatusCause {
            reason: Some(self.error_type.as_str().to_owned()),
            message: Some(self.body()),
            field: Some(self.field.clone()),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

impl std::error::Error for Error {}

/// Upstream `field.ErrorList`.
pub type ErrorList = Vec<Error>;

/// Upstream `NotFound(path, value)`.
pub fn not_found(path: &Path, value: impl Into<BadValue>) -> Error {
    Error::new(ErrorType::NotFound, path, value.into(), "")
}

/// Upstream `Required(path, detail)`.
pub fn required(path: &Path, detail: &str) -> Error {
    Error::new(
        ErrorType::Required,
        path,
        BadValue::String(String::new()),
        detail,
    )
}

/// Upstream `Duplicate(path, value)`.
pub fn duplicate(path: &Path, value: impl Into<BadValue>) -> Error {
    Error::new(ErrorType::Duplicate, path, value.into(), "")
}

/// Upstream `Invalid(path, value, detail)`.
pub fn invalid(path: &Path, value: impl Into<BadValue>, detail: &str) -> Error {
    Error::new(ErrorType::Invalid, path, value.into(), detail)
}

/// Upstream `TypeInvalid(path, value, detail)`.
pub fn type_invalid(path: &Path, value: impl Into<BadValue>, detail: &str) -> Error {
    Error::new(ErrorType::TypeInvalid, path, value.into(), detail)
}

/// Upstream `NotSupported(path, value, validValues)`: `supported values: "a", "b"`.
pub fn not_supported(path: &Path, value: impl Into<BadValue>, valid: &[&str]) -> Error {
    let detail = if valid.is_empty() {
        String::new()
    } else {
        let quoted: Vec<String> = valid.iter().map(|v| quote(v)).collect();
        format!("supported values: {}", quoted.join(", "))
    };
    Error::new(ErrorType::NotSupported, path, value.into(), &detail)
}

/// Upstream `Forbidden(path, detail)`.
pub fn forbidden(path: &Path, detail: &str) -> Error {
    Error::new(
        ErrorType::Forbidden,
        path,
        BadValue::String(String::new()),
        detail,
    )
}

/// Upstream (1.32+) `TooLong(path, value, maxLength)`: the value is never shown;
/// a negative `max_length` gives "value is too long".
pub fn too_long(path: &Path, max_length: i64) -> Error {
    let detail = match max_length {
        1 => "may not be more than 1 byte".to_owned(),
        n if n >= 0 => format!("may not be more than {n} bytes"),
        _ => "value is too long".to_owned(),
    };
    let omitted = BadValue::String("<value omitted>".to_owned());
    Error::new(ErrorType::TooLong, path, omitted, &detail)
}

/// Upstream `TooMany(path, actualQuantity, maxQuantity)`; negative numbers mean unknown.
pub fn too_many(path: &Path, actual: i64, max: i64) -> Error {
    let detail = if max >= 0 {
        format!("must have at most {max} items")
    } else {
        "has too many items".to_owned()
    };
    let value = if actual >= 0 {
        BadValue::Int(actual)
    } else {
        BadValue::Omit
    };
    Error::new(ErrorType::TooMany, path, value, &detail)
}

/// Upstream `InternalError(path, err)`.
pub fn internal_error(path: &Path, err: &dyn std::error::Error) -> Error {
    Error::new(ErrorType::Internal, path, BadValue::Null, &err.to_string())
}

/// Upstream `ErrorList.ToAggregate().Error()`: `""` for none, the message for one, and
/// `[a, b]` for several, duplicates dropped. `None` when the list is empty (upstream's
/// nil aggregate).
pub fn aggregate_message(errors: &[Error]) -> Option<String> {
    aggregate_strings(errors.iter().map(ToString::to_string))
}

/// Upstream `utilerrors.NewAggregate(errs).Error()` over already-rendered messages.
pub fn aggregate_strings(messages: impl IntoIterator<Item = String>) -> Option<String> {
    let mut seen: Vec<String> = Vec::new();
    for m in messages {
        if !seen.contains(&m) {
            seen.push(m);
        }
    }
    match seen.len() {
        0 => None,
        1 => seen.pop(),
        _ => Some(format!("[{}]", seen.join(", "))),
    }
}

/// Upstream `apierrors.NewInvalid(groupKind, name, errs)`: 422 with one cause per error and
/// the aggregate in the message (e.g. `Pod "x" is invalid: metadata.name: Required value:
/// name or generateName is required`).
pub fn to_status(group: &str, kind: &str, name: &str, errors: &[Error]) -> Status {
    Status::invalid(
        group,
        kind,
        name,
        errors.iter().map(Error::to_cause).collect(),
    )
}

#[cfg(test)]
mod tests;
