//! Options and results of the [`crate::Storage`] calls, named after upstream's.

use std::fmt;
use std::sync::Arc;

use kas_apimachinery::fields;
use serde_json::Value;

use crate::attrs::{Attrs, AttrsFunc};
use crate::error::{Error, Result};
use crate::object::ObjectRef;
use crate::progress::WatchProgressRequester;

/// Parses a resourceVersion the way upstream's `APIObjectVersioner` does: empty is 0,
/// anything else must be a decimal `u64`.
pub fn parse_resource_version(rv: &str) -> Result<u64> {
    if rv.is_empty() {
        return Ok(0);
    }
    rv.parse::<u64>()
        .map_err(|e| Error::BadRequest(format!("invalid resource version: {e}")))
}

/// Options of [`crate::Storage::get`].
#[derive(Debug, Clone, Default)]
pub struct GetOptions {
    /// Unset: the current state. Set: a minimum; newer than storage has is
    /// [`Error::TooLargeResourceVersion`]. The state returned is always the latest.
    pub resource_version: Option<String>,
    /// Return `Ok(None)` instead of [`Error::NotFound`].
    pub ignore_not_found: bool,
}

/// `resourceVersionMatch` of a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResourceVersionMatch {
    /// Any state at least as new as the resourceVersion.
    NotOlderThan,
    /// Exactly the state at the resourceVersion (fails once compacted).
    Exact,
}

/// A filter on objects (upstream's `SelectionPredicate`): a test on an object's [`Attrs`]
/// and the function that computes them from a document. The default matches everything
/// and counts as "empty", which lets a list report `remaining_item_count`.
#[derive(Clone, Default)]
pub struct Predicate {
    selection: Option<(Arc<Filter>, AttrsFunc)>,
    /// The field selector the filter enforces, when its maker says so (upstream's
    /// `SelectionPredicate.Field`): what a watch cache narrows by.
    field: Option<Arc<fields::Selector>>,
}

type Filter = dyn Fn(&Attrs) -> bool + Send + Sync;

impl Predicate {
    /// Matches every object.
    pub fn everything() -> Self {
        Predicate::default()
    }

    /// Matches the objects whose attributes, as `attrs` computes them, pass `filter`.
    pub fn new(attrs: AttrsFunc, filter: impl Fn(&Attrs) -> bool + Send + Sync + 'static) -> Self {
        Predicate {
            selection: Some((Arc::new(filter), attrs)),
            field: None,
        }
    }

    /// Records that the filter requires `field` to match (upstream's predicate carries its
    /// field selector): a watch cache may then skip the objects that a `field=value` term
    /// of it rules out without running the filter. The filter must reject every object
    /// `field` does not match, or a cache would drop events the filter lets through.
    pub fn with_field_selector(mut self, field: fields::Selector) -> Self {
        self.field = Some(Arc::new(field));
        self
    }

    /// Upstream's `pred.Field.RequiresExactMatch(field)`: the value a `field=value` term
    /// of the recorded field selector pins `field` to.
    pub fn requires_exact_match(&self, field: &str) -> Option<&str> {
        self.field.as_deref()?.requires_exact_match(field)
    }

    /// Whether the document `value` passes.
    pub fn matches(&self, value: &Value) -> bool {
        self.selection
            .as_ref()
            .is_none_or(|(f, attrs)| f(&attrs(value)))
    }

    /// Whether an object with these attributes passes (the watch cache keeps them, so
    /// nothing is decoded). They must come from the same function as this predicate's.
    pub fn matches_attrs(&self, attrs: &Attrs) -> bool {
        self.selection.as_ref().is_none_or(|(f, _)| f(attrs))
    }

    /// Whether this matches everything (upstream's `SelectionPredicate.Empty`).
    pub fn is_empty(&self) -> bool {
        self.selection.is_none()
    }
}

impl fmt::Debug for Predicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.is_empty() {
            "Predicate(everything)"
        } else {
            "Predicate(filter)"
        })
    }
}

/// Options of [`crate::Storage::list`].
#[derive(Debug, Clone, Default)]
pub struct ListOptions {
    /// Unset: a consistent read at the current revision. "0": any state. Otherwise see
    /// `resource_version_match`; with no match mode, a limit makes it exact, else it is a
    /// minimum (upstream's legacy rules).
    pub resource_version: Option<String>,
    /// How `resource_version` is read.
    pub resource_version_match: Option<ResourceVersionMatch>,
    /// Page size; `None` or ≤ 0 lists everything.
    pub limit: Option<i64>,
    /// A token from a previous page's [`ListResult::continue_token`].
    pub continue_token: Option<String>,
    /// Which objects to return.
    pub predicate: Predicate,
    /// List every key under `key/` (a collection); otherwise just `key` itself.
    pub recursive: bool,
}

/// What [`crate::Storage::list`] returns.
#[derive(Debug, Clone, Default)]
pub struct ListResult {
    /// Matching objects, in key order.
    pub items: Vec<ObjectRef>,
    /// The revision the list was read at.
    pub resource_version: u64,
    /// Set when more items remain after this page.
    pub continue_token: Option<String>,
    /// How many items remain after this page; only when the predicate is empty.
    pub remaining_item_count: Option<i64>,
}

/// Conditions the stored object must meet before an update or delete
/// (upstream `storage.Preconditions`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Preconditions {
    /// Required `metadata.uid`.
    pub uid: Option<String>,
    /// Required `metadata.resourceVersion`.
    pub resource_version: Option<String>,
}

impl Preconditions {
    /// Upstream's check and messages; a failure is [`Error::ResourceVersionConflicts`].
    pub fn check(&self, key: &str, value: &Value) -> Result<()> {
        let meta = |field: &str| {
            value
                .pointer(&format!("/metadata/{field}"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let conflict = |message: String| {
            Err(Error::ResourceVersionConflicts {
                key: key.to_string(),
                message,
            })
        };
        if let Some(uid) = &self.uid {
            let actual = meta("uid");
            if *uid != actual {
                return conflict(format!(
                    "Precondition failed: UID in precondition: {uid}, UID in object meta: {actual}"
                ));
            }
        }
        if let Some(rv) = &self.resource_version {
            let actual = meta("resourceVersion");
            if *rv != actual {
                return conflict(format!(
                    "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {actual}"
                ));
            }
        }
        Ok(())
    }
}

/// Options of [`crate::Storage::watch`].
#[derive(Debug, Clone, Default)]
pub struct WatchOptions {
    /// Unset or "0": start with the current state as ADDED events, then changes. Otherwise
    /// the changes after that revision.
    pub resource_version: Option<String>,
    /// Watch every key under `key/`; otherwise just `key`.
    pub recursive: bool,
    /// Which objects to report; an object moving out of the predicate is reported as
    /// DELETED, one moving in as ADDED.
    pub predicate: Predicate,
    /// Ask the backend for progress notifications, reported as bookmarks
    /// (`allowWatchBookmarks`).
    pub progress_notify: bool,
    /// Upstream's `sendInitialEvents` (the streaming list): `Some(true)` starts with the
    /// current state as ADDED events (at least as new as `resource_version`; unset, at the
    /// storage's current revision), then, with `progress_notify`, a
    /// [`crate::WatchEvent::InitialEventsEnd`]. `Some(false)` with `resource_version` unset
    /// or "0" starts from now, with no initial events. `None` is the legacy behaviour.
    pub send_initial_events: Option<bool>,
    /// Lets the caller ask the backend for a progress notification on this watch now
    /// (etcd's `RequestProgress`); honoured only where
    /// [`crate::Storage::request_watch_progress_supported`] says so.
    pub progress_requests: Option<WatchProgressRequester>,
    /// When the server will end the watch (upstream's request context deadline: its
    /// `timeoutSeconds`, or the default drawn from `--min-request-timeout`). A watch cache
    /// sends a watch that allows bookmarks one shortly before it, as upstream's cacher
    /// does, so that the client resumes from a recent resourceVersion. `None`: no deadline.
    pub deadline: Option<tokio::time::Instant>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn preconditions_use_upstream_messages() {
        let v = json!({"metadata": {"uid": "A", "resourceVersion": "5"}});
        let ok = Preconditions {
            uid: Some("A".into()),
            resource_version: Some("5".into()),
        };
        assert!(ok.check("/k", &v).is_ok());
        let err = Preconditions {
            uid: Some("B".into()),
            resource_version: None,
        }
        .check("/k", &v)
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Precondition failed: UID in precondition: B, UID in object meta: A"
        );
        let err = Preconditions {
            uid: None,
            resource_version: Some("4".into()),
        }
        .check("/k", &v)
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Precondition failed: ResourceVersion in precondition: 4, ResourceVersion in object meta: 5"
        );
    }

    #[test]
    fn resource_versions_parse_like_upstream() {
        assert_eq!(parse_resource_version("").unwrap(), 0);
        assert_eq!(parse_resource_version("12").unwrap(), 12);
        assert!(matches!(
            parse_resource_version("abc"),
            Err(Error::BadRequest(_))
        ));
        assert!(matches!(
            parse_resource_version("-1"),
            Err(Error::BadRequest(_))
        ));
    }

    #[test]
    fn predicates() {
        assert!(Predicate::default().is_empty());
        assert!(Predicate::default().matches(&json!({})));
        let attrs: crate::AttrsFunc = Arc::new(crate::attrs::default_attrs);
        let p = Predicate::new(attrs, |a| a.fields.iter().any(|(_, v)| v == "x"));
        assert!(!p.is_empty());
        assert!(p.matches(&json!({"metadata": {"name": "x"}})));
        assert!(!p.matches(&json!({"metadata": {"name": "y"}})));
        assert_eq!(
            p.requires_exact_match("metadata.name"),
            None,
            "none recorded"
        );
        let selector = fields::parse_selector("metadata.name!=a,spec.x=b").unwrap();
        let p = p.with_field_selector(selector);
        assert_eq!(p.requires_exact_match("spec.x"), Some("b"));
        assert_eq!(
            p.requires_exact_match("metadata.name"),
            None,
            "not equality"
        );
        assert_eq!(Predicate::everything().requires_exact_match("spec.x"), None);
    }
}
