//! Upstream's allocation repair controllers (`RepairIPAddress`, the node port `Repair`),
//! run by every core replica: a replica that dies between allocating and writing its
//! Service leaves an `IPAddress` or a node port bit no Service holds, and a Service may
//! hold what its allocation record lost. Every pass compares the Services with the
//! records: an `IPAddress` no Service holds is deleted once it is older than a grace
//! period (an allocation in flight is milliseconds old), a node port bit no Service holds
//! is cleared when two passes in a row saw it unheld, and what a Service holds but no
//! record has is recorded again. Replicas may repair at once: deletes are conditional on
//! the record they saw, and the rest is idempotent.

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use kas_apimachinery::golang::time::parse_rfc3339;
use kas_storage::{ListOptions, Preconditions, Storage};
use serde_json::Value;

use super::ServiceAllocator;
use super::ipallocator::Parent;

/// How often a replica repairs.
pub const INTERVAL: Duration = Duration::from_secs(10);
/// How old an unheld `IPAddress` must be before it is taken for a leak.
const IP_GRACE: Duration = Duration::from_secs(10);

/// What the Services hold: each cluster IP with its Service, and the node ports.
#[derive(Default)]
struct Held {
    ips: BTreeMap<IpAddr, (String, String)>,
    ports: BTreeSet<u32>,
}

async fn held(storage: &Arc<dyn Storage>) -> kas_storage::Result<Held> {
    let opts = ListOptions {
        recursive: true,
        ..Default::default()
    };
    let services = storage.list(super::super::SERVICES_KEY, &opts).await?;
    let mut held = Held::default();
    for svc in services.items.iter().filter_map(|o| o.value().ok()) {
        let ns = kas_registry::meta::namespace(&svc).to_owned();
        let name = kas_registry::meta::name(&svc).to_owned();
        for ip in super::cluster_ips(&svc) {
            held.ips.insert(ip, (ns.clone(), name.clone()));
        }
        held.ports.extend(super::node_ports(&svc));
        if let Some(p) = svc
            .pointer("/spec/healthCheckNodePort")
            .and_then(Value::as_u64)
            .and_then(|p| u32::try_from(p).ok())
            .filter(|p| *p != 0)
        {
            held.ports.insert(p);
        }
    }
    Ok(held)
}

/// One repair pass; `suspects` are the node ports the last pass found unheld.
pub async fn repair_once(
    allocator: &ServiceAllocator,
    storage: &Arc<dyn Storage>,
    suspects: &mut BTreeSet<u32>,
) -> kas_storage::Result<()> {
    let held = held(storage).await?;
    // IPAddresses no Service holds.
    let opts = ListOptions {
        recursive: true,
        ..Default::default()
    };
    let records = storage.list(super::ipallocator::PREFIX, &opts).await?;
    let mut recorded = BTreeSet::new();
    for record in &records.items {
        let Some(ip) = record
            .key
            .rsplit('/')
            .next()
            .and_then(|ip| ip.parse::<IpAddr>().ok())
        else {
            continue;
        };
        recorded.insert(ip);
        if held.ips.contains_key(&ip) {
            continue;
        }
        let Ok(value) = record.value() else {
            continue;
        };
        let created = parse_rfc3339(kas_registry::meta::str_field(&value, "creationTimestamp"));
        let now = kas_apimachinery::golang::time::Time::from_system_time(SystemTime::now());
        let old_enough =
            created.is_none_or(|t| now.seconds - t.seconds >= IP_GRACE.as_secs() as i64);
        if !old_enough {
            continue;
        }
        let uid = kas_registry::meta::str_field(&value, "uid").to_owned();
        let pre = Preconditions {
            uid: (!uid.is_empty()).then_some(uid),
            resource_version: Some(record.resource_version.to_string()),
        };
        match storage.delete(&record.key, &pre, &|_| Ok(()), None).await {
            Ok(_) => tracing::info!(%ip, "released a leaked cluster IP"),
            Err(e) => tracing::debug!(%ip, error = %e, "leaked cluster IP not released"),
        }
    }
    // Cluster IPs a Service holds with no record.
    for (ip, (ns, name)) in &held.ips {
        if recorded.contains(ip) {
            continue;
        }
        if let Some(a) = allocator.ips.iter().find(|a| a.contains(*ip)) {
            let parent = Parent {
                namespace: ns,
                name,
            };
            if a.allocate(*ip, &parent, false).await.is_ok() {
                tracing::info!(%ip, "recorded a cluster IP a Service held");
            }
        }
    }
    // Node ports: set what is held, clear what two passes saw unheld.
    let taken = allocator
        .ports
        .taken()
        .await
        .map_err(|e| kas_storage::Error::InvalidObj {
            key: super::portallocator::KEY.into(),
            message: e.to_string(),
        })?;
    for port in held.ports.difference(&taken) {
        let _ = allocator.ports.allocate(*port, false).await;
    }
    let unheld: BTreeSet<u32> = taken.difference(&held.ports).copied().collect();
    for port in unheld.intersection(suspects) {
        allocator.ports.release(*port).await;
        tracing::info!(port, "released a leaked node port");
    }
    *suspects = unheld;
    Ok(())
}

/// Repairs every [`INTERVAL`] for as long as the process runs.
pub fn spawn(allocator: Arc<ServiceAllocator>, storage: Arc<dyn Storage>) {
    tokio::spawn(async move {
        let mut suspects = BTreeSet::new();
        let mut tick = tokio::time::interval(INTERVAL);
        loop {
            tick.tick().await;
            if let Err(e) = repair_once(&allocator, &storage, &mut suspects).await {
                tracing::warn!(error = %e, "service allocation repair failed");
            }
        }
    });
}
