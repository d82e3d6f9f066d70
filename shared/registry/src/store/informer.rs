//! Every object of a resource, kept current from a list and a watch of its store (upstream's
//! informer over a lister), shared through a `watch` channel: readers take the latest map
//! and wake on each change. The CRDs of extensions-apiserver and the APIServices of the
//! aggregator are followed this way.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use kas_storage::WatchEvent;
use serde_json::Value;
use tokio::sync::watch;

use super::Store;
use crate::error::Result;

/// Objects by key: `name`, or `namespace/name` for a namespaced resource.
pub type Objects = Arc<BTreeMap<String, Value>>;

/// How long a follower waits before listing again after its watch failed.
const RETRY: Duration = Duration::from_millis(200);

/// An object's key in [`Objects`].
pub fn key(obj: &Value) -> String {
    let (namespace, name) = (crate::meta::namespace(obj), crate::meta::name(obj));
    match namespace {
        "" => name.to_owned(),
        ns => format!("{ns}/{name}"),
    }
}

impl Store {
    /// Starts following the resource; the receiver sees the first full list, then every
    /// change (events that arrive together are applied together). The task runs as long
    /// as a receiver does, listing again when its watch fails.
    pub fn informer(&self) -> watch::Receiver<Objects> {
        let (tx, rx) = watch::channel(Objects::default());
        let store = self.clone();
        tokio::spawn(async move {
            loop {
                if let Err(e) = follow(&store, &tx).await {
                    let status = e.to_status();
                    tracing::debug!(resource = store.descriptor.plural, error = %status.message.unwrap_or_default(), "following");
                }
                if tx.is_closed() {
                    return;
                }
                tokio::time::sleep(RETRY).await;
            }
        });
        rx
    }
}

async fn follow(store: &Store, tx: &watch::Sender<Objects>) -> Result<()> {
    let (listed, mut events) = store.list_then_watch().await?;
    let mut objects: BTreeMap<String, Value> = listed.into_iter().map(|o| (key(&o), o)).collect();
    tx.send_replace(Arc::new(objects.clone()));
    while let Some(event) = events.next().await {
        let mut changed = apply(&mut objects, event)?;
        // What else is already here goes out with it.
        while let Some(Some(event)) = futures_util::FutureExt::now_or_never(events.next()) {
            changed |= apply(&mut objects, event)?;
        }
        if changed {
            tx.send_replace(Arc::new(objects.clone()));
        }
        if tx.is_closed() {
            return Ok(());
        }
    }
    Ok(())
}

fn apply(objects: &mut BTreeMap<String, Value>, event: WatchEvent) -> Result<bool> {
    match event {
        WatchEvent::Added(o) | WatchEvent::Modified(o) => {
            let obj = o.value()?;
            objects.insert(key(&obj), obj);
            Ok(true)
        }
        WatchEvent::Deleted(o) => {
            let obj = o.value()?;
            objects.remove(&key(&obj));
            Ok(true)
        }
        WatchEvent::Error(e) => {
            Err(kas_apimachinery::Status::internal_error(&e.to_string()).into())
        }
        _ => Ok(false),
    }
}
