//! The count of open watches, for estimating what a mutating request costs: a port of
//! upstream's `k8s.io/apiserver/pkg/util/flowcontrol/watch_tracker.go`.
//!
//! Watches are grouped by API group, resource, namespace and name (selectors other than the
//! builtin index's are ignored: they are evaluated per event anyway). A mutating request is
//! then charged for the watches of its resource that are cluster-wide, in its namespace, or
//! on its object.
//!
//! There is no HTTP here: the caller hands in its request info as a [`WatchRequest`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// Verbs of read-only requests, which no watch is interested in.
const READ_ONLY_VERBS: [&str; 4] = ["get", "list", "watch", "proxy"];

/// The value of an index field that a watch did not select on (or whose selector did not
/// parse).
const UNSET_VALUE: &str = "<unset>";

/// The watch cache's builtin indexes: resource → the field the index is built on. Only
/// `pods`' `spec.nodeName` matters here; the `metadata.name` indexes of nodes, secrets and
/// configmaps are already covered by the request's name.
const BUILTIN_INDEXES: [(&str, &str); 1] = [("pods", "spec.nodeName")];

/// The parts of a request's info that the tracker looks at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WatchRequest<'a> {
    pub api_group: &'a str,
    pub resource: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
    pub verb: &'a str,
    /// The (decoded) value of the request's `fieldSelector` query parameter, if it has one.
    pub field_selector: Option<&'a str>,
}

/// Watches count as similar when these agree.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct WatchIdentifier {
    api_group: String,
    resource: String,
    namespace: String,
    name: String,
}

type WatchCounts = HashMap<WatchIdentifier, usize>;

/// Tracks the number of open watches, grouped by API group, resource, namespace and name.
#[derive(Debug, Default)]
pub struct WatchTracker {
    counts: Arc<Mutex<WatchCounts>>,
}

/// Forgets its watch when dropped. Returned by [`WatchTracker::register_watch`]; keep it for
/// as long as the watch is served.
#[derive(Debug)]
#[must_use = "dropping the guard forgets the watch at once"]
pub struct ForgetWatch {
    counts: Arc<Mutex<WatchCounts>>,
    identifier: WatchIdentifier,
    counted: bool,
}

impl Drop for ForgetWatch {
    fn drop(&mut self) {
        let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        if self.counted
            && let Some(count) = counts.get_mut(&self.identifier)
        {
            *count = count.saturating_sub(1);
        }
        if counts.get(&self.identifier) == Some(&0) {
            counts.remove(&self.identifier);
        }
    }
}

impl WatchTracker {
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a watch (a request whose verb is `watch`; anything else gets `None`). The
    /// watch is forgotten when the returned guard is dropped.
    ///
    /// A watch of an indexed resource that selects one specific value of the index field
    /// (say `spec.nodeName=node1`) is only interested in objects with that value; such
    /// watches are approximated as never interested, so they are not counted (the guard is
    /// still returned). A watch that selects the empty value is counted like an unselective
    /// one.
    #[must_use = "dropping the guard forgets the watch at once"]
    pub fn register_watch(&self, request: WatchRequest<'_>) -> Option<ForgetWatch> {
        if request.verb != "watch" {
            return None;
        }
        let counted = match index_field(request.resource) {
            Some(field) => {
                let value = index_value(request.field_selector, field)
                    .unwrap_or_else(|| UNSET_VALUE.to_owned());
                value == UNSET_VALUE || value.is_empty()
            }
            None => true,
        };
        let identifier = WatchIdentifier {
            api_group: request.api_group.to_owned(),
            resource: request.resource.to_owned(),
            namespace: request.namespace.to_owned(),
            name: request.name.to_owned(),
        };
        if counted {
            let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
            let count = counts.entry(identifier.clone()).or_insert(0);
            *count = count.saturating_add(1);
        }
        Some(ForgetWatch {
            counts: Arc::clone(&self.counts),
            identifier,
            counted,
        })
    }

    /// The number of watches that may be interested in the request: none for a read-only
    /// verb, else the watches of the request's resource that are cluster-wide, plus those in
    /// its namespace (if it has one), plus those on its object (if it has a name).
    pub fn interested_watch_count(&self, request: WatchRequest<'_>) -> usize {
        if READ_ONLY_VERBS.contains(&request.verb) {
            return 0;
        }
        let mut identifier = WatchIdentifier {
            api_group: request.api_group.to_owned(),
            resource: request.resource.to_owned(),
            ..WatchIdentifier::default()
        };
        let counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        let count_of = |id: &WatchIdentifier| counts.get(id).copied().unwrap_or(0);
        let mut result = count_of(&identifier);
        if !request.namespace.is_empty() {
            identifier.namespace = request.namespace.to_owned();
            result = result.saturating_add(count_of(&identifier));
        }
        if !request.name.is_empty() {
            identifier.name = request.name.to_owned();
            result = result.saturating_add(count_of(&identifier));
        }
        result
    }
}

/// The field of the builtin index on `resource`, if it has one.
fn index_field(resource: &str) -> Option<&'static str> {
    BUILTIN_INDEXES
        .iter()
        .find(|(indexed, _)| *indexed == resource)
        .map(|(_, field)| *field)
}

/// The value that the field selector requires `field` to equal (apimachinery's
/// `fields.ParseSelector(selector).RequiresExactMatch(field)`); `None` when it requires no
/// single value or does not parse (upstream's `<unset>`).
fn index_value(field_selector: Option<&str>, field: &str) -> Option<String> {
    let selector = kas_apimachinery::fields::parse_selector(field_selector?).ok()?;
    selector.requires_exact_match(field).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watch<'a>(
        api_group: &'a str,
        resource: &'a str,
        namespace: &'a str,
        name: &'a str,
        field_selector: Option<&'a str>,
    ) -> WatchRequest<'a> {
        WatchRequest {
            api_group,
            resource,
            namespace,
            name,
            verb: "watch",
            field_selector,
        }
    }

    fn request<'a>(
        verb: &'a str,
        api_group: &'a str,
        namespace: &'a str,
        name: &'a str,
    ) -> WatchRequest<'a> {
        WatchRequest {
            api_group,
            resource: "pods",
            namespace,
            name,
            verb,
            field_selector: None,
        }
    }

    fn id(api_group: &str, resource: &str, namespace: &str, name: &str) -> WatchIdentifier {
        WatchIdentifier {
            api_group: api_group.to_owned(),
            resource: resource.to_owned(),
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        }
    }

    fn count(tracker: &WatchTracker, identifier: &WatchIdentifier) -> usize {
        let counts = tracker
            .counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        counts.get(identifier).copied().unwrap_or(0)
    }

    /// upstream's TestRegisterWatch: the name of a single-object watch is the one the
    /// request info carries (from `fieldSelector=metadata.name=...`).
    #[test]
    fn register_watch() {
        let list = WatchRequest {
            verb: "list",
            ..watch("", "pods", "", "", None)
        };
        let cases: Vec<(&str, WatchRequest<'_>, Option<WatchIdentifier>)> = vec![
            (
                "watch all objects",
                watch("", "pods", "", "", None),
                Some(id("", "pods", "", "")),
            ),
            ("list all objects", list, None),
            (
                "watch namespace-scoped objects",
                watch("", "pods", "foo", "", None),
                Some(id("", "pods", "foo", "")),
            ),
            (
                "watch single object",
                watch("", "pods", "foo", "mypod", Some("metadata.name=mypod")),
                Some(id("", "pods", "foo", "mypod")),
            ),
            (
                "watch single cluster-scoped object",
                watch("", "namespaces", "", "myns", Some("metadata.name=myns")),
                Some(id("", "namespaces", "", "myns")),
            ),
            (
                "watch all objects from api-group",
                watch("group", "pods", "", "", None),
                Some(id("group", "pods", "", "")),
            ),
            (
                "watch namespace-scoped objects from api-group",
                watch("group", "pods", "foo", "", None),
                Some(id("group", "pods", "foo", "")),
            ),
            (
                "watch single object from api-group",
                watch("group", "pods", "foo", "mypod", Some("metadata.name=mypod")),
                Some(id("group", "pods", "foo", "mypod")),
            ),
            (
                "watch indexed object",
                watch("group", "pods", "foo", "", Some("spec.nodeName=")),
                Some(id("group", "pods", "foo", "")),
            ),
        ];
        for (name, request, expected) in cases {
            let tracker = WatchTracker::new();
            let forget = tracker.register_watch(request);
            let Some(expected) = expected else {
                assert!(forget.is_none(), "{name}: unexpected watch registered");
                assert!(tracker.counts.lock().map(|c| c.is_empty()).unwrap_or(false));
                continue;
            };
            assert!(forget.is_some(), "{name}: watch should be registered");
            assert_eq!(count(&tracker, &expected), 1, "{name}");
            drop(forget);
            assert_eq!(count(&tracker, &expected), 0, "{name}: not forgotten");
            assert!(
                tracker.counts.lock().map(|c| c.is_empty()).unwrap_or(false),
                "{name}: entry left behind"
            );
        }
    }

    /// upstream's TestGetInterestedWatchCount.
    #[test]
    fn interested_watch_count() {
        let tracker = WatchTracker::new();
        let registered = [
            watch("", "pods", "", "", None),
            watch("", "pods", "foo", "", None),
            watch("", "pods", "foo", "mypod", Some("metadata.name=mypod")),
            watch("", "pods", "bar", "mypod", Some("metadata.name=mypod")),
            watch("group", "pods", "foo", "", None),
            watch("group", "pods", "bar", "mypod", Some("metadata.name=mypod")),
        ];
        let guards: Vec<ForgetWatch> = registered
            .iter()
            .filter_map(|r| tracker.register_watch(*r))
            .collect();
        assert_eq!(guards.len(), registered.len());

        let cases = [
            (
                "pod creation in foo namespace",
                request("create", "", "foo", ""),
                2,
            ),
            (
                "mypod update in foo namespace",
                request("update", "", "foo", "mypod"),
                3,
            ),
            (
                "mypod patch in foo namespace",
                request("patch", "", "foo", "mypod"),
                3,
            ),
            (
                "mypod deletion in foo namespace",
                request("delete", "", "foo", "mypod"),
                3,
            ),
            (
                "otherpod update in foo namespace",
                request("update", "", "foo", "otherpod"),
                2,
            ),
            (
                "mypod get in foo namespace",
                request("get", "", "foo", "mypod"),
                0,
            ),
            (
                "pods list in foo namespace",
                request("list", "", "foo", ""),
                0,
            ),
            (
                "pods watch in foo namespace",
                request("watch", "", "foo", ""),
                0,
            ),
            (
                "pods proxy in foo namespace",
                request("proxy", "", "foo", "mypod"),
                0,
            ),
            (
                "pod creation in bar namespace",
                request("create", "", "bar", ""),
                1,
            ),
            (
                "mypod update in bar namespace",
                request("update", "", "bar", "mypod"),
                2,
            ),
            (
                "mypod update in foo namespace in group",
                request("update", "group", "foo", "mypod"),
                1,
            ),
            (
                "otherpod update in foo namespace in group",
                request("update", "group", "foo", "otherpod"),
                1,
            ),
            (
                "mypod update in bar namespace in group",
                request("update", "group", "bar", "mypod"),
                1,
            ),
            (
                "otherpod update in bar namespace in group",
                request("update", "group", "bar", "otherpod"),
                0,
            ),
        ];
        for (name, request, expected) in cases {
            assert_eq!(tracker.interested_watch_count(request), expected, "{name}");
        }

        // Once the watches are forgotten, nobody is interested any more.
        drop(guards);
        assert_eq!(
            tracker.interested_watch_count(request("update", "", "foo", "mypod")),
            0
        );
        assert!(tracker.counts.lock().map(|c| c.is_empty()).unwrap_or(false));
    }

    /// upstream's TestGetInterestedWatchCountWithIndex: watches selecting one node are not
    /// counted; one selecting the empty node name is.
    #[test]
    fn interested_watch_count_with_index() {
        let tracker = WatchTracker::new();
        let registered = [
            watch("", "pods", "", "", None),
            watch("", "pods", "foo", "", None),
            watch("", "pods", "foo", "mypod", Some("metadata.name=mypod")),
            watch("", "pods", "foo", "", Some("spec.nodeName=")),
            watch("", "pods", "foo", "", Some("spec.nodeName=node1")),
            watch("", "pods", "foo", "", Some("spec.nodeName=node2")),
        ];
        let guards: Vec<ForgetWatch> = registered
            .iter()
            .filter_map(|r| tracker.register_watch(*r))
            .collect();
        assert_eq!(guards.len(), registered.len());

        let cases = [
            (
                "pod creation in foo namespace",
                request("create", "", "foo", ""),
                3,
            ),
            (
                "mypod update in foo namespace",
                request("update", "", "foo", "mypod"),
                4,
            ),
            (
                "mypod patch in foo namespace",
                request("patch", "", "foo", "mypod"),
                4,
            ),
            (
                "mypod deletion in foo namespace",
                request("delete", "", "foo", "mypod"),
                4,
            ),
        ];
        for (name, request, expected) in cases {
            assert_eq!(tracker.interested_watch_count(request), expected, "{name}");
        }

        // Forgetting an uncounted watch leaves the counted ones alone.
        let mut guards = guards;
        guards.truncate(4);
        assert_eq!(
            tracker.interested_watch_count(request("update", "", "foo", "mypod")),
            4
        );
        drop(guards);
        assert!(tracker.counts.lock().map(|c| c.is_empty()).unwrap_or(false));
    }

    #[test]
    fn index_only_applies_to_its_resource() {
        let tracker = WatchTracker::new();
        let _guard =
            tracker.register_watch(watch("", "nodes", "", "", Some("spec.nodeName=node1")));
        assert_eq!(count(&tracker, &id("", "nodes", "", "")), 1);
    }

    #[test]
    fn index_values() {
        let field = "spec.nodeName";
        let cases: [(Option<&str>, Option<&str>); 17] = [
            (None, None),
            (Some(""), None),
            (Some("spec.nodeName=node1"), Some("node1")),
            (Some("spec.nodeName==node1"), Some("node1")),
            (Some("spec.nodeName!=node1"), None),
            (Some("spec.nodeName="), Some("")),
            (Some("metadata.name=x,spec.nodeName=n"), Some("n")),
            (Some("spec.nodeName=n,,metadata.name=x"), Some("n")),
            // The terms are sorted before the first match is taken.
            (Some("spec.nodeName=b,spec.nodeName=a"), Some("a")),
            (Some("spec.nodeName=a\\,b"), Some("a,b")),
            (Some("spec.nodeName=a\\=b\\\\"), Some("a=b\\")),
            // Parse errors: no operator, bad escape, unescaped '=', trailing backslash.
            (Some("spec.nodeName"), None),
            (Some("spec.nodeName=a,junk"), None),
            (Some("spec.nodeName=a\\b"), None),
            (Some("spec.nodeName=a=b"), None),
            (Some("spec.nodeName=a\\"), None),
            (Some("spec.nodeName=ñodo,x=é"), Some("ñodo")),
        ];
        for (selector, want) in cases {
            assert_eq!(
                index_value(selector, field).as_deref(),
                want,
                "{selector:?}"
            );
        }
    }

    #[test]
    fn unparseable_selector_counts_as_unset() {
        let tracker = WatchTracker::new();
        let _guard = tracker.register_watch(watch("", "pods", "", "", Some("spec.nodeName=a\\")));
        assert_eq!(count(&tracker, &id("", "pods", "", "")), 1);
        let _other = tracker.register_watch(watch("", "pods", "", "", Some("spec.nodeName!=a")));
        assert_eq!(count(&tracker, &id("", "pods", "", "")), 2);
    }

    #[test]
    fn poisoned_lock_still_works() {
        let tracker = Arc::new(WatchTracker::new());
        let guard = tracker.register_watch(watch("", "pods", "", "", None));
        let poisoner = Arc::clone(&tracker);
        let _ = std::thread::spawn(move || {
            let _held = poisoner.counts.lock();
            panic!("poison the lock");
        })
        .join();
        assert!(tracker.counts.is_poisoned());
        assert_eq!(
            tracker.interested_watch_count(request("update", "", "", "")),
            1
        );
        drop(guard);
        assert_eq!(
            tracker.interested_watch_count(request("update", "", "", "")),
            0
        );
    }
}
