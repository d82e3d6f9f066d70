//! Giving freed memory back to the OS while a role is idle.
//!
//! The roles allocate with mimalloc. It hands memory it no longer uses back to the OS
//! only after a delay (1 s), and only when some thread next enters the allocator's slow
//! path. A role that goes idle right after a large answer therefore kept its buffers: a
//! LIST of 112k configmaps left core at 500 MiB instead of 215 MiB until the next burst of
//! writes. Purging at once (`purge_delay=0`) fixed that but cost the proxied request
//! path ~15% of its throughput in decommits. Instead one thread asks mimalloc every
//! second to purge what has been free past the delay; upstream's Go runtime does the same
//! with its background scavenger.
//!
//! That thread reaches only memory already handed back to mimalloc's arenas. A page freed
//! by a runtime worker stays in that worker's heap until the worker itself collects, and
//! an idle worker never does: core kept 18 MiB of its bootstrap's garbage (27 MiB of heap
//! after its first start, 9 MiB after a restart that bootstraps nothing). So each worker
//! also collects its own heap when it parks, at most once per [`INTERVAL`]
//! ([`collect_parked_worker`], the runtime's `on_thread_park`).

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often freed memory past mimalloc's purge delay is handed back.
const INTERVAL: Duration = Duration::from_secs(1);

/// Whether the binary allocates with mimalloc (set by [`spawn_purger`]).
static PURGING: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// When this thread last collected its heap.
    static LAST_COLLECT: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Starts the purging thread, and lets parked runtime workers collect their heaps. Call
/// once, from a binary whose global allocator is `mimalloc::MiMalloc`.
pub fn spawn_purger() {
    PURGING.store(true, Ordering::Relaxed);
    let spawned = std::thread::Builder::new()
        .name("mimalloc-purge".into())
        .spawn(|| {
            loop {
                std::thread::sleep(INTERVAL);
                collect();
            }
        });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "cannot start the mimalloc purge thread");
    }
}

/// The runtime's `on_thread_park`: a worker going idle collects its own heap, at most once
/// per [`INTERVAL`] (a busy worker parks thousands of times a second).
pub fn collect_parked_worker() {
    if !PURGING.load(Ordering::Relaxed) {
        return;
    }
    let now = Instant::now();
    let due = LAST_COLLECT.with(|last| match last.get() {
        Some(at) if now.duration_since(at) < INTERVAL => false,
        _ => {
            last.set(Some(now));
            true
        }
    });
    if due {
        collect();
    }
}

/// The workspace denies `unsafe`; this foreign call is its one exception.
#[allow(unsafe_code)]
fn collect() {
    // SAFETY: `mi_collect` takes no pointers and may be called from any thread at any
    // time; `false` asks for the cheap collection (expired purges, this thread's heap),
    // not a forced one.
    unsafe { libmimalloc_sys::mi_collect(false) };
}
