//! Which namespaces carry `pod-security.kubernetes.io/` labels, kept from a watch of the
//! namespaces' cache. With upstream's default configuration (privileged everywhere) a
//! namespace without them allows everything, so a pod or workload update there needs no
//! evaluation and keeps the store's single compare-and-swap; upstream's plugin reads
//! namespaces from an informer, which is as fresh as this.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use futures_util::StreamExt;
use kas_registry::store::Store;
use kas_storage::WatchEvent;
use serde_json::Value;

const LABEL_PREFIX: &str = "pod-security.kubernetes.io/";

/// The set, and whether it has been filled once.
#[derive(Default)]
pub struct Labeled {
    names: RwLock<HashSet<String>>,
    synced: AtomicBool,
}

fn labeled(namespace: &Value) -> bool {
    namespace
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .is_some_and(|l| l.keys().any(|k| k.starts_with(LABEL_PREFIX)))
}

impl Labeled {
    /// Whether `namespace` may need evaluating: it is labeled, or the set is not known yet.
    pub fn may_restrict(&self, namespace: &str) -> bool {
        if !self.synced.load(Ordering::Acquire) {
            return true;
        }
        self.names
            .read()
            .map_or(true, |names| names.contains(namespace))
    }

    fn set(&self, namespace: &Value, present: bool) {
        let name = kas_registry::meta::name(namespace).to_owned();
        if let Ok(mut names) = self.names.write() {
            if present && labeled(namespace) {
                names.insert(name);
            } else {
                names.remove(&name);
            }
        }
    }

    /// Follows `namespaces` for as long as the process runs: a list, then a watch from
    /// its revision, again after any end or error.
    pub fn follow(self: &Arc<Self>, namespaces: Store) {
        let this = self.clone();
        tokio::spawn(async move {
            loop {
                if let Err(e) = this.sync(&namespaces).await {
                    tracing::debug!(error = %e.to_status().message.unwrap_or_default(), "following namespaces");
                }
                this.synced.store(false, Ordering::Release);
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
    }

    async fn sync(&self, namespaces: &Store) -> kas_registry::Result<()> {
        let (listed, mut events) = namespaces.list_then_watch().await?;
        let names = listed
            .iter()
            .filter(|ns| labeled(ns))
            .map(|ns| kas_registry::meta::name(ns).to_owned())
            .collect();
        if let Ok(mut current) = self.names.write() {
            *current = names;
        }
        self.synced.store(true, Ordering::Release);
        while let Some(event) = events.next().await {
            match event {
                WatchEvent::Added(o) | WatchEvent::Modified(o) => self.set(&o.value()?, true),
                WatchEvent::Deleted(o) => self.set(&o.value()?, false),
                WatchEvent::Error(_) => return Ok(()),
                _ => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_labeled_namespaces_restrict_once_known() {
        let set = Labeled::default();
        assert!(set.may_restrict("any"), "unknown until the first list");
        set.synced.store(true, Ordering::Release);
        let strict = json!({"metadata": {"name": "strict",
            "labels": {"pod-security.kubernetes.io/enforce": "restricted"}}});
        let plain = json!({"metadata": {"name": "plain", "labels": {"team": "a"}}});
        set.set(&strict, true);
        set.set(&plain, true);
        assert!(set.may_restrict("strict"));
        assert!(!set.may_restrict("plain"));
        set.set(&strict, false);
        assert!(!set.may_restrict("strict"));
    }
}
