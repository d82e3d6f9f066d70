use serde_json::json;

use super::{smp, smp_err};
use crate::patch::PatchError;
use crate::patch::order::go_stable_sort;

#[test]
fn set_element_order_reorders_a_merging_list() {
    let original = json!({"spec": {"containers": [{"name": "1"}, {"name": "2"}, {"name": "3"}]}});
    let patch = json!({"spec": {"$setElementOrder/containers": [{"name": "3"}, {"name": "1"}, {"name": "2"}]}});
    assert_eq!(
        smp(original, patch),
        json!({"spec": {"containers": [{"name": "3"}, {"name": "1"}, {"name": "2"}]}})
    );
}

#[test]
fn set_element_order_places_added_items() {
    let original = json!({"spec": {"containers": [{"name": "1", "image": "a"}, {"name": "2"}]}});
    let patch = json!({"spec": {
        "$setElementOrder/containers": [{"name": "1"}, {"name": "3"}, {"name": "2"}],
        "containers": [{"name": "3"}, {"name": "1", "image": "b"}]
    }});
    // The patch list's order contradicts $setElementOrder only if an item is missing from it.
    let err = smp_err(original.clone(), patch.clone());
    assert!(
        matches!(err, PatchError::Other(ref m) if m.starts_with("The order in patch list:\n")),
        "{err:?}"
    );
    let patch = json!({"spec": {
        "$setElementOrder/containers": [{"name": "1"}, {"name": "3"}, {"name": "2"}],
        "containers": [{"name": "1", "image": "b"}, {"name": "3"}]
    }});
    assert_eq!(
        smp(original, patch),
        json!({"spec": {"containers": [{"name": "1", "image": "b"}, {"name": "3"}, {"name": "2"}]}})
    );
}

#[test]
fn set_element_order_with_deletions_and_server_only_items() {
    let original = json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "d"}]}});
    let patch = json!({"spec": {
        "$setElementOrder/containers": [{"name": "d"}, {"name": "a"}],
        "containers": [{"name": "c", "$patch": "delete"}]
    }});
    // b is server-only: mergeSortedSlice puts it before d, which it preceded live.
    assert_eq!(
        smp(original, patch),
        json!({"spec": {"containers": [{"name": "b"}, {"name": "d"}, {"name": "a"}]}})
    );
}

#[test]
fn set_element_order_on_an_empty_list_is_upstreams_error() {
    let err = smp_err(
        json!({"metadata": {"finalizers": []}}),
        json!({"metadata": {"$setElementOrder/finalizers": ["a"]}}),
    );
    assert_eq!(
        err,
        PatchError::Other("no elements in any of the given slices".into())
    );
}

#[test]
fn go_stable_sort_is_stable_and_sorts() {
    let mut v: Vec<(u32, usize)> = (0..100).map(|i| ((i * 37 % 11) as u32, i)).collect();
    go_stable_sort(&mut v, |a, b| a.0 < b.0);
    assert!(
        v.windows(2)
            .all(|w| w[0].0 < w[1].0 || (w[0].0 == w[1].0 && w[0].1 < w[1].1))
    );
    // An always-true `less` (upstream's "not found" case) reverses a short run, as Go's
    // insertion sort does.
    let mut short = vec![1, 2, 3];
    go_stable_sort(&mut short, |_, _| true);
    assert_eq!(short, vec![3, 2, 1]);
}
