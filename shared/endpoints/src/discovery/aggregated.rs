//! Aggregated discovery (`apidiscovery.k8s.io/v2`, and `v2beta1` for older clients): every
//! group, version and resource in one answer to `/api` or `/apis`, so kubectl discovers a
//! server in two requests instead of one per group version. Served when the `Accept` header
//! asks for `as=APIGroupDiscoveryList` before plain JSON, as upstream's
//! `WrapAggregatedDiscoveryToHandler` does; everyone else gets the legacy documents.

use std::collections::BTreeMap;

use crate::negotiation::parse_accept;
use bytes::Bytes;
use serde_json::{Value, json};

use kas_registry::{ResourceDescriptor, Subresource};

const GROUP: &str = "apidiscovery.k8s.io";
const KIND: &str = "APIGroupDiscoveryList";

/// The version of aggregated discovery a request asks for, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Version {
    V2,
    V2beta1,
}

impl Version {
    pub fn as_str(self) -> &'static str {
        match self {
            Version::V2 => "v2",
            Version::V2beta1 => "v2beta1",
        }
    }

    /// The answer's `Content-Type`, which client-go matches to pick its decoder.
    pub fn content_type(self) -> String {
        format!("application/json;g={GROUP};v={};as={KIND}", self.as_str())
    }
}

/// The first acceptable clause of `accept` decides: an `as=APIGroupDiscoveryList` JSON
/// clause of a known version means aggregated, a plain JSON (or wildcard) clause legacy.
pub fn negotiate(accept: &str) -> Option<Version> {
    for clause in parse_accept(accept) {
        let json = clause.mime_type == "application" && clause.sub_type == "json";
        let any =
            clause.mime_type == "*" || (json || clause.sub_type == "*") && clause.params.is_empty();
        if json && clause.params.get("as").map(String::as_str) == Some(KIND) {
            if clause.params.get("g").map(String::as_str) != Some(GROUP) {
                continue;
            }
            match clause.params.get("v").map(String::as_str) {
                Some("v2") => return Some(Version::V2),
                Some("v2beta1") => return Some(Version::V2beta1),
                _ => continue,
            }
        }
        if any || json {
            return None;
        }
    }
    None
}

fn gvk(group: &str, version: &str, kind: &str) -> Value {
    json!({"group": group, "version": version, "kind": kind})
}

/// A resource's entry. Upstream converts a built-in group version's legacy resource list,
/// whose entries name no group or version of their own, so their response kinds have
/// empty ones; its CRD discovery controller names a custom resource's in full.
fn resource(d: &ResourceDescriptor) -> Value {
    let custom = d.schema.is_none();
    let own = |group: Option<&'static str>,
               version: Option<&'static str>|
     -> (&'static str, &'static str) {
        match group.zip(version) {
            Some((g, v)) if custom || (g, v) != (d.group, d.version) => (g, v),
            _ if custom => (d.group, d.version),
            _ => ("", ""),
        }
    };
    let (group, version) = own(None, None);
    let mut r = json!({
        "resource": d.plural,
        "responseKind": gvk(group, version, d.kind),
        "scope": if d.namespaced() { "Namespaced" } else { "Cluster" },
        "singularResource": d.singular,
        "verbs": super::verb_names(d.verbs),
    });
    if !d.short_names.is_empty() {
        r["shortNames"] = json!(d.short_names);
    }
    if !d.categories.is_empty() {
        r["categories"] = json!(d.categories);
    }
    // Upstream sorts a built-in resource's subresources by name (they come from the
    // sorted legacy list); a custom resource's are `status`, then `scale`.
    let mut subs: Vec<&Subresource> = d.subresources.iter().collect();
    if !custom {
        subs.sort_by_key(|s| s.name);
    }
    let subresources: Vec<Value> = subs
        .into_iter()
        .map(|s| {
            let (group, version, kind) = super::sub_kind(d, s);
            let (group, version) = own(group, version);
            json!({
                "subresource": s.name,
                "responseKind": gvk(group, version, kind),
                "verbs": super::verb_names(s.verbs),
            })
        })
        .collect();
    if !subresources.is_empty() {
        r["subresources"] = json!(subresources);
    }
    r
}

/// The `/api` (`legacy`) or `/apis` document in `version`, from the role's descriptors:
/// groups by name, each group's versions in the order they were declared (preferred
/// first), resources sorted by name.
pub fn document(
    descriptors: &[&'static ResourceDescriptor],
    legacy: bool,
    version: Version,
) -> Bytes {
    let mut groups: BTreeMap<&str, Vec<(&str, Vec<&ResourceDescriptor>)>> = BTreeMap::new();
    for d in descriptors.iter().filter(|d| d.group.is_empty() == legacy) {
        let versions = groups.entry(d.group).or_default();
        match versions.iter_mut().find(|(v, _)| *v == d.version) {
            Some((_, resources)) => resources.push(d),
            None => versions.push((d.version, vec![d])),
        }
    }
    let items: Vec<Value> = groups
        .into_iter()
        .map(|(group, versions)| {
            let mut metadata = json!({"creationTimestamp": null});
            if !group.is_empty() {
                metadata["name"] = json!(group);
            }
            let versions: Vec<Value> = versions
                .into_iter()
                .map(|(v, mut resources)| {
                    resources.sort_by_key(|d| d.plural);
                    let resources: Vec<Value> = resources.into_iter().map(resource).collect();
                    json!({"version": v, "resources": resources, "freshness": "Current"})
                })
                .collect();
            json!({"metadata": metadata, "versions": versions})
        })
        .collect();
    let list = json!({
        "kind": KIND,
        "apiVersion": format!("{GROUP}/{}", version.as_str()),
        "metadata": {},
        "items": items,
    });
    Bytes::from(serde_json::to_vec(&list).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_s_accept_header_selects_v2() {
        let kubectl = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,\
                       application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,\
                       application/json";
        assert_eq!(negotiate(kubectl), Some(Version::V2));
        assert_eq!(
            negotiate("application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"),
            Some(Version::V2beta1)
        );
        assert_eq!(negotiate("application/json"), None);
        assert_eq!(negotiate(""), None);
        assert_eq!(
            negotiate(
                "application/json, application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
            ),
            None,
            "plain JSON first wins"
        );
        assert_eq!(
            negotiate(
                "application/json;g=apidiscovery.k8s.io;v=v9;as=APIGroupDiscoveryList,application/json"
            ),
            None
        );
        assert_eq!(
            Version::V2.content_type(),
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
        );
    }
}
