//! Upstream's `storageLeases`: one key per advertised address under `/masterleases/`,
//! holding an Endpoints object with that address, written with a TTL so that a replica
//! that stops refreshing it drops out.

use std::sync::Arc;

use kas_storage::{ListOptions, Preconditions, Storage};
use serde_json::{Value, json};

/// The storage resource of the leases (`/registry/masterleases/<ip>`).
pub const RESOURCE: &str = "masterleases";
const BASE_KEY: &str = "/masterleases";

pub struct Leases {
    pub storage: Arc<dyn Storage>,
    pub ttl_seconds: i64,
}

impl Leases {
    /// Upstream's `UpdateLease`: the address set, the TTL refreshed (the generation is
    /// bumped so that the write happens).
    pub async fn update(&self, ip: &str) -> Result<(), String> {
        let key = format!("{BASE_KEY}/{ip}");
        let try_update = |current: Option<&Value>| -> kas_storage::Result<Option<Value>> {
            let generation = current
                .and_then(|c| c.pointer("/metadata/generation"))
                .and_then(Value::as_i64)
                .unwrap_or(0);
            Ok(Some(json!({
                "metadata": {"name": ip, "generation": generation + 1, "creationTimestamp": null},
                "subsets": [{"addresses": [{"ip": ip}]}],
            })))
        };
        self.storage
            .guaranteed_update(
                &key,
                &Preconditions::default(),
                true,
                &try_update,
                None,
                Some(self.ttl_seconds),
            )
            .await
            .map(|_| ())
            .map_err(|e| format!("updating the lease of {ip}: {e}"))
    }

    /// Upstream's `ListLeases`: the addresses of the live leases, in key order.
    pub async fn list(&self) -> Result<Vec<String>, String> {
        let opts = ListOptions {
            recursive: true,
            ..Default::default()
        };
        let listed = self
            .storage
            .list(BASE_KEY, &opts)
            .await
            .map_err(|e| format!("listing the kubernetes endpoint leases: {e}"))?;
        let mut ips = Vec::new();
        for item in &listed.items {
            let value = item.value().map_err(|e| e.to_string())?;
            if let Some(ip) = value
                .pointer("/subsets/0/addresses/0/ip")
                .and_then(Value::as_str)
                .filter(|ip| !ip.is_empty())
            {
                ips.push(ip.to_owned());
            }
        }
        Ok(ips)
    }

    /// Upstream's `RemoveLease`; a lease already gone is fine.
    pub async fn remove(&self, ip: &str) -> Result<(), String> {
        let key = format!("{BASE_KEY}/{ip}");
        let validate = |_: &kas_storage::ObjectRef| -> kas_storage::Result<()> { Ok(()) };
        match self
            .storage
            .delete(&key, &Preconditions::default(), &validate, None)
            .await
        {
            Ok(_) | Err(kas_storage::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(format!("removing the lease of {ip}: {e}")),
        }
    }
}
