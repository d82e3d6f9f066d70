//! The legacy discovery documents the aggregator writes from its APIServices, after
//! upstream's `handler_apis.go`: `/apis` (`apisHandler`: the aggregator's own group first,
//! then every group of an APIService, by priority) and `/apis/<group>`
//! (`apiGroupHandler`), with the order of the apiregistration helpers'
//! `SortedByGroupAndVersion`.

use std::cmp::Ordering;

use serde_json::{Value, json};

use crate::apiservice::{self, GROUP as OWN_GROUP, VERSION as OWN_VERSION};

/// An APIService as discovery orders it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Registered {
    pub name: String,
    pub group: String,
    pub version: String,
    pub group_priority: i64,
    pub version_priority: i64,
}

impl Registered {
    pub fn from_object(api_service: &Value) -> Registered {
        let (group, version) = apiservice::group_version(api_service);
        let (group_priority, version_priority) = apiservice::priorities(api_service);
        Registered {
            name: kas_registry::meta::name(api_service).to_owned(),
            group: group.to_owned(),
            version: version.to_owned(),
            group_priority,
            version_priority,
        }
    }
}

/// Upstream's `ByGroupPriorityMinimum`: the highest group priority first, then by name.
fn by_group_priority(a: &Registered, b: &Registered) -> Ordering {
    b.group_priority
        .cmp(&a.group_priority)
        .then_with(|| a.name.cmp(&b.name))
}

/// Upstream's `ByVersionPriority`: the highest version priority first, then the
/// Kubernetes-aware version order.
fn by_version_priority(a: &Registered, b: &Registered) -> Ordering {
    b.version_priority
        .cmp(&a.version_priority)
        .then_with(|| kas_apimachinery::version::compare_kube_aware(&b.version, &a.version))
}

/// Upstream's `SortedByGroupAndVersion`: APIServices grouped, groups in the order their
/// first APIService takes by group priority (then name), each group's by version priority.
pub fn sorted_by_group_and_version(mut all: Vec<Registered>) -> Vec<Vec<Registered>> {
    all.sort_by(by_group_priority);
    let mut groups: Vec<Vec<Registered>> = Vec::new();
    for r in all {
        match groups.iter_mut().find(|g| g[0].group == r.group) {
            Some(group) => {
                group.push(r);
                group.sort_by(by_version_priority);
            }
            None => groups.push(vec![r]),
        }
    }
    groups
}

fn group_version(group: &str, version: &str) -> Value {
    json!({"groupVersion": format!("{group}/{version}"), "version": version})
}

/// Upstream's `convertToDiscoveryAPIGroup` of one group's APIServices (sorted): the first
/// is the preferred version.
fn api_group(sorted: &[Registered]) -> Option<Value> {
    let first = sorted.first()?;
    Some(json!({
        "name": first.group,
        "versions": sorted.iter().map(|r| group_version(&r.group, &r.version)).collect::<Vec<_>>(),
        "preferredVersion": group_version(&first.group, &first.version),
    }))
}

/// `/apis/<group>`: the `APIGroup` of the group's APIServices; `None` when it has none
/// (upstream's handler then passes the request on).
pub fn group_document(all: &[Registered], group: &str) -> Option<Value> {
    let mine: Vec<Registered> = all.iter().filter(|r| r.group == group).cloned().collect();
    let sorted = sorted_by_group_and_version(mine);
    let mut doc = api_group(sorted.first()?)?;
    doc["kind"] = json!("APIGroup");
    doc["apiVersion"] = json!("v1");
    Some(doc)
}

/// `/apis`: the aggregator's own group, then each APIService group but the legacy one.
pub fn group_list(all: &[Registered]) -> Value {
    let own = json!({
        "name": OWN_GROUP,
        "versions": [group_version(OWN_GROUP, OWN_VERSION)],
        "preferredVersion": group_version(OWN_GROUP, OWN_VERSION),
    });
    let mut groups = vec![own];
    for sorted in sorted_by_group_and_version(all.to_vec()) {
        if sorted[0].group.is_empty() {
            continue;
        }
        groups.extend(api_group(&sorted));
    }
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(name: &str, group_priority: i64, version_priority: i64) -> Registered {
        let (version, group) = name.split_once('.').unwrap();
        Registered {
            name: name.to_owned(),
            group: group.to_owned(),
            version: version.to_owned(),
            group_priority,
            version_priority,
        }
    }

    /// Upstream's `TestSortedAPIServicesByVersion` (helpers_test.go): equal priorities
    /// fall back to the Kubernetes-aware version order.
    #[test]
    fn versions_sort_as_upstream() {
        let cases: [(&[&str], &[&str]); 5] = [
            (&["v1", "v2"], &["v2", "v1"]),
            (&["v2", "v10"], &["v10", "v2"]),
            (
                &["v2", "v2beta1", "v10beta2", "v10beta1", "v10alpha1", "v1"],
                &["v2", "v1", "v10beta2", "v10beta1", "v2beta1", "v10alpha1"],
            ),
            (
                &["v1", "v2", "test", "foo10", "final", "foo2", "foo1"],
                &["v2", "v1", "final", "foo1", "foo10", "foo2", "test"],
            ),
            (
                &[
                    "v12alpha1",
                    "v10",
                    "v11beta2",
                    "v10beta3",
                    "v3beta1",
                    "v2",
                    "v11alpha2",
                    "foo1",
                    "v1",
                    "foo10",
                ],
                &[
                    "v10",
                    "v2",
                    "v1",
                    "v11beta2",
                    "v10beta3",
                    "v3beta1",
                    "v12alpha1",
                    "v11alpha2",
                    "foo1",
                    "foo10",
                ],
            ),
        ];
        for (versions, expected) in cases {
            let all = versions
                .iter()
                .map(|v| r(&format!("{v}.g"), 0, 100))
                .collect();
            let sorted = sorted_by_group_and_version(all);
            let order: Vec<&str> = sorted[0].iter().map(|r| r.version.as_str()).collect();
            assert_eq!(order, expected);
        }
    }

    fn summary(list: &Value) -> Vec<(String, Vec<String>)> {
        list["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| {
                let versions = g["versions"].as_array().unwrap().iter();
                let versions = versions.map(|v| v["version"].as_str().unwrap().to_owned());
                assert_eq!(g["preferredVersion"], g["versions"][0]);
                (g["name"].as_str().unwrap().to_owned(), versions.collect())
            })
            .collect()
    }

    /// Upstream's `TestAPIs` (handler_apis_test.go): "simple add", "sorting" (a group
    /// sorts by its highest group priority, its versions by version priority), and
    /// "unavailable service" (listed all the same).
    #[test]
    fn group_lists_as_upstream() {
        let own = ("apiregistration.k8s.io".to_owned(), vec!["v1".to_owned()]);
        let g = |name: &str, versions: &[&str]| {
            let versions = versions.iter().map(|v| v.to_string()).collect();
            (name.to_owned(), versions)
        };
        assert_eq!(summary(&group_list(&[])), std::slice::from_ref(&own));
        let simple = [r("v1.foo", 11, 0), r("v1.bar", 10, 0)];
        assert_eq!(
            summary(&group_list(&simple)),
            [own.clone(), g("foo", &["v1"]), g("bar", &["v1"])]
        );
        let sorting = [
            r("v1.foo", 20, 10),
            r("v2.bar", 11, 0),
            r("v2.foo", 1, 15),
            r("v1.bar", 11, 0),
        ];
        assert_eq!(
            summary(&group_list(&sorting)),
            [own, g("foo", &["v2", "v1"]), g("bar", &["v2", "v1"])]
        );
    }

    #[test]
    fn the_list_puts_the_aggregator_first_and_skips_the_legacy_group() {
        let all = vec![
            r("v1.", 18000, 1),
            r("v1.apps", 17800, 15),
            r("v1.autoscaling", 17500, 15),
            r("v2.autoscaling", 17500, 30),
            r("v1.events.k8s.io", 17750, 15),
        ];
        let list = group_list(&all);
        let groups: Vec<(&str, &str)> = list["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| {
                (
                    g["name"].as_str().unwrap(),
                    g["preferredVersion"]["version"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            groups,
            [
                ("apiregistration.k8s.io", "v1"),
                ("apps", "v1"),
                ("events.k8s.io", "v1"),
                ("autoscaling", "v2"),
            ]
        );
        assert_eq!(
            list["groups"][3]["versions"],
            json!([{"groupVersion": "autoscaling/v2", "version": "v2"},
                   {"groupVersion": "autoscaling/v1", "version": "v1"}])
        );
        let group = group_document(&all, "autoscaling").unwrap();
        assert_eq!(group["kind"], "APIGroup");
        assert_eq!(group["preferredVersion"]["groupVersion"], "autoscaling/v2");
        assert!(group_document(&all, "batch").is_none());
    }
}
