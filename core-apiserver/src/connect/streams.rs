//! `pods/exec`, `pods/attach` and `pods/portforward`, after upstream's `ExecREST`,
//! `AttachREST`, `PortForwardREST` (`streamLocation`, `PortForwardLocation`): the pod, its
//! container and its node's kubelet resolved as upstream resolves them, then upstream's
//! `UpgradeAwareHandler` with `UpgradeRequired`: a request that is no upgrade is a 400
//! `Upgrade request required`. Forwarding the upgrade itself is not done (see the module
//! above).

use std::sync::Arc;

use futures_util::future::BoxFuture;
use http::Response;
use kas_apimachinery::Status;
use kas_endpoints::Body;
use kas_endpoints::handlers::connect::{ConnectRequest, Connecter};
use kas_endpoints::url::Query;

use super::{Context, location, options, plain};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Exec,
    Attach,
    PortForward,
}

impl Kind {
    pub fn subresource(self) -> &'static str {
        match self {
            Kind::Exec => "exec",
            Kind::Attach => "attach",
            Kind::PortForward => "portforward",
        }
    }
}

pub struct Stream(pub Arc<Context>, pub Kind);

impl Connecter for Stream {
    fn connect(
        &self,
        request: ConnectRequest,
        _: Body,
    ) -> BoxFuture<'_, kas_registry::Result<Response<Body>>> {
        Box::pin(stream(&self.0, self.1, request))
    }
}

async fn stream(
    cx: &Context,
    kind: Kind,
    request: ConnectRequest,
) -> kas_registry::Result<Response<Body>> {
    let q = Query::parse(request.parts.uri.query().unwrap_or(""));
    if kind == Kind::PortForward {
        options::ports(&q)?;
    }
    let pod = cx.pod(&request.namespace, &request.name).await?;
    if kind != Kind::PortForward {
        location::validate_container(q.first("container").unwrap_or(""), &pod)?;
    }
    let node = location::node_name(&pod);
    if node.is_empty() {
        return Err(Status::bad_request(&format!(
            "pod {} does not have a host assigned",
            request.name
        ))
        .into());
    }
    cx.kubelet(node).await?;
    if !is_upgrade_request(&request.parts.headers) {
        return Err(Status::bad_request("Upgrade request required").into());
    }
    Err(plain(format!(
        "pods/{}: upgrade requests are not forwarded by this server",
        kind.subresource()
    )))
}

/// Upstream's `httpstream.IsUpgradeRequest`: a `Connection` header with the `upgrade`
/// token.
pub fn is_upgrade_request(headers: &http::HeaderMap) -> bool {
    headers
        .get_all(http::header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| t.trim().eq_ignore_ascii_case("upgrade"))
}
