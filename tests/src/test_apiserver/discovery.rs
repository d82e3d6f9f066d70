//! Discovery: the legacy documents (`/apis` APIGroupList, `/apis/<g>` APIGroup,
//! `/apis/<g>/<v>` APIResourceList) and aggregated discovery (`apidiscovery.k8s.io` v2 and
//! v2beta1) on `/apis` when the `Accept` header asks for it first.

use serde_json::{Value, json};

use super::api::{ECHO, ECHO_VERBS, GroupVersion, RESOURCES, Resource, VERBS};

const DISCOVERY_GROUP: &str = "apidiscovery.k8s.io";
const DISCOVERY_KIND: &str = "APIGroupDiscoveryList";

/// The aggregated discovery version the first acceptable clause of `accept` asks for;
/// `None` for the legacy document (plain JSON, a wildcard, or nothing).
pub fn negotiate(accept: &str) -> Option<&'static str> {
    for clause in accept.split(',') {
        let mut parts = clause.split(';').map(str::trim);
        let media = parts.next().unwrap_or("").to_ascii_lowercase();
        let params: Vec<(String, String)> = parts
            .filter_map(|p| p.split_once('='))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        let param = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        if media == "application/json" && param("as") == Some(DISCOVERY_KIND) {
            match (param("g"), param("v")) {
                (Some(DISCOVERY_GROUP), Some("v2")) => return Some("v2"),
                (Some(DISCOVERY_GROUP), Some("v2beta1")) => return Some("v2beta1"),
                _ => continue,
            }
        }
        if matches!(media.as_str(), "application/json" | "*/*" | "application/*") {
            return None;
        }
    }
    None
}

/// The `Content-Type` of aggregated discovery in `version`.
pub fn aggregated_content_type(version: &str) -> String {
    format!("application/json;g={DISCOVERY_GROUP};v={version};as={DISCOVERY_KIND}")
}

fn version_entry(gv: &GroupVersion) -> Value {
    json!({"groupVersion": gv.api_version(), "version": gv.version})
}

fn api_group(gv: &GroupVersion) -> Value {
    json!({
        "name": gv.group,
        "versions": [version_entry(gv)],
        "preferredVersion": version_entry(gv),
    })
}

/// `/apis`: an APIGroupList of the one group.
pub fn group_list(gv: &GroupVersion) -> Value {
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": [api_group(gv)]})
}

/// `/apis/<group>`.
pub fn group(gv: &GroupVersion) -> Value {
    let mut g = api_group(gv);
    g["kind"] = json!("APIGroup");
    g["apiVersion"] = json!("v1");
    g
}

/// `/apis/<group>/<version>`.
pub fn resource_list(gv: &GroupVersion) -> Value {
    let mut resources = Vec::new();
    for r in RESOURCES {
        let mut entry = json!({
            "name": r.plural,
            "singularName": r.singular,
            "namespaced": r.namespaced,
            "kind": r.kind,
            "verbs": VERBS,
        });
        if !r.short_names.is_empty() {
            entry["shortNames"] = json!(r.short_names);
        }
        resources.push(entry);
        if r.namespaced {
            resources.push(json!({
                "name": format!("{}/{ECHO}", r.plural),
                "singularName": "",
                "namespaced": true,
                "kind": r.kind,
                "verbs": ECHO_VERBS,
            }));
        }
    }
    json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": gv.api_version(),
        "resources": resources,
    })
}

fn gvk(gv: &GroupVersion, kind: &str) -> Value {
    json!({"group": gv.group, "version": gv.version, "kind": kind})
}

fn resource_discovery(gv: &GroupVersion, r: &Resource) -> Value {
    let mut entry = json!({
        "resource": r.plural,
        "responseKind": gvk(gv, r.kind),
        "scope": if r.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": r.singular,
        "verbs": VERBS,
    });
    if !r.short_names.is_empty() {
        entry["shortNames"] = json!(r.short_names);
    }
    if r.namespaced {
        entry["subresources"] = json!([{
            "subresource": ECHO,
            "responseKind": gvk(gv, r.kind),
            "verbs": ECHO_VERBS,
        }]);
    }
    entry
}

/// `/apis` as an APIGroupDiscoveryList in `version` (`v2` or `v2beta1`).
pub fn aggregated(gv: &GroupVersion, version: &str) -> Value {
    let resources: Vec<Value> = RESOURCES
        .iter()
        .map(|r| resource_discovery(gv, r))
        .collect();
    json!({
        "kind": DISCOVERY_KIND,
        "apiVersion": format!("{DISCOVERY_GROUP}/{version}"),
        "metadata": {},
        "items": [{
            "metadata": {"name": gv.group, "creationTimestamp": null},
            "versions": [{"version": gv.version, "resources": resources, "freshness": "Current"}],
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wardle() -> GroupVersion {
        GroupVersion::default()
    }

    #[test]
    fn the_first_acceptable_clause_decides() {
        let kubectl = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,\
                       application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,\
                       application/json";
        assert_eq!(negotiate(kubectl), Some("v2"));
        assert_eq!(
            negotiate("application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"),
            Some("v2beta1")
        );
        assert_eq!(
            negotiate(
                "application/json, application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
            ),
            None
        );
        assert_eq!(negotiate(""), None);
    }

    #[test]
    fn resources_are_listed_with_verbs_scope_and_the_echo_subresource() {
        let list = resource_list(&wardle());
        let names: Vec<&str> = list["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["fischers", "flunders", "flunders/echo"]);
        assert_eq!(list["resources"][0]["namespaced"], false);
        let agg = aggregated(&wardle(), "v2");
        let flunders = &agg["items"][0]["versions"][0]["resources"][1];
        assert_eq!(flunders["scope"], "Namespaced");
        assert_eq!(flunders["responseKind"]["kind"], "Flunder");
        assert_eq!(flunders["subresources"][0]["subresource"], "echo");
    }
}
