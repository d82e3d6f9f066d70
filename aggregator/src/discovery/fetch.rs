//! Fetching what a service-backed APIService's server serves, after upstream's
//! `discoveryManager.fetchFreshDiscoveryForService` (`handler_discovery.go`): its
//! aggregated `/apis` (v2, else v2beta1), conditional on the ETag of the last answer,
//! cached per Service and reused while it is newer than the APIService's last change; a
//! server without aggregated discovery is asked for the legacy `/apis/<group>/<version>`
//! of the APIService, converted (and not cached, as it holds one group version only).
//! The request is the one upstream's proxy handler makes for the aggregator's user, so an
//! APIService that is not available fails as the proxy's 503 does.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use http::{HeaderMap, HeaderValue, StatusCode};
use kas_endpoints::discovery::aggregated::{self as aggregated_discovery, Version};
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::apiservice::{ServiceReference, conditions};
use crate::backend::{Backends, Verify};

/// Upstream's `http.TimeoutHandler` around the discovery request.
const TIMEOUT: Duration = Duration::from_secs(5);

/// A server's discovery, by `group/version`, as last fetched.
#[derive(Debug, PartialEq)]
pub struct Cached {
    pub discovery: HashMap<String, Value>,
    /// The server's `ETag` for it, as sent (quoted); empty if it sent none.
    pub etag: String,
    /// Taken before the request went out.
    pub last_updated: Instant,
}

/// What a fetch gives: the discovery to use (`None` when there is none), whether to keep
/// it as the Service's, and why the fetch failed.
#[derive(Debug)]
pub struct Fetched {
    pub result: Option<Arc<Cached>>,
    pub save: bool,
    pub error: Option<String>,
}

impl Fetched {
    fn failed(error: String) -> Fetched {
        Fetched {
            result: None,
            save: false,
            error: Some(error),
        }
    }
}

fn service_key(svc: &ServiceReference) -> String {
    format!("{}/{}:{}", svc.namespace, svc.name, svc.port)
}

/// Upstream's `fetchFreshDiscoveryForService` for `api_service`, whose Service's last
/// fetch is `cached` and which changed at `marked_dirty`.
pub async fn fresh(
    backends: &Backends,
    api_service: &Value,
    svc: &ServiceReference,
    cached: Option<Arc<Cached>>,
    marked_dirty: Instant,
) -> Fetched {
    if let Some(c) = cached.as_ref().filter(|c| c.last_updated > marked_dirty) {
        return Fetched {
            result: Some(c.clone()),
            save: false,
            error: None,
        };
    }
    let accept = format!(
        "{},{}",
        Version::V2.content_type(),
        Version::V2beta1.content_type()
    );
    let mut headers = HeaderMap::new();
    headers.insert(http::header::ACCEPT, header(&accept));
    if let Some(c) = cached.as_ref().filter(|c| !c.etag.is_empty()) {
        headers.insert(http::header::IF_NONE_MATCH, header(&c.etag));
    }
    let now = Instant::now();
    let (status, resp_headers, body) = match get(backends, api_service, "/apis", headers).await {
        Ok(answer) => answer,
        Err(()) => {
            return Fetched::failed(format!(
                "service {} returned non-success response code: 503",
                service_key(svc)
            ));
        }
    };
    let content_type = resp_headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let aggregated = aggregated_discovery::negotiate(content_type).is_some();
    match (status, cached) {
        (StatusCode::NOT_MODIFIED, Some(c)) => Fetched {
            result: Some(Arc::new(Cached {
                discovery: c.discovery.clone(),
                etag: c.etag.clone(),
                last_updated: now,
            })),
            save: true,
            error: None,
        },
        (StatusCode::SERVICE_UNAVAILABLE, _) => Fetched::failed(format!(
            "service {} returned non-success response code: 503",
            service_key(svc)
        )),
        (StatusCode::OK, _) if aggregated => match parse_aggregated(&body) {
            Some(discovery) => Fetched {
                result: Some(Arc::new(Cached {
                    discovery,
                    etag: header_text(&resp_headers, http::header::ETAG),
                    last_updated: now,
                })),
                save: true,
                error: None,
            },
            None => Fetched::failed("the aggregated discovery document did not decode".into()),
        },
        _ => legacy(backends, api_service, now).await,
    }
}

fn header(value: &str) -> HeaderValue {
    HeaderValue::from_str(value).unwrap_or(HeaderValue::from_static(""))
}

fn header_text(headers: &HeaderMap, name: http::header::HeaderName) -> String {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned()
}

/// A GET through the proxy as upstream's discovery manager sends it: the aggregator's
/// user, a 503 for an APIService that is not available or a server that cannot be reached.
async fn get(
    backends: &Backends,
    api_service: &Value,
    path: &str,
    headers: HeaderMap,
) -> Result<(StatusCode, HeaderMap, bytes::Bytes), ()> {
    if !conditions::is_available(api_service) {
        return Err(());
    }
    let user = kas_auth::UserInfo {
        name: crate::backend::USER.to_owned(),
        groups: vec![crate::backend::GROUP.to_owned()],
        ..Default::default()
    };
    let answer = backends.get_as(api_service, path, headers, &user, Verify::AsProxy, TIMEOUT);
    match tokio::time::timeout(TIMEOUT, answer).await {
        Ok(Ok((_, resp))) => Ok((resp.status, resp.headers, resp.body)),
        Ok(Err(_)) | Err(_) => Err(()),
    }
}

/// `group/version` → `APIVersionDiscovery` of an aggregated document (v2 or v2beta1,
/// which have the same form), each resource and subresource with a `responseKind`
/// (upstream fills an empty one in for older clients).
fn parse_aggregated(body: &[u8]) -> Option<HashMap<String, Value>> {
    let doc: Value = serde_json::from_slice(body).ok()?;
    let items = doc.get("items")?.as_array()?;
    let mut out = HashMap::new();
    for (group, version, v) in super::aggregated::group_versions(items) {
        let mut v = v.clone();
        fill_response_kinds(&mut v);
        out.insert(format!("{group}/{version}"), v);
    }
    Some(out)
}

fn fill_response_kinds(version: &mut Value) {
    let empty = || json!({"group": "", "version": "", "kind": ""});
    let resources = version.get_mut("resources").and_then(Value::as_array_mut);
    for r in resources.into_iter().flatten() {
        if r.get("responseKind").is_none_or(Value::is_null) {
            r["responseKind"] = empty();
        }
        let subs = r.get_mut("subresources").and_then(Value::as_array_mut);
        for s in subs.into_iter().flatten() {
            if s.get("responseKind").is_none_or(Value::is_null) {
                s["responseKind"] = empty();
            }
        }
    }
}

/// The legacy fallback: `/apis/<group>/<version>` (`/api/<version>` for the legacy group)
/// converted to an `APIVersionDiscovery`, as `ConvertGroupVersionIntoToDiscovery` does.
async fn legacy(backends: &Backends, api_service: &Value, now: Instant) -> Fetched {
    let (group, version) = crate::apiservice::group_version(api_service);
    if version.is_empty() {
        return Fetched::failed("not found".to_owned());
    }
    let path = match group {
        "" => format!("/api/{version}"),
        g => format!("/apis/{g}/{version}"),
    };
    let mut headers = HeaderMap::new();
    headers.insert(http::header::ACCEPT, header("application/json"));
    let body = match get(backends, api_service, &path, headers).await {
        Ok((StatusCode::OK, _, body)) => body,
        Ok((_, _, body)) => {
            let text = String::from_utf8_lossy(&body);
            return Fetched::failed(format!(
                "failed to download legacy discovery for {path}: {text}"
            ));
        }
        Err(()) => {
            return Fetched::failed(format!(
                "failed to download legacy discovery for {path}: service unavailable"
            ));
        }
    };
    let resources = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|list| Some(list.get("resources")?.as_array()?.clone()));
    let converted = resources
        .map(|r| convert_resource_list(&r))
        .and_then(Result::ok);
    let Some(resources) = converted else {
        return Fetched::failed(format!("{path} did not decode as an APIResourceList"));
    };
    let mut discovery = HashMap::new();
    discovery.insert(
        format!("{group}/{version}"),
        json!({"version": version, "resources": resources}),
    );
    Fetched {
        result: Some(Arc::new(Cached {
            discovery,
            etag: String::new(),
            last_updated: now,
        })),
        save: false,
        error: None,
    }
}

fn scope(resource: &Value) -> &'static str {
    match resource.get("namespaced").and_then(Value::as_bool) {
        Some(true) => "Namespaced",
        _ => "Cluster",
    }
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Upstream's `ConvertGroupVersionIntoToDiscovery`: the resources of an `APIResourceList`,
/// their subresources (`<resource>/<sub>`) folded into them.
pub fn convert_resource_list(list: &[Value]) -> Result<Vec<Value>, String> {
    let mut out: Vec<Value> = Vec::new();
    let mut parents: HashMap<String, usize> = HashMap::new();
    for r in list.iter().filter(|r| !text(r, "name").contains('/')) {
        let mut resource = json!({
            "resource": text(r, "name"),
            "responseKind": {"group": text(r, "group"), "version": text(r, "version"), "kind": text(r, "kind")},
            "scope": scope(r),
            "singularResource": text(r, "singularName"),
            "verbs": r.get("verbs").cloned().unwrap_or(Value::Null),
        });
        for key in ["shortNames", "categories"] {
            if let Some(v) = r
                .get(key)
                .filter(|v| v.as_array().is_some_and(|a| !a.is_empty()))
            {
                resource[key] = v.clone();
            }
        }
        parents.insert(text(r, "name").to_owned(), out.len());
        out.push(resource);
    }
    for r in list {
        let Some((parent, sub)) = text(r, "name").split_once('/') else {
            continue;
        };
        let index = *parents.entry(parent.to_owned()).or_insert_with(|| {
            out.push(json!({
                "resource": parent,
                "responseKind": {"group": "", "version": "", "kind": ""},
                "scope": scope(r),
                "singularResource": "",
                "verbs": null,
            }));
            out.len() - 1
        });
        if out[index]["scope"] != scope(r) {
            return Err(format!(
                "Error: Parent {parent} (scope: {}) and subresource {sub} (scope: {}) scope do not match",
                text(&out[index], "scope"),
                scope(r)
            ));
        }
        let kind = match text(r, "kind") {
            "" => json!({"group": "", "version": "", "kind": ""}),
            k => json!({"group": text(r, "group"), "version": text(r, "version"), "kind": k}),
        };
        let entry = json!({
            "subresource": sub,
            "responseKind": kind,
            "verbs": r.get("verbs").cloned().unwrap_or(Value::Null),
        });
        match out[index]["subresources"].as_array_mut() {
            Some(subs) => subs.push(entry),
            None => out[index]["subresources"] = json!([entry]),
        }
    }
    Ok(out)
}

/// The `APIVersionDiscovery` of an APIService's group version from a fetch, as upstream's
/// `syncAPIService` writes it: the fetched entry, or the bare version when there is none,
/// `Current` when the fetch succeeded and `Stale` when it failed.
pub fn entry(group: &str, version: &str, fetched: &Fetched) -> Value {
    let found = fetched
        .result
        .as_ref()
        .and_then(|c| c.discovery.get(&format!("{group}/{version}")));
    let mut entry = found
        .cloned()
        .unwrap_or_else(|| json!({"version": version}));
    entry["freshness"] = json!(match fetched.error {
        None => "Current",
        Some(_) => "Stale",
    });
    entry
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Upstream's `TestConvertGroupVersionIntoToDiscovery` (installer_test.go): a parent
    /// and its subresources, and a subresource without a parent.
    #[test]
    fn legacy_resources_convert_as_upstream() {
        let list = vec![
            json!({"name": "pods", "singularName": "pod", "namespaced": true, "kind": "Pod",
                   "group": "", "version": "v1", "verbs": ["get", "list"], "shortNames": ["po"]}),
            json!({"name": "pods/status", "namespaced": true, "kind": "Pod", "verbs": ["get"],
                   "group": "", "version": "v1"}),
            json!({"name": "pods/exec", "namespaced": true, "kind": "", "verbs": ["create"]}),
            json!({"name": "nodes/proxy", "namespaced": false, "kind": "NodeProxyOptions",
                   "group": "", "version": "v1", "verbs": ["get"]}),
        ];
        let out = convert_resource_list(&list).unwrap();
        assert_eq!(
            out[0],
            json!({"resource": "pods", "responseKind": {"group": "", "version": "v1", "kind": "Pod"},
                   "scope": "Namespaced", "singularResource": "pod", "verbs": ["get", "list"],
                   "shortNames": ["po"],
                   "subresources": [
                       {"subresource": "status", "verbs": ["get"],
                        "responseKind": {"group": "", "version": "v1", "kind": "Pod"}},
                       {"subresource": "exec", "verbs": ["create"],
                        "responseKind": {"group": "", "version": "", "kind": ""}}]})
        );
        assert_eq!(out[1]["resource"], "nodes");
        assert_eq!(out[1]["scope"], "Cluster");
        assert_eq!(out[1]["subresources"][0]["subresource"], "proxy");
        let mismatch = [
            json!({"name": "a", "namespaced": true, "verbs": []}),
            json!({"name": "a/b", "namespaced": false, "verbs": []}),
        ];
        assert!(convert_resource_list(&mismatch).is_err());
    }

    #[test]
    fn entries_are_stale_without_a_fetch() {
        let failed = Fetched::failed("down".into());
        assert_eq!(
            entry("g", "v1", &failed),
            json!({"version": "v1", "freshness": "Stale"})
        );
        let doc = json!({"kind": "APIGroupDiscoveryList", "items": [
            {"metadata": {"name": "g"}, "versions": [
                {"version": "v1", "resources": [{"resource": "xs", "verbs": ["get"],
                 "subresources": [{"subresource": "status"}]}]}]}]});
        let discovery = parse_aggregated(&serde_json::to_vec(&doc).unwrap()).unwrap();
        let fetched = Fetched {
            result: Some(Arc::new(Cached {
                discovery,
                etag: String::new(),
                last_updated: Instant::now(),
            })),
            save: true,
            error: None,
        };
        let e = entry("g", "v1", &fetched);
        assert_eq!(e["freshness"], "Current");
        assert_eq!(e["resources"][0]["responseKind"]["kind"], "");
        assert_eq!(
            e["resources"][0]["subresources"][0]["responseKind"]["group"],
            ""
        );
        assert_eq!(
            entry("g", "v2", &fetched),
            json!({"version": "v2", "freshness": "Current"})
        );
    }
}
