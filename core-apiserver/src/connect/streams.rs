//! `pods/exec`, `pods/attach` and `pods/portforward`, after upstream's `ExecREST`,
//! `AttachREST`, `PortForwardREST` and their locations (`ExecLocation`, `AttachLocation`:
//! `streamLocation`; `PortForwardLocation`): the pod, its container and its node's kubelet
//! resolved as upstream resolves them, then the upgrade forwarded to the kubelet
//! (`/exec/<ns>/<pod>/<container>?command=...&input=1...`, `/attach/...`,
//! `/portForward/<ns>/<pod>?port=...`) by upstream's `UpgradeAwareHandler` with
//! `UpgradeRequired`: a request that is no upgrade is a 400 `Upgrade request required`.
//! With 1.33's gates on, a WebSocket `v5.channel.k8s.io` exec or attach is translated to
//! SPDY, and a WebSocket `SPDY/3.1+portforward.k8s.io` port-forward tunnels SPDY
//! (upstream's `NewTranslatingHandler` over the stream translator and tunnel).

use std::sync::Arc;

use futures_util::future::BoxFuture;
use http::{Request, Response};
use kas_apimachinery::Status;
use kas_endpoints::Body;
use kas_endpoints::handlers::connect::{ConnectRequest, Connecter};
use kas_endpoints::url::Query;
use kas_proxy::translate;

use super::options::{self, StreamOptions};
use super::{Context, location};

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
        body: Body,
    ) -> BoxFuture<'_, kas_registry::Result<Response<Body>>> {
        Box::pin(stream(&self.0, self.1, request, body))
    }
}

/// The kubelet's path and query for the request (upstream's locations, without the node).
fn kubelet_target(
    kind: Kind,
    q: &Query,
    request: &ConnectRequest,
    pod: &serde_json::Value,
) -> kas_registry::Result<(String, String)> {
    let (ns, name) = (&request.namespace, &request.name);
    if kind == Kind::PortForward {
        let ports = options::ports(q)?;
        return Ok((
            format!("/portForward/{ns}/{name}"),
            options::ports_query(&ports),
        ));
    }
    let opts = StreamOptions::decode(q, kind == Kind::Exec);
    let container = location::validate_container(&opts.container, pod)?;
    let path = format!("/{}/{ns}/{name}/{container}", kind.subresource());
    Ok((path, opts.kubelet_query()))
}

async fn stream(
    cx: &Context,
    kind: Kind,
    request: ConnectRequest,
    body: Body,
) -> kas_registry::Result<Response<Body>> {
    let q = Query::parse(request.parts.uri.query().unwrap_or(""));
    if kind == Kind::PortForward {
        options::ports(&q)?;
    }
    let pod = cx.pod(&request.namespace, &request.name).await?;
    let (path, query) = kubelet_target(kind, &q, &request, &pod)?;
    let node = location::node_name(&pod);
    if node.is_empty() {
        return Err(Status::bad_request(&format!(
            "pod {} does not have a host assigned",
            request.name
        ))
        .into());
    }
    let kubelet = cx.kubelet(node).await?;
    let location = Context::kubelet_location(&kubelet, path, query);
    let mut parts = request.parts;
    super::strip_credentials(&mut parts.headers);
    let features = cx.features;
    let req = Request::from_parts(parts, body);
    if kind == Kind::PortForward {
        if features.port_forward_websockets && translate::is_tunneling_request(req.headers()) {
            return cx
                .kubelet
                .tunnel(&location, req)
                .await
                .map_err(|e| e.to_status().into());
        }
    } else if features.translate_stream_close_websocket_requests
        && translate::is_stream_close_request(req.headers())
    {
        let opts = StreamOptions::decode(&q, kind == Kind::Exec);
        let streams = translate::StreamOptions {
            stdin: opts.stdin,
            stdout: opts.stdout,
            stderr: opts.stderr,
            tty: opts.tty,
        };
        return Ok(cx.kubelet.translate_stream(&location, req, streams));
    }
    let options = kas_proxy::Options {
        upgrade_required: true,
        ..kas_proxy::Options::default()
    };
    cx.kubelet
        .forward(&location, req, &options)
        .await
        .map_err(|e| e.to_status().into())
}
