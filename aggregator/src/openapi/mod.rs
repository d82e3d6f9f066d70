//! OpenAPI at the aggregator, after upstream's kube-aggregator OpenAPI controllers:
//! `/openapi/v2` is the aggregator's own spec, core's (with extensions' merged in,
//! followed from core's `Peer` stream) and every service-backed APIService's, merged as
//! kube-openapi's aggregator merges them (`merge`, `v2`); `/openapi/v3` is the union of
//! the indexes, and each group version's document is answered by the server that lists
//! it (`v3`). Service-backed APIServices' documents are downloaded and refreshed as
//! upstream refreshes them (`download`, `controller`); a server that dies keeps its last
//! documents, and nothing else changes.

mod controller;
mod download;
mod merge;
mod v2;
mod v3;

use std::sync::Arc;

use futures_util::future::BoxFuture;
use http::{Request, Response};
use kas_endpoints::Body;
use kas_endpoints::discovery::delegated::Delegated;
use kas_registry::store::Store;
use kas_registry::store::informer::Objects;
use tokio::sync::watch;

use crate::backend::Backends;
use controller::{Controller, Published};

/// The aggregator's OpenAPI documents, kept current by a task of their own.
#[derive(Clone)]
pub struct OpenApi {
    published: watch::Receiver<Arc<Published>>,
    synced: watch::Receiver<bool>,
    /// The aggregator's own documents (apiregistration.k8s.io's).
    own: Arc<kas_endpoints::openapi::OpenApi>,
    backends: Backends,
}

/// A response now, or one that needs a request to a server.
pub type Answer = BoxFuture<'static, Response<Body>>;

impl OpenApi {
    /// Starts keeping the documents of `own` (the aggregator's APIService store),
    /// `local` (core's) and the service-backed APIServices of `api_services` (their
    /// informer), downloaded through `backends`.
    pub fn start(
        own: &Store,
        api_services: watch::Receiver<Objects>,
        local: watch::Receiver<Arc<Delegated>>,
        backends: Backends,
    ) -> OpenApi {
        let own = Arc::new(kas_endpoints::openapi::OpenApi::new(vec![
            own.openapi_descriptor(),
        ]));
        let own_v2 = Arc::new(own.v2_document());
        let own_v3_root = own.v3_root();
        let local_roots = [&own_v3_root];
        let first = Published {
            v2: v2::Merged::new(vec![v2::Spec {
                name: v2::local_name(0),
                remote: None,
                spec: v2::Source::Value(own_v2.clone()),
            }]),
            v3: v3::V3::build(&local_roots, &Default::default()),
        };
        let (tx, published) = watch::channel(Arc::new(first));
        let (synced_tx, synced) = watch::channel(false);
        let controller = Controller {
            backends: backends.clone(),
            api_services,
            local,
            own_v2,
            own_v3_root,
            published: tx,
            synced: synced_tx,
        };
        tokio::spawn(controller.run());
        OpenApi {
            published,
            synced,
            own,
            backends,
        }
    }

    /// Becomes true once the documents include core's (with extensions').
    pub fn synced(&self) -> watch::Receiver<bool> {
        self.synced.clone()
    }

    /// The answer to `/openapi/v2`, `/openapi/v3` and `/openapi/v3/<document>` of the
    /// aggregator or a service-backed APIService; `None` for any other request, for the
    /// next handler (core answers its own documents and 404s the others).
    pub fn serve(&self, req: &Request<Body>) -> Option<Answer> {
        let path = req.uri().path();
        if !path.starts_with("/openapi/") {
            return None;
        }
        let published = self.published.borrow().clone();
        match path {
            "/openapi/v2" => Some(Box::pin(serve_v2(published, head(req)))),
            "/openapi/v3" => {
                let resp = kas_endpoints::openapi::serve_v3_root(req, published.v3.root.clone());
                Some(Box::pin(std::future::ready(resp)))
            }
            _ => {
                let key = path.strip_prefix("/openapi/v3/")?;
                if self.own.has_v3(key) {
                    let resp = self.own.serve(req)?;
                    return Some(Box::pin(std::future::ready(resp)));
                }
                let api_service = published.v3.remote.get(key)?.clone();
                Some(Box::pin(v3::proxy(
                    self.backends.clone(),
                    api_service,
                    head(req),
                )))
            }
        }
    }
}

/// The request without its body (these documents are only read).
fn head(req: &Request<Body>) -> Request<Body> {
    let mut out = Request::new(kas_endpoints::body::empty());
    *out.method_mut() = req.method().clone();
    *out.uri_mut() = req.uri().clone();
    *out.headers_mut() = req.headers().clone();
    if let Some(user) = req.extensions().get::<kas_auth::UserInfo>() {
        out.extensions_mut().insert(user.clone());
    }
    out
}

/// `/openapi/v2`; the first request after a change merges, off the async workers.
async fn serve_v2(published: Arc<Published>, req: Request<Body>) -> Response<Body> {
    let merged = published.clone();
    let built = tokio::task::spawn_blocking(move || {
        merged.v2.document();
    })
    .await;
    if built.is_err() {
        return kas_endpoints::responsewriters::http_error(
            http::StatusCode::INTERNAL_SERVER_ERROR,
            "failed to build the OpenAPI document",
        );
    }
    let v2 = &published.v2;
    kas_endpoints::openapi::serve_v2(&req, v2.document(), v2.modified)
}
