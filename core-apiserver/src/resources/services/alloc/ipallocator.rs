//! Cluster IPs as upstream 1.33 allocates them (`MultiCIDRServiceAllocator`, GA): each
//! allocated IP is an `IPAddress` object (networking.k8s.io/v1) named by the IP, created
//! in etcd before the Service that holds it. Creating a key that exists fails, so two
//! core replicas can never hand out one IP; a failed Service write deletes what it
//! created. Dynamic allocation prefers the range's upper band, keeping the lower one for
//! IPs clients ask for (KEP-3070), as upstream's allocator does.

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

use kas_storage::{GetOptions, ListOptions, Storage};
use serde_json::{Value, json};

/// Where IPAddress objects live, as upstream stores the `ipaddresses` resource.
pub const PREFIX: &str = "/ipaddresses";

/// Upstream's allocator errors, with their texts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AllocError {
    /// `ErrAllocated`.
    Allocated,
    /// `ErrNotInRange`.
    NotInRange { ip: String, range: String },
    /// `ErrFull`.
    Full,
    /// Storage failed.
    Storage(String),
}

impl std::fmt::Display for AllocError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AllocError::Allocated => f.write_str("provided IP is already allocated"),
            AllocError::NotInRange { ip, range } => write!(
                f,
                "the provided IP ({ip}) is not in the valid range. The range of valid IPs is {range}"
            ),
            AllocError::Full => f.write_str("range is full"),
            AllocError::Storage(e) => f.write_str(e),
        }
    }
}

/// A service CIDR: its base address as a number, its prefix length, and its family.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cidr {
    base: u128,
    prefix: u32,
    v6: bool,
    text: String,
}

impl Cidr {
    /// Parses `10.0.0.0/24` or `fd00::/108`; the address is masked to the prefix.
    pub fn parse(text: &str) -> Result<Cidr, String> {
        let bad = || format!("invalid CIDR address: {text}");
        let (addr, len) = text.split_once('/').ok_or_else(bad)?;
        let prefix: u32 = len.parse().map_err(|_| bad())?;
        let ip: IpAddr = addr.parse().map_err(|_| bad())?;
        let (bits, value, v6) = match ip {
            IpAddr::V4(v4) => (32, u128::from(u32::from(v4)), false),
            IpAddr::V6(v6) => (128, u128::from(v6), true),
        };
        if prefix > bits {
            return Err(bad());
        }
        let host_bits = bits - prefix;
        let mask = if host_bits >= 128 {
            0
        } else {
            !((1u128 << host_bits) - 1)
        };
        let cidr = Cidr {
            base: value & mask,
            prefix,
            v6,
            text: String::new(),
        };
        Ok(Cidr {
            text: format!("{}/{prefix}", cidr.address(0)),
            ..cidr
        })
    }

    /// `IPv4` or `IPv6`, as `ipFamilies` names them.
    pub fn family(&self) -> &'static str {
        if self.v6 { "IPv6" } else { "IPv4" }
    }

    fn host_bits(&self) -> u32 {
        (if self.v6 { 128 } else { 32 }) - self.prefix
    }

    /// How many IPs can be handed out: the network address never is, nor an IPv4
    /// broadcast address; a huge IPv6 range is capped, as upstream's is.
    pub fn size(&self) -> u128 {
        let bits = self.host_bits().min(64);
        let total = 1u128 << bits;
        let reserved = if self.v6 { 1 } else { 2 };
        total.saturating_sub(reserved)
    }

    /// The `offset`th allocatable IP (0 is the first after the network address).
    fn address(&self, offset: u128) -> IpAddr {
        let n = self.base + offset;
        if self.v6 {
            IpAddr::V6(Ipv6Addr::from(n))
        } else {
            IpAddr::V4(Ipv4Addr::from(n as u32))
        }
    }

    fn nth(&self, offset: u128) -> IpAddr {
        self.address(offset + 1)
    }

    /// The offset of an allocatable `ip`, `None` outside the range.
    pub fn offset(&self, ip: IpAddr) -> Option<u128> {
        let value = match (ip, self.v6) {
            (IpAddr::V4(v4), false) => u128::from(u32::from(v4)),
            (IpAddr::V6(v6), true) => u128::from(v6),
            _ => return None,
        };
        let offset = value.checked_sub(self.base)?.checked_sub(1)?;
        (offset < self.size()).then_some(offset)
    }

    /// Upstream's lower band for static allocation: `min(max(16, size/16), 256)`.
    fn reserved_band(&self) -> u128 {
        (self.size() / 16).clamp(16, 256).min(self.size())
    }
}

impl std::fmt::Display for Cidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// The parent an IPAddress names.
#[derive(Clone, Debug)]
pub struct Parent<'a> {
    pub namespace: &'a str,
    pub name: &'a str,
}

/// One family's allocator over etcd.
#[derive(Clone)]
pub struct IpAllocator {
    pub cidr: Cidr,
    storage: Arc<dyn Storage>,
}

fn key(ip: &IpAddr) -> String {
    format!("{PREFIX}/{ip}")
}

impl IpAllocator {
    pub fn new(cidr: Cidr, storage: Arc<dyn Storage>) -> IpAllocator {
        IpAllocator { cidr, storage }
    }

    fn ip_address(&self, ip: &IpAddr, parent: &Parent<'_>) -> Value {
        json!({
            "metadata": {
                "name": ip.to_string(),
                "uid": uuid::Uuid::new_v4().to_string(),
                "creationTimestamp": kas_registry::meta::rfc3339(std::time::SystemTime::now()),
                "labels": {
                    "ipaddress.kubernetes.io/ip-family": self.cidr.family(),
                    "ipaddress.kubernetes.io/managed-by": "ipallocator.k8s.io",
                },
            },
            // The core group is `group` left out (`omitempty`), as upstream writes it.
            "spec": {"parentRef": {
                "resource": "services",
                "namespace": parent.namespace, "name": parent.name,
            }},
        })
    }

    /// Takes `ip` for `parent`; `dry_run` only checks it is free.
    pub async fn allocate(
        &self,
        ip: IpAddr,
        parent: &Parent<'_>,
        dry_run: bool,
    ) -> Result<(), AllocError> {
        if self.cidr.offset(ip).is_none() {
            return Err(AllocError::NotInRange {
                ip: ip.to_string(),
                range: self.cidr.to_string(),
            });
        }
        if dry_run {
            let opts = GetOptions {
                resource_version: None,
                ignore_not_found: true,
            };
            return match self.storage.get(&key(&ip), &opts).await {
                Ok(None) => Ok(()),
                Ok(Some(_)) => Err(AllocError::Allocated),
                Err(e) => Err(AllocError::Storage(e.to_string())),
            };
        }
        match self
            .storage
            .create(&key(&ip), self.ip_address(&ip, parent), None)
            .await
        {
            Ok(_) => Ok(()),
            Err(kas_storage::Error::KeyExists { .. }) => Err(AllocError::Allocated),
            Err(e) => Err(AllocError::Storage(e.to_string())),
        }
    }

    /// The IPs taken now, as the IPAddress objects say.
    async fn taken(&self) -> Result<HashSet<u128>, AllocError> {
        let opts = ListOptions {
            recursive: true,
            ..Default::default()
        };
        let listed = self
            .storage
            .list(PREFIX, &opts)
            .await
            .map_err(|e| AllocError::Storage(e.to_string()))?;
        Ok(listed
            .items
            .iter()
            .filter_map(|o| o.key.rsplit('/').next()?.parse::<IpAddr>().ok())
            .filter_map(|ip| self.cidr.offset(ip))
            .collect())
    }

    /// Takes a free IP for `parent`: a random one of the upper band, else of the lower;
    /// `dry_run` only finds one.
    pub async fn allocate_next(
        &self,
        parent: &Parent<'_>,
        dry_run: bool,
    ) -> Result<IpAddr, AllocError> {
        let size = self.cidr.size();
        if size == 0 {
            return Err(AllocError::Full);
        }
        let band = self.cidr.reserved_band();
        let mut taken = self.taken().await?;
        let random = uuid::Uuid::new_v4().as_u128();
        // The upper band from a random point, then the lower band from a random point.
        let mut bands = vec![(band, size), (0, band)];
        bands.retain(|(lo, hi)| hi > lo);
        for (lo, hi) in bands {
            let width = hi - lo;
            let start = random % width;
            for step in 0..width {
                let offset = lo + (start + step) % width;
                if taken.contains(&offset) {
                    continue;
                }
                let ip = self.cidr.nth(offset);
                match self.allocate(ip, parent, dry_run).await {
                    Ok(()) => return Ok(ip),
                    // Another writer took it since the list.
                    Err(AllocError::Allocated) => {
                        taken.insert(offset);
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        Err(AllocError::Full)
    }

    /// Gives `ip` back (its IPAddress deleted); one already gone is fine.
    pub async fn release(&self, ip: IpAddr) {
        let pre = kas_storage::Preconditions::default();
        match self
            .storage
            .delete(&key(&ip), &pre, &|_| Ok(()), None)
            .await
        {
            Ok(_) | Err(kas_storage::Error::NotFound { .. }) => {}
            Err(e) => tracing::warn!(%ip, error = %e, "releasing a cluster IP failed"),
        }
    }

    /// Whether `ip` belongs to this family's range.
    pub fn contains(&self, ip: IpAddr) -> bool {
        self.cidr.offset(ip).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_hold_what_upstream_hands_out() {
        let c = Cidr::parse("10.0.0.7/24").expect("cidr");
        assert_eq!(c.to_string(), "10.0.0.0/24");
        assert_eq!(c.size(), 254);
        assert_eq!(c.nth(0).to_string(), "10.0.0.1");
        assert_eq!(c.offset("10.0.0.1".parse().unwrap()), Some(0));
        assert_eq!(c.offset("10.0.0.0".parse().unwrap()), None);
        assert_eq!(c.offset("10.0.0.255".parse().unwrap()), None);
        assert_eq!(c.offset("10.0.1.1".parse().unwrap()), None);
        assert_eq!(c.reserved_band(), 16);
        let v6 = Cidr::parse("fd00::/108").expect("cidr");
        assert_eq!(v6.family(), "IPv6");
        assert_eq!(v6.size(), (1 << 20) - 1);
        assert_eq!(v6.offset("fd00::1".parse().unwrap()), Some(0));
        assert!(Cidr::parse("10.0.0.0/33").is_err());
        assert!(Cidr::parse("nope").is_err());
        assert_eq!(
            AllocError::NotInRange {
                ip: "10.1.0.1".into(),
                range: c.to_string()
            }
            .to_string(),
            "the provided IP (10.1.0.1) is not in the valid range. The range of valid IPs is 10.0.0.0/24"
        );
    }
}
