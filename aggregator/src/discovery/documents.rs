//! The discovery documents the aggregator answers with, built once per change of what
//! they are made of (so a request only picks bytes and compares an ETag), and the
//! answers: aggregated discovery to clients that ask for it (upstream's
//! `WrapAggregatedDiscoveryToHandler` and `ServeHTTPWithETag`), the legacy documents in
//! the negotiated form to the others (`WriteObjectNegotiated`).

use std::collections::{BTreeSet, HashMap};

use bytes::Bytes;
use http::header::{self, HeaderValue};
use http::{HeaderMap, Request, Response, StatusCode};
use kas_endpoints::Body;
use kas_endpoints::discovery::aggregated::{self as aggregated_discovery, Version};
use kas_endpoints::negotiation::{self, DefaultEndpointRestrictions, MediaType};
use kas_endpoints::openapi::Document;
use kas_endpoints::responsewriters::negotiated;
use serde_json::{Value, json};

use super::aggregated::{self, Entry};
use super::legacy::{self, Registered};

/// What the documents are made of.
pub struct Inputs<'a> {
    /// Every APIService.
    pub api_services: Vec<Registered>,
    /// The aggregator's own groups and the local ones (core's, with extensions'), as
    /// `APIGroupDiscovery` items.
    pub own: &'a [Value],
    pub local: &'a [Value],
    /// The group versions of service-backed APIServices, as fetched.
    pub remote: Vec<Entry>,
}

/// `/apis` and `/apis/<group>`, ready to serve.
#[derive(Default)]
pub struct Documents {
    group_list: Bytes,
    /// `/apis/<group>` of each group an APIService names.
    groups: HashMap<String, Bytes>,
    aggregated: HashMap<Version, Document>,
}

fn to_bytes(v: &Value) -> Bytes {
    // Serializing a Value cannot fail: its keys are strings.
    Bytes::from(serde_json::to_vec(v).unwrap_or_default())
}

impl Documents {
    pub fn build(inputs: Inputs<'_>) -> Documents {
        let local = aggregated::local_entries(inputs.local);
        let groups: BTreeSet<&str> = inputs
            .api_services
            .iter()
            .map(|r| r.group.as_str())
            .collect();
        let groups = groups
            .into_iter()
            .filter(|g| !g.is_empty() && *g != crate::apiservice::GROUP)
            .filter_map(|g| {
                Some((
                    g.to_owned(),
                    to_bytes(&legacy::group_document(&inputs.api_services, g)?),
                ))
            })
            .collect();
        let mut all_local = aggregated::local_entries(inputs.own);
        all_local.extend(local);
        let items = aggregated::items(&inputs.remote, &all_local);
        let aggregated = [Version::V2, Version::V2beta1]
            .into_iter()
            .map(|v| {
                let doc = json!({
                    "kind": "APIGroupDiscoveryList",
                    "apiVersion": format!("apidiscovery.k8s.io/{}", v.as_str()),
                    "metadata": {},
                    "items": items,
                });
                (v, Document::new(to_bytes(&doc).to_vec()))
            })
            .collect();
        Documents {
            group_list: to_bytes(&legacy::group_list(&inputs.api_services)),
            groups,
            aggregated,
        }
    }

    /// The answer to `/apis`, `/apis/` or `/apis/<group>[/]` when the aggregator gives it;
    /// `None` for anything else.
    pub fn serve(&self, req: &Request<Body>) -> Option<Response<Body>> {
        let path = req.uri().path();
        match path {
            // Upstream wraps only `/apis` for aggregated discovery; `/apis/` is the plain
            // handler's.
            "/apis" => Some(
                self.aggregated(req)
                    .unwrap_or_else(|| legacy_answer(req, &self.group_list)),
            ),
            "/apis/" => Some(legacy_answer(req, &self.group_list)),
            _ => {
                let rest = path.strip_prefix("/apis/")?;
                let group = rest.strip_suffix('/').unwrap_or(rest);
                if group.contains('/') {
                    return None;
                }
                let doc = self.groups.get(group)?;
                Some(legacy_answer(req, doc))
            }
        }
    }

    /// Aggregated discovery, when the client asks for it first: `ETag`, `304` on a
    /// matching `If-None-Match`, `Cache-Control: public`.
    fn aggregated(&self, req: &Request<Body>) -> Option<Response<Body>> {
        let header = |name| {
            req.headers()
                .get(name)
                .and_then(|v: &HeaderValue| v.to_str().ok())
        };
        let version = aggregated_discovery::negotiate(header(header::ACCEPT)?)?;
        let doc = self.aggregated.get(&version)?;
        let etag = format!("\"{}\"", doc.etag);
        let mut resp = if header(header::IF_NONE_MATCH) == Some(etag.as_str()) {
            let mut r = Response::new(kas_endpoints::body::empty());
            *r.status_mut() = StatusCode::NOT_MODIFIED;
            r
        } else {
            let pretty =
                negotiation::is_pretty_print(req.uri().query(), header(header::USER_AGENT));
            let bytes = match pretty {
                true => kas_apimachinery::runtime::serializer::indent_json(&doc.bytes),
                false => doc.bytes.clone(),
            };
            let mut r = Response::new(kas_endpoints::body::full(bytes));
            set(
                r.headers_mut(),
                header::CONTENT_TYPE,
                &version.content_type(),
            );
            r
        };
        let h = resp.headers_mut();
        set(h, header::ETAG, &etag);
        h.insert(header::VARY, HeaderValue::from_static("Accept"));
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("public"));
        Some(resp)
    }
}

fn set(headers: &mut HeaderMap, name: header::HeaderName, value: &str) {
    if let Ok(v) = HeaderValue::from_str(value) {
        headers.insert(name, v);
    }
}

/// A legacy document (`APIGroupList` or `APIGroup`, both `v1`) in the negotiated form.
fn legacy_answer(req: &Request<Body>, json: &Bytes) -> Response<Body> {
    let header = |name| {
        req.headers()
            .get(name)
            .and_then(|v: &HeaderValue| v.to_str().ok())
    };
    let opts = match negotiation::negotiate_output_media_type(
        header(header::ACCEPT),
        req.uri().query(),
        header(header::USER_AGENT),
        &DefaultEndpointRestrictions,
    ) {
        Ok(opts) => opts,
        Err(status) => return kas_endpoints::write_status(&status),
    };
    if opts.accepted == MediaType::Protobuf {
        let value: Value = serde_json::from_slice(json).unwrap_or_default();
        let kind = value.get("kind").and_then(Value::as_str).unwrap_or("");
        let message = match kind {
            "APIGroupList" => &kas_api::meta::v1::API_GROUP_LIST,
            _ => &kas_api::meta::v1::API_GROUP,
        };
        let encoded = kas_apimachinery::protobuf::encode_object(&value, message, "v1", kind);
        return negotiated::protobuf(StatusCode::OK, encoded.unwrap_or_default().into());
    }
    negotiated::render(&opts, StatusCode::OK, json.clone())
}

#[cfg(test)]
mod tests {
    use super::super::aggregated::Priority;
    use super::*;

    fn documents() -> Documents {
        let registered = |name: &str, g: i64, v: i64| {
            let (version, group) = name.split_once('.').unwrap();
            Registered {
                name: name.to_owned(),
                group: group.to_owned(),
                version: version.to_owned(),
                group_priority: g,
                version_priority: v,
            }
        };
        let local = [json!({"metadata": {"name": "apps"}, "versions": [{"version": "v1"}]})];
        let remote = Entry {
            group: "wardle.example.com".to_owned(),
            version: json!({"version": "v1alpha1", "freshness": "Stale"}),
            priority: Priority {
                group: 1000,
                version: 15,
            },
        };
        Documents::build(Inputs {
            api_services: vec![registered("v1alpha1.wardle.example.com", 1000, 15)],
            own: &[
                json!({"metadata": {"name": "apiregistration.k8s.io"}, "versions": [{"version": "v1"}]}),
            ],
            local: &local,
            remote: vec![remote],
        })
    }

    fn request(path: &str, accept: &str) -> Request<Body> {
        Request::post(path)
            .header(header::ACCEPT, accept)
            .body(kas_endpoints::body::empty())
            .unwrap()
    }

    async fn json(resp: Response<Body>) -> Value {
        use http_body_util::BodyExt;
        let bytes = resp.into_body().collect().await.unwrap().to_bytes();
        serde_json::from_slice(&bytes).unwrap()
    }

    #[tokio::test]
    async fn answers_by_path_and_accept() {
        let d = documents();
        let aggregated = Version::V2.content_type();
        // Any method; `/apis` only is aggregated, `/apis/` is the plain handler's.
        let resp = d.serve(&request("/apis", &aggregated)).unwrap();
        assert_eq!(resp.headers()[header::CONTENT_TYPE], aggregated.as_str());
        let doc = json(resp).await;
        let names: Vec<&str> = doc["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["metadata"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            ["apiregistration.k8s.io", "apps", "wardle.example.com"]
        );
        let kubectl = format!("{aggregated},application/json");
        let resp = d.serve(&request("/apis/", &kubectl)).unwrap();
        assert_eq!(resp.headers()[header::CONTENT_TYPE], "application/json");
        let list = json(resp).await;
        let names: Vec<&str> = list["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["name"].as_str().unwrap())
            .collect();
        // Only APIServices' groups: apps has none (autoregistration has not run).
        assert_eq!(names, ["apiregistration.k8s.io", "wardle.example.com"]);
        let group = json(
            d.serve(&request("/apis/wardle.example.com/", "*/*"))
                .unwrap(),
        )
        .await;
        assert_eq!(group["kind"], "APIGroup");
        assert!(d.serve(&request("/apis/apps", "*/*")).is_none(), "core's");
        assert!(
            d.serve(&request("/apis/apiregistration.k8s.io", "*/*"))
                .is_none()
        );
        assert!(
            d.serve(&request("/apis/wardle.example.com/v1alpha1", "*/*"))
                .is_none()
        );
    }

    #[tokio::test]
    async fn legacy_documents_are_negotiated() {
        let d = documents();
        let yaml = d.serve(&request("/apis", "application/yaml")).unwrap();
        assert_eq!(yaml.headers()[header::CONTENT_TYPE], "application/yaml");
        let proto = d
            .serve(&request("/apis", "application/vnd.kubernetes.protobuf"))
            .unwrap();
        assert_eq!(
            proto.headers()[header::CONTENT_TYPE],
            "application/vnd.kubernetes.protobuf"
        );
        let refused = d.serve(&request("/apis", "text/html")).unwrap();
        assert_eq!(refused.status(), StatusCode::NOT_ACCEPTABLE);
    }

    #[tokio::test]
    async fn a_matching_etag_is_not_modified() {
        let d = documents();
        let aggregated = Version::V2.content_type();
        let first = d.serve(&request("/apis", &aggregated)).unwrap();
        let etag = first.headers()[header::ETAG].clone();
        assert_eq!(first.headers()[header::CACHE_CONTROL], "public");
        let mut again = request("/apis", &aggregated);
        again
            .headers_mut()
            .insert(header::IF_NONE_MATCH, etag.clone());
        let resp = d.serve(&again).unwrap();
        assert_eq!(resp.status(), StatusCode::NOT_MODIFIED);
        assert_eq!(resp.headers()[header::ETAG], etag);
    }
}
