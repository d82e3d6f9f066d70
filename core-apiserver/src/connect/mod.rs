//! Upstream's connect subresources (`pkg/registry/core/pod/rest/log.go` and
//! `subresources.go`, `pkg/registry/core/service/proxy.go`, `pkg/registry/core/node/rest`):
//! `pods/log`, `pods/exec`, `pods/attach`, `pods/portforward`, and the `proxy` of pods,
//! services and nodes. Each resolves its location from the stores as upstream does
//! (`location`), then streams from the kubelet or proxies with `client`.
//!
//! Not done: the upgrade (SPDY, WebSocket) requests of exec, attach and portforward, and
//! upgrades through the proxies, which would need the aggregator → core-apiserver hop
//! (HTTP/2) to carry them; the HTML rewriting of upstream's proxy transport.

pub mod client;
pub mod location;
pub mod logs;
pub mod options;
pub mod proxy;
pub mod streams;

use std::path::PathBuf;
use std::sync::Arc;

use kas_apimachinery::Status;
use kas_endpoints::installer::ApiGroups;
use kas_registry::store::Store;
use serde_json::Value;

use client::{Location, Transport};

/// Upstream's kubelet client flags.
#[derive(Clone, Debug, Default)]
pub struct KubeletOptions {
    /// `--kubelet-certificate-authority`.
    pub certificate_authority: Option<PathBuf>,
    /// `--kubelet-client-certificate`.
    pub client_certificate: Option<PathBuf>,
    /// `--kubelet-client-key`.
    pub client_key: Option<PathBuf>,
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
    /// To pods and services (upstream's proxy transport).
    pub proxy: Transport,
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
        let host = location::preferred_node_address(&node)?;
        Ok(Kubelet {
            host,
            port: location::kubelet_port(&node).to_string(),
        })
    }

    /// The kubelet's location for `path` and `query`.
    pub fn kubelet_location(kubelet: &Kubelet, path: String, query: String) -> Location {
        Location {
            scheme: "https".to_owned(),
            host: location::join_host_port(&kubelet.host, &kubelet.port),
            path,
            query,
        }
    }
}

/// Registers the connecters on `groups` (when the role serves pods and nodes).
pub fn install(
    groups: ApiGroups,
    stores: &[Store],
    options: &KubeletOptions,
) -> Result<ApiGroups, String> {
    let find = |plural| crate::admission::store(stores, "", plural);
    let (Some(pods), Some(nodes)) = (find("pods"), find("nodes")) else {
        return Ok(groups);
    };
    let client_cert = options
        .client_certificate
        .as_deref()
        .zip(options.client_key.as_deref());
    let kubelet = Transport::new(options.certificate_authority.as_deref(), client_cert)
        .map_err(|e| format!("kubelet client: {e}"))?;
    let kubelet_insecure =
        Transport::new(None, client_cert).map_err(|e| format!("kubelet client: {e}"))?;
    let proxy = Transport::new(None, None).map_err(|e| format!("proxy transport: {e}"))?;
    let cx = Arc::new(Context {
        pods,
        nodes,
        services: find("services"),
        endpoints: find("endpoints"),
        kubelet,
        kubelet_insecure,
        proxy,
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
