//! `pods/log`, after upstream's `LogREST.Get` and `LogLocation`: the options decoded and
//! validated, the pod and its container, then the kubelet's `/containerLogs/...` streamed
//! back as `text/plain` (upstream's `LocationStreamer`). A pod without a node has no logs
//! yet: 204 No Content, as upstream writes a stream that is nil.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use http::{Request, Response, StatusCode};
use http_body_util::BodyExt;
use kas_apimachinery::Status;
use kas_endpoints::handlers::connect::{ConnectRequest, Connecter};
use kas_endpoints::{Body, body};

use super::options::PodLogOptions;
use super::{Context, location, plain};

/// Upstream's `maxReadLength` of a kubelet's error answer.
const MAX_ERROR_BODY: usize = 50_000;

pub struct Log(pub Arc<Context>);

impl Connecter for Log {
    fn connect(
        &self,
        request: ConnectRequest,
        _: Body,
    ) -> BoxFuture<'_, kas_registry::Result<Response<Body>>> {
        Box::pin(log(&self.0, request))
    }
}

async fn log(cx: &Context, request: ConnectRequest) -> kas_registry::Result<Response<Body>> {
    let opts = PodLogOptions::decode(request.parts.uri.query())?;
    opts.validate(&request.name)?;
    let pod = cx.pod(&request.namespace, &request.name).await?;
    let container = location::validate_container(&opts.container, &pod)?;
    let node = location::node_name(&pod);
    if node.is_empty() {
        let mut resp = Response::new(body::empty());
        *resp.status_mut() = StatusCode::NO_CONTENT;
        return Ok(resp);
    }
    let kubelet = cx.kubelet(node).await?;
    let path = format!(
        "/containerLogs/{}/{}/{container}",
        request.namespace, request.name
    );
    let loc = Context::kubelet_location(&kubelet, path, opts.kubelet_query());
    let transport = match opts.insecure_skip_tls_verify_backend {
        true => &cx.kubelet_insecure,
        false => &cx.kubelet,
    };
    let uri = loc.uri().map_err(|e| plain(e.to_string()))?;
    let req = Request::get(uri)
        .body(body::empty())
        .map_err(|e| plain(e.to_string()))?;
    let resp = transport
        .round_trip(req)
        .await
        .map_err(|e| plain(super::url_error(&http::Method::GET, &loc, &e.to_string())))?;
    let code = resp.status().as_u16();
    if !(200..=206).contains(&code) {
        return Err(kubelet_error(code, Body::new(resp.into_body()))
            .await
            .into());
    }
    let mut out = Response::new(Body::new(resp.into_body()));
    out.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain"),
    );
    Ok(out)
}

/// Upstream's `GenericHttpResponseChecker`: a kubelet's error answer as an API error.
async fn kubelet_error(code: u16, body: Body) -> Status {
    let bytes = match body.collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => return Status::internal_error(&e.to_string()),
    };
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_ERROR_BODY)]).into_owned();
    match code {
        500 => Status::internal_error(&text),
        400 => Status::bad_request(&text),
        _ => Status::generic_server_response(code, &text),
    }
}
