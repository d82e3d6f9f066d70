//! The verb handlers, after upstream's `pkg/endpoints/handlers`: get and list, watch,
//! create, update, patch (and server-side apply), delete and deletecollection, and the
//! generic subresources, each turning a request into store calls and an answer.

pub mod apply;
pub mod connect;
pub mod decode;
pub mod delete;
pub mod get;
mod offload;
pub mod options;
pub mod patch;
pub mod scale;
pub mod selection;
pub mod watch;
pub mod write;

use std::sync::Arc;

use http::{HeaderMap, Request, Response};
use kas_registry::features::FeatureGates;
use kas_registry::store::Store;
use kas_registry::{Result, SubresourceHandler, Verb};

use crate::installer::actions::Action;
use crate::installer::resource::Resource;
use crate::installer::router::Matched;
use crate::{Body, RequestInfo};

/// What a handler works with, per request (after upstream's `RequestScope`): the resource
/// and its store, the route it was reached by, what the request is about, its query and
/// headers, and the feature gates. Handlers read the namespace and name from the
/// `RequestInfo`, as upstream's context-based naming does.
pub struct RequestScope<'a> {
    pub resource: &'a Arc<Resource>,
    pub action: Action,
    pub subresource: Option<&'static kas_registry::Subresource>,
    pub info: &'a RequestInfo,
    pub query: Option<&'a str>,
    pub headers: &'a HeaderMap,
    pub features: &'a FeatureGates,
    /// The authenticated user, when the chain authenticated one.
    pub user: Option<&'a kas_auth::UserInfo>,
    /// The request's audit event, when the role audits.
    pub audit: Option<&'a std::sync::Arc<kas_audit::AuditContext>>,
}

impl RequestScope<'_> {
    pub fn store(&self) -> &Store {
        &self.resource.store
    }

    /// Upstream's `audit.LogRequestObject` of a decoded body (`d`: the endpoint's kind):
    /// the event's object reference completed from the object's metadata and, at Request
    /// and above, the object as upstream's decoder makes it (defaulted, in its Go type's
    /// encoding, with its type meta).
    pub fn audit_request_object(
        &self,
        d: &kas_registry::ResourceDescriptor,
        value: &serde_json::Value,
    ) {
        let Some(ctx) = self.audit else { return };
        let resource = self.store().descriptor.plural;
        let subresource = self.subresource.map_or("", |s| s.name);
        if ctx.level() < kas_audit::Level::Request {
            ctx.log_request_object(value, d.group, d.version, resource, subresource);
            return;
        }
        let mut obj = value.clone();
        if self.subresource.is_none() {
            self.store().strategy.default(&mut obj);
        }
        if let Some(schema) = d.schema {
            kas_apimachinery::schema::go_encoded(
                &mut obj,
                &kas_apimachinery::schema::Kind::Message(schema),
            );
        }
        let typed = with_type_meta(d, obj);
        ctx.log_request_object(&typed, d.group, d.version, resource, subresource);
    }

    /// Upstream's `audit.LogRequestPatch`.
    pub fn audit_request_patch(&self, patch: &[u8]) {
        if let Some(ctx) = self.audit {
            ctx.log_request_patch(patch);
        }
    }

    /// Whether the endpoint has upstream's `TableConvertor`, without which an answer asked
    /// for `as=Table` is a 406: every stored resource, its `status` and `scale`; not the
    /// resources that are never stored (reviews, bindings) nor the other subresources
    /// (a CSR's `approval`, a namespace's `finalize`, a pod's `ephemeralcontainers`),
    /// whose REST objects do not implement it.
    pub fn table_convertor(&self) -> bool {
        let strategy = &self.store().strategy;
        match self.subresource {
            None => strategy.creater().is_none() && !strategy.create_answers_status(),
            Some(s) => match s.handler {
                SubresourceHandler::Status | SubresourceHandler::Scale(_) => true,
                // A CSR's `status` is a strategy update with upstream's `StatusREST`.
                SubresourceHandler::StrategyUpdate => s.name == "status",
                _ => false,
            },
        }
    }
}

/// `obj` with `kind` and `apiVersion` first, as an encoder writes it.
fn with_type_meta(
    d: &kas_registry::ResourceDescriptor,
    obj: serde_json::Value,
) -> serde_json::Value {
    let api_version = if d.group.is_empty() {
        d.version.to_owned()
    } else {
        format!("{}/{}", d.group, d.version)
    };
    let mut out = serde_json::Map::new();
    out.insert("kind".to_owned(), d.kind.into());
    out.insert("apiVersion".to_owned(), api_version.into());
    if let serde_json::Value::Object(fields) = obj {
        for (k, v) in fields {
            if k != "kind" && k != "apiVersion" {
                out.insert(k, v);
            }
        }
    }
    serde_json::Value::Object(out)
}

/// Upstream's `deprecatedAnnotationKey`.
const DEPRECATED_ANNOTATION: &str = "k8s.io/deprecated";

/// Serves a request the router matched to one of a resource's routes.
pub(crate) async fn serve(
    matched: Matched,
    info: &RequestInfo,
    features: &FeatureGates,
    req: Request<Body>,
) -> Result<Response<Body>> {
    let deprecation = matched.resource.store.strategy.deprecation();
    // Upstream's request metrics mark a deprecated API's request in its audit event.
    if deprecation.is_some()
        && let Some(ctx) = req
            .extensions()
            .get::<std::sync::Arc<kas_audit::AuditContext>>()
    {
        ctx.add_annotation(DEPRECATED_ANNOTATION, "true");
    }
    let answer = if offload::is_heavy(req.headers()) {
        offload::Offloaded::new(dispatch(matched, info, features, req)).await
    } else {
        dispatch(matched, info, features, req).await
    };
    match (deprecation, answer) {
        (Some(warning), Ok(mut resp)) => {
            // Upstream adds it before the handler runs: it comes first.
            let later: Vec<_> = resp
                .headers()
                .get_all(http::header::WARNING)
                .iter()
                .cloned()
                .collect();
            resp.headers_mut().remove(http::header::WARNING);
            crate::responsewriters::response::add_warnings(&mut resp, &[warning.to_owned()]);
            for v in later {
                resp.headers_mut().append(http::header::WARNING, v);
            }
            Ok(resp)
        }
        (_, answer) => answer,
    }
}

/// The handler of the matched route.
async fn dispatch(
    matched: Matched,
    info: &RequestInfo,
    features: &FeatureGates,
    req: Request<Body>,
) -> Result<Response<Body>> {
    let (parts, body) = req.into_parts();
    let scope = RequestScope {
        resource: &matched.resource,
        action: matched.action,
        subresource: matched.subresource,
        info,
        query: parts.uri.query(),
        headers: &parts.headers,
        features,
        user: parts.extensions.get::<kas_auth::UserInfo>(),
        audit: parts
            .extensions
            .get::<std::sync::Arc<kas_audit::AuditContext>>(),
    };
    match (matched.subresource.map(|s| s.handler), matched.action) {
        (Some(SubresourceHandler::Scale(spec)), action) => {
            scale::serve(&scope, &spec, action, body).await
        }
        (_, Action::Get) => get::get(&scope).await,
        (_, Action::List) => list_or_watch(&scope, false).await,
        (_, Action::Watch | Action::WatchList) => list_or_watch(&scope, true).await,
        (None, Action::Post) => write::create(&scope, body).await,
        (None, Action::Put) => write::update(&scope, body).await,
        (Some(_), Action::Put) => write::update_subresource(&scope, body).await,
        (_, Action::Patch) => write::patch(&scope, body).await,
        (None, Action::Delete) => delete::delete(&scope, body).await,
        (None, Action::DeleteCollection) => delete::delete_collection(&scope, body).await,
        (Some(SubresourceHandler::StrategyCreate), Action::Post) => {
            write::create_subresource(&scope, body).await
        }
        (Some(_), Action::Post | Action::Delete | Action::DeleteCollection) => {
            Err(write::not_supported(&scope))
        }
        // `ApiService` sends connect routes to `connect::serve`.
        (_, Action::Connect(_)) => Err(write::not_supported(&scope)),
    }
}

/// LIST, which `?watch=true` turns into a watch, and the deprecated `/watch/` routes.
async fn list_or_watch(scope: &RequestScope<'_>, watch_path: bool) -> Result<Response<Body>> {
    let opts = options::list_options(scope.query, watch_path, scope.features)?;
    if !opts.watch {
        return get::list(scope, &opts).await;
    }
    // A resource without watch has no watch route; `?watch=true` on its list is upstream's
    // MethodNotSupported.
    if !scope.store().descriptor.allows(Verb::Watch) {
        return Err(write::not_supported(scope));
    }
    watch::watch(scope, &opts).await
}
