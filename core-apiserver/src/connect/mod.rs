//! Upstream's connect subresources (`pkg/registry/core/pod/rest/log.go` and
//! `subresources.go`, `pkg/registry/core/service/proxy.go`, `pkg/registry/core/node/rest`):
//! `pods/log`, `pods/exec`, `pods/attach`, `pods/portforward`, and the `proxy` of pods,
//! services and nodes. Each resolves its location from the stores as upstream does
//! (`location`), then streams from the kubelet or proxies through kas-proxy's transports
//! (upstream's `UpgradeAwareHandler`: upgrades spliced, plain requests reverse-proxied).
//!
//! exec and attach over WebSocket `v5.channel.k8s.io` are translated to SPDY, and
//! port-forward over WebSocket tunnels SPDY, as upstream 1.33 does with its gates on
//! (kas-proxy's `translate`).
//!
//! Not done: the HTML rewriting of upstream's proxy transport.

pub mod location;
pub mod logs;
pub mod options;
pub mod proxy;
pub mod streams;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use kas_apimachinery::Status;
use kas_endpoints::installer::ApiGroups;
use kas_proxy::{Location, Transport};
use kas_registry::features::FeatureGates;
use kas_registry::store::Store;
use kas_tls::TlsConfig;
use serde_json::Value;

/// Upstream's kubelet client flags.
#[derive(Clone, Debug)]
pub struct KubeletOptions {
    /// `--kubelet-certificate-authority`.
    pub certificate_authority: Option<PathBuf>,
    /// `--kubelet-client-certificate`.
    pub client_certificate: Option<PathBuf>,
    /// `--kubelet-client-key`.
    pub client_key: Option<PathBuf>,
    /// `--kubelet-preferred-address-types`.
    pub preferred_address_types: Vec<String>,
    /// `--kubelet-timeout`: the dial timeout of kubelet connections.
    pub timeout: Duration,
}

impl Default for KubeletOptions {
    fn default() -> Self {
        KubeletOptions {
            certificate_authority: None,
            client_certificate: None,
            client_key: None,
            preferred_address_types: location::PREFERRED_ADDRESS_TYPES
                .iter()
                .map(|t| (*t).to_owned())
                .collect(),
            timeout: location::KUBELET_TIMEOUT,
        }
    }
}

/// What every connecter reads: the stores and the transports.
pub struct Context {
    pub pods: Store,
    pub nodes: Store,
    pub services: Option<Store>,
    pub endpoints: Option<Store>,
    /// To kubelets, verifying them when a CA is configured.
    pub kubelet: Transport,
    /// To kubelets, not verifying them (`insecureSkipTLSVerifyBackend`).
    pub kubelet_insecure: Transport,
    /// To pods and services (upstream's proxy transport: nothing verified).
    pub proxy: Transport,
    pub preferred_address_types: Vec<String>,
    /// `TranslateStreamCloseWebsocketRequests` and `PortForwardWebsockets` decide what
    /// exec, attach and port-forward do with WebSocket requests.
    pub features: FeatureGates,
}

/// Upstream's `ConnectionInfo` of a node's kubelet.
pub struct Kubelet {
    pub host: String,
    pub port: String,
}

impl Context {
    /// A pod, from etcd (upstream's `getPod`).
    pub async fn pod(&self, namespace: &str, name: &str) -> kas_registry::Result<Value> {
        Ok(self.pods.get(namespace, name, None).await?.value()?)
    }

    /// Upstream's `NodeConnectionInfoGetter.GetConnectionInfo`.
    pub async fn kubelet(&self, node: &str) -> kas_registry::Result<Kubelet> {
        let node = self.nodes.get("", node, None).await?.value()?;
        let host = location::preferred_node_address(&node, &self.preferred_address_types)?;
        Ok(Kubelet {
            host,
            port: location::kubelet_port(&node).to_string(),
        })
    }

    /// The kubelet's location for `path` and `query`.
    pub fn kubelet_location(kubelet: &Kubelet, path: String, query: String) -> Location {
        Location {
            scheme: "https".to_owned(),
            host: kas_proxy::resolve::join_host_port(&kubelet.host, &kubelet.port),
            path,
            query,
        }
    }
}

/// The kubelet client's TLS configuration from the flags: the CA when given (else nothing
/// is verified, as upstream's kubelet client without one), the client pair when given.
fn kubelet_tls(options: &KubeletOptions, verify: bool) -> Result<TlsConfig, String> {
    let read = |path: &PathBuf| {
        std::fs::read(path).map_err(|e| format!("kubelet client: reading {}: {e}", path.display()))
    };
    let ca_data = match (&options.certificate_authority, verify) {
        (Some(ca), true) => Some(read(ca)?),
        _ => None,
    };
    let client_cert = match (&options.client_certificate, &options.client_key) {
        (Some(cert), Some(key)) => Some((read(cert)?, read(key)?)),
        _ => None,
    };
    Ok(TlsConfig {
        insecure: ca_data.is_none(),
        ca_data,
        client_cert,
        server_name: None,
    })
}

/// Registers the connecters on `groups` (when the role serves pods and nodes).
pub fn install(
    groups: ApiGroups,
    stores: &[Store],
    options: &KubeletOptions,
    features: FeatureGates,
) -> Result<ApiGroups, String> {
    let find = |plural| crate::admission::store(stores, "", plural);
    let (Some(pods), Some(nodes)) = (find("pods"), find("nodes")) else {
        return Ok(groups);
    };
    let kubelet_transport = |verify| {
        Transport::with_dial_timeout(&kubelet_tls(options, verify)?, options.timeout)
            .map_err(|e| format!("kubelet client: {e}"))
    };
    let insecure = TlsConfig {
        insecure: true,
        ..TlsConfig::default()
    };
    let cx = Arc::new(Context {
        pods,
        nodes,
        services: find("services"),
        endpoints: find("endpoints"),
        kubelet: kubelet_transport(true)?,
        kubelet_insecure: kubelet_transport(false)?,
        proxy: Transport::new(&insecure).map_err(|e| format!("proxy transport: {e}"))?,
        preferred_address_types: options.preferred_address_types.clone(),
        features,
    });
    let mut groups = groups
        .with_connecter(("", "pods", "log"), Arc::new(logs::Log(cx.clone())))
        .with_connecter(("", "pods", "proxy"), Arc::new(proxy::PodProxy(cx.clone())))
        .with_connecter(
            ("", "nodes", "proxy"),
            Arc::new(proxy::NodeProxy(cx.clone())),
        );
    for kind in [
        streams::Kind::Exec,
        streams::Kind::Attach,
        streams::Kind::PortForward,
    ] {
        let connecter = Arc::new(streams::Stream(cx.clone(), kind));
        groups = groups.with_connecter(("", "pods", kind.subresource()), connecter);
    }
    if cx.services.is_some() && cx.endpoints.is_some() {
        groups = groups.with_connecter(
            ("", "services", "proxy"),
            Arc::new(proxy::ServiceProxy(cx.clone())),
        );
    }
    Ok(groups)
}

/// A plain error (500 with its text), as upstream writes errors that are no API status.
pub fn plain(message: String) -> kas_registry::Error {
    Status::from_plain_error(message).into()
}

/// Go's `url.Error` text for a client's request: `Get "<url>": <err>`.
pub fn url_error(method: &http::Method, location: &Location, err: &str) -> String {
    kas_apimachinery::golang::net::url_error(method.as_str(), &location.url(), err)
}

/// What a proxy does not pass on to a backend: the credentials the request was
/// authenticated with (upstream's authentication filters remove `Authorization`, the
/// request-header authenticator its `X-Remote-*` headers, impersonation its
/// `Impersonate-*` headers).
pub fn strip_credentials(headers: &mut http::HeaderMap) {
    headers.remove(http::header::AUTHORIZATION);
    let remote: Vec<_> = headers
        .keys()
        .filter(|k| k.as_str().starts_with("x-remote-") || k.as_str().starts_with("impersonate-"))
        .cloned()
        .collect();
    for k in remote {
        headers.remove(k);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_read_as_go_writes_them() {
        let loc = Location {
            scheme: "https".into(),
            host: "127.0.0.1:10250".into(),
            path: "/containerLogs/default/p/c".into(),
            query: String::new(),
        };
        assert_eq!(
            url_error(
                &http::Method::GET,
                &loc,
                "dial tcp 127.0.0.1:10250: connect: connection refused"
            ),
            "Get \"https://127.0.0.1:10250/containerLogs/default/p/c\": dial tcp 127.0.0.1:10250: connect: connection refused"
        );
    }

    #[test]
    fn credentials_stay_behind() {
        let mut h = http::HeaderMap::new();
        for (k, v) in [
            ("authorization", "Bearer x"),
            ("x-remote-user", "alice"),
            ("impersonate-user", "bob"),
            ("accept", "*/*"),
        ] {
            h.insert(k, http::HeaderValue::from_static(v));
        }
        strip_credentials(&mut h);
        assert_eq!(h.len(), 1);
        assert_eq!(h["accept"], "*/*");
    }
}
