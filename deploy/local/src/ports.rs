//! Picking loopback ports for etcd and the replicas.
//!
//! A port is checked free and released before the child binds it. A port the kernel
//! hands out for `bind(127.0.0.1:0)` lies in the ephemeral range, which is also where
//! every outgoing connection (a test's client, a server's etcd connection) takes its
//! local port, so one of those could take it in between: CI saw etcd fail with
//! "address already in use" that way. Ports are therefore taken *below* the ephemeral
//! range, which the kernel never assigns on its own, from a cursor that starts at a
//! per-process offset and only moves forward, so two clusters started by one process
//! (parallel tests) never get the same port and two processes rarely try the same one.

use std::net::TcpListener;
use std::sync::Mutex;

use crate::error::{Error, Result};

/// The lowest port handed out; below it live well-known and registered services.
const FLOOR: u16 = 10_000;

/// Where the kernel's ephemeral range starts when /proc does not say.
const DEFAULT_EPHEMERAL_LOW: u16 = 32_768;

/// The next candidate of this process; `None` until first use.
static CURSOR: Mutex<Option<u16>> = Mutex::new(None);

/// `n` distinct loopback ports, each bindable at the moment of the call.
pub(crate) fn free_ports(n: usize) -> Result<Vec<u16>> {
    let range = Range::below_ephemeral();
    let mut cursor = CURSOR.lock().unwrap_or_else(|e| e.into_inner());
    let next = cursor.get_or_insert_with(|| range.floor + start_offset(range.span()));
    range.take(next, n)
}

/// Candidate ports `floor..ceiling`.
#[derive(Debug, Clone, Copy)]
struct Range {
    floor: u16,
    ceiling: u16,
}

impl Range {
    fn below_ephemeral() -> Range {
        Range {
            floor: FLOOR,
            ceiling: ephemeral_low().max(FLOOR + 1_000),
        }
    }

    fn span(self) -> u16 {
        self.ceiling - self.floor
    }

    /// The first `n` bindable ports from `next` on, wrapping at the ceiling; leaves
    /// `next` after the last one tried.
    fn take(self, next: &mut u16, n: usize) -> Result<Vec<u16>> {
        let mut ports = Vec::with_capacity(n);
        // Each candidate is tried at most once per call.
        for _ in 0..self.span() {
            if ports.len() == n {
                break;
            }
            let candidate = *next;
            *next = if candidate + 1 >= self.ceiling {
                self.floor
            } else {
                candidate + 1
            };
            if TcpListener::bind(("127.0.0.1", candidate)).is_ok() {
                ports.push(candidate);
            }
        }
        if ports.len() < n {
            return Err(Error::FreePort(std::io::Error::new(
                std::io::ErrorKind::AddrInUse,
                format!(
                    "only {} of {n} ports between {} and {} are free",
                    ports.len(),
                    self.floor,
                    self.ceiling
                ),
            )));
        }
        Ok(ports)
    }
}

/// The first port of the kernel's ephemeral range (`ip_local_port_range`).
fn ephemeral_low() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(DEFAULT_EPHEMERAL_LOW)
}

/// A per-process start within the span, so concurrent launchers start far apart.
fn start_offset(span: u16) -> u16 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mixed = u64::from(std::process::id()).wrapping_mul(2_654_435_761) ^ u64::from(nanos);
    u16::try_from(mixed % u64::from(span)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_distinct_across_calls_and_below_the_ephemeral_range() {
        let mut all = free_ports(20).unwrap();
        all.extend(free_ports(20).unwrap());
        let mut unique = all.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), 40, "{all:?}");
        let low = ephemeral_low();
        assert!(
            all.iter()
                .all(|&p| (FLOOR..low.max(FLOOR + 1_000)).contains(&p)),
            "{all:?}"
        );
    }

    #[test]
    fn a_port_in_use_is_skipped_and_the_cursor_wraps() {
        let held = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = held.local_addr().unwrap().port();
        // A private range ending just after the held port, so the cursor must wrap.
        let range = Range {
            floor: port - 2,
            ceiling: port + 1,
        };
        let mut next = port - 1;
        let got = range.take(&mut next, 2).unwrap_or_default();
        assert!(
            !got.contains(&port),
            "{got:?} includes the held port {port}"
        );
        assert!(
            range.take(&mut next, 3).is_err(),
            "only two of three are free"
        );
    }
}
