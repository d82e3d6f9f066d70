//! Requests whose handling is CPU-heavy run off the runtime's workers.
//!
//! A write of a multi-megabyte object (a custom resource with 200,000 keys in its spec)
//! spends seconds of CPU in single polls: decoding, strict-field checks, managed fields,
//! validation, encoding. A worker stuck in such a poll also holds what waits in its queue
//! (and the task in its LIFO slot, which no other worker may steal): the role's readiness
//! heartbeats stopped, its peers ejected it, and every custom-resource request was a 503
//! for a minute. Such a request's future is polled inside `block_in_place`: the worker
//! hands its queue to a fresh thread for the length of each poll, so the rest of the role
//! goes on while the heavy request computes. Small requests, nearly all of them, are
//! polled as before.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::HeaderMap;

/// Declared bodies above this are handled off the workers: 256 KiB of JSON is some tens of
/// milliseconds of work, against microseconds for the hand-off.
pub(crate) const HEAVY_BODY_BYTES: u64 = 256 * 1024;

/// Whether a request's declared body makes its handling heavy.
pub(crate) fn is_heavy(headers: &HeaderMap) -> bool {
    headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .is_some_and(|len| len > HEAVY_BODY_BYTES)
}

/// `inner`, polled inside `block_in_place` on a multi-threaded runtime (elsewhere, as is).
pub(crate) struct Offloaded<F> {
    inner: Pin<Box<F>>,
}

impl<F> Offloaded<F> {
    pub(crate) fn new(inner: F) -> Self {
        Offloaded {
            inner: Box::pin(inner),
        }
    }
}

impl<F: Future> Future for Offloaded<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let inner = self.inner.as_mut();
        let multi_threaded = tokio::runtime::Handle::try_current()
            .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
        if multi_threaded {
            tokio::task::block_in_place(|| inner.poll(cx))
        } else {
            inner.poll(cx)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn declared_length_decides() {
        let mut headers = HeaderMap::new();
        assert!(!is_heavy(&headers));
        headers.insert(http::header::CONTENT_LENGTH, "262144".parse().unwrap());
        assert!(!is_heavy(&headers));
        headers.insert(http::header::CONTENT_LENGTH, "262145".parse().unwrap());
        assert!(is_heavy(&headers));
        headers.insert(http::header::CONTENT_LENGTH, "lots".parse().unwrap());
        assert!(!is_heavy(&headers));
    }

    /// The only worker, busy for a second inside one poll of an offloaded future, leaves
    /// the runtime free: a task spawned meanwhile (from the busy worker, whose LIFO slot
    /// no other thread may take) runs at once.
    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn a_busy_poll_does_not_hold_the_runtime() {
        let started = Instant::now();
        let (tx, rx) = tokio::sync::oneshot::channel();
        let heavy = tokio::spawn(Offloaded::new(async move {
            tokio::spawn(async move {
                let _ = tx.send(Instant::now());
            });
            std::thread::sleep(Duration::from_secs(1));
        }));
        let ran_at = rx.await.unwrap();
        heavy.await.unwrap();
        let waited = ran_at.duration_since(started);
        assert!(
            waited < Duration::from_millis(500),
            "the spawned task waited {waited:?} for the busy poll"
        );
    }
}
