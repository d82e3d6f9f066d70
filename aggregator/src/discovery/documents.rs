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

/// Local group versions no APIService names yet listed as if autoregistration had
/// registered them (Local, with upstream's priorities), until it has.
fn with_local_groups(mut api_services: Vec<Registered>, local: &[Entry]) -> Vec<Registered> {
    let named: BTreeSet<String> = api_services.iter().map(|r| r.group.clone()).collect();
    for e in local.iter().filter(|e| !named.contains(&e.group)) {
        let version = e.version.get("version").and_then(Value::as_str);
        let version = version.unwrap_or("").to_owned();
        api_services.push(Registered {
            name: format!("{version}.{}", e.group),
            group: e.group.clone(),
            version,
            group_priority: e.priority.group,
            version_priority: e.priority.version,
        });
    }
    api_services
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
        let listed = with_local_groups(inputs.api_services, &local);
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
            group_list: to_bytes(&legacy::group_list(&listed)),
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
