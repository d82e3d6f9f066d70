//! kube-apiserver's identity (upstream's `APIServerIdentity`, on by default): the Lease
//! `apiserver-<hash>` in `kube-system` that each core-apiserver renews (the
//! `start-kube-apiserver-identity-lease-controller` hook, component-helpers' lease
//! controller with the heartbeat labels), and the collector of the Leases other
//! kube-apiservers left to expire (`start-kube-apiserver-identity-lease-garbage-collector`,
//! `apiserverleasegc`). Controllers count the API servers of a cluster by these Leases
//! (the storage-version and peer-proxy machinery, `kubectl get leases -l
//! apiserver.kubernetes.io/identity=kube-apiserver`).
//!
//! The ID is upstream's: a hash of the host's name and `kube-apiserver`. Replicas deployed
//! as pods have distinct host names and so distinct Leases; two core-apiservers on one host
//! share theirs, as two kube-apiservers on one host do upstream.

use std::time::{Duration, SystemTime};

use aws_lc_rs::digest::{SHA256, digest};
use kas_apimachinery::golang::time::{Time, format_rfc3339_micro, parse_rfc3339};
use kas_registry::rest::options::{ListOptions, WriteOptions};
use kas_registry::store::{Store, Written};
use kas_storage::Preconditions;
use serde_json::{Value, json};

/// Upstream's `IdentityLeaseDurationSeconds`.
pub const LEASE_DURATION_SECONDS: i64 = 3600;
/// How often the Lease is renewed (upstream's `IdentityLeaseRenewIntervalPeriod`, 10 s)
/// and the expired ones collected (`IdentityLeaseGCPeriod`, an hour).
#[derive(Clone, Copy, Debug)]
pub struct Periods {
    pub renew: Duration,
    pub collect: Duration,
}

impl Default for Periods {
    fn default() -> Self {
        Periods {
            renew: Duration::from_secs(10),
            collect: Duration::from_secs(3600),
        }
    }
}
/// Upstream's `IdentityLeaseComponentLabelKey`.
pub const COMPONENT_LABEL: &str = "apiserver.kubernetes.io/identity";
/// The identity of this role's Leases (upstream's `KubeAPIServer`).
pub const COMPONENT: &str = "kube-apiserver";
/// The namespace of the Leases (`metav1.NamespaceSystem`).
const NAMESPACE: &str = "kube-system";
/// The field manager of the loopback client that writes them.
const MANAGER: &str = "kube-apiserver";
/// The lease controller's `maxUpdateRetries`.
const MAX_UPDATE_RETRIES: usize = 5;

/// Upstream's `APIServerID`: `apiserver-` and the lower-case, unpadded base32 of the first
/// 16 bytes of the SHA-256 of the host name and the component, each with a 16-bit length
/// before it (cryptobyte's `AddUint16LengthPrefixed`).
pub fn apiserver_id(hostname: &str) -> String {
    let mut data = Vec::new();
    for part in [hostname.as_bytes(), COMPONENT.as_bytes()] {
        let len = u16::try_from(part.len()).unwrap_or(u16::MAX);
        data.extend_from_slice(&len.to_be_bytes());
        data.extend_from_slice(&part[..usize::from(len)]);
    }
    let hash = digest(&SHA256, &data);
    format!("apiserver-{}", base32_lower(&hash.as_ref()[..16]))
}

/// RFC 4648 base32 without padding, in lower case.
fn base32_lower(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
    let mut out = String::with_capacity(bytes.len().div_ceil(5) * 8);
    let (mut buffer, mut bits) = (0u32, 0u32);
    for &b in bytes {
        buffer = (buffer << 8) | u32::from(b);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(char::from(ALPHABET[((buffer >> bits) & 31) as usize]));
        }
    }
    if bits > 0 {
        out.push(char::from(ALPHABET[((buffer << (5 - bits)) & 31) as usize]));
    }
    out
}

/// The host's name, as Go's `os.Hostname` reads it.
pub fn hostname() -> Result<String, String> {
    nix::unistd::gethostname()
        .map_err(|e| format!("error getting hostname for apiserver identity: {e}"))?
        .into_string()
        .map_err(|_| "error getting hostname for apiserver identity: not UTF-8".to_owned())
}

/// Starts the lease controller and the collector on the role's `leases` store.
pub fn start(leases: Store, hostname: String, periods: Periods) {
    let id = apiserver_id(&hostname);
    let holder = format!("{id}_{}", uuid::Uuid::new_v4());
    let controller = LeaseController {
        leases: leases.clone(),
        name: id,
        holder,
        hostname,
        latest: None,
    };
    tokio::spawn(controller.run(periods.renew));
    tokio::spawn(collect_expired(leases, periods.collect));
}

/// component-helpers' lease controller for this role's identity Lease.
struct LeaseController {
    leases: Store,
    name: String,
    holder: String,
    hostname: String,
    /// The Lease as last written, which the next renewal updates without reading it.
    latest: Option<Value>,
}

impl LeaseController {
    async fn run(mut self, every: Duration) {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            self.sync().await;
        }
    }

    /// Upstream's `sync`: renew from the Lease last written; failing that, read (or create)
    /// it and renew that.
    async fn sync(&mut self) {
        if let Some(latest) = self.latest.take()
            && self.retry_update(latest).await.is_ok()
        {
            return;
        }
        match self.ensure().await {
            Ok((lease, created)) => {
                self.latest = Some(lease.clone());
                if !created && let Err(e) = self.retry_update(lease).await {
                    tracing::warn!(lease = %self.name, error = %e, "will retry updating the identity lease");
                }
            }
            Err(e) => {
                tracing::warn!(lease = %self.name, error = %e, "failed to ensure the identity lease")
            }
        }
    }

    /// The Lease as stored, created when missing (`ensureLease`).
    async fn ensure(&self) -> Result<(Value, bool), String> {
        if let Some(found) = self
            .leases
            .get_if_exists(NAMESPACE, &self.name, None)
            .await
            .map_err(message)?
        {
            return Ok((found.value().map_err(message)?, false));
        }
        let lease = self.renewed(json!({
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": NAMESPACE},
            "spec": {"holderIdentity": self.holder,
                "leaseDurationSeconds": LEASE_DURATION_SECONDS},
        }));
        let written = self
            .leases
            .create(NAMESPACE, lease, &write_options())
            .await
            .map_err(message)?;
        Ok((written_value(written)?, true))
    }

    /// `retryUpdateLease`: the renewal written over `base`, up to five times; a conflict
    /// reads the Lease again first.
    async fn retry_update(&mut self, mut base: Value) -> Result<(), String> {
        for _ in 0..MAX_UPDATE_RETRIES {
            let lease = self.renewed(base.clone());
            match self
                .leases
                .update(NAMESPACE, &self.name, lease, &write_options())
                .await
            {
                Ok((written, _)) => {
                    self.latest = Some(written_value(written)?);
                    return Ok(());
                }
                Err(e) if e.to_status().code == 409 => base = self.ensure().await?.0,
                Err(e) => {
                    tracing::warn!(lease = %self.name, error = %message(e), "failed to update the identity lease")
                }
            }
        }
        Err(format!(
            "failed {MAX_UPDATE_RETRIES} attempts to update lease"
        ))
    }

    /// `newLease` with the heartbeat labels: renewed now, labelled with the identity and the
    /// host name.
    fn renewed(&self, mut lease: Value) -> Value {
        let now = Time::from_system_time(SystemTime::now()).truncate_micros();
        lease["spec"]["renewTime"] = json!(format_rfc3339_micro(now));
        let meta = kas_registry::meta::metadata_mut(&mut lease);
        let labels = meta.entry("labels").or_insert_with(|| json!({}));
        labels[COMPONENT_LABEL] = json!(COMPONENT);
        labels["kubernetes.io/hostname"] = json!(self.hostname);
        lease
    }
}

/// Upstream's `apiserverleasegc`: every `period`, the kube-apiserver identity Leases whose
/// renewal is older than their duration are deleted, each read again first and deleted
/// only at the revision that was found expired.
async fn collect_expired(leases: Store, period: Duration) {
    let mut tick = tokio::time::interval(period);
    loop {
        tick.tick().await;
        let listed = match leases
            .list(NAMESPACE, &ListOptions::default(), Default::default())
            .await
        {
            Ok(listed) => listed,
            Err(e) => {
                tracing::warn!(error = %message(e), "listing identity leases");
                continue;
            }
        };
        for lease in listed.items.iter().filter_map(|o| o.value().ok()) {
            if lease.pointer(&format!(
                "/metadata/labels/{}",
                COMPONENT_LABEL.replace('/', "~1")
            )) != Some(&json!(COMPONENT))
                || !expired(&lease, SystemTime::now())
            {
                continue;
            }
            let name = kas_registry::meta::name(&lease).to_owned();
            if let Err(e) = delete_if_still_expired(&leases, &name).await {
                tracing::warn!(lease = %name, error = %e, "deleting an expired identity lease");
            }
        }
    }
}

/// The collector's check against a fresh read, then a delete at that revision.
async fn delete_if_still_expired(leases: &Store, name: &str) -> Result<(), String> {
    let Some(current) = leases
        .get_if_exists(NAMESPACE, name, None)
        .await
        .map_err(message)?
    else {
        return Ok(());
    };
    let current = current.value().map_err(message)?;
    if !expired(&current, SystemTime::now()) {
        return Ok(());
    }
    let preconditions = Preconditions {
        resource_version: Some(kas_registry::meta::str_field(&current, "resourceVersion").into()),
        ..Preconditions::default()
    };
    match leases
        .delete(NAMESPACE, name, &preconditions, &write_options())
        .await
    {
        Err(e) if !matches!(e.to_status().code, 404 | 409) => Err(message(e)),
        _ => Ok(()),
    }
}

/// `isLeaseExpired`: renewed longer ago than its duration, or never.
fn expired(lease: &Value, now: SystemTime) -> bool {
    let renewed = lease
        .pointer("/spec/renewTime")
        .and_then(Value::as_str)
        .and_then(parse_rfc3339);
    let duration = lease
        .pointer("/spec/leaseDurationSeconds")
        .and_then(Value::as_i64);
    let (Some(renewed), Some(duration)) = (renewed, duration) else {
        return true;
    };
    let now = Time::from_system_time(now);
    (now.seconds, now.nanos) > (renewed.seconds + duration, renewed.nanos)
}

/// The object a write stored (these writes are never dry runs).
fn written_value(written: Written) -> Result<Value, String> {
    match written {
        Written::Stored(obj) => obj.value().map_err(message),
        Written::DryRun(value) => Ok(value),
    }
}

fn write_options() -> WriteOptions {
    WriteOptions {
        manager: MANAGER.to_owned(),
        ..WriteOptions::default()
    }
}

fn message(e: impl Into<kas_registry::error::Error>) -> String {
    e.into().to_status().message.unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_upstreams() {
        // RFC 4648's test vectors, in lower case and unpadded.
        assert_eq!(base32_lower(b"foobar"), "mzxw6ytboi");
        assert_eq!(base32_lower(b"f"), "my");
        // The Lease kube-apiserver 1.33.12 wrote on a host named `vm`.
        assert_eq!(apiserver_id("vm"), "apiserver-wlv32tlttr4jl3gtroqexyxapa");
        assert_ne!(apiserver_id("vm"), apiserver_id("vm2"));
    }

    #[test]
    fn leases_expire_after_their_duration() {
        let lease = json!({"spec": {"renewTime": "2026-01-01T00:00:00.000000Z",
            "leaseDurationSeconds": 3600}});
        let at = |s: u64| SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600 + s);
        assert!(!expired(&lease, at(3600)));
        assert!(expired(&lease, at(3601)));
        assert!(expired(&json!({"spec": {}}), at(0)));
    }
}
