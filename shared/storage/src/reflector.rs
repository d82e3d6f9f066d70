//! A list then a watch of one key, kept up as upstream's reflector keeps an informer's
//! store: the list replaces what the target holds, the watch's events are applied from
//! the list's resourceVersion on, a watch that ends is resumed from the last revision seen,
//! and one that fails (410 Gone after a compaction, or any other error, after a pause) is
//! followed by a fresh list. It stops when the target is dropped.

use std::sync::Weak;
use std::time::Duration;

use futures_util::StreamExt;

use crate::{Error, ListOptions, ObjectRef, Storage, WatchEvent, WatchOptions};

/// How long to wait before listing again after a failure, or watching again after a
/// watch that ended with no event.
const RETRY: Duration = Duration::from_secs(1);

/// What the reflector does to its target: `replace` with a list's items (also telling
/// that the first list arrived), `apply` one watch event (an error skips the event and is
/// logged with `what`).
pub struct Reflect<'a, T> {
    pub what: &'a str,
    pub replace: &'a (dyn Fn(&T, &[ObjectRef]) + Send + Sync),
    pub apply: &'a (dyn Fn(&T, &WatchEvent) -> Result<(), String> + Send + Sync),
}

/// Follows `key` in `storage` into `target` until the target is dropped.
pub async fn run<T>(target: Weak<T>, storage: &dyn Storage, key: &str, reflect: Reflect<'_, T>) {
    while target.strong_count() > 0 {
        match list_and_watch(&target, storage, key, &reflect).await {
            Ok(()) => {}
            Err(Error::Expired { .. }) => {
                tracing::debug!(key, "watch expired; listing again");
            }
            Err(e) => {
                tracing::warn!(key, error = %e, "following {}", reflect.what);
                tokio::time::sleep(RETRY).await;
            }
        }
    }
}

async fn list_and_watch<T>(
    target: &Weak<T>,
    storage: &dyn Storage,
    key: &str,
    reflect: &Reflect<'_, T>,
) -> crate::Result<()> {
    let opts = ListOptions {
        recursive: true,
        ..ListOptions::default()
    };
    let list = storage.list(key, &opts).await?;
    let Some(strong) = target.upgrade() else {
        return Ok(());
    };
    (reflect.replace)(&strong, &list.items);
    drop(strong);
    let mut revision = list.resource_version;
    loop {
        let opts = WatchOptions {
            resource_version: Some(revision.to_string()),
            recursive: true,
            progress_notify: true,
            ..WatchOptions::default()
        };
        let mut events = storage.watch(key, &opts).await?;
        let mut seen = false;
        while let Some(event) = events.next().await {
            let Some(strong) = target.upgrade() else {
                return Ok(());
            };
            let at = match &event {
                WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o) => {
                    o.resource_version
                }
                WatchEvent::Bookmark(rv) | WatchEvent::InitialEventsEnd(rv) => *rv,
                WatchEvent::Error(_) => 0,
            };
            if let WatchEvent::Error(e) = event {
                return Err(e);
            }
            revision = revision.max(at);
            seen = true;
            if let Err(e) = (reflect.apply)(&strong, &event) {
                tracing::warn!(key, error = %e, "skipping an object of {}", reflect.what);
            }
        }
        if target.strong_count() == 0 {
            return Ok(());
        }
        if !seen {
            // A watch that ends at once must not turn into a busy loop.
            tokio::time::sleep(RETRY).await;
        }
    }
}
