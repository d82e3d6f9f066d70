//! Node ports as upstream allocates them: one `RangeAllocation` object in etcd holding a
//! bitmap of the range (bit i set when port `base + i` is taken, the big-endian bytes of
//! a big integer, as upstream's `AllocationBitmap` snapshots it), changed with a
//! compare-and-swap, so replicas never hand out one port twice.

use std::sync::{Arc, Mutex};

use base64::Engine;
use kas_storage::{Preconditions, Storage};
use serde_json::{Value, json};

/// The key of the bitmap, upstream's `/registry/ranges/servicenodeports`.
pub const KEY: &str = "/ranges/servicenodeports";

/// Upstream's port allocator errors, with their texts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PortError {
    /// `ErrAllocated`.
    Allocated,
    /// `ErrNotInRange`.
    NotInRange(String),
    /// `ErrFull`.
    Full,
    Storage(String),
}

impl std::fmt::Display for PortError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PortError::Allocated => f.write_str("provided port is already allocated"),
            PortError::NotInRange(range) => write!(
                f,
                "provided port is not in the valid range. The range of valid ports is {range}"
            ),
            PortError::Full => f.write_str("range is full"),
            PortError::Storage(e) => f.write_str(e),
        }
    }
}

/// `--service-node-port-range`: `30000-32767`, or a single port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortRange {
    pub base: u32,
    pub size: u32,
}

impl PortRange {
    /// Upstream `ParsePortRange`: `a-b`, `a+n` or `a`.
    pub fn parse(text: &str) -> Result<PortRange, String> {
        let bad = || format!("unable to parse port range: {text}");
        let num = |s: &str| s.trim().parse::<u32>().map_err(|_| bad());
        let (base, max) = if let Some((a, b)) = text.split_once('-') {
            (num(a)?, num(b)?)
        } else if let Some((a, n)) = text.split_once('+') {
            let a = num(a)?;
            (a, a + num(n)?)
        } else {
            let a = num(text)?;
            (a, a)
        };
        if max < base || max > 65535 || base == 0 {
            return Err(bad());
        }
        Ok(PortRange {
            base,
            size: max - base + 1,
        })
    }

    pub fn contains(&self, port: u32) -> bool {
        port >= self.base && port < self.base + self.size
    }
}

impl std::fmt::Display for PortRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.base, self.base + self.size - 1)
    }
}

/// The bitmap as bytes, least significant bit first (`bits[i / 8] >> (i % 8)`).
fn decode(stored: Option<&Value>) -> Vec<u8> {
    let data = stored
        .and_then(|v| v.get("data"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let big_endian = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap_or_default();
    big_endian.into_iter().rev().collect()
}

fn encode(bits: &[u8]) -> String {
    let mut big_endian: Vec<u8> = bits.iter().rev().copied().collect();
    let zeros = big_endian.iter().take_while(|b| **b == 0).count();
    big_endian.drain(..zeros);
    base64::engine::general_purpose::STANDARD.encode(big_endian)
}

fn is_set(bits: &[u8], i: u32) -> bool {
    bits.get((i / 8) as usize)
        .is_some_and(|b| b & (1 << (i % 8)) != 0)
}

fn set(bits: &mut Vec<u8>, i: u32, on: bool) {
    let byte = (i / 8) as usize;
    if bits.len() <= byte {
        bits.resize(byte + 1, 0);
    }
    if on {
        bits[byte] |= 1 << (i % 8);
    } else {
        bits[byte] &= !(1 << (i % 8));
    }
}

/// What one allocation asks of the bitmap.
#[derive(Clone, Copy)]
enum Want {
    Port(u32),
    Next(u32),
    Release(u32),
}

#[derive(Clone)]
pub struct PortAllocator {
    pub range: PortRange,
    storage: Arc<dyn Storage>,
}

impl PortAllocator {
    pub fn new(range: PortRange, storage: Arc<dyn Storage>) -> PortAllocator {
        PortAllocator { range, storage }
    }

    /// One compare-and-swap change of the bitmap; answers the port it concerned.
    async fn change(&self, want: Want, dry_run: bool) -> Result<u32, PortError> {
        let range = self.range;
        let outcome: Mutex<Result<u32, PortError>> = Mutex::new(Err(PortError::Full));
        let try_update = |current: Option<&Value>| -> kas_storage::Result<Option<Value>> {
            let mut bits = decode(current);
            let result = match want {
                Want::Port(port) => {
                    let i = port - range.base;
                    if is_set(&bits, i) {
                        Err(PortError::Allocated)
                    } else {
                        set(&mut bits, i, true);
                        Ok(port)
                    }
                }
                Want::Next(start) => (0..range.size)
                    .map(|step| (start + step) % range.size)
                    .find(|i| !is_set(&bits, *i))
                    .map(|i| {
                        set(&mut bits, i, true);
                        range.base + i
                    })
                    .ok_or(PortError::Full),
                Want::Release(port) => {
                    set(&mut bits, port - range.base, false);
                    Ok(port)
                }
            };
            let ok = result.is_ok();
            if let Ok(mut o) = outcome.lock() {
                *o = result;
            }
            if !ok || dry_run {
                // Nothing to write: the answer is in `outcome`.
                return Err(kas_storage::Error::InvalidObj {
                    key: KEY.to_owned(),
                    message: "no change".to_owned(),
                });
            }
            Ok(Some(json!({
                "metadata": {"creationTimestamp": null},
                "range": range.to_string(),
                "data": encode(&bits),
            })))
        };
        let written = self
            .storage
            .guaranteed_update(
                KEY,
                &Preconditions::default(),
                true,
                &try_update,
                None,
                None,
            )
            .await;
        let result = outcome.into_inner().unwrap_or_else(|e| e.into_inner());
        match written {
            Ok(_) => result,
            Err(kas_storage::Error::InvalidObj { .. }) => result,
            Err(e) => Err(PortError::Storage(e.to_string())),
        }
    }

    /// The ports the bitmap holds.
    pub async fn taken(&self) -> Result<std::collections::BTreeSet<u32>, PortError> {
        let opts = kas_storage::GetOptions {
            resource_version: None,
            ignore_not_found: true,
        };
        let stored = self
            .storage
            .get(KEY, &opts)
            .await
            .map_err(|e| PortError::Storage(e.to_string()))?;
        let value = stored.and_then(|o| o.value().ok());
        let bits = decode(value.as_ref());
        Ok((0..self.range.size)
            .filter(|i| is_set(&bits, *i))
            .map(|i| self.range.base + i)
            .collect())
    }

    /// Takes `port`; `dry_run` only checks it is free.
    pub async fn allocate(&self, port: u32, dry_run: bool) -> Result<(), PortError> {
        if !self.range.contains(port) {
            return Err(PortError::NotInRange(self.range.to_string()));
        }
        self.change(Want::Port(port), dry_run).await.map(|_| ())
    }

    /// Takes a free port from a random point of the range.
    pub async fn allocate_next(&self, dry_run: bool) -> Result<u32, PortError> {
        let start = (uuid::Uuid::new_v4().as_u128() % u128::from(self.range.size)) as u32;
        self.change(Want::Next(start), dry_run).await
    }

    /// Gives `port` back.
    pub async fn release(&self, port: u32) {
        if !self.range.contains(port) {
            return;
        }
        if let Err(e) = self.change(Want::Release(port), false).await {
            tracing::warn!(port, error = %e, "releasing a node port failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_as_upstream_writes_them() {
        let r = PortRange::parse("30000-32767").expect("range");
        assert_eq!((r.base, r.size), (30000, 2768));
        assert_eq!(r.to_string(), "30000-32767");
        assert_eq!(PortRange::parse("30000+10").expect("range").size, 11);
        assert!(PortRange::parse("32767-30000").is_err());
        assert!(PortRange::parse("x").is_err());
        assert_eq!(
            PortError::NotInRange(r.to_string()).to_string(),
            "provided port is not in the valid range. The range of valid ports is 30000-32767"
        );
    }

    #[test]
    fn the_bitmap_is_a_big_endian_big_integer() {
        let mut bits = Vec::new();
        set(&mut bits, 0, true);
        set(&mut bits, 9, true);
        // 2^9 + 2^0 = 0x0201.
        assert_eq!(
            encode(&bits),
            base64::engine::general_purpose::STANDARD.encode([2u8, 1])
        );
        let back = decode(Some(&json!({"data": encode(&bits)})));
        assert!(is_set(&back, 0) && is_set(&back, 9) && !is_set(&back, 1));
        set(&mut bits, 9, false);
        assert_eq!(
            encode(&bits),
            base64::engine::general_purpose::STANDARD.encode([1u8])
        );
    }
}
