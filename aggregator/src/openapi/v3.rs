//! `/openapi/v3` at the aggregator, after upstream's `specProxier`
//! (`controllers/openapiv3/aggregator`): the index is the union of the local servers'
//! (the aggregator's own, core's with extensions' merged in) and each service-backed
//! APIService's last downloaded one; a group version's document is answered by whoever
//! listed it: the aggregator, core (the request passes on), or the APIService's server,
//! to which the request goes as the requesting user, as upstream's proxy handler sends it.
//! Where two list the same path, the local one answers (upstream picks by map order).

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use bytes::Bytes;
use http::header::{self, HeaderMap};
use http::{Request, Response, StatusCode};
use kas_endpoints::Body;
use kas_proxy::text_response;
use serde_json::{Map, Value, json};

use crate::apiservice::conditions;
use crate::backend::{Backends, Verify};

/// The timeout of a document fetched for a client (upstream's proxy has none for
/// non-discovery requests; the client's request timeout applies).
const TIMEOUT: Duration = Duration::from_secs(60);

/// The merged index, and the documents each service-backed APIService answers.
#[derive(Default)]
pub struct V3 {
    pub root: Bytes,
    /// `/openapi/v3/<key>` → the APIService whose server answers it.
    pub remote: HashMap<String, Value>,
}

fn paths(root: &Value) -> impl Iterator<Item = (&String, &Value)> {
    root.get("paths")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
}

impl V3 {
    /// From the local indexes (the aggregator's own first) and the downloaded ones of
    /// service-backed APIServices (by name: the APIService and its server's index).
    pub fn build(local: &[&Value], remote: &BTreeMap<String, (Value, Value)>) -> V3 {
        let mut merged: Map<String, Value> = Map::new();
        for root in local {
            for (key, entry) in paths(root) {
                merged.entry(key.clone()).or_insert_with(|| entry.clone());
            }
        }
        let mut served = HashMap::new();
        for (api_service, root) in remote.values() {
            for (key, entry) in paths(root) {
                if !merged.contains_key(key) {
                    merged.insert(key.clone(), entry.clone());
                    served.insert(key.clone(), api_service.clone());
                }
            }
        }
        let root = json!({"paths": merged});
        V3 {
            root: Bytes::from(serde_json::to_vec(&root).unwrap_or_default()),
            remote: served,
        }
    }
}

/// The request headers a document request carries to the server.
const PASSED: [header::HeaderName; 3] = [
    header::ACCEPT,
    header::IF_NONE_MATCH,
    header::IF_MODIFIED_SINCE,
];

/// The answer headers brought back (hop-by-hop and length ones are the server's).
const RETURNED: [header::HeaderName; 8] = [
    header::CONTENT_TYPE,
    header::ETAG,
    header::CACHE_CONTROL,
    header::EXPIRES,
    header::LAST_MODIFIED,
    header::LOCATION,
    header::VARY,
    header::DATE,
];

/// A document of `api_service`'s server, fetched for the requesting user.
pub async fn proxy(backends: Backends, api_service: Value, req: Request<Body>) -> Response<Body> {
    if !conditions::is_available(&api_service) {
        return text_response("service unavailable", StatusCode::SERVICE_UNAVAILABLE);
    }
    let Some(user) = req.extensions().get::<kas_auth::UserInfo>().cloned() else {
        return text_response("missing user", StatusCode::INTERNAL_SERVER_ERROR);
    };
    let mut headers = HeaderMap::new();
    for name in PASSED {
        if let Some(v) = req.headers().get(&name) {
            headers.insert(name, v.clone());
        }
    }
    let path = req
        .uri()
        .path_and_query()
        .map_or(req.uri().path(), |p| p.as_str());
    let got = backends.get_as(&api_service, path, headers, &user, Verify::AsProxy, TIMEOUT);
    let resp = match got.await {
        Ok((_, resp)) => resp,
        Err(e) => {
            tracing::info!(apiservice = kas_registry::meta::name(&api_service), error = %e, "OpenAPI v3 document");
            return text_response(&e.to_string(), StatusCode::SERVICE_UNAVAILABLE);
        }
    };
    let mut answer = Response::new(kas_endpoints::body::full(resp.body));
    *answer.status_mut() = resp.status;
    for name in RETURNED {
        if let Some(v) = resp.headers.get(&name) {
            answer.headers_mut().insert(name, v.clone());
        }
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(keys: &[(&str, &str)]) -> Value {
        let paths: Map<String, Value> = keys
            .iter()
            .map(|(k, h)| {
                let url = format!("/openapi/v3/{k}?hash={h}");
                (k.to_string(), json!({"serverRelativeURL": url}))
            })
            .collect();
        json!({ "paths": paths })
    }

    #[test]
    fn local_documents_win_and_remote_ones_are_proxied() {
        let own = root(&[("apis", "A1"), ("apis/apiregistration.k8s.io/v1", "R")]);
        let core = root(&[("apis", "A2"), ("api/v1", "C"), ("version", "V")]);
        let mut remote = BTreeMap::new();
        let wardle = json!({"metadata": {"name": "v1alpha1.wardle.example.com"}});
        remote.insert(
            "v1alpha1.wardle.example.com".to_owned(),
            (
                wardle.clone(),
                root(&[("apis/wardle.example.com/v1alpha1", "W"), ("version", "X")]),
            ),
        );
        let v3 = V3::build(&[&own, &core], &remote);
        let merged: Value = serde_json::from_slice(&v3.root).unwrap();
        let urls: Vec<(&str, &str)> = merged["paths"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.as_str(), v["serverRelativeURL"].as_str().unwrap()))
            .collect();
        assert_eq!(
            urls,
            [
                ("api/v1", "/openapi/v3/api/v1?hash=C"),
                ("apis", "/openapi/v3/apis?hash=A1"),
                (
                    "apis/apiregistration.k8s.io/v1",
                    "/openapi/v3/apis/apiregistration.k8s.io/v1?hash=R"
                ),
                (
                    "apis/wardle.example.com/v1alpha1",
                    "/openapi/v3/apis/wardle.example.com/v1alpha1?hash=W"
                ),
                ("version", "/openapi/v3/version?hash=V"),
            ]
        );
        assert_eq!(v3.remote.len(), 1);
        assert_eq!(v3.remote["apis/wardle.example.com/v1alpha1"], wardle);
    }
}
