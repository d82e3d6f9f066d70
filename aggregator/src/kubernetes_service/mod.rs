//! Upstream's kubernetes-service controller and lease endpoint reconciler
//! (`pkg/controlplane/controller/kubernetesservice`, `pkg/controlplane/reconcilers/lease.go`),
//! run by every aggregator replica: the aggregator is the role clients reach, so the
//! `default/kubernetes` Service and its Endpoints and EndpointSlice point at it.
//!
//! Each replica keeps a lease on its `--advertise-address` in etcd
//! (`<prefix>/masterleases/<ip>`, 15 s TTL, refreshed every 10 s), creates the Service
//! when it is missing (the first IP of `--service-cluster-ip-range`, port 443 to this
//! role's `--secure-port`), and rewrites the Endpoints when their addresses differ from
//! the live leases; the EndpointSlice follows the Endpoints. The writes go to core-apiserver
//! through this role's delegate, as upstream's controller writes through its loopback
//! client, so core's validation applies (an advertised loopback address is refused there,
//! as upstream refuses it). On SIGTERM the replica drops its lease and reconciles once.

mod endpoints;
mod leases;

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use http::{Method, StatusCode};
use kas_delegate::Delegate;
use serde_json::{Value, json};

use crate::loopback::status_message;

pub use leases::{Leases, RESOURCE as LEASES_RESOURCE};

/// Upstream's `EndpointInterval`.
const INTERVAL: Duration = Duration::from_secs(10);
/// Upstream's `DefaultEndpointReconcilerTTL`.
pub const LEASE_TTL_SECONDS: i64 = 15;
const NAMESPACE: &str = "default";
const NAME: &str = "kubernetes";
/// Upstream's `ServicePort` of the kubernetes Service.
const SERVICE_PORT: u16 = 443;

/// Upstream's kube-apiserver flags for the kubernetes Service.
#[derive(Args, Clone, Debug)]
pub struct KubernetesServiceOptions {
    /// The IP address on which to advertise the apiserver to members of the cluster. This
    /// address must be reachable by the rest of the cluster. If blank, the --bind-address
    /// will be used. If --bind-address is unspecified, the host's default interface will be
    /// used.
    #[arg(long)]
    pub advertise_address: Option<IpAddr>,
    /// Use an endpoint reconciler (master-count, lease, none).
    #[arg(long, default_value = "lease")]
    pub endpoint_reconciler_type: String,
    /// A CIDR notation IP range from which to assign service cluster IPs; the kubernetes
    /// Service takes its first address. Give the aggregator core-apiserver's value.
    #[arg(long, default_value = "10.0.0.0/24")]
    pub service_cluster_ip_range: String,
    /// If non-zero, the Kubernetes master service (which apiserver creates/maintains) will
    /// be of type NodePort, using this as the value of the port.
    #[arg(long, default_value_t = 0)]
    pub kubernetes_service_node_port: u16,
}

impl KubernetesServiceOptions {
    pub fn validate(&self) -> Vec<String> {
        let mut errors = Vec::new();
        if !matches!(
            self.endpoint_reconciler_type.as_str(),
            "lease" | "none" | "master-count"
        ) {
            errors.push(format!(
                "--endpoint-reconciler-type: invalid value {:?}: must be one of master-count, lease, none",
                self.endpoint_reconciler_type
            ));
        } else if self.endpoint_reconciler_type == "master-count" {
            errors.push(
                "--endpoint-reconciler-type=master-count is not supported: the aggregator's replicas scale on their own; use lease".to_owned(),
            );
        }
        if let Err(e) = first_service_ip(&self.service_cluster_ip_range) {
            errors.push(format!("--service-cluster-ip-range: {e}"));
        }
        if self.kubernetes_service_node_port != 0
            && !(30000..=32767).contains(&self.kubernetes_service_node_port)
        {
            errors.push(format!(
                "--kubernetes-service-node-port {} must be between 30000 and 32767, inclusive",
                self.kubernetes_service_node_port
            ));
        }
        errors
    }
}

/// The first address of the primary CIDR (upstream's `ServiceIPRange`, index 1).
pub fn first_service_ip(ranges: &str) -> Result<IpAddr, String> {
    let primary = ranges.split(',').next().unwrap_or("").trim();
    let (ip, bits) = primary
        .split_once('/')
        .ok_or_else(|| format!("invalid CIDR address: {primary}"))?;
    let ip: IpAddr = ip
        .parse()
        .map_err(|_| format!("invalid CIDR address: {primary}"))?;
    let bits: u32 = bits
        .parse()
        .map_err(|_| format!("invalid CIDR address: {primary}"))?;
    match ip {
        IpAddr::V4(v4) if bits <= 30 => {
            let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
            Ok(IpAddr::V4((u32::from(v4) & mask).wrapping_add(1).into()))
        }
        IpAddr::V6(v6) if bits <= 126 => {
            let mask = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
            Ok(IpAddr::V6((u128::from(v6) & mask).wrapping_add(1).into()))
        }
        _ => Err(format!("{primary} is too small to hold a service IP")),
    }
}

/// Upstream's default advertise address: the bind address unless it is unspecified,
/// else the address of the host's default route (the first non-loopback one we find).
pub fn advertise_address(options: &KubernetesServiceOptions, bind: IpAddr) -> IpAddr {
    if let Some(ip) = options.advertise_address.filter(|ip| !ip.is_unspecified()) {
        return ip;
    }
    if !bind.is_unspecified() {
        return bind;
    }
    // The source address the kernel picks for a public destination (no packet is sent).
    let probe = std::net::UdpSocket::bind("0.0.0.0:0")
        .and_then(|s| s.connect("8.8.8.8:53").map(|_| s))
        .and_then(|s| s.local_addr());
    match probe {
        Ok(addr) if !addr.ip().is_unspecified() => addr.ip(),
        _ => IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
    }
}

/// The controller of one aggregator replica.
pub struct Controller {
    pub delegate: Delegate,
    pub leases: Leases,
    pub ip: IpAddr,
    pub port: u16,
    pub service_ip: IpAddr,
    pub node_port: u16,
}

impl Controller {
    /// Runs until SIGTERM, then drops this replica's lease.
    pub fn spawn(self) {
        let this = Arc::new(self);
        let run = this.clone();
        let task = tokio::spawn(async move { run.run().await });
        tokio::spawn(async move {
            kas_server::shutdown_signal().await;
            task.abort();
            if let Err(e) = this.leases.remove(&this.ip.to_string()).await {
                tracing::warn!(error = %e, "removing this replica's kubernetes endpoint lease");
            } else if let Err(e) = this.reconcile_endpoints().await {
                tracing::warn!(error = %e, "unable to remove endpoints from kubernetes service");
            }
        });
    }

    async fn run(&self) {
        // A lease left by an earlier run of this address that did not exit cleanly.
        let _ = self.leases.remove(&self.ip.to_string()).await;
        // Until core answers (it may still be starting), retry every second, as
        // upstream's controller first waits for its server to be ready.
        let mut synced = false;
        loop {
            match self.create_service_if_needed().await {
                Ok(()) => {
                    synced = true;
                    if let Err(e) = self.sync_endpoints().await {
                        tracing::warn!(error = %e, "unable to sync kubernetes service endpoints");
                    }
                }
                Err(e) if synced => tracing::warn!(error = %e, "unable to sync kubernetes service"),
                Err(e) => tracing::debug!(error = %e, "kubernetes service not synced yet"),
            }
            let wait = if synced {
                INTERVAL
            } else {
                Duration::from_secs(1)
            };
            tokio::time::sleep(wait).await;
        }
    }

    /// The endpoints half of upstream's `UpdateKubernetesService(false)`.
    async fn sync_endpoints(&self) -> Result<(), String> {
        self.leases.update(&self.ip.to_string()).await?;
        self.reconcile_endpoints().await
    }

    /// Upstream's `CreateOrUpdateMasterServiceIfNeeded` without reconciling an existing one
    /// (its path since 1.17).
    async fn create_service_if_needed(&self) -> Result<(), String> {
        let path = format!("/api/v1/namespaces/{NAMESPACE}/services/{NAME}");
        let (code, _) = self.send(Method::GET, &path, None).await?;
        if code == StatusCode::OK {
            return Ok(());
        }
        let mut port = json!({
            "protocol": "TCP",
            "port": SERVICE_PORT,
            "name": "https",
            "targetPort": self.port,
        });
        let kind = if self.node_port > 0 {
            port["nodePort"] = json!(self.node_port);
            "NodePort"
        } else {
            "ClusterIP"
        };
        let service = json!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "name": NAME,
                "namespace": NAMESPACE,
                "labels": {"provider": "kubernetes", "component": "apiserver"},
            },
            "spec": {
                "ports": [port],
                "clusterIP": self.service_ip.to_string(),
                "ipFamilyPolicy": "SingleStack",
                "sessionAffinity": "None",
                "type": kind,
            },
        });
        let collection = format!("/api/v1/namespaces/{NAMESPACE}/services");
        let (code, answer) = self.send(Method::POST, &collection, Some(service)).await?;
        match code {
            StatusCode::CREATED | StatusCode::CONFLICT => Ok(()),
            _ => Err(status_message(code, &answer)),
        }
    }

    /// Upstream's lease reconciler's `doReconcile`, then the EndpointSlice.
    async fn reconcile_endpoints(&self) -> Result<(), String> {
        let ips = self.leases.list().await?;
        if ips.is_empty() {
            return Err("no master IPs were listed in storage, refusing to erase all endpoints for the kubernetes service".to_owned());
        }
        let path = format!("/api/v1/namespaces/{NAMESPACE}/endpoints/{NAME}");
        let (code, current) = self.send(Method::GET, &path, None).await?;
        let current = (code == StatusCode::OK).then_some(current);
        let ports = endpoints::ports(self.port);
        if let Some(updated) = endpoints::reconciled(current.as_ref(), &ips, &ports) {
            let (code, answer) = match &current {
                Some(_) => self.send(Method::PUT, &path, Some(updated)).await?,
                None => {
                    let collection = format!("/api/v1/namespaces/{NAMESPACE}/endpoints");
                    self.send(Method::POST, &collection, Some(updated)).await?
                }
            };
            if !matches!(
                code,
                StatusCode::OK | StatusCode::CREATED | StatusCode::CONFLICT
            ) {
                return Err(status_message(code, &answer));
            }
            if code == StatusCode::CONFLICT {
                return Ok(());
            }
            return self.ensure_slice(&answer).await;
        }
        match current {
            Some(current) => self.ensure_slice(&current).await,
            None => Ok(()),
        }
    }

    /// Upstream's `EnsureEndpointSliceFromEndpoints`.
    async fn ensure_slice(&self, endpoints: &Value) -> Result<(), String> {
        let path =
            format!("/apis/discovery.k8s.io/v1/namespaces/{NAMESPACE}/endpointslices/{NAME}");
        let (code, current) = self.send(Method::GET, &path, None).await?;
        let desired = endpoints::slice_from_endpoints(endpoints);
        let (code, answer) = if code == StatusCode::OK {
            if endpoints::slice_matches(&current, &desired) {
                return Ok(());
            }
            let mut updated = desired;
            updated["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"].clone();
            self.send(Method::PUT, &path, Some(updated)).await?
        } else {
            let collection =
                format!("/apis/discovery.k8s.io/v1/namespaces/{NAMESPACE}/endpointslices");
            self.send(Method::POST, &collection, Some(desired)).await?
        };
        match code {
            StatusCode::OK | StatusCode::CREATED | StatusCode::CONFLICT => Ok(()),
            _ => Err(status_message(code, &answer)),
        }
    }

    /// One request to core-apiserver as `system:apiserver` (upstream's loopback user).
    async fn send(
        &self,
        method: Method,
        path: &str,
        object: Option<Value>,
    ) -> Result<(StatusCode, Value), String> {
        let agent = "aggregator/kubernetes-service";
        crate::loopback::send(&self.delegate, agent, method, path, object).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_service_takes_the_first_ip_of_the_primary_range() {
        assert_eq!(
            first_service_ip("10.0.0.0/24").unwrap().to_string(),
            "10.0.0.1"
        );
        assert_eq!(
            first_service_ip("10.96.5.7/12,fd00::/108")
                .unwrap()
                .to_string(),
            "10.96.0.1"
        );
        assert_eq!(
            first_service_ip("fd00::/64").unwrap().to_string(),
            "fd00::1"
        );
        assert!(first_service_ip("10.0.0.0").is_err());
        assert!(first_service_ip("10.0.0.0/32").is_err());
    }
}
