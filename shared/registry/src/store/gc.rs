//! What a delete tells the garbage collector, after upstream's generic store:
//! `shouldOrphanDependents`, `shouldDeleteDependents`,
//! `deletionFinalizersForGarbageCollection` and `markAsDeleting`. The garbage collector
//! (kube-controller-manager's) reads the `orphan` and `foregroundDeletion` finalizers these
//! set and does the rest.

use std::time::SystemTime;

use kas_apimachinery::golang::time::{Time, format_rfc3339, parse_rfc3339};
use serde_json::{Value, json};

use crate::rest::options::{DeletionPropagation, WriteOptions};
use crate::strategy::GarbageCollectionPolicy;

/// metav1's `FinalizerOrphanDependents`.
pub const FINALIZER_ORPHAN_DEPENDENTS: &str = "orphan";
/// metav1's `FinalizerDeleteDependents`.
pub const FINALIZER_DELETE_DEPENDENTS: &str = "foregroundDeletion";

/// The object's `metadata.finalizers`.
pub fn finalizers(obj: &Value) -> Vec<&str> {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|f| f.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Upstream's `shouldOrphanDependents`: the options first, then the object's finalizers,
/// then the strategy's default.
pub(crate) fn should_orphan_dependents(
    policy: Option<GarbageCollectionPolicy>,
    obj: &Value,
    opts: &WriteOptions,
) -> bool {
    if policy == Some(GarbageCollectionPolicy::Unsupported) {
        return false;
    }
    if let Some(orphan) = opts.orphan_dependents {
        return orphan;
    }
    if let Some(propagation) = opts.propagation_policy {
        return propagation == DeletionPropagation::Orphan;
    }
    for f in finalizers(obj) {
        match f {
            FINALIZER_ORPHAN_DEPENDENTS => return true,
            FINALIZER_DELETE_DEPENDENTS => return false,
            _ => {}
        }
    }
    policy == Some(GarbageCollectionPolicy::OrphanDependents)
}

/// Upstream's `shouldDeleteDependents`: foreground deletion only when asked for, by the
/// options or, without a policy in them, by the object's finalizers. `orphanDependents`
/// (either value) rules it out.
pub(crate) fn should_delete_dependents(
    policy: Option<GarbageCollectionPolicy>,
    obj: &Value,
    opts: &WriteOptions,
) -> bool {
    if policy == Some(GarbageCollectionPolicy::Unsupported) || opts.orphan_dependents.is_some() {
        return false;
    }
    if let Some(propagation) = opts.propagation_policy {
        return propagation == DeletionPropagation::Foreground;
    }
    for f in finalizers(obj) {
        match f {
            FINALIZER_DELETE_DEPENDENTS => return true,
            FINALIZER_ORPHAN_DEPENDENTS => return false,
            _ => {}
        }
    }
    false
}

/// Upstream's `deletionFinalizersForGarbageCollection`: the finalizers the object should
/// carry for the garbage collector (its others, then `orphan`, then `foregroundDeletion`
/// as the delete asks), or `None` when they are the ones it has (as sets). Garbage
/// collection is always on here (`--enable-garbage-collector=false` is not taken).
pub(crate) fn deletion_finalizers(
    policy: Option<GarbageCollectionPolicy>,
    obj: &Value,
    opts: &WriteOptions,
) -> Option<Vec<String>> {
    let current = finalizers(obj);
    let mut wanted: Vec<String> = current
        .iter()
        .filter(|f| **f != FINALIZER_ORPHAN_DEPENDENTS && **f != FINALIZER_DELETE_DEPENDENTS)
        .map(|f| (*f).to_owned())
        .collect();
    if should_orphan_dependents(policy, obj, opts) {
        wanted.push(FINALIZER_ORPHAN_DEPENDENTS.to_owned());
    }
    if should_delete_dependents(policy, obj, opts) {
        wanted.push(FINALIZER_DELETE_DEPENDENTS.to_owned());
    }
    let same = wanted.iter().all(|w| current.contains(&w.as_str()))
        && current.iter().all(|c| wanted.iter().any(|w| w == c));
    (!same).then_some(wanted)
}

/// Sets `metadata.finalizers` (removed when empty, as Go's `omitempty` writes it).
pub fn set_finalizers(obj: &mut Value, finalizers: Vec<String>) {
    let meta = crate::meta::metadata_mut(obj);
    if finalizers.is_empty() {
        meta.remove("finalizers");
    } else {
        meta.insert("finalizers".into(), json!(finalizers));
    }
}

/// Upstream's `markAsDeleting`, for an object finalizers hold that does not delete
/// gracefully: the generation bumped on the first mark, the deletionTimestamp now (kept
/// when it is earlier), a zero grace period.
pub(crate) fn mark_as_deleting(obj: &mut Value, now: SystemTime) {
    let meta = crate::meta::metadata_mut(obj);
    let existing = meta
        .get("deletionTimestamp")
        .and_then(Value::as_str)
        .and_then(parse_rfc3339);
    let now = Time::from_system_time(now);
    if existing.is_none()
        && let Some(generation) = meta
            .get("generation")
            .and_then(Value::as_i64)
            .filter(|g| *g > 0)
    {
        meta.insert("generation".into(), json!(generation + 1));
    }
    // metav1.Time has whole seconds on the wire: "after now" compares those.
    let now = Time::from_unix(now.seconds, 0);
    if existing.is_none_or(|t| t.seconds > now.seconds) {
        meta.insert("deletionTimestamp".into(), json!(format_rfc3339(now)));
    }
    meta.insert("deletionGracePeriodSeconds".into(), json!(0));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    fn with(finalizers: &[&str]) -> Value {
        json!({"metadata": {"name": "o", "finalizers": finalizers}})
    }

    fn opts(policy: Option<&str>, orphan: Option<bool>) -> WriteOptions {
        WriteOptions {
            propagation_policy: policy.and_then(DeletionPropagation::parse),
            orphan_dependents: orphan,
            ..WriteOptions::default()
        }
    }

    #[test]
    fn options_then_finalizers_then_the_default_decide() {
        let orphan = Some(GarbageCollectionPolicy::OrphanDependents);
        let none = opts(None, None);
        assert!(should_orphan_dependents(orphan, &with(&[]), &none));
        assert!(!should_orphan_dependents(None, &with(&[]), &none));
        assert!(!should_orphan_dependents(
            orphan,
            &with(&["foregroundDeletion"]),
            &none
        ));
        assert!(should_orphan_dependents(None, &with(&["orphan"]), &none));
        let background = opts(Some("Background"), None);
        assert!(!should_orphan_dependents(
            orphan,
            &with(&["orphan"]),
            &background
        ));
        assert!(should_orphan_dependents(
            None,
            &with(&[]),
            &opts(None, Some(true))
        ));
        let unsupported = Some(GarbageCollectionPolicy::Unsupported);
        assert!(!should_orphan_dependents(
            unsupported,
            &with(&[]),
            &opts(Some("Orphan"), None)
        ));
        let foreground = opts(Some("Foreground"), None);
        assert!(should_delete_dependents(None, &with(&[]), &foreground));
        assert!(should_delete_dependents(
            None,
            &with(&["foregroundDeletion"]),
            &none
        ));
        // orphanDependents=false is not foreground deletion in the generic store.
        assert!(!should_delete_dependents(
            None,
            &with(&["foregroundDeletion"]),
            &opts(None, Some(false))
        ));
        assert!(!should_delete_dependents(
            unsupported,
            &with(&[]),
            &foreground
        ));
    }

    #[test]
    fn finalizers_change_only_when_the_set_does() {
        let orphan = opts(Some("Orphan"), None);
        assert_eq!(
            deletion_finalizers(None, &with(&["example.com/x"]), &orphan),
            Some(vec!["example.com/x".to_owned(), "orphan".to_owned()])
        );
        assert_eq!(
            deletion_finalizers(None, &with(&["orphan", "a.b/c"]), &orphan),
            None
        );
        let foreground = opts(Some("Foreground"), None);
        assert_eq!(
            deletion_finalizers(None, &with(&["orphan", "a.b/c"]), &foreground),
            Some(vec!["a.b/c".to_owned(), "foregroundDeletion".to_owned()])
        );
        assert_eq!(
            deletion_finalizers(None, &with(&["orphan"]), &opts(Some("Background"), None)),
            Some(vec![])
        );
        assert_eq!(
            deletion_finalizers(None, &with(&[]), &opts(None, None)),
            None
        );
    }

    #[test]
    fn marking_keeps_an_earlier_deletion_time_and_bumps_the_generation_once() {
        let now = UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        let mut o = json!({"metadata": {"name": "o", "generation": 3}});
        mark_as_deleting(&mut o, now);
        assert_eq!(o["metadata"]["deletionTimestamp"], "2001-09-09T01:46:40Z");
        assert_eq!(o["metadata"]["deletionGracePeriodSeconds"], 0);
        assert_eq!(o["metadata"]["generation"], 4);
        mark_as_deleting(&mut o, now + Duration::from_secs(60));
        assert_eq!(o["metadata"]["deletionTimestamp"], "2001-09-09T01:46:40Z");
        assert_eq!(o["metadata"]["generation"], 4);
        let mut later = json!({"metadata": {"deletionTimestamp": "2001-09-09T01:50:00Z", "deletionGracePeriodSeconds": 30}});
        mark_as_deleting(&mut later, now);
        assert_eq!(
            later["metadata"]["deletionTimestamp"],
            "2001-09-09T01:46:40Z"
        );
        assert_eq!(later["metadata"]["deletionGracePeriodSeconds"], 0);
    }
}
