//! The installer, after upstream's `APIInstaller` and `APIGroupVersion.InstallREST`: a role's
//! stores laid out as routes (`ApiGroups`), and `ApiService`, the tower service that routes
//! resource requests to their handlers, serves discovery and the OpenAPI documents for its
//! groups, and hands everything else to the next role.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::{Body, RequestInfo};
use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::{Method, Request, Response, StatusCode};
use tower::{Service, ServiceExt};

use crate::discovery::{self, aggregated as aggregated_discovery};
use crate::openapi::OpenApi;
use kas_registry::error::Result;
use kas_registry::features::FeatureGates;
use kas_registry::store::Store;

/// One installed resource: its store, and what its handlers share across requests.
pub struct Resource {
    pub store: Store,
    /// Protobuf watch frames shared by this resource's watchers.
    pub(crate) watch_frames: crate::handlers::watch::FrameMemo,
}

/// The stores of one role and its discovery documents.
pub struct ApiGroups {
    stores: HashMap<(String, String, String), Arc<Resource>>,
    /// `/api/v1`, `/apis`, `/apis/<g>`, `/apis/<g>/<v>`: built once.
    documents: HashMap<String, Bytes>,
    serves_legacy: bool,
    /// `/openapi/v2` and `/openapi/v3/...`: built once, like the discovery documents.
    openapi: Option<OpenApi>,
    features: FeatureGates,
    /// `/api` and `/apis` as aggregated discovery, by (legacy, version): built once.
    aggregated: HashMap<(bool, aggregated_discovery::Version), Bytes>,
}

impl ApiGroups {
    pub fn new(stores: Vec<Store>) -> ApiGroups {
        let mut by_gv: std::collections::BTreeMap<
            (&str, &str),
            Vec<&'static kas_registry::ResourceDescriptor>,
        > = Default::default();
        for s in &stores {
            by_gv
                .entry((s.descriptor.group, s.descriptor.version))
                .or_default()
                .push(s.descriptor);
        }
        let mut documents = HashMap::new();
        let to_bytes =
            |v: serde_json::Value| Bytes::from(serde_json::to_vec(&v).unwrap_or_default());
        for ((group, version), resources) in &by_gv {
            let path = if group.is_empty() {
                format!("/api/{version}")
            } else {
                format!("/apis/{group}/{version}")
            };
            documents.insert(
                path,
                to_bytes(discovery::api_resource_list(group, version, resources)),
            );
        }
        let groups = discovery::groups(stores.iter().map(|s| s.descriptor));
        for (group, versions) in &groups {
            documents.insert(
                format!("/apis/{group}"),
                to_bytes(discovery::api_group(group, versions)),
            );
        }
        documents.insert(
            "/apis".to_owned(),
            to_bytes(discovery::api_group_list(&groups)),
        );
        let serves_legacy = stores.iter().any(|s| s.descriptor.group.is_empty());
        let descriptors: Vec<_> = stores.iter().map(|s| s.descriptor).collect();
        let openapi = (!descriptors.is_empty()).then(|| OpenApi::new(&descriptors));
        let mut aggregated = HashMap::new();
        for legacy in [true, false] {
            for v in [
                aggregated_discovery::Version::V2,
                aggregated_discovery::Version::V2beta1,
            ] {
                let doc = aggregated_discovery::document(&descriptors, legacy, v);
                aggregated.insert((legacy, v), doc);
            }
        }
        let stores = stores
            .into_iter()
            .map(|s| {
                let d = s.descriptor;
                (
                    (
                        d.group.to_owned(),
                        d.version.to_owned(),
                        d.plural.to_owned(),
                    ),
                    Arc::new(Resource {
                        store: s,
                        watch_frames: Default::default(),
                    }),
                )
            })
            .collect();
        ApiGroups {
            stores,
            documents,
            serves_legacy,
            openapi,
            features: FeatureGates::default(),
            aggregated,
        }
    }

    /// The feature gates requests are served under (upstream's defaults until set).
    pub fn with_features(mut self, features: FeatureGates) -> Self {
        self.features = features;
        self
    }

    fn resource(&self, info: &RequestInfo) -> Option<&Arc<Resource>> {
        self.stores.get(&(
            info.api_group.clone(),
            info.api_version.clone(),
            info.resource.clone(),
        ))
    }
}

/// Serves the role's resources; passes the rest to `next`.
#[derive(Clone)]
pub struct ApiService<S> {
    groups: Arc<ApiGroups>,
    next: S,
}

impl<S> ApiService<S> {
    pub fn new(groups: ApiGroups, next: S) -> Self {
        ApiService {
            groups: Arc::new(groups),
            next,
        }
    }
}

impl<S> Service<Request<Body>> for ApiService<S>
where
    S: Service<Request<Body>, Response = Response<Body>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response<Body>, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<Body>) -> Self::Future {
        let groups = self.groups.clone();
        let info = req
            .extensions()
            .get::<RequestInfo>()
            .cloned()
            .unwrap_or_default();
        if info.is_resource_request {
            if let Some(resource) = groups.resource(&info).cloned() {
                return Box::pin(async move {
                    Ok(
                        crate::handlers::serve(&resource, &info, &groups.features, req)
                            .await
                            .unwrap_or_else(|e| crate::responsewriters::response::error(&e)),
                    )
                });
            }
        } else if let Some(resp) = groups.openapi.as_ref().and_then(|o| o.serve(&req)) {
            // Any method, as upstream's handlers do not look at it.
            return Box::pin(std::future::ready(Ok(resp)));
        } else if *req.method() == Method::GET {
            let path = req.uri().path().trim_end_matches('/');
            if let Some(resp) = aggregated(&groups, path, req.headers()) {
                return Box::pin(std::future::ready(Ok(resp)));
            }
            if let Some(doc) = groups.documents.get(path) {
                return Box::pin(std::future::ready(Ok(
                    crate::responsewriters::response::json(StatusCode::OK, doc.clone()),
                )));
            }
            if path == "/api" && groups.serves_legacy {
                let host = req
                    .headers()
                    .get(http::header::HOST)
                    .and_then(|h| h.to_str().ok())
                    .or_else(|| req.uri().authority().map(|a| a.as_str()))
                    .unwrap_or("")
                    .to_owned();
                let doc = serde_json::to_vec(&discovery::api_versions(&host)).unwrap_or_default();
                return Box::pin(std::future::ready(Ok(
                    crate::responsewriters::response::json(StatusCode::OK, doc.into()),
                )));
            }
        }
        Box::pin(self.next.clone().oneshot(req))
    }
}

/// `/api` or `/apis` as aggregated discovery, when the client asks for it.
fn aggregated(groups: &ApiGroups, path: &str, headers: &http::HeaderMap) -> Option<Response<Body>> {
    let legacy = match path {
        "/api" if groups.serves_legacy => true,
        "/apis" => false,
        _ => return None,
    };
    let accept = headers.get(http::header::ACCEPT)?.to_str().ok()?;
    let version = aggregated_discovery::negotiate(accept)?;
    let doc = groups.aggregated.get(&(legacy, version))?;
    let mut resp = crate::responsewriters::response::json(StatusCode::OK, doc.clone());
    let content_type = http::HeaderValue::from_str(&version.content_type()).ok()?;
    resp.headers_mut()
        .insert(http::header::CONTENT_TYPE, content_type);
    resp.headers_mut()
        .insert(http::header::VARY, http::HeaderValue::from_static("Accept"));
    Some(resp)
}
