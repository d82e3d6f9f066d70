//! `Status`: the body of every error the API returns (meta.k8s.io/v1 Status), and
//! constructors that produce upstream's exact reason, code and message
//! (`k8s.io/apimachinery/pkg/api/errors`).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::golang::strconv::quote;

/// Upstream's `metav1.StatusReason` values. `Unknown` is upstream's empty reason and is
/// never written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum StatusReason {
    Unauthorized,
    Forbidden,
    NotFound,
    AlreadyExists,
    Conflict,
    Gone,
    Invalid,
    ServerTimeout,
    StoreReadError,
    Timeout,
    TooManyRequests,
    BadRequest,
    MethodNotAllowed,
    NotAcceptable,
    RequestEntityTooLarge,
    UnsupportedMediaType,
    InternalError,
    Expired,
    ServiceUnavailable,
    #[serde(other)]
    Unknown,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ListMeta {
    #[serde(rename = "resourceVersion", skip_serializing_if = "is_empty")]
    pub resource_version: Option<String>,
    /// A list's continue token; an expired continue answers the token that goes on
    /// inconsistently (upstream's `ListMeta.Continue` on the 410).
    #[serde(rename = "continue", default, skip_serializing_if = "is_empty")]
    pub continue_token: Option<String>,
}

/// Upstream `metav1.StatusCause`; upstream's `Type` field is written as `reason`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusCause {
    #[serde(rename = "reason", skip_serializing_if = "is_empty")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "is_empty")]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "is_empty")]
    pub field: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusDetails {
    #[serde(skip_serializing_if = "is_empty")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "is_empty")]
    pub group: Option<String>,
    #[serde(skip_serializing_if = "is_empty")]
    pub kind: Option<String>,
    #[serde(skip_serializing_if = "is_empty")]
    pub uid: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub causes: Vec<StatusCause>,
    #[serde(skip_serializing_if = "is_zero")]
    pub retry_after_seconds: Option<i32>,
}

/// meta.k8s.io/v1 Status, serialized exactly as upstream does
/// (`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",...}`).
///
/// Upstream's fields are `omitempty`: empty strings, a zero code and a zero
/// `retryAfterSeconds` are left out even when they are `Some`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    pub kind: String,
    pub api_version: String,
    #[serde(default)]
    pub metadata: ListMeta,
    #[serde(skip_serializing_if = "is_empty")]
    pub status: Option<String>,
    #[serde(skip_serializing_if = "is_empty")]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "is_unknown")]
    pub reason: Option<StatusReason>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<StatusDetails>,
    #[serde(default, skip_serializing_if = "is_zero_code")]
    pub code: u16,
}

fn is_empty(v: &Option<String>) -> bool {
    v.as_deref().is_none_or(str::is_empty)
}

fn is_zero(v: &Option<i32>) -> bool {
    v.is_none_or(|n| n == 0)
}

fn is_zero_code(v: &u16) -> bool {
    *v == 0
}

fn is_unknown(v: &Option<StatusReason>) -> bool {
    matches!(v, None | Some(StatusReason::Unknown))
}

/// `Some(s)` unless `s` is empty, mirroring Go's zero value.
fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_owned())
}

/// Upstream `schema.GroupResource.String()` (and `GroupKind.String()`): `resource.group`,
/// or `resource` alone for the core group.
fn qualified(group: &str, resource: &str) -> String {
    if group.is_empty() {
        resource.to_owned()
    } else {
        format!("{resource}.{group}")
    }
}

/// `{name, group, kind}` details as upstream fills them from a `GroupResource`.
fn resource_details(group: &str, resource: &str, name: &str) -> StatusDetails {
    StatusDetails {
        name: non_empty(name),
        group: non_empty(group),
        kind: non_empty(resource),
        ..StatusDetails::default()
    }
}

fn retry_details(retry_after_seconds: i32) -> StatusDetails {
    StatusDetails {
        retry_after_seconds: (retry_after_seconds != 0).then_some(retry_after_seconds),
        ..StatusDetails::default()
    }
}

// Written when serialization fails, which cannot happen for this struct.
const FALLBACK_JSON: &[u8] = br#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Internal error occurred: failed to encode Status","reason":"InternalError","code":500}"#;

// Constructors. Signatures are fixed (other crates call them); bodies follow upstream's
// k8s.io/apimachinery/pkg/api/errors.
impl Status {
    /// A Failure status with the given code, reason and message, `details` unset.
    pub fn failure(code: u16, reason: StatusReason, message: impl Into<String>) -> Status {
        let message: String = message.into();
        Status {
            kind: "Status".to_owned(),
            api_version: "v1".to_owned(),
            metadata: ListMeta::default(),
            status: Some("Failure".to_owned()),
            message: (!message.is_empty()).then_some(message),
            reason: Some(reason),
            details: None,
            code,
        }
    }

    /// What upstream's `ErrorToAPIStatus` makes of an error that is no API status (a
    /// plain Go error a REST handler returns): a 500 with the error's text and no reason.
    pub fn from_plain_error(message: impl Into<String>) -> Status {
        let mut status = Status::failure(500, StatusReason::Unknown, message);
        status.reason = None;
        status
    }

    fn with_details(mut self, details: StatusDetails) -> Status {
        self.details = Some(details);
        self
    }

    /// Upstream `NewGenericServerResponse(code, "", GroupResource{}, "", serverMessage, 0,
    /// false)`, which kube-apiserver's go-restful `serviceErrorHandler` writes for a route
    /// that does not match (404, 405, 406, 415): a message by code, `details: {}`.
    pub fn generic_server_response(code: u16, server_message: &str) -> Status {
        use StatusReason as R;
        let (reason, message) = match code {
            409 => (R::Conflict, "the server reported a conflict".to_owned()),
            404 => (
                R::NotFound,
                "the server could not find the requested resource".to_owned(),
            ),
            400 => (
                R::BadRequest,
                "the server rejected our request for an unknown reason".to_owned(),
            ),
            401 => (
                R::Unauthorized,
                "the server has asked for the client to provide credentials".to_owned(),
            ),
            403 => (R::Forbidden, server_message.to_owned()),
            406 if server_message.is_empty() || server_message == "unknown" => (
                R::NotAcceptable,
                "the server was unable to respond with a content type that the client supports"
                    .to_owned(),
            ),
            406 => (R::NotAcceptable, server_message.to_owned()),
            415 => (R::UnsupportedMediaType, server_message.to_owned()),
            405 => (
                R::MethodNotAllowed,
                "the server does not allow this method on the requested resource".to_owned(),
            ),
            422 => (
                R::Invalid,
                "the server rejected our request due to an error in our request".to_owned(),
            ),
            503 => (
                R::ServiceUnavailable,
                "the server is currently unable to handle the request".to_owned(),
            ),
            504 => (
                R::Timeout,
                "the server was unable to return a response in the time allotted, but may still be processing the request".to_owned(),
            ),
            429 => (
                R::TooManyRequests,
                "the server has received too many requests and has asked us to try again later"
                    .to_owned(),
            ),
            c if c >= 500 => (
                R::InternalError,
                format!(
                    "an error on the server ({}) has prevented the request from succeeding",
                    quote(server_message)
                ),
            ),
            c => (
                R::Unknown,
                format!("the server responded with the status code {c} but did not return more information"),
            ),
        };
        Status::failure(code, reason, message).with_details(StatusDetails::default())
    }

    /// 404 for a path nobody serves: "the server could not find the requested resource",
    /// `details: {}` exactly as upstream writes it (its not-found handler goes through
    /// `NewGenericServerResponse(404, ...)`, which always sets details).
    pub fn not_found_path() -> Status {
        Status::failure(
            404,
            StatusReason::NotFound,
            "the server could not find the requested resource",
        )
        .with_details(StatusDetails::default())
    }

    /// Upstream `NewNotFound(qualifiedResource, name)`.
    pub fn not_found(group: &str, resource: &str, name: &str) -> Status {
        let message = format!("{} {} not found", qualified(group, resource), quote(name));
        Status::failure(404, StatusReason::NotFound, message)
            .with_details(resource_details(group, resource, name))
    }

    /// Upstream `NewAlreadyExists(qualifiedResource, name)`.
    pub fn already_exists(group: &str, resource: &str, name: &str) -> Status {
        let message = format!(
            "{} {} already exists",
            qualified(group, resource),
            quote(name)
        );
        Status::failure(409, StatusReason::AlreadyExists, message)
            .with_details(resource_details(group, resource, name))
    }

    /// Upstream `NewGenerateNameConflict(qualifiedResource, name, retryAfterSeconds)`.
    pub fn generate_name_conflict(
        group: &str,
        resource: &str,
        name: &str,
        retry_after_seconds: i32,
    ) -> Status {
        let message = format!(
            "{} {} already exists, the server was not able to generate a unique name for the object",
            qualified(group, resource),
            quote(name)
        );
        let mut details = resource_details(group, resource, name);
        details.retry_after_seconds = retry_details(retry_after_seconds).retry_after_seconds;
        Status::failure(409, StatusReason::AlreadyExists, message).with_details(details)
    }

    /// Upstream `NewUnauthorized(reason)`; an empty reason becomes "not authorized", as
    /// upstream's does. (Upstream's authentication filter passes "Unauthorized".)
    pub fn unauthorized(message: &str) -> Status {
        let message = if message.is_empty() {
            "not authorized"
        } else {
            message
        };
        Status::failure(401, StatusReason::Unauthorized, message)
    }

    /// Upstream `NewForbidden(qualifiedResource, name, err)`.
    pub fn forbidden(group: &str, resource: &str, name: &str, err: &str) -> Status {
        let message = if group.is_empty() && resource.is_empty() {
            format!("forbidden: {err}")
        } else if name.is_empty() {
            format!("{} is forbidden: {err}", qualified(group, resource))
        } else {
            format!(
                "{} {} is forbidden: {err}",
                qualified(group, resource),
                quote(name)
            )
        };
        Status::failure(403, StatusReason::Forbidden, message)
            .with_details(resource_details(group, resource, name))
    }

    /// Upstream `NewConflict(qualifiedResource, name, err)`.
    pub fn conflict(group: &str, resource: &str, name: &str, err: &str) -> Status {
        let message = format!(
            "Operation cannot be fulfilled on {} {}: {err}",
            qualified(group, resource),
            quote(name)
        );
        Status::failure(409, StatusReason::Conflict, message)
            .with_details(resource_details(group, resource, name))
    }

    /// Upstream `NewApplyConflict(causes, message)`.
    pub fn apply_conflict(causes: Vec<StatusCause>, message: &str) -> Status {
        Status::failure(409, StatusReason::Conflict, message).with_details(StatusDetails {
            causes,
            ..StatusDetails::default()
        })
    }

    /// Upstream `NewGone(message)` (deprecated upstream in favour of `resource_expired`).
    pub fn gone(message: &str) -> Status {
        Status::failure(410, StatusReason::Gone, message)
    }

    /// Upstream `NewResourceExpired(message)`: 410 with reason Expired.
    pub fn resource_expired(message: &str) -> Status {
        Status::failure(410, StatusReason::Expired, message)
    }

    /// Upstream `NewInvalid(qualifiedKind, name, errs)`. Each cause stands for one
    /// `field.Error`: `reason` its type (e.g. `FieldValueRequired`), `field` its path and
    /// `message` its `ErrorBody()`. The message aggregates `<field>: <body>` as upstream's
    /// `ErrorList.ToAggregate()` does (duplicates dropped, `[a, b]` for several).
    pub fn invalid(group: &str, kind: &str, name: &str, causes: Vec<StatusCause>) -> Status {
        let mut seen: Vec<String> = Vec::new();
        for cause in &causes {
            let text = format!(
                "{}: {}",
                cause.field.as_deref().unwrap_or_default(),
                cause.message.as_deref().unwrap_or_default()
            );
            if !seen.contains(&text) {
                seen.push(text);
            }
        }
        let subject = format!("{} {} is invalid", qualified(group, kind), quote(name));
        let message = match seen.len() {
            0 => subject,
            1 => format!("{subject}: {}", seen[0]),
            _ => format!("{subject}: [{}]", seen.join(", ")),
        };
        let mut details = resource_details(group, kind, name);
        details.causes = causes;
        Status::failure(422, StatusReason::Invalid, message).with_details(details)
    }

    /// Upstream `NewBadRequest(reason)`.
    pub fn bad_request(message: &str) -> Status {
        Status::failure(400, StatusReason::BadRequest, message)
    }

    /// Upstream `NewTooManyRequests(message, retryAfterSeconds)`.
    pub fn too_many_requests(message: &str, retry_after_seconds: i32) -> Status {
        Status::failure(429, StatusReason::TooManyRequests, message)
            .with_details(retry_details(retry_after_seconds))
    }

    /// Upstream `NewTooManyRequestsError(message)`: "Too many requests: <message>", no details.
    pub fn too_many_requests_error(message: &str) -> Status {
        Status::failure(
            429,
            StatusReason::TooManyRequests,
            format!("Too many requests: {message}"),
        )
    }

    /// Upstream `NewServiceUnavailable(reason)`.
    pub fn service_unavailable(message: &str) -> Status {
        Status::failure(503, StatusReason::ServiceUnavailable, message)
    }

    /// Upstream `NewMethodNotSupported(qualifiedResource, action)`.
    pub fn method_not_supported(group: &str, resource: &str, action: &str) -> Status {
        let message = format!(
            "{action} is not supported on resources of kind {}",
            quote(&qualified(group, resource))
        );
        Status::failure(405, StatusReason::MethodNotAllowed, message)
            .with_details(resource_details(group, resource, ""))
    }

    /// Upstream `NewServerTimeout(qualifiedResource, operation, retryAfterSeconds)`: 500
    /// with reason ServerTimeout; upstream puts the operation in `details.name`.
    pub fn server_timeout(
        group: &str,
        resource: &str,
        operation: &str,
        retry_after_seconds: i32,
    ) -> Status {
        let message = format!(
            "The {operation} operation against {} could not be completed at this time, please try again.",
            qualified(group, resource)
        );
        let mut details = resource_details(group, resource, operation);
        details.retry_after_seconds = retry_details(retry_after_seconds).retry_after_seconds;
        Status::failure(500, StatusReason::ServerTimeout, message).with_details(details)
    }

    /// Upstream `NewTimeoutError(message, retryAfterSeconds)` (504, reason Timeout,
    /// message "Timeout: <message>").
    pub fn timeout(message: &str, retry_after_seconds: i32) -> Status {
        Status::failure(504, StatusReason::Timeout, format!("Timeout: {message}"))
            .with_details(retry_details(retry_after_seconds))
    }

    /// Upstream `NewInternalError(err)`.
    pub fn internal_error(err: &str) -> Status {
        Status::failure(
            500,
            StatusReason::InternalError,
            format!("Internal error occurred: {err}"),
        )
        .with_details(StatusDetails {
            causes: vec![StatusCause {
                message: non_empty(err),
                ..StatusCause::default()
            }],
            ..StatusDetails::default()
        })
    }

    /// Upstream `NewRequestEntityTooLargeError(message)`.
    pub fn request_entity_too_large(message: &str) -> Status {
        Status::failure(
            413,
            StatusReason::RequestEntityTooLarge,
            format!("Request entity too large: {message}"),
        )
    }

    /// Upstream negotiation's `NewNotAcceptableError(accepted)`.
    pub fn not_acceptable(accepted: &[&str]) -> Status {
        let message = format!(
            "only the following media types are accepted: {}",
            accepted.join(", ")
        );
        Status::failure(406, StatusReason::NotAcceptable, message)
    }

    /// Upstream negotiation's `NewUnsupportedMediaTypeError(accepted)`.
    pub fn unsupported_media_type(accepted: &[&str]) -> Status {
        let message = format!(
            "the body of the request was in an unknown format - accepted media types include: {}",
            accepted.join(", ")
        );
        Status::failure(415, StatusReason::UnsupportedMediaType, message)
    }

    /// The JSON bytes upstream's encoder writes for this Status, without the trailing
    /// newline (see `kas_endpoints::write_status`).
    pub fn to_json(&self) -> Vec<u8> {
        crate::golang::json::to_vec(self).unwrap_or_else(|_| FALLBACK_JSON.to_vec())
    }
}

/// Like upstream's `StatusError.Error()`: the message.
impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message.as_deref().unwrap_or_default())
    }
}

impl std::error::Error for Status {}

#[cfg(test)]
mod tests;
