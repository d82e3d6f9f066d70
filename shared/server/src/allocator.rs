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

use std::time::Duration;

/// How often freed memory past mimalloc's purge delay is handed back.
const INTERVAL: Duration = Duration::from_secs(1);

/// Starts the purging thread. Call once, from a binary whose global allocator is
/// `mimalloc::MiMalloc`.
///
/// The workspace denies `unsafe`; this foreign call is its one exception.
#[allow(unsafe_code)]
pub fn spawn_purger() {
    let spawned = std::thread::Builder::new()
        .name("mimalloc-purge".into())
        .spawn(|| {
            loop {
                std::thread::sleep(INTERVAL);
                // SAFETY: `mi_collect` takes no pointers and may be called from any thread
                // at any time; `false` asks for the cheap collection (expired purges,
                // this thread's heap), not a forced one.
                unsafe { libmimalloc_sys::mi_collect(false) };
            }
        });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "cannot start the mimalloc purge thread");
    }
}
