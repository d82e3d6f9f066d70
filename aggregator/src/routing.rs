//! Requests for the groups extensions-apiserver serves go to it straight, skipping core
//! (`--extensions-endpoints`): a custom resource's request then crosses one proxy hop, as
//! a built-in one does. The precedence of upstream's delegation order holds: a group
//! kube-apiserver 1.33 serves built in (kas-api's kinds) always goes to core, even if a
//! CRD also names it; `/apis`, the OpenAPI documents and everything outside `/apis/` go
//! to core, which merges discovery. Which groups extensions serves comes from its
//! discovery, followed as core follows it (`kas_delegate::discovery`).

use std::collections::HashSet;
use std::convert::Infallible;
use std::sync::{Arc, LazyLock};
use std::task::{Context, Poll};

use http::{Request, Response};
use kas_endpoints::Body;
use kas_endpoints::discovery::delegated::Delegated;
use tokio::sync::watch;
use tower::Service;

/// The groups core serves built in (every generated kind's but CRDs' own, which
/// extensions serves).
static BUILT_IN: LazyLock<HashSet<&'static str>> = LazyLock::new(|| {
    kas_api::KINDS
        .iter()
        .map(|k| k.group)
        .filter(|g| *g != "apiextensions.k8s.io")
        .collect()
});

/// Core for everything, extensions for its own groups.
#[derive(Clone)]
pub struct Routed {
    pub core: kas_delegate::Delegate,
    pub extensions: kas_delegate::Delegate,
    pub groups: watch::Receiver<Arc<Delegated>>,
}

impl Routed {
    /// Whether the request's path is under a group extensions serves and core does not.
    fn to_extensions(&self, path: &str) -> bool {
        let Some(rest) = path.strip_prefix("/apis/") else {
            return false;
        };
        let group = rest.split('/').next().unwrap_or("");
        if group.is_empty() || BUILT_IN.contains(group) {
            return false;
        }
        self.groups.borrow().items.iter().any(|item| {
            item.pointer("/metadata/name")
                .and_then(serde_json::Value::as_str)
                == Some(group)
        })
    }
}

impl Service<Request<Body>> for Routed {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = <kas_delegate::Delegate as Service<Request<Body>>>::Future;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<Body>) -> Self::Future {
        if self.to_extensions(req.uri().path()) {
            self.extensions.call(req)
        } else {
            self.core.call(req)
        }
    }
}
