//! The client certificate chain of a connection, and a per-connection memo of what each
//! authenticator concluded from it.
//!
//! The chain is the same for every request on a connection, and checking it (an ECDSA or
//! RSA signature per link, and x509 parsing) dominated the cost of a proxied request, so
//! each authenticator verifies a connection's chain once and then reuses its answer. The
//! answer is recomputed after `MEMO_TTL`, so a certificate that expires during a
//! long-lived connection stops authenticating, as upstream's per-request check would.

use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustls_pki_types::CertificateDer;

const MEMO_TTL: Duration = Duration::from_secs(60);

/// The peer certificate chain (leaf first) of the connection a request arrived on; the
/// server's accept loop inserts it as a request extension.
#[derive(Clone)]
pub struct PeerCertificates {
    chain: Arc<Vec<CertificateDer<'static>>>,
    memo: Arc<Mutex<Vec<Memo>>>,
}

struct Memo {
    key: usize,
    at: Instant,
    value: Arc<dyn Any + Send + Sync>,
}

impl std::fmt::Debug for PeerCertificates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PeerCertificates")
            .field("certificates", &self.chain.len())
            .finish()
    }
}

impl PeerCertificates {
    pub fn new(chain: Vec<CertificateDer<'static>>) -> Self {
        PeerCertificates {
            chain: Arc::new(chain),
            memo: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// Leaf first.
    pub fn chain(&self) -> &[CertificateDer<'static>] {
        &self.chain
    }

    /// What `compute` returns for this connection and the authenticator `key`, computed at
    /// most once per `MEMO_TTL`.
    pub(crate) fn memoize<T: Clone + Send + Sync + 'static>(
        &self,
        key: usize,
        compute: impl FnOnce() -> T,
    ) -> T {
        let now = Instant::now();
        {
            let memo = self.memo.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(found) = memo
                .iter()
                .find(|m| m.key == key && now.duration_since(m.at) < MEMO_TTL)
                .and_then(|m| m.value.downcast_ref::<T>())
            {
                return found.clone();
            }
        }
        let value = compute();
        let mut memo = self.memo.lock().unwrap_or_else(|p| p.into_inner());
        memo.retain(|m| m.key != key);
        memo.push(Memo {
            key,
            at: now,
            value: Arc::new(value.clone()),
        });
        value
    }
}

/// A process-unique key for one authenticator's memo entries.
pub(crate) fn next_memo_key() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn computes_once_per_key() {
        let peer = PeerCertificates::new(Vec::new());
        let calls = AtomicUsize::new(0);
        let f = || {
            calls.fetch_add(1, Ordering::Relaxed);
            Ok::<u8, String>(7)
        };
        assert_eq!(peer.memoize(1, f), Ok(7));
        assert_eq!(peer.memoize(1, f), Ok(7));
        assert_eq!(calls.load(Ordering::Relaxed), 1);
        let other: Result<u8, String> = peer.memoize(2, || Err("no".into()));
        assert_eq!(other, Err("no".to_owned()));
        // A clone shares the memo: it is the same connection.
        assert_eq!(peer.clone().memoize(1, || Ok::<u8, String>(9)), Ok(7));
    }
}
