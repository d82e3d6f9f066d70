//! Upstream's `k8s.io/apiserver/pkg/quota/v1` resource-list helpers (`Add`,
//! `SubtractWithNonNegativeResult`, `Mask`, `LessThanOrEqual`, `RemoveZeros`, `IsNegative`)
//! and the plugin's `prettyPrint`, over lists keyed in byte order as Go sorts them.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use kas_apimachinery::resource::Quantity;
use serde_json::{Map, Value};

/// `corev1.ResourceList`.
pub type ResourceList = BTreeMap<String, Quantity>;

/// The list at `value` (a JSON map of quantity strings); unparsable entries are left out.
pub fn from_json(value: Option<&Value>) -> ResourceList {
    let Some(map) = value.and_then(Value::as_object) else {
        return ResourceList::new();
    };
    map.iter()
        .filter_map(|(k, v)| Some((k.clone(), Quantity::parse(v.as_str()?).ok()?)))
        .collect()
}

/// The list as JSON, each quantity in the form Go writes.
pub fn to_json(list: &ResourceList) -> Value {
    let map: Map<String, Value> = list
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.canonical())))
        .collect();
    Value::Object(map)
}

/// `quota.Add`: a key in both is summed in `a`'s format; others are copied.
pub fn add(a: &ResourceList, b: &ResourceList) -> ResourceList {
    let mut result = a.clone();
    for (key, value) in b {
        match result.get_mut(key) {
            Some(q) => q.add(value),
            None => {
                result.insert(key.clone(), value.clone());
            }
        }
    }
    result
}

/// `quota.SubtractWithNonNegativeResult`: `a - b` per key of `a`, never below zero.
pub fn subtract_non_negative(a: &ResourceList, b: &ResourceList) -> ResourceList {
    let mut result = ResourceList::new();
    for (key, value) in a {
        let mut q = value.clone();
        if let Some(other) = b.get(key) {
            q.sub(other);
        }
        if q.is_negative() {
            q = Quantity::from_int(0);
        }
        result.insert(key.clone(), q);
    }
    result
}

/// `quota.Mask`: the entries of `list` whose names are in `names`.
pub fn mask<'a>(list: &ResourceList, names: impl IntoIterator<Item = &'a String>) -> ResourceList {
    names
        .into_iter()
        .filter_map(|n| Some((n.clone(), list.get(n)?.clone())))
        .collect()
}

/// `quota.LessThanOrEqual`: whether every entry of `a` that `b` also names is at most
/// `b`'s, and the names that are not.
pub fn less_than_or_equal(a: &ResourceList, b: &ResourceList) -> (bool, Vec<String>) {
    let exceeded: Vec<String> = a
        .iter()
        .filter(|(k, v)| {
            b.get(*k)
                .is_some_and(|limit| v.cmp_value(limit) == Ordering::Greater)
        })
        .map(|(k, _)| k.clone())
        .collect();
    (exceeded.is_empty(), exceeded)
}

/// `quota.RemoveZeros`.
pub fn remove_zeros(list: &ResourceList) -> ResourceList {
    list.iter()
        .filter(|(_, v)| !v.is_zero())
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// `quota.IsNegative`: the names with a negative value.
pub fn negative(list: &ResourceList) -> Vec<String> {
    list.iter()
        .filter(|(_, v)| v.is_negative())
        .map(|(k, _)| k.clone())
        .collect()
}

/// `quota.Equals`.
pub fn equals(a: &ResourceList, b: &ResourceList) -> bool {
    a.len() == b.len()
        && a.iter()
            .all(|(k, v)| b.get(k).is_some_and(|o| v.cmp_value(o) == Ordering::Equal))
}

/// The plugin's `prettyPrint`: `name=value` in name order, comma-separated.
pub fn pretty_print(list: &ResourceList) -> String {
    list.iter()
        .map(|(k, v)| format!("{k}={}", v.canonical()))
        .collect::<Vec<_>>()
        .join(",")
}

/// The plugin's `prettyPrintResourceNames`: sorted, comma-separated.
pub fn pretty_print_names(names: &[String]) -> String {
    let mut sorted: Vec<&str> = names.iter().map(String::as_str).collect();
    sorted.sort_unstable();
    sorted.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lists_add_subtract_and_compare_as_upstream() {
        let used = from_json(Some(&json!({"pods": "1", "requests.cpu": "500m"})));
        let delta = from_json(Some(
            &json!({"pods": "1", "requests.cpu": "1", "count/pods": "1"}),
        ));
        let sum = add(&used, &delta);
        assert_eq!(pretty_print(&sum), "count/pods=1,pods=2,requests.cpu=1500m");
        let hard = from_json(Some(&json!({"pods": "2", "requests.cpu": "1"})));
        let (ok, exceeded) = less_than_or_equal(&sum, &hard);
        assert!(!ok);
        assert_eq!(exceeded, ["requests.cpu"]);
        let diff = subtract_non_negative(&used, &delta);
        assert_eq!(pretty_print(&diff), "pods=0,requests.cpu=0");
        assert!(remove_zeros(&diff).is_empty());
        assert!(equals(
            &used,
            &from_json(Some(&json!({"pods": "1", "requests.cpu": "0.5"})))
        ));
        assert_eq!(pretty_print_names(&["b".into(), "a".into()]), "a,b");
    }
}
