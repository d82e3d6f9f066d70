//! The aggregated discovery document (`apidiscovery.k8s.io/v2`) the aggregator serves at
//! `/apis`, after upstream's `ResourceManager` (`endpoints/discovery/aggregated/handler.go`)
//! shared by its three servers: every group version from its sources, one source's entry
//! per group version (a service-backed APIService's before a local one, as upstream's
//! `AggregatorSource` precedes its `BuiltinSource` and `CRDSource`), each group's versions
//! by version priority, the groups by the highest group priority of their versions, then
//! by name.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use kas_apimachinery::version::compare_kube_aware;
use serde_json::{Value, json};

use crate::apiservice::builtin;
use crate::controllers::crd_registration;

/// `groupPriorityMinimum` and `versionPriority` of a group version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Priority {
    pub group: i64,
    pub version: i64,
}

/// Upstream's `APIRegistrationGroupPriority`: above the 20000 an APIService may ask for,
/// so that the aggregator's own group comes first.
pub const OWN_GROUP_PRIORITY: Priority = Priority {
    group: 20001,
    version: 0,
};

/// One group version's `APIVersionDiscovery` and its priorities.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub group: String,
    pub version: Value,
    pub priority: Priority,
}

impl Entry {
    fn version_name(&self) -> &str {
        self.version
            .get("version")
            .and_then(Value::as_str)
            .unwrap_or("")
    }
}

/// The priority of a group version served locally (by core or extensions): upstream's
/// table for built-in ones, which kube-apiserver imbues into its discovery manager, else
/// what the CRD discovery controller sets.
pub fn local_priority(group: &str, version: &str) -> Priority {
    if group == crate::apiservice::GROUP {
        return OWN_GROUP_PRIORITY;
    }
    match builtin::priority(group, version) {
        Some((group, version)) => Priority { group, version },
        None => Priority {
            group: crd_registration::GROUP_PRIORITY_MINIMUM,
            version: crd_registration::VERSION_PRIORITY,
        },
    }
}

/// Each group version of `APIGroupDiscovery` items: its group, its version and its
/// `APIVersionDiscovery`.
pub fn group_versions(items: &[Value]) -> impl Iterator<Item = (&str, &str, &Value)> {
    items.iter().flat_map(|item| {
        let group = item.pointer("/metadata/name").and_then(Value::as_str);
        let versions = item.get("versions").and_then(Value::as_array);
        versions.into_iter().flatten().map(move |v| {
            let version = v.get("version").and_then(Value::as_str);
            (group.unwrap_or(""), version.unwrap_or(""), v)
        })
    })
}

/// The entries of local groups, from `APIGroupDiscovery` items (core's merged `/apis`,
/// the aggregator's own).
pub fn local_entries(items: &[Value]) -> Vec<Entry> {
    group_versions(items)
        .map(|(group, version, v)| Entry {
            group: group.to_owned(),
            version: v.clone(),
            priority: local_priority(group, version),
        })
        .collect()
}

fn by_version_priority(a: &Entry, b: &Entry) -> Ordering {
    b.priority
        .version
        .cmp(&a.priority.version)
        .then_with(|| compare_kube_aware(b.version_name(), a.version_name()))
}

/// The `items` of the document: `remote` entries (service-backed APIServices') take
/// precedence over `local` ones of the same group version.
pub fn items(remote: &[Entry], local: &[Entry]) -> Vec<Value> {
    let mut groups: BTreeMap<&str, Vec<&Entry>> = BTreeMap::new();
    for entry in remote.iter().chain(local) {
        let versions = groups.entry(&entry.group).or_default();
        if !versions
            .iter()
            .any(|e| e.version_name() == entry.version_name())
        {
            versions.push(entry);
        }
    }
    let mut sorted: Vec<(i64, &str, Vec<&Entry>)> = groups
        .into_iter()
        .map(|(name, mut versions)| {
            versions.sort_by(|a, b| by_version_priority(a, b));
            let priority = versions.iter().map(|e| e.priority.group).max();
            (priority.unwrap_or(0), name, versions)
        })
        .collect();
    sorted.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    sorted
        .into_iter()
        .map(|(_, name, versions)| {
            let versions: Vec<&Value> = versions.iter().map(|e| &e.version).collect();
            json!({
                "metadata": {"name": name, "creationTimestamp": null},
                "versions": versions,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(group: &str, version: &str, g: i64, v: i64) -> Entry {
        Entry {
            group: group.to_owned(),
            version: json!({"version": version, "freshness": "Current"}),
            priority: Priority {
                group: g,
                version: v,
            },
        }
    }

    fn summary(items: &[Value]) -> Vec<String> {
        items
            .iter()
            .map(|i| {
                let versions: Vec<&str> = i["versions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v["version"].as_str().unwrap())
                    .collect();
                format!(
                    "{}:{}",
                    i["metadata"]["name"].as_str().unwrap(),
                    versions.join(",")
                )
            })
            .collect()
    }

    /// Upstream's handler_test.go: `TestVersionSortingNoPriority` (the default priorities,
    /// 1000 and 15, fall back to the Kubernetes-aware order), `TestVersionSortingWithPriority`,
    /// `TestGroupVersionSortingConflictingPriority` (a group takes the highest group
    /// priority of its versions) and `TestStatelessGroupPriorityMinimum`.
    #[test]
    fn sorted_as_upstream() {
        let no_priority: Vec<Entry> = ["v1alpha1", "v2beta1", "v1", "v1beta1", "v2"]
            .iter()
            .map(|v| entry("default", v, 1000, 15))
            .collect();
        assert_eq!(
            summary(&items(&[], &no_priority)),
            ["default:v2,v1,v2beta1,v1beta1,v1alpha1"]
        );
        let with_priority = [
            entry("default", "v1", 1000, 100),
            entry("default", "v1alpha1", 1000, 200),
        ];
        assert_eq!(
            summary(&items(&[], &with_priority)),
            ["default:v1alpha1,v1"]
        );
        let conflicting = [
            entry("default", "v1", 1000, 100),
            entry("test", "v1alpha1", 2000, 100),
            entry("test", "v1alpha2", 1000, 15),
        ];
        assert_eq!(
            summary(&items(&[], &conflicting)),
            ["test:v1alpha1,v1alpha2", "default:v1"]
        );
        let mut stateless = vec![
            entry("stable.example.com", "v1", 1000, 100),
            entry("experimental.example.com", "v1", 100, 100),
            entry("experimental.example.com", "v1alpha1", 10000, 100),
        ];
        let names = |e: &[Entry]| {
            let merged = items(&[], e);
            merged
                .iter()
                .map(|i| i["metadata"]["name"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names(&stateless),
            ["experimental.example.com", "stable.example.com"]
        );
        stateless.pop();
        assert_eq!(
            names(&stateless),
            ["stable.example.com", "experimental.example.com"]
        );
    }

    /// Upstream's `TestSourcePrecedence`: the lower source's entry masks the other's.
    #[test]
    fn a_service_backed_group_version_shadows_a_local_one() {
        let local = [
            entry("x.io", "v1", 1000, 100),
            entry("x.io", "v2", 1000, 100),
        ];
        let mut remote = entry("x.io", "v1", 50, 500);
        remote.version["freshness"] = json!("Stale");
        let merged = items(&[remote], &local);
        assert_eq!(summary(&merged), ["x.io:v1,v2"]);
        assert_eq!(merged[0]["versions"][0]["freshness"], "Stale");
    }

    #[test]
    fn local_priorities_come_from_upstreams_table() {
        let items_in = vec![
            json!({"metadata": {"name": "example.com"}, "versions": [{"version": "v1"}]}),
            json!({"metadata": {"name": "autoscaling"}, "versions": [{"version": "v1"}, {"version": "v2"}]}),
            json!({"metadata": {"name": "apiregistration.k8s.io"}, "versions": [{"version": "v1"}]}),
            json!({"metadata": {"name": "apps"}, "versions": [{"version": "v1"}]}),
        ];
        let merged = items(&[], &local_entries(&items_in));
        assert_eq!(
            summary(&merged),
            [
                "apiregistration.k8s.io:v1",
                "apps:v1",
                "autoscaling:v2,v1",
                "example.com:v1"
            ]
        );
    }
}
