//! The `proxy` subresources of pods, services and nodes, after upstream's `ProxyREST`s
//! and their `ResourceLocation`s: the id (`name`, `name:port`, `scheme:name:port`)
//! resolved to a backend, the `{path:*}` joined to its path, then the request proxied
//! (upstream's `UpgradeAwareHandler` with `WrapTransport`: a plain request
//! reverse-proxied, its answer without CORS headers; an upgrade spliced; errors to the
//! responder, plain ones a 500 with their text).

use std::net::IpAddr;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use http::{Request, Response};
use kas_apimachinery::Status;
use kas_endpoints::Body;
use kas_endpoints::handlers::connect::{ConnectRequest, Connecter};
use serde_json::Value;

use super::{Context, location, plain};
use kas_proxy::{Location, Transport};

type Answer<'a> = BoxFuture<'a, kas_registry::Result<Response<Body>>>;

pub struct PodProxy(pub Arc<Context>);
pub struct ServiceProxy(pub Arc<Context>);
pub struct NodeProxy(pub Arc<Context>);

fn invalid(what: &str, id: &str) -> kas_registry::Error {
    Status::bad_request(&format!("invalid {what} request {id:?}")).into()
}

impl Connecter for PodProxy {
    fn connect(&self, request: ConnectRequest, body: Body) -> Answer<'_> {
        Box::pin(async move {
            let cx = &self.0;
            let (scheme, name, port) = location::split_scheme_name_port(&request.name)
                .ok_or_else(|| invalid("pod", &request.name))?;
            let pod = cx.pod(&request.namespace, name).await?;
            let host = location::pod_proxy_host(&pod, port)?;
            let loc = located(scheme, host, &request);
            forward(&cx.proxy, loc, request, body).await
        })
    }
}

impl Connecter for ServiceProxy {
    fn connect(&self, request: ConnectRequest, body: Body) -> Answer<'_> {
        Box::pin(async move {
            let (scheme, host) = service_location(&self.0, &request).await?;
            let loc = located(scheme, host, &request);
            forward(&self.0.proxy, loc, request, body).await
        })
    }
}

impl Connecter for NodeProxy {
    fn connect(&self, request: ConnectRequest, body: Body) -> Answer<'_> {
        Box::pin(async move {
            let cx = &self.0;
            let (scheme, name, port) = location::split_scheme_name_port(&request.name)
                .ok_or_else(|| invalid("node", &request.name))?;
            let kubelet = cx.kubelet(name).await?;
            proxyable(&kubelet.host).await?;
            let (scheme, port, transport) = if port.is_empty() || port == kubelet.port {
                ("https", kubelet.port.clone(), &cx.kubelet)
            } else {
                (scheme, port.to_owned(), &cx.proxy)
            };
            let host = kas_proxy::resolve::join_host_port(&kubelet.host, &port);
            let loc = located(scheme, host, &request);
            forward(transport, loc, request, body).await
        })
    }
}

fn located(scheme: &str, host: String, request: &ConnectRequest) -> Location {
    Location {
        scheme: scheme.to_owned(),
        host,
        path: location::join_preserving_trailing_slash("", &request.subpath),
        query: request.parts.uri.query().unwrap_or("").to_owned(),
    }
}

/// Upstream's `isProxyableHostname`: every address the name resolves to is global
/// unicast.
async fn proxyable(host: &str) -> kas_registry::Result<()> {
    let addrs: Vec<IpAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![ip],
        Err(_) => tokio::net::lookup_host((host, 0))
            .await
            .map_err(|e| Status::bad_request(&format!("lookup {host}: {e}")))?
            .map(|a| a.ip())
            .collect(),
    };
    if addrs.is_empty() {
        return Err(Status::bad_request("no addresses for hostname").into());
    }
    if addrs.iter().any(|ip| !location::is_global_unicast(*ip)) {
        return Err(Status::bad_request("address not allowed").into());
    }
    Ok(())
}

/// Upstream's service `ResourceLocation`: the port number named by its service port's
/// name, then the first endpoint address (of a subset with that port) whose target pod
/// has its IP.
async fn service_location(
    cx: &Context,
    request: &ConnectRequest,
) -> kas_registry::Result<(&'static str, String)> {
    let (Some(services), Some(endpoints)) = (&cx.services, &cx.endpoints) else {
        return Err(plain("services are not served".to_owned()));
    };
    let id = &request.name;
    let ns = &request.namespace;
    let (scheme, name, port) =
        location::split_scheme_name_port(id).ok_or_else(|| invalid("service", id))?;
    let mut port = port.to_owned();
    if let Ok(number) = port.parse::<i64>() {
        let svc = services.get(ns, name, None).await?.value()?;
        port = kas_proxy::resolve::find_service_port(&svc, name, number)
            .map_err(|e| Status::service_unavailable(&e.to_string()))?
            .to_owned();
    }
    let eps = endpoints.get(ns, name, None).await?.value()?;
    let subsets: Vec<&Value> = list(&eps, "/subsets").collect();
    if subsets.is_empty() {
        return Err(Status::service_unavailable(&format!(
            "no endpoints available for service {name:?}"
        ))
        .into());
    }
    for ss in subsets {
        for p in list(ss, "/ports").filter(|p| str_of(p, "name") == port) {
            for addr in list(ss, "/addresses") {
                if !valid_address(cx, ns, addr).await {
                    continue;
                }
                let number = p.get("port").and_then(Value::as_i64).unwrap_or(0);
                let host = kas_proxy::resolve::join_host_port(str_of(addr, "ip"), number);
                let scheme = match scheme {
                    "https" => "https",
                    "http" => "http",
                    _ => "",
                };
                return Ok((scheme, host));
            }
        }
    }
    Err(Status::service_unavailable(&format!("no endpoints available for service {id:?}")).into())
}

fn list<'a>(v: &'a Value, pointer: &str) -> impl Iterator<Item = &'a Value> {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Upstream's `isValidAddress`: a target pod in the namespace that has the address's IP.
async fn valid_address(cx: &Context, namespace: &str, addr: &Value) -> bool {
    let Some(target) = addr.get("targetRef") else {
        return false;
    };
    if str_of(target, "namespace") != namespace {
        return false;
    }
    let Ok(pod) = cx.pod(namespace, str_of(target, "name")).await else {
        return false;
    };
    let ip = str_of(addr, "ip");
    list(&pod, "/status/podIPs").any(|p| str_of(p, "ip") == ip)
}

/// Proxies the request to `loc` (upgrades too) and streams the answer back.
async fn forward(
    transport: &Transport,
    loc: Location,
    request: ConnectRequest,
    body: Body,
) -> kas_registry::Result<Response<Body>> {
    let mut parts = request.parts;
    super::strip_credentials(&mut parts.headers);
    let req = Request::from_parts(parts, body);
    let options = kas_proxy::Options {
        wrap_transport: true,
        ..kas_proxy::Options::default()
    };
    transport
        .forward(&loc, req, &options)
        .await
        .map_err(|e| e.to_status().into())
}
