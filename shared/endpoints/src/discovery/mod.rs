//! Legacy discovery documents (`/api`, `/api/v1`, `/apis`, `/apis/<group>`,
//! `/apis/<group>/<version>`), built from descriptors, as upstream's discovery handlers
//! write them. kubectl falls back to these when aggregated discovery is not offered.

pub mod aggregated;
pub mod delegated;

use std::collections::BTreeMap;

use base64::Engine;
use serde_json::{Value, json};

use kas_registry::{ResourceDescriptor, Subresource};

/// Upstream's `storageVersionHash`: the first 8 bytes of sha256("<group>/<version>/<kind>"),
/// base64-encoded.
pub fn storage_version_hash(group: &str, version: &str, kind: &str) -> String {
    let digest = aws_lc_rs::digest::digest(
        &aws_lc_rs::digest::SHA256,
        format!("{group}/{version}/{kind}").as_bytes(),
    );
    base64::engine::general_purpose::STANDARD.encode(&digest.as_ref()[..8])
}

fn resource_entries(d: &ResourceDescriptor) -> Vec<Value> {
    let mut main = json!({
        "name": d.plural,
        "singularName": d.singular,
        "namespaced": d.namespaced(),
        "kind": d.kind,
        "verbs": verb_names(d.verbs),
    });
    if !d.short_names.is_empty() {
        main["shortNames"] = json!(d.short_names);
    }
    if !d.categories.is_empty() {
        main["categories"] = json!(d.categories);
    }
    // Upstream's installer writes the hash of a storage that provides its version: the
    // generic store, which also watches. Reviews, bindings and component statuses are
    // REST objects of their own, without either.
    if d.allows(kas_registry::Verb::Watch) {
        let (group, version, kind) = d.storage_version();
        main["storageVersionHash"] = json!(storage_version_hash(group, version, kind));
    }
    let mut out = vec![main];
    for sub in d.subresources {
        let (group, version, kind) = sub_kind(d, sub);
        let mut entry = json!({
            "name": format!("{}/{}", d.plural, sub.name),
            "singularName": "",
            "namespaced": d.namespaced(),
            "kind": kind,
            "verbs": verb_names(sub.verbs),
        });
        // Named only when they are not the resource's own (a Scale's autoscaling/v1).
        if let Some((g, v)) = group.zip(version)
            && (g, v) != (d.group, d.version)
        {
            entry["group"] = json!(g);
            entry["version"] = json!(v);
        }
        out.push(entry);
    }
    out
}

/// A subresource's group and version when it has a kind of its own, and its kind.
pub(crate) fn sub_kind(
    d: &ResourceDescriptor,
    sub: &Subresource,
) -> (Option<&'static str>, Option<&'static str>, &'static str) {
    match (&sub.kind, sub.handler) {
        (Some(k), _) => (Some(k.group), Some(k.version), k.kind),
        (None, kas_registry::SubresourceHandler::Connect(spec)) => (None, None, spec.kind),
        (None, _) => (None, None, d.kind),
    }
}

/// Verbs as discovery lists them: in the descriptor's order, which for a built-in
/// resource is sorted (upstream's installer sorts them) and for a custom resource is
/// upstream's CRD discovery controller's (`Verb::CUSTOM_RESOURCE`).
pub(crate) fn verb_names(verbs: &[kas_registry::Verb]) -> Vec<&'static str> {
    verbs.iter().map(|v| v.as_str()).collect()
}

/// `/api/v1` or `/apis/<group>/<version>`: the resources of one group version, sorted by
/// name as upstream lists them. Custom resources (no Go type) are listed as upstream's CRD
/// discovery controller appends them: each resource, then its `status` and `scale`
/// (upstream takes the CRDs in its lister's order; here by plural).
pub fn api_resource_list(group: &str, version: &str, resources: &[&ResourceDescriptor]) -> Value {
    let mut resources = resources.to_vec();
    resources.sort_by_key(|d| d.plural);
    let mut entries: Vec<Value> = resources.iter().flat_map(|d| resource_entries(d)).collect();
    if resources.iter().any(|d| d.schema.is_some()) {
        entries.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    }
    if group.is_empty() {
        json!({"kind": "APIResourceList", "groupVersion": version, "resources": entries})
    } else {
        json!({
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": format!("{group}/{version}"),
            "resources": entries,
        })
    }
}

/// `/api`.
pub fn api_versions(server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    })
}

fn group_entry(name: &str, versions: &[&str]) -> Value {
    let gv = |v: &str| json!({"groupVersion": format!("{name}/{v}"), "version": v});
    json!({
        "name": name,
        "versions": versions.iter().map(|v| gv(v)).collect::<Vec<_>>(),
        "preferredVersion": gv(versions[0]),
    })
}

/// Groups and their versions (preferred first), from a set of descriptors.
pub fn groups<'a>(
    resources: impl Iterator<Item = &'a ResourceDescriptor>,
) -> BTreeMap<&'a str, Vec<&'a str>> {
    let mut groups: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for d in resources.filter(|d| !d.group.is_empty()) {
        let versions = groups.entry(d.group).or_default();
        if !versions.contains(&d.version) {
            versions.push(d.version);
        }
    }
    groups
}

/// `/apis`.
pub fn api_group_list(groups: &BTreeMap<&str, Vec<&str>>) -> Value {
    json!({
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": groups.iter().map(|(g, v)| group_entry(g, v)).collect::<Vec<_>>(),
    })
}

/// `/apis/<group>`.
pub fn api_group(name: &str, versions: &[&str]) -> Value {
    let mut group = group_entry(name, versions);
    group["kind"] = json!("APIGroup");
    group["apiVersion"] = json!("v1");
    group
}

#[cfg(test)]
mod tests {
    use super::*;

    const CM: ResourceDescriptor = kas_registry::descriptor::fixtures::CONFIG_MAP;

    #[test]
    fn hashes_match_upstream() {
        // Values from a real 1.33 kube-apiserver's /api/v1 and /apis/coordination.k8s.io/v1.
        assert_eq!(storage_version_hash("", "v1", "ConfigMap"), "qFsyl6wFWjQ=");
        assert_eq!(storage_version_hash("", "v1", "Namespace"), "Q3oi5N2YM8M=");
        assert_eq!(
            storage_version_hash("coordination.k8s.io", "v1", "Lease"),
            "gqkMMb/YqFM="
        );
    }

    #[test]
    fn legacy_list_has_no_api_version() {
        let list = api_resource_list("", "v1", &[&CM]);
        assert_eq!(list["groupVersion"], "v1");
        assert!(list.get("apiVersion").is_none());
        assert_eq!(list["resources"][0]["shortNames"], json!(["cm"]));
        assert_eq!(list["resources"][0]["verbs"][2], "deletecollection");
    }
}
