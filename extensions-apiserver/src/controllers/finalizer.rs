//! Upstream's `CRDFinalizer`: a CRD marked for deletion that holds the cleanup finalizer
//! turns Terminating, its custom resources are deleted, and once none is left the
//! finalizer is removed, which deletes the CRD.

use kas_registry::rest::options::{ListOptions, WriteOptions};
use kas_registry::store::Store;
use serde_json::Value;

use crate::crd::CLEANUP_FINALIZER;
use crate::crd::conditions::{self, Condition};
use crate::serving::ServedStores;

pub async fn sync(store: &Store, crd: &Value, served: &ServedStores) {
    let marked = crd.pointer("/metadata/deletionTimestamp").is_some();
    let held = crd
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|f| f.iter().any(|f| f == CLEANUP_FINALIZER));
    if !marked || !held {
        return;
    }
    let name = kas_registry::meta::name(crd).to_owned();
    let in_progress = conditions::find(crd, conditions::TERMINATING)
        .and_then(|c| c.get("reason"))
        .and_then(Value::as_str)
        .is_some_and(|r| r == "InstanceDeletionInProgress");
    if !in_progress {
        let condition = Condition::new(
            conditions::TERMINATING,
            "True",
            "InstanceDeletionInProgress",
            "CustomResource deletion is in progress",
        );
        write_condition(store, crd, condition).await;
        return;
    }
    let instances = served
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get(&name)
        .cloned();
    if let Some(instances) = instances {
        match delete_instances(&instances).await {
            Ok(0) => {}
            Ok(_) => return,
            Err(message) => {
                let message = format!("could not issue all deletes: {message}");
                let condition = Condition::new(
                    conditions::TERMINATING,
                    "True",
                    "InstanceDeletionFailed",
                    &message,
                );
                write_condition(store, crd, condition).await;
                return;
            }
        }
    }
    let condition = Condition::new(
        conditions::TERMINATING,
        "False",
        "InstanceDeletionCompleted",
        "removed all instances",
    );
    write_condition(store, crd, condition).await;
    // The finalizer's removal deletes the CRD (the store deletes an object marked for
    // deletion that no finalizer holds any more). Read it again: the status write moved it.
    let Ok(current) = store
        .get("", &name, None)
        .await
        .and_then(|o| Ok(o.value()?))
    else {
        return;
    };
    let mut without = current;
    if let Some(list) = without
        .pointer_mut("/metadata/finalizers")
        .and_then(Value::as_array_mut)
    {
        list.retain(|f| f != CLEANUP_FINALIZER);
    }
    let opts = WriteOptions {
        manager: "kube-apiserver".into(),
        ..Default::default()
    };
    if let Err(e) = store.update("", &name, without, &opts).await {
        let status = e.to_status();
        if status.code != 409 && status.code != 404 {
            tracing::warn!(crd = %name, error = %status.message.unwrap_or_default(), "removing the cleanup finalizer");
        }
    }
}

/// Writes `crd` with `condition` set.
async fn write_condition(store: &Store, crd: &Value, condition: Condition<'_>) {
    let mut updated = crd.clone();
    conditions::set(&mut updated, condition);
    super::write_status(store, kas_registry::meta::name(crd), updated).await;
}

/// Deletes every instance; answers how many remain (held by their finalizers).
async fn delete_instances(store: &Store) -> Result<usize, String> {
    let opts = ListOptions::default();
    let list = || async {
        store
            .list("", &opts, Default::default())
            .await
            .map_err(|e| e.to_status().message.unwrap_or_default())
    };
    let listed = list().await?;
    if listed.items.is_empty() {
        return Ok(0);
    }
    let write = WriteOptions::default();
    for item in &listed.items {
        let obj = item.value().map_err(|e| e.to_string())?;
        let (ns, name) = (
            kas_registry::meta::namespace(&obj).to_owned(),
            kas_registry::meta::name(&obj).to_owned(),
        );
        match store.delete(&ns, &name, &Default::default(), &write).await {
            Ok(_) => {}
            Err(e) if e.to_status().code == 404 => {}
            Err(e) => return Err(e.to_status().message.unwrap_or_default()),
        }
    }
    Ok(list().await?.items.len())
}
