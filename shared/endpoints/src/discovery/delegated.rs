//! The discovery a delegate serves, merged into this role's `/apis`: upstream's
//! aggregator merges its delegates' groups into one `/apis` and one aggregated discovery
//! document. Here core-apiserver fetches extensions-apiserver's aggregated `/apis` when
//! its digest changes (the `Peer` readiness stream carries it) and serves the union: its
//! own groups, then the delegate's ones it does not serve, by name.

use std::collections::HashMap;

use bytes::Bytes;
use serde_json::{Value, json};

use super::aggregated::Version;
use crate::openapi::handler::Document;

/// A delegate's groups, as the items of its aggregated `/apis` (v2), and its OpenAPI
/// documents (`/openapi/v2` and the v3 index) when it serves them. The v2 document is kept
/// as its JSON: core's, 1.6 MB of it, took 11 MiB as a parsed document, held for the rare
/// merge that reads it.
#[derive(Debug, Default, PartialEq)]
pub struct Delegated {
    pub items: Vec<Value>,
    pub openapi: Option<(Bytes, Value)>,
}

impl Delegated {
    /// From a delegate's aggregated `/apis` document; `None` when it is not one.
    pub fn from_aggregated(doc: &[u8]) -> Option<Delegated> {
        let doc: Value = serde_json::from_slice(doc).ok()?;
        if doc.get("kind").and_then(Value::as_str) != Some("APIGroupDiscoveryList") {
            return None;
        }
        let items = doc.get("items")?.as_array()?.clone();
        Some(Delegated {
            items,
            openapi: None,
        })
    }

    /// The digest a delegate advertises for a document (see `Peer`'s `discovery`).
    pub fn digest(doc: &[u8]) -> String {
        Document::new(doc.to_vec()).etag
    }

    /// The digest of a role's discovery and OpenAPI with this delegate's merged in: what
    /// a role that merges its delegate's documents advertises to the role in front of it,
    /// `own` being its own discovery digest. It changes only once the merged documents
    /// have (this value is what was fetched), so a peer that fetches on a change sees them.
    pub fn merged_digest(&self, own: &str) -> String {
        let mut doc = own.as_bytes().to_vec();
        for item in &self.items {
            doc.extend_from_slice(item.to_string().as_bytes());
        }
        if let Some((v2, v3)) = &self.openapi {
            doc.extend_from_slice(v2);
            doc.extend_from_slice(v3.to_string().as_bytes());
        }
        Delegated::digest(&doc)
    }
}

/// `/apis` merged: the legacy group list and the aggregated documents, with ETags.
pub(crate) struct Merged {
    pub group_list: Bytes,
    pub aggregated: HashMap<Version, Document>,
    pub openapi: Option<crate::openapi::Delegated>,
}

fn group_name(item: &Value) -> &str {
    item.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Merges `delegated` into `own` (this role's aggregated `/apis`, v2).
pub(crate) fn merge(own: &[u8], delegated: &Delegated) -> Merged {
    let own: Value = serde_json::from_slice(own).unwrap_or(Value::Null);
    let mut items: Vec<Value> = own
        .get("items")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for item in &delegated.items {
        if !items.iter().any(|i| group_name(i) == group_name(item)) {
            items.push(item.clone());
        }
    }
    items.sort_by(|a, b| group_name(a).cmp(group_name(b)));
    let groups: Vec<Value> = items
        .iter()
        .filter_map(|item| {
            let name = group_name(item);
            let versions: Vec<&str> = item
                .get("versions")
                .and_then(Value::as_array)?
                .iter()
                .filter_map(|v| v.get("version").and_then(Value::as_str))
                .collect();
            let gv = |v: &str| json!({"groupVersion": format!("{name}/{v}"), "version": v});
            let preferred = gv(versions.first()?);
            Some(json!({
                "name": name,
                "versions": versions.iter().map(|v| gv(v)).collect::<Vec<_>>(),
                "preferredVersion": preferred,
            }))
        })
        .collect();
    let group_list = json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups});
    let mut aggregated = HashMap::new();
    for version in [Version::V2, Version::V2beta1] {
        let doc = json!({
            "kind": "APIGroupDiscoveryList",
            "apiVersion": format!("apidiscovery.k8s.io/{}", version.as_str()),
            "metadata": {},
            "items": items,
        });
        aggregated.insert(
            version,
            Document::new(serde_json::to_vec(&doc).unwrap_or_default()),
        );
    }
    Merged {
        group_list: Bytes::from(serde_json::to_vec(&group_list).unwrap_or_default()),
        aggregated,
        openapi: delegated
            .openapi
            .as_ref()
            .map(|(v2, root)| crate::openapi::Delegated::new(v2.clone(), root.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delegated_groups_join_by_name() {
        let own = json!({"kind": "APIGroupDiscoveryList", "items": [
            {"metadata": {"name": "apps"}, "versions": [{"version": "v1"}]},
            {"metadata": {"name": "zeta.k8s.io"}, "versions": [{"version": "v1"}]}]});
        let delegated = Delegated::from_aggregated(
            &serde_json::to_vec(&json!({"kind": "APIGroupDiscoveryList", "items": [
                {"metadata": {"name": "example.com"}, "versions": [{"version": "v2"}, {"version": "v1"}]},
                {"metadata": {"name": "apps"}, "versions": [{"version": "v9"}]}]}))
            .unwrap(),
        )
        .unwrap();
        let merged = merge(&serde_json::to_vec(&own).unwrap(), &delegated);
        let list: Value = serde_json::from_slice(&merged.group_list).unwrap();
        let names: Vec<&str> = list["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["apps", "example.com", "zeta.k8s.io"]);
        assert_eq!(
            list["groups"][1]["preferredVersion"]["groupVersion"],
            "example.com/v2"
        );
        assert_eq!(list["groups"][0]["versions"][0]["version"], "v1");
        let v2: Value = serde_json::from_slice(&merged.aggregated[&Version::V2].bytes).unwrap();
        assert_eq!(v2["apiVersion"], "apidiscovery.k8s.io/v2");
        assert_eq!(v2["items"].as_array().unwrap().len(), 3);
        assert_eq!(merged.aggregated[&Version::V2].etag.len(), 128);
    }
}
