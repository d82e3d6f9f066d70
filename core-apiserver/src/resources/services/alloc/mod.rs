//! What upstream's Service REST storage does around a write (`pkg/registry/core/service/
//! storage/alloc.go`): before validation it fills in the IP families, allocates the
//! cluster IPs and node ports the Service needs (the ones the client asked for, or free
//! ones), and when the write fails gives them back; after a successful update it releases
//! what the Service no longer holds, and after a delete everything it held.

mod families;
pub mod ipallocator;
pub mod portallocator;
pub mod repair;

use std::collections::BTreeSet;
use std::net::IpAddr;
use std::sync::Arc;

use async_trait::async_trait;
use kas_apimachinery::Status;
use kas_apimachinery::validation::field::{self, BadValue, Path};
use kas_registry::hooks::{Finish, WriteHooks};
use kas_storage::Storage;
use serde_json::{Value, json};

use ipallocator::{AllocError, Cidr, IpAllocator, Parent};
use portallocator::{PortAllocator, PortError, PortRange};

/// The allocators of a core replica: one per service CIDR (the first is the primary
/// family) and the node port range.
pub struct ServiceAllocator {
    ips: Vec<IpAllocator>,
    ports: PortAllocator,
}

/// What an allocation did: released again if the write fails; what the write frees is
/// released when it succeeds.
#[derive(Default)]
struct Txn {
    allocator: Option<Arc<ServiceAllocator>>,
    ips: Vec<IpAddr>,
    ports: Vec<u32>,
    free_ips: Vec<IpAddr>,
    free_ports: Vec<u32>,
    dry_run: bool,
}

#[async_trait]
impl Finish for Txn {
    async fn finish(self: Box<Self>, success: bool) {
        let Some(a) = &self.allocator else {
            return;
        };
        if self.dry_run {
            return;
        }
        let (ips, ports) = if success {
            (&self.free_ips, &self.free_ports)
        } else {
            (&self.ips, &self.ports)
        };
        for ip in ips {
            a.release_ip(*ip).await;
        }
        for port in ports {
            a.ports.release(*port).await;
        }
    }
}

fn s<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn strings(v: &Value, pointer: &str) -> Vec<String> {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|x| x.as_str().map(str::to_owned))
        .collect()
}

/// Upstream `needsClusterIP`.
fn needs_cluster_ip(svc: &Value) -> bool {
    s(svc, "/spec/type") != "ExternalName"
}

/// Whether the Service is headless (`clusterIP: None`).
fn headless(svc: &Value) -> bool {
    s(svc, "/spec/clusterIP") == "None"
        || strings(svc, "/spec/clusterIPs").first().map(String::as_str) == Some("None")
}

/// Upstream `needsNodePort`.
fn needs_node_port(svc: &Value) -> bool {
    match s(svc, "/spec/type") {
        "NodePort" => true,
        "LoadBalancer" => svc
            .pointer("/spec/allocateLoadBalancerNodePorts")
            .and_then(Value::as_bool)
            .unwrap_or(true),
        _ => false,
    }
}

/// Upstream `needsHCNodePort`.
fn needs_health_check_port(svc: &Value) -> bool {
    s(svc, "/spec/type") == "LoadBalancer" && s(svc, "/spec/externalTrafficPolicy") == "Local"
}

fn node_ports(svc: &Value) -> Vec<u32> {
    svc.pointer("/spec/ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| p.get("nodePort").and_then(Value::as_u64))
        .filter(|p| *p != 0)
        .filter_map(|p| u32::try_from(p).ok())
        .collect()
}

fn cluster_ips(svc: &Value) -> Vec<IpAddr> {
    strings(svc, "/spec/clusterIPs")
        .iter()
        .filter_map(|ip| ip.parse().ok())
        .collect()
}

fn invalid(svc: &Value, errs: Vec<field::Error>) -> kas_registry::Error {
    let causes = errs.iter().map(field::Error::to_cause).collect();
    Status::invalid("", "Service", kas_registry::meta::name(svc), causes).into()
}

impl ServiceAllocator {
    /// From `--service-cluster-ip-range` (one CIDR, or two of different families) and
    /// `--service-node-port-range`, over the etcd store.
    pub fn new(
        cidrs: &[String],
        node_ports: &str,
        storage: Arc<dyn Storage>,
    ) -> Result<ServiceAllocator, String> {
        let ips = cidrs
            .iter()
            .map(|c| Cidr::parse(c).map(|c| IpAllocator::new(c, storage.clone())))
            .collect::<Result<Vec<_>, _>>()?;
        if ips.is_empty()
            || ips.len() > 2
            || (ips.len() == 2 && ips[0].cidr.family() == ips[1].cidr.family())
        {
            return Err(format!(
                "--service-cluster-ip-range must hold one CIDR, or two of different IP families: {}",
                cidrs.join(",")
            ));
        }
        let range = PortRange::parse(node_ports)?;
        Ok(ServiceAllocator {
            ips,
            ports: PortAllocator::new(range, storage),
        })
    }

    fn family(&self, name: &str) -> Option<&IpAllocator> {
        self.ips.iter().find(|a| a.cidr.family() == name)
    }

    async fn release_ip(&self, ip: IpAddr) {
        if let Some(a) = self.ips.iter().find(|a| a.contains(ip)) {
            a.release(ip).await;
        }
    }

    /// Allocates the cluster IPs of a Service that needs them and has none yet, the ones
    /// the client named or free ones, one per family.
    async fn allocate_cluster_ips(
        &self,
        svc: &mut Value,
        txn: &mut Txn,
    ) -> kas_registry::Result<()> {
        if headless(svc) {
            svc["spec"]["clusterIP"] = json!("None");
            svc["spec"]["clusterIPs"] = json!(["None"]);
            return Ok(());
        }
        let wanted = strings(svc, "/spec/clusterIPs");
        let families = strings(svc, "/spec/ipFamilies");
        let parent_ns = kas_registry::meta::namespace(svc).to_owned();
        let parent_name = kas_registry::meta::name(svc).to_owned();
        let parent = Parent {
            namespace: &parent_ns,
            name: &parent_name,
        };
        let mut allocated = Vec::new();
        for (i, family) in families.iter().enumerate() {
            let want = wanted.get(i).map_or("", String::as_str);
            match self.allocate_ip(svc, &parent, family, want, txn).await? {
                Some(ip) => allocated.push(ip.to_string()),
                // The cluster has no such family, or not an IP: validation says so.
                None => continue,
            }
        }
        if !allocated.is_empty() {
            svc["spec"]["clusterIPs"] = json!(allocated);
            svc["spec"]["clusterIP"] = json!(allocated[0]);
        }
        Ok(())
    }

    /// Allocates one cluster IP of `family` (upstream `allocIPs`): `want`, or a free one
    /// when empty.
    async fn allocate_ip(
        &self,
        svc: &Value,
        parent: &Parent<'_>,
        family: &str,
        want: &str,
        txn: &mut Txn,
    ) -> kas_registry::Result<Option<IpAddr>> {
        let Some(alloc) = self.family(family) else {
            return Ok(None);
        };
        let ip = if want.is_empty() {
            alloc
                .allocate_next(parent, txn.dry_run)
                .await
                .map_err(|e| match e {
                    AllocError::Storage(e) => kas_registry::Error::from(Status::internal_error(&e)),
                    e => Status::internal_error(&format!("failed to allocate a serviceIP: {e}"))
                        .into(),
                })?
        } else {
            let Ok(addr) = want.parse::<IpAddr>() else {
                return Ok(None);
            };
            alloc
                .allocate(addr, parent, txn.dry_run)
                .await
                .map_err(|e| {
                    invalid(
                        svc,
                        vec![field::invalid(
                            &Path::new("spec").child("clusterIPs"),
                            BadValue::Strings(Some(strings(svc, "/spec/clusterIPs"))),
                            &format!("failed to allocate IP {want}: {e}"),
                        )],
                    )
                })?;
            addr
        };
        txn.ips.push(ip);
        Ok(Some(ip))
    }

    /// Allocates the node ports of the Service's ports that `held` does not already hold
    /// (a port asked for, or a free one for a port without), and a health check port when
    /// it needs one.
    async fn allocate_node_ports(
        &self,
        svc: &mut Value,
        held: &BTreeSet<u32>,
        txn: &mut Txn,
    ) -> kas_registry::Result<()> {
        let count = svc
            .pointer("/spec/ports")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let mut taken_here: BTreeSet<u32> = BTreeSet::new();
        for i in 0..count {
            let port = svc["spec"]["ports"][i]
                .get("nodePort")
                .and_then(Value::as_u64)
                .and_then(|p| u32::try_from(p).ok())
                .unwrap_or(0);
            if port != 0 {
                // The same port for two protocols is one allocation.
                if held.contains(&port) || !taken_here.insert(port) {
                    continue;
                }
                if let Err(e) = self.ports.allocate(port, txn.dry_run).await {
                    let path = Path::new("spec").child("ports").index(i).child("nodePort");
                    return Err(match e {
                        PortError::Storage(e) => Status::internal_error(&e).into(),
                        e => invalid(
                            svc,
                            vec![field::invalid(&path, i64::from(port), &e.to_string())],
                        ),
                    });
                }
                txn.ports.push(port);
            } else {
                let port = self.ports.allocate_next(txn.dry_run).await.map_err(|e| {
                    kas_registry::Error::from(Status::internal_error(&format!(
                        "failed to allocate a nodePort: {e}"
                    )))
                })?;
                txn.ports.push(port);
                taken_here.insert(port);
                svc["spec"]["ports"][i]["nodePort"] = json!(port);
            }
        }
        Ok(())
    }

    async fn allocate_health_check_port(
        &self,
        svc: &mut Value,
        held: Option<u32>,
        txn: &mut Txn,
    ) -> kas_registry::Result<()> {
        let port = svc
            .pointer("/spec/healthCheckNodePort")
            .and_then(Value::as_u64)
            .and_then(|p| u32::try_from(p).ok())
            .unwrap_or(0);
        if port != 0 {
            if held == Some(port) {
                return Ok(());
            }
            if let Err(e) = self.ports.allocate(port, txn.dry_run).await {
                let path = Path::new("spec").child("healthCheckNodePort");
                return Err(invalid(
                    svc,
                    vec![field::invalid(&path, i64::from(port), &e.to_string())],
                ));
            }
            txn.ports.push(port);
            return Ok(());
        }
        let port = self.ports.allocate_next(txn.dry_run).await.map_err(|e| {
            kas_registry::Error::from(Status::internal_error(&format!(
                "failed to allocate a nodePort: {e}"
            )))
        })?;
        txn.ports.push(port);
        svc["spec"]["healthCheckNodePort"] = json!(port);
        Ok(())
    }

    fn txn(self: &Arc<Self>, dry_run: bool) -> Txn {
        Txn {
            allocator: Some(self.clone()),
            dry_run,
            ..Txn::default()
        }
    }
}

/// The hooks a Service store runs: the allocator, shared by the replica's writes.
pub struct ServiceHooks(pub Arc<ServiceAllocator>);

/// Undoes what was allocated before `err` and passes it on.
async fn failed(txn: Txn, err: kas_registry::Error) -> kas_registry::Error {
    Box::new(txn).finish(false).await;
    err
}

#[async_trait]
impl WriteHooks for ServiceHooks {
    async fn begin_create(
        &self,
        svc: &mut Value,
        dry_run: bool,
    ) -> kas_registry::Result<Box<dyn Finish>> {
        let a = &self.0;
        let mut txn = a.txn(dry_run);
        families::normalize_cluster_ips(svc, None);
        a.init_ip_families(svc, None)?;
        if needs_cluster_ip(svc)
            && let Err(e) = a.allocate_cluster_ips(svc, &mut txn).await
        {
            return Err(failed(txn, e).await);
        }
        if needs_node_port(svc)
            && let Err(e) = a.allocate_node_ports(svc, &BTreeSet::new(), &mut txn).await
        {
            return Err(failed(txn, e).await);
        }
        if needs_health_check_port(svc)
            && let Err(e) = a.allocate_health_check_port(svc, None, &mut txn).await
        {
            return Err(failed(txn, e).await);
        }
        Ok(Box::new(txn))
    }

    async fn begin_update(
        &self,
        new: &mut Value,
        old: &Value,
        dry_run: bool,
    ) -> kas_registry::Result<Box<dyn Finish>> {
        let a = &self.0;
        let mut txn = a.txn(dry_run);
        patch_allocated_values(new, old);
        families::normalize_cluster_ips(new, Some(old));
        a.init_ip_families(new, Some(old))?;
        // Cluster IPs: kept across the update, allocated when the Service starts needing
        // them or is upgraded to dual-stack, released (once the write succeeds) when it
        // stops needing them or is downgraded to single-stack.
        let allocated = match families::ip_update(new, old) {
            families::IpUpdate::AllocateAll => a.allocate_cluster_ips(new, &mut txn).await,
            families::IpUpdate::Upgrade => a.allocate_secondary_ip(new, &mut txn).await,
            families::IpUpdate::ReleaseAll => {
                txn.free_ips = cluster_ips(old);
                Ok(())
            }
            families::IpUpdate::Downgrade => {
                txn.free_ips = cluster_ips(old).into_iter().skip(1).collect();
                Ok(())
            }
            families::IpUpdate::Keep => Ok(()),
        };
        if let Err(e) = allocated {
            return Err(failed(txn, e).await);
        }
        // Node ports.
        let old_ports: BTreeSet<u32> = if needs_node_port(old) {
            node_ports(old).into_iter().collect()
        } else {
            BTreeSet::new()
        };
        let mut kept: BTreeSet<u32> = BTreeSet::new();
        if needs_node_port(new) {
            if let Err(e) = a.allocate_node_ports(new, &old_ports, &mut txn).await {
                return Err(failed(txn, e).await);
            }
            kept = node_ports(new).into_iter().collect();
        }
        // Health check port.
        let old_hc = old
            .pointer("/spec/healthCheckNodePort")
            .and_then(Value::as_u64)
            .and_then(|p| u32::try_from(p).ok())
            .filter(|p| *p != 0 && needs_health_check_port(old));
        if needs_health_check_port(new) {
            if let Err(e) = a.allocate_health_check_port(new, old_hc, &mut txn).await {
                return Err(failed(txn, e).await);
            }
            if let Some(p) = new
                .pointer("/spec/healthCheckNodePort")
                .and_then(Value::as_u64)
                .and_then(|p| u32::try_from(p).ok())
            {
                kept.insert(p);
            }
        }
        let mut old_all = old_ports;
        old_all.extend(old_hc);
        txn.free_ports = old_all.into_iter().filter(|p| !kept.contains(p)).collect();
        Ok(Box::new(txn))
    }

    async fn after_delete(&self, svc: &Value) {
        let a = &self.0;
        if !a.ips.is_empty() {
            for ip in cluster_ips(svc) {
                a.release_ip(ip).await;
            }
        }
        let mut ports = node_ports(svc);
        if let Some(p) = svc
            .pointer("/spec/healthCheckNodePort")
            .and_then(Value::as_u64)
            .and_then(|p| u32::try_from(p).ok())
        {
            ports.push(p);
        }
        for p in ports {
            a.ports.release(p).await;
        }
    }
}

/// Upstream `patchAllocatedValues`: what a client left out of an update but the Service
/// holds (its cluster IPs, its ports' node ports matched by name, the health check port)
/// is kept, so that a PUT of a Service read earlier or written without them is
/// idempotent.
fn patch_allocated_values(new: &mut Value, old: &Value) {
    if needs_cluster_ip(old) && needs_cluster_ip(new) {
        let spec = &mut new["spec"];
        if s(spec, "/clusterIP").is_empty() {
            spec["clusterIP"] = json!(s(old, "/spec/clusterIP"));
        }
        if strings(spec, "/clusterIPs").is_empty() && !strings(old, "/spec/clusterIPs").is_empty() {
            spec["clusterIPs"] = old["spec"]["clusterIPs"].clone();
        }
    }
    if needs_node_port(old) && needs_node_port(new) {
        let old_ports: BTreeSet<u32> = node_ports(old).into_iter().collect();
        let new_ports: BTreeSet<u32> = node_ports(new).into_iter().collect();
        let used: BTreeSet<u32> = old_ports.intersection(&new_ports).copied().collect();
        let by_name: Vec<(String, u64)> = old
            .pointer("/spec/ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|p| {
                (
                    s(p, "/name").to_owned(),
                    p.get("nodePort").and_then(Value::as_u64).unwrap_or(0),
                )
            })
            .collect();
        if let Some(ports) = new.pointer_mut("/spec/ports").and_then(Value::as_array_mut) {
            for p in ports {
                let has = p.get("nodePort").and_then(Value::as_u64).unwrap_or(0) != 0;
                if has {
                    continue;
                }
                let name = s(p, "/name").to_owned();
                if let Some((_, n)) = by_name.iter().find(|(k, n)| *k == name && *n != 0)
                    && !used.contains(&(*n as u32))
                {
                    p["nodePort"] = json!(n);
                }
            }
        }
    }
    if needs_health_check_port(old) && needs_health_check_port(new) {
        let hc = new
            .pointer("/spec/healthCheckNodePort")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        if hc == 0
            && let Some(old_hc) = old.pointer("/spec/healthCheckNodePort").cloned()
        {
            new["spec"]["healthCheckNodePort"] = old_hc;
        }
    }
}
