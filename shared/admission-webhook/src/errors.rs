//! The failures of a webhook call, after upstream's `pkg/util/webhook` (`ErrCallingWebhook`,
//! `ErrWebhookRejection`) and `plugin/webhook/errors` (`ToStatusErr`,
//! `NewDryRunUnsupportedErr`).

use kas_apimachinery::Status;
use kas_apimachinery::golang::strconv::quote;
use serde_json::Value;

/// What a call to one webhook ended with, when not an admission.
#[derive(Debug)]
pub enum CallError {
    /// Upstream `ErrCallingWebhook`: the webhook could not be asked or its answer was not
    /// one; `failurePolicy` decides.
    Calling { webhook: String, reason: String },
    /// The webhook refused (upstream `ErrWebhookRejection`), or a failure no policy
    /// ignores (an unsupported dry run, a patch that does not apply).
    Status(Box<Status>),
}

impl CallError {
    pub fn calling(webhook: &str, reason: impl Into<String>) -> CallError {
        CallError::Calling {
            webhook: webhook.to_owned(),
            reason: reason.into(),
        }
    }

    /// The request's error when the failure is not ignored: a calling error becomes
    /// upstream's `NewInternalError(err)`.
    pub fn into_status(self) -> Status {
        match self {
            CallError::Calling { .. } => Status::internal_error(&self.to_string()),
            CallError::Status(status) => *status,
        }
    }
}

impl std::fmt::Display for CallError {
    /// Upstream `ErrCallingWebhook.Error()` (the reason is never empty here).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Calling { webhook, reason } => {
                write!(f, "failed calling webhook {}: {reason}", quote(webhook))
            }
            CallError::Status(status) => f.write_str(status.message.as_deref().unwrap_or("")),
        }
    }
}

/// Upstream `NewDryRunUnsupportedErr`.
pub fn dry_run_unsupported(webhook: &str) -> Status {
    Status::bad_request(&format!(
        "admission webhook {} does not support dry run",
        quote(webhook)
    ))
}

/// Upstream `ToStatusErr`: the webhook's `response.result` (absent: a bare failure) as
/// the request's error, its code at least 400, its message naming the webhook.
pub fn to_status_err(webhook: &str, result: Option<&Value>) -> Status {
    let denied_by = format!("admission webhook {} denied the request", quote(webhook));
    let result = result.filter(|r| r.is_object());
    let text = |k: &str| {
        result
            .and_then(|r| r.get(k))
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    let (message, reason) = (text("message"), text("reason"));
    let message = if !message.is_empty() {
        format!("{denied_by}: {message}")
    } else if !reason.is_empty() {
        format!("{denied_by}: {reason}")
    } else {
        format!("{denied_by} without explanation")
    };
    let mut status = result
        .and_then(|r| {
            let mut r = r.clone();
            let map = r.as_object_mut()?;
            map.insert("kind".into(), "Status".into());
            map.insert("apiVersion".into(), "v1".into());
            serde_json::from_value::<Status>(r).ok()
        })
        .unwrap_or_else(|| Status::failure(400, kas_apimachinery::StatusReason::Unknown, ""));
    status.metadata = Default::default();
    if status.code < 400 {
        status.code = 400;
    }
    if matches!(status.status.as_deref(), None | Some("") | Some("Success")) {
        status.status = Some("Failure".to_owned());
    }
    status.message = Some(message);
    status
}
