//! Upstream's `ConnectResource` handler (k8s.io/apiserver `handlers/rest.go`) for the
//! `rest.Connecter` subresources: `pods/log`, `pods/exec`, `pods/attach`,
//! `pods/portforward` and the `proxy` subresources. The role registers a [`Connecter`]
//! per (group, resource, subresource) on `ApiGroups`; this module hands it the request
//! with its namespace, name and subpath, and writes its error as upstream's `scope.err`
//! does. This crate has no HTTP client: what a connecter does with the request (stream
//! from a kubelet, proxy to a pod) is the role's.

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use http::{Request, Response};
use kas_apimachinery::Status;
use kas_registry::Result;

use crate::installer::router::Matched;
use crate::{Body, RequestInfo};

/// What a connecter is asked to serve.
pub struct ConnectRequest {
    pub namespace: String,
    /// The path's name segment, as sent (`name`, or `scheme:name:port` for proxies).
    pub name: String,
    pub subresource: &'static str,
    /// The `{path:*}` suffix as upstream's `getRequestOptions` makes the `path` option:
    /// empty, or with a leading `/`, and a trailing `/` when the request's path had one.
    pub subpath: String,
    /// The request's method, URI (its query holds the options) and headers.
    pub parts: http::request::Parts,
}

/// Upstream's `rest.Connecter`, with its answer: the role's implementation of one
/// connect subresource.
pub trait Connecter: Send + Sync {
    fn connect(&self, request: ConnectRequest, body: Body)
    -> BoxFuture<'_, Result<Response<Body>>>;
}

/// The connecters of a role, by (group, resource, subresource).
pub type Connecters = HashMap<(String, String, String), Arc<dyn Connecter>>;

/// The `path` option of a request (upstream's `getRequestOptions` for subresources):
/// the parts after the subresource, `/`-led, keeping the request's trailing slash.
pub fn subpath(info: &RequestInfo) -> String {
    let mut p = info.parts.get(3..).unwrap_or_default().join("/");
    if !p.is_empty() && !p.starts_with('/') {
        p.insert(0, '/');
    }
    if info.path.ends_with('/') && !p.ends_with('/') {
        p.push('/');
    }
    p
}

/// Serves a connect route through the connecter registered for it.
pub(crate) async fn serve(
    connecters: &Connecters,
    matched: Matched,
    info: &RequestInfo,
    req: Request<Body>,
) -> Result<Response<Body>> {
    let d = matched.resource.store.descriptor;
    let sub = matched.subresource.map_or("", |s| s.name);
    let key = (d.group.to_owned(), d.plural.to_owned(), sub.to_owned());
    let Some(connecter) = connecters.get(&key) else {
        // Upstream installs no route for a subresource without a connecter.
        return Err(Status::generic_server_response(404, "404: Page Not Found").into());
    };
    let (parts, body) = req.into_parts();
    let request = ConnectRequest {
        namespace: info.namespace.clone(),
        name: info.name.clone(),
        subresource: sub,
        subpath: subpath(info),
        parts,
    };
    connecter.connect(request, body).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(path: &str, parts: &[&str]) -> RequestInfo {
        RequestInfo {
            path: path.to_owned(),
            parts: parts.iter().map(|p| (*p).to_owned()).collect(),
            ..RequestInfo::default()
        }
    }

    #[test]
    fn subpath_is_led_by_a_slash_and_keeps_the_trailing_one() {
        let base = ["pods", "p", "proxy"];
        assert_eq!(
            subpath(&info("/api/v1/namespaces/d/pods/p/proxy", &base)),
            ""
        );
        assert_eq!(
            subpath(&info("/api/v1/namespaces/d/pods/p/proxy/", &base)),
            "/"
        );
        let deep = ["pods", "p", "proxy", "a", "b"];
        let p = "/api/v1/namespaces/d/pods/p/proxy/a/b";
        assert_eq!(subpath(&info(p, &deep)), "/a/b");
        assert_eq!(subpath(&info(&format!("{p}/"), &deep)), "/a/b/");
    }
}
