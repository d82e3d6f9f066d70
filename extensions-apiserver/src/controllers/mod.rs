//! The CRD controllers, after upstream's `pkg/controller`: naming (`NamesAccepted`,
//! `status.acceptedNames`), establishing (`Established`), API approval
//! (`KubernetesAPIApprovalPolicyConformant`) and the finalizer (a deleted CRD's objects go,
//! then the CRD). Every extensions replica runs them on the same CRD view; each write is
//! conditional on the resourceVersion read, so replicas converge: a conflict means another
//! one wrote, and the change it made wakes every replica again.

pub mod approval;
pub mod establishing;
pub mod finalizer;
pub mod naming;

use std::time::Duration;

use kas_registry::rest::options::WriteOptions;
use kas_registry::store::Store;
use serde_json::Value;
use tokio::sync::watch;

use crate::serving::ServedStores;
use kas_registry::store::informer::Objects as Crds;

/// Starts the controllers over the CRD view; they run as long as the process.
pub fn start(crd_store: Store, mut crds: watch::Receiver<Crds>, served: ServedStores) {
    tokio::spawn(async move {
        loop {
            let current = crds.borrow_and_update().clone();
            for crd in current.values() {
                reconcile(&crd_store, &current, crd, &served).await;
            }
            // A write that failed waits for the next change, or a retry after a pause.
            tokio::select! {
                changed = crds.changed() => if changed.is_err() { return },
                () = tokio::time::sleep(Duration::from_secs(5)) => {}
            }
        }
    });
}

async fn reconcile(store: &Store, all: &Crds, crd: &Value, served: &ServedStores) {
    let name = kas_registry::meta::name(crd).to_owned();
    if let Some(status) = naming::sync(crd, all) {
        write_status(store, &name, status).await;
        return;
    }
    if let Some(status) = establishing::sync(crd) {
        write_status(store, &name, status).await;
        return;
    }
    if let Some(status) = approval::sync(crd) {
        write_status(store, &name, status).await;
        return;
    }
    finalizer::sync(store, crd, served).await;
}

/// Writes `updated` (the CRD read, with a new status) through `status`, on the condition
/// that the CRD is still the one read (its resourceVersion).
pub(crate) async fn write_status(store: &Store, name: &str, updated: Value) {
    let opts = WriteOptions {
        manager: "kube-apiserver".into(),
        ..Default::default()
    };
    if let Err(e) = store
        .update_subresource("", name, "status", updated, &opts)
        .await
    {
        let status = e.to_status();
        if status.code != 409 && status.code != 404 {
            tracing::warn!(crd = %name, error = %status.message.unwrap_or_default(), "updating the status of a customresourcedefinition");
        }
    }
}
