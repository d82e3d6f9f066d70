//! The installer, after upstream's `APIInstaller` and `APIGroupVersion.InstallREST`: a role's
//! stores laid out as routes (`ApiGroups`), and `ApiService`, the tower service that routes
//! resource requests to their handlers, serves discovery and the OpenAPI documents for its
//! groups, and hands everything else to the next role.

pub mod actions;
pub mod resource;
pub mod router;

pub use resource::Resource;

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::responsewriters::response;
use crate::{Body, RequestInfo, RequestInfoFactory};
use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::{Request, Response, StatusCode};
use router::Selected;
use tower::{Service, ServiceExt};

use crate::discovery::delegated::{Delegated, Merged};
use crate::discovery::{self, aggregated as aggregated_discovery};
use crate::openapi::OpenApi;
use kas_registry::ResourceDescriptor;
use kas_registry::error::Result;
use kas_registry::features::FeatureGates;
use kas_registry::store::Store;

/// The stores of one role, laid out as routes, and its discovery documents.
pub struct ApiGroups {
    router: router::Router,
    /// `/api/v1`, `/apis`, `/apis/<g>`, `/apis/<g>/<v>`: built once.
    documents: HashMap<String, Bytes>,
    serves_legacy: bool,
    /// `/openapi/v2` and `/openapi/v3/...`: built once, like the discovery documents.
    openapi: Option<OpenApi>,
    features: FeatureGates,
    /// `/api` and `/apis` as aggregated discovery, by (legacy, version): built once.
    aggregated: HashMap<(bool, aggregated_discovery::Version), Bytes>,
    /// What serves the connect subresources (`pods/log`, `pods/proxy`, ...).
    connecters: crate::handlers::connect::Connecters,
}

impl ApiGroups {
    pub fn new(stores: Vec<Store>) -> ApiGroups {
        let descriptors: Vec<_> = stores.iter().map(|s| s.descriptor).collect();
        let mut by_gv: std::collections::BTreeMap<(&str, &str), Vec<&'static ResourceDescriptor>> =
            Default::default();
        for d in &descriptors {
            by_gv.entry((d.group, d.version)).or_default().push(*d);
        }
        let mut documents = HashMap::new();
        let to_bytes =
            |v: serde_json::Value| Bytes::from(serde_json::to_vec(&v).unwrap_or_default());
        for ((group, version), resources) in &by_gv {
            documents.insert(
                crate::installer::actions::prefix(group, version),
                to_bytes(discovery::api_resource_list(group, version, resources)),
            );
        }
        let groups = discovery::groups(descriptors.iter().copied());
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
        let serves_legacy = descriptors.iter().any(|d| d.group.is_empty());
        let openapi = (!stores.is_empty()).then(|| {
            OpenApi::new(stores.iter().map(Store::openapi_descriptor).collect())
                .publishing(stores.iter().filter_map(published))
        });
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
        let resources: Vec<Arc<Resource>> = stores
            .into_iter()
            .map(|store| {
                Arc::new(Resource {
                    store,
                    watch_frames: Default::default(),
                })
            })
            .collect();
        ApiGroups {
            router: router::Router::new(&resources),
            documents,
            serves_legacy,
            openapi,
            features: FeatureGates::default(),
            aggregated,
            connecters: Default::default(),
        }
    }

    /// The feature gates requests are served under (upstream's defaults until set).
    pub fn with_features(mut self, features: FeatureGates) -> Self {
        self.features = features;
        self
    }

    /// The digest of the role's aggregated `/apis` (see `discovery::delegated`).
    pub fn discovery_digest(&self) -> String {
        self.aggregated
            .get(&(false, aggregated_discovery::Version::V2))
            .map(|doc| crate::discovery::delegated::Delegated::digest(doc))
            .unwrap_or_default()
    }

    /// Serves `group`'s `resource`'s connect subresource `subresource` with `connecter`.
    pub fn with_connecter(
        mut self,
        (group, resource, subresource): (&str, &str, &str),
        connecter: Arc<dyn crate::handlers::connect::Connecter>,
    ) -> Self {
        let key = (
            group.to_owned(),
            resource.to_owned(),
            subresource.to_owned(),
        );
        self.connecters.insert(key, connecter);
        self
    }

    /// `/apis` and `/apis/<group>` (with or without a trailing slash): upstream's aggregator
    /// serves them for any method (`apisHandler`, `apiGroupHandler`).
    fn group_document(&self, path: &str, headers: &http::HeaderMap) -> Option<Response<Body>> {
        let path = match path.strip_suffix('/') {
            Some(p) if p.starts_with("/apis") => p,
            _ => path,
        };
        if path != "/apis" && !(path.starts_with("/apis/") && path.matches('/').count() == 2) {
            return None;
        }
        if let Some(resp) = aggregated(self, path, headers) {
            return Some(resp);
        }
        let doc = self.documents.get(path)?;
        Some(response::json(StatusCode::OK, doc.clone()))
    }

    /// The discovery document of a web service's root.
    fn discovery_document(&self, root: &str, headers: &http::HeaderMap) -> Response<Body> {
        if let Some(resp) = aggregated(self, root, headers) {
            return resp;
        }
        if root == "/api" {
            let host = headers
                .get(http::header::HOST)
                .and_then(|h| h.to_str().ok())
                .unwrap_or("");
            let doc = serde_json::to_vec(&discovery::api_versions(host)).unwrap_or_default();
            return response::json(StatusCode::OK, doc.into());
        }
        match self.documents.get(root) {
            Some(doc) => response::json(StatusCode::OK, doc.clone()),
            None => crate::write_status(&kas_apimachinery::Status::not_found_path()),
        }
    }
}

/// Serves the role's resources; passes the rest to `next`.
#[derive(Clone)]
pub struct ApiService<S> {
    groups: Groups,
    next: S,
    delegated: Option<DelegatedSource>,
}

/// A delegate's discovery, and the last merge of it with this role's.
#[derive(Clone)]
struct DelegatedSource {
    current: tokio::sync::watch::Receiver<Arc<Delegated>>,
    merged: Arc<std::sync::Mutex<Option<MergedOf>>>,
}

/// A merge and the delegate's discovery it was made of.
type MergedOf = (Arc<Delegated>, Arc<Merged>);

impl DelegatedSource {
    fn merged(&self, groups: &ApiGroups) -> Option<Arc<Merged>> {
        let current = self.current.borrow().clone();
        if current.items.is_empty() {
            return None;
        }
        let mut cache = self.merged.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((of, merged)) = cache.as_ref()
            && Arc::ptr_eq(of, &current)
        {
            return Some(merged.clone());
        }
        let own = groups
            .aggregated
            .get(&(false, aggregated_discovery::Version::V2))?;
        let merged = Arc::new(crate::discovery::delegated::merge(own, &current));
        *cache = Some((current, merged.clone()));
        Some(merged)
    }
}

/// A role's routes: fixed at start (core's built-in resources), or replaced while it runs
/// (extensions-apiserver's, rebuilt when a CustomResourceDefinition changes).
#[derive(Clone)]
enum Groups {
    Fixed(Arc<ApiGroups>),
    Live(tokio::sync::watch::Receiver<Arc<ApiGroups>>),
}

impl Groups {
    fn current(&self) -> Arc<ApiGroups> {
        match self {
            Groups::Fixed(groups) => groups.clone(),
            Groups::Live(groups) => groups.borrow().clone(),
        }
    }
}

impl<S> ApiService<S> {
    pub fn new(groups: ApiGroups, next: S) -> Self {
        ApiService {
            groups: Groups::Fixed(Arc::new(groups)),
            next,
            delegated: None,
        }
    }

    /// Serves `/apis` with the groups of `delegated` (what the delegate serves) merged in.
    pub fn with_delegated_discovery(
        mut self,
        delegated: tokio::sync::watch::Receiver<Arc<Delegated>>,
    ) -> Self {
        self.delegated = Some(DelegatedSource {
            current: delegated,
            merged: Default::default(),
        });
        self
    }

    /// The digest of the role's own discovery (see [`ApiGroups::discovery_digest`]).
    pub fn discovery_digest(&self) -> String {
        self.groups.current().discovery_digest()
    }

    /// Serves whatever `groups` holds at each request: a new value takes over for the
    /// requests that arrive after it, and those under way finish on the old one.
    pub fn live(groups: tokio::sync::watch::Receiver<Arc<ApiGroups>>, next: S) -> Self {
        ApiService {
            groups: Groups::Live(groups),
            next,
            delegated: None,
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
        let groups = self.groups.current();
        // Only discovery and the OpenAPI documents read the delegate's: resource requests
        // take no lock for it.
        let path = req.uri().path();
        let documents = path.starts_with("/openapi/") || path.trim_end_matches('/') == "/apis";
        let merged = self
            .delegated
            .as_ref()
            .filter(|_| documents)
            .and_then(|d| d.merged(&groups));
        // Any method, as upstream's handlers do not look at it.
        if let Some(resp) = groups
            .openapi
            .as_ref()
            .and_then(|o| o.serve_merged(&req, merged.as_ref().and_then(|m| m.openapi.as_ref())))
        {
            return Box::pin(std::future::ready(Ok(resp)));
        }
        let info = req
            .extensions()
            .get::<RequestInfo>()
            .cloned()
            .unwrap_or_else(|| {
                RequestInfoFactory::default().new_request_info(req.method(), req.uri())
            });
        if let Some(resp) = merged
            .as_ref()
            .and_then(|m| merged_document(m, &info.path, req.headers()))
        {
            return Box::pin(std::future::ready(Ok(resp)));
        }
        if let Some(resp) = groups.group_document(&info.path, req.headers()) {
            return Box::pin(std::future::ready(Ok(resp)));
        }
        let selected = groups
            .router
            .select(req.method(), &info.path, req.headers());
        match selected {
            None => Box::pin(self.next.clone().oneshot(req)),
            Some(Err(e)) => Box::pin(std::future::ready(Ok(response::error(&e)))),
            Some(Ok(Selected::Discovery(root))) => Box::pin(std::future::ready(Ok(
                groups.discovery_document(&root, req.headers())
            ))),
            Some(Ok(Selected::Resource(matched)))
                if matches!(matched.action, actions::Action::Connect(_)) =>
            {
                Box::pin(async move {
                    let answer =
                        crate::handlers::connect::serve(&groups.connecters, matched, &info, req)
                            .await;
                    Ok(answer.unwrap_or_else(|e| response::error(&e)))
                })
            }
            Some(Ok(Selected::Resource(matched))) => Box::pin(async move {
                Ok(
                    crate::handlers::serve(matched, &info, &groups.features, req)
                        .await
                        .unwrap_or_else(|e| response::error(&e)),
                )
            }),
        }
    }
}

/// `/apis` from the merged documents: aggregated when the client asks for it (with its
/// ETag; `If-None-Match` naming it is a 304), else the group list.
fn merged_document(
    merged: &Merged,
    path: &str,
    headers: &http::HeaderMap,
) -> Option<Response<Body>> {
    if path.strip_suffix('/').unwrap_or(path) != "/apis" {
        return None;
    }
    let version = headers
        .get(http::header::ACCEPT)
        .and_then(|a| a.to_str().ok())
        .and_then(aggregated_discovery::negotiate);
    let Some(version) = version else {
        return Some(response::json(StatusCode::OK, merged.group_list.clone()));
    };
    let doc = merged.aggregated.get(&version)?;
    let etag = format!("\"{}\"", doc.etag);
    let fresh = headers
        .get(http::header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == etag);
    let mut resp = if fresh {
        let mut r = Response::new(crate::body::empty());
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        r
    } else {
        response::json(StatusCode::OK, doc.bytes.clone())
    };
    let content_type = http::HeaderValue::from_str(&version.content_type()).ok()?;
    let h = resp.headers_mut();
    h.insert(http::header::CONTENT_TYPE, content_type);
    h.insert(http::header::VARY, http::HeaderValue::from_static("Accept"));
    h.insert(http::header::ETAG, http::HeaderValue::from_str(&etag).ok()?);
    Some(resp)
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
    let mut resp = response::json(StatusCode::OK, doc.clone());
    let content_type = http::HeaderValue::from_str(&version.content_type()).ok()?;
    resp.headers_mut()
        .insert(http::header::CONTENT_TYPE, content_type);
    resp.headers_mut()
        .insert(http::header::VARY, http::HeaderValue::from_static("Accept"));
    Some(resp)
}

/// A resource without a Go type (a custom resource) whose strategy writes its OpenAPI
/// definitions, under the names of its field schemas.
fn published(store: &Store) -> Option<crate::openapi::Published> {
    if store.descriptor.schema.is_some() {
        return None;
    }
    let d = store.descriptor;
    Some(crate::openapi::Published {
        resource: (d.group, d.version, d.plural),
        kind: store.strategy.fields_schema()?.name,
        list: store.strategy.fields_list_schema()?.name,
        strategy: store.strategy.clone(),
    })
}
