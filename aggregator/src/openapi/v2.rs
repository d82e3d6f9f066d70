//! `/openapi/v2` at the aggregator, after upstream's `specAggregator`
//! (`controllers/openapi/aggregator`): the local specs (the aggregator's own, then core's
//! with extensions' merged in: upstream's delegation chain) and every service-backed
//! APIService's last downloaded spec, sorted by `sortByPriority` and merged in that order
//! (`merge`). The document is merged at the first request after a change, then kept.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use kas_endpoints::discovery::delegated::Delegated;
use kas_endpoints::openapi::V2;
use serde_json::{Map, Value};

use super::merge;

/// Upstream's `localDelegateChainNamePattern` for the `i`th server of the chain (the
/// aggregator is 0).
pub fn local_name(i: usize) -> String {
    format!("k8s_internal_local_delegation_chain_{i:010}")
}

/// One spec of the merge.
#[derive(Clone, Debug)]
pub struct Spec {
    /// The APIService's name, or [`local_name`].
    pub name: String,
    /// `None` for a local spec.
    pub remote: Option<Remote>,
    pub spec: Source,
}

/// Where a spec is kept: its own value, or core's followed documents (shared, not copied).
#[derive(Clone, Debug)]
pub enum Source {
    Value(Arc<Value>),
    Core(Arc<Delegated>),
}

impl Source {
    /// The document; core's is parsed from the JSON it is kept as.
    fn value(&self) -> Cow<'_, Value> {
        match self {
            Source::Value(v) => Cow::Borrowed(v),
            Source::Core(d) => Cow::Owned(
                d.openapi
                    .as_ref()
                    .and_then(|(v2, _)| serde_json::from_slice(v2).ok())
                    .unwrap_or_default(),
            ),
        }
    }
}

/// What orders a service-backed APIService's spec.
#[derive(Clone, Debug)]
pub struct Remote {
    pub group: String,
    pub group_priority: i64,
}

/// Upstream's `sortByPriority`: local specs first, by name (the delegation chain's
/// order); then service-backed ones by the highest group priority of their group, then
/// by name (upstream compares one APIService's version priority with itself within a
/// group, so a group's specs fall back to name order).
fn sort_by_priority(specs: &mut [Spec]) {
    let mut group_priorities: HashMap<&str, i64> = HashMap::new();
    for r in specs.iter().filter_map(|s| s.remote.as_ref()) {
        let p = group_priorities.entry(&r.group).or_insert(r.group_priority);
        *p = (*p).max(r.group_priority);
    }
    let priority = |s: &Spec| {
        let group = s.remote.as_ref().map_or("", |r| r.group.as_str());
        group_priorities.get(group).copied().unwrap_or(0)
    };
    let mut keyed: Vec<(bool, i64, String, usize)> = specs
        .iter()
        .enumerate()
        .map(|(i, s)| (s.remote.is_some(), -priority(s), s.name.clone(), i))
        .collect();
    keyed.sort();
    let sorted: Vec<Spec> = keyed.into_iter().map(|(.., i)| specs[i].clone()).collect();
    specs.clone_from_slice(&sorted);
}

/// The merge of one set of specs.
pub struct Merged {
    specs: Vec<Spec>,
    document: OnceLock<V2>,
    pub modified: SystemTime,
}

impl Merged {
    pub fn new(mut specs: Vec<Spec>) -> Merged {
        sort_by_priority(&mut specs);
        Merged {
            specs,
            document: OnceLock::new(),
            modified: SystemTime::now(),
        }
    }

    pub fn document(&self) -> &V2 {
        self.document
            .get_or_init(|| V2::new(&merge_all(&self.specs)))
    }
}

/// The first spec's top level (info, security) without its paths, definitions and
/// parameters, then every spec merged into it in order; a spec that fails to merge is
/// left out.
fn merge_all(specs: &[Spec]) -> Value {
    let mut merged: Option<Value> = None;
    for s in specs {
        let spec = s.spec.value();
        let dest = merged.get_or_insert_with(|| {
            let top = spec.as_object();
            let mut top: Map<String, Value> = top.cloned().unwrap_or_default();
            for k in ["paths", "definitions", "parameters"] {
                top.remove(k);
            }
            Value::Object(top)
        });
        if let Err(e) = merge::merge(dest, &spec) {
            tracing::warn!(spec = %s.name, error = %e, "failed to build merge specs");
        }
    }
    merged.unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(name: &str, remote: Option<(&str, i64)>) -> Spec {
        Spec {
            name: name.to_owned(),
            remote: remote.map(|(group, group_priority)| Remote {
                group: group.to_owned(),
                group_priority,
            }),
            spec: Source::Value(Arc::new(json!({"swagger": "2.0", "info": {"title": name},
                "paths": {format!("/{name}"): {}}}))),
        }
    }

    /// Upstream's `TestAPIServiceSort` (priority_test.go).
    #[test]
    fn sorted_as_upstream() {
        let mut specs = vec![
            spec("FirstService", Some(("Group1", 10))),
            spec("SecondService", Some(("Group2", 15))),
            spec("FirstServiceInternal", Some(("Group1", 16))),
            spec("ThirdService", Some(("Group3", 15))),
            spec("local_service_1", None),
            spec("local_service_3", None),
            spec("local_service_2", None),
        ];
        sort_by_priority(&mut specs);
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "local_service_1",
                "local_service_2",
                "local_service_3",
                "FirstService",
                "FirstServiceInternal",
                "SecondService",
                "ThirdService",
            ]
        );
        let merged = Merged::new(specs);
        let doc: Value = serde_json::from_slice(&merged.document().json().bytes).unwrap();
        assert_eq!(doc["info"]["title"], "local_service_1");
        assert_eq!(doc["paths"].as_object().unwrap().len(), 7);
        assert_eq!(
            local_name(1),
            "k8s_internal_local_delegation_chain_0000000001"
        );
    }
}
