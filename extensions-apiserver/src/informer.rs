//! Every CustomResourceDefinition, kept current from a list and a watch of the CRD store's
//! cache (upstream's CRD informer), shared through a `watch` channel: the serving table
//! and the controllers read the latest map and wake on each change.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use kas_registry::store::Store;
use kas_storage::WatchEvent;
use serde_json::Value;
use tokio::sync::watch;

/// CRDs by name.
pub type Crds = Arc<BTreeMap<String, Value>>;

/// Starts following `store` (the CRDs'); the receiver sees the first full list, then every
/// change. The task runs as long as a receiver does.
pub fn start(store: Store) -> watch::Receiver<Crds> {
    let (tx, rx) = watch::channel(Crds::default());
    tokio::spawn(async move {
        loop {
            if let Err(e) = follow(&store, &tx).await {
                let status = e.to_status();
                tracing::debug!(error = %status.message.unwrap_or_default(), "following customresourcedefinitions");
            }
            if tx.is_closed() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    rx
}

async fn follow(store: &Store, tx: &watch::Sender<Crds>) -> kas_registry::Result<()> {
    let (listed, mut events) = store.list_then_watch().await?;
    let mut crds: BTreeMap<String, Value> = listed
        .into_iter()
        .map(|crd| (kas_registry::meta::name(&crd).to_owned(), crd))
        .collect();
    tx.send_replace(Arc::new(crds.clone()));
    while let Some(event) = events.next().await {
        let mut changed = apply(&mut crds, event)?;
        // What else is already here goes out with it.
        while let Some(Some(event)) = futures_util::FutureExt::now_or_never(events.next()) {
            changed |= apply(&mut crds, event)?;
        }
        if changed {
            tx.send_replace(Arc::new(crds.clone()));
        }
        if tx.is_closed() {
            return Ok(());
        }
    }
    Ok(())
}

fn apply(crds: &mut BTreeMap<String, Value>, event: WatchEvent) -> kas_registry::Result<bool> {
    match event {
        WatchEvent::Added(o) | WatchEvent::Modified(o) => {
            let crd = o.value()?;
            crds.insert(kas_registry::meta::name(&crd).to_owned(), crd);
            Ok(true)
        }
        WatchEvent::Deleted(o) => {
            let crd = o.value()?;
            crds.remove(kas_registry::meta::name(&crd));
            Ok(true)
        }
        WatchEvent::Error(e) => {
            Err(kas_apimachinery::Status::internal_error(&e.to_string()).into())
        }
        _ => Ok(false),
    }
}
