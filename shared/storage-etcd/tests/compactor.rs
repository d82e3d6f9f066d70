//! The compactor against a real etcd: it compacts to the revision seen on the previous
//! tick, and two compactors share one clock through `compact_rev_key`.

mod common;

use kas_storage::{Error, ListOptions, ResourceVersionMatch, Storage};
use kas_storage_etcd::{Compactor, EtcdStore};
use serde_json::json;

#[tokio::test]
async fn compacts_to_the_previous_ticks_revision_once_per_cluster() {
    let (_etcd, _dir, client) = common::etcd().await;
    let store = EtcdStore::new(client.clone(), "/registry");
    let first = store
        .create("/pods/ns/a", json!({"metadata": {"name": "a"}}), None)
        .await
        .unwrap();

    let ours = Compactor::new(client.clone());
    let theirs = Compactor::new(client.clone());
    assert_eq!(
        ours.compact_now().await.unwrap(),
        None,
        "never on bootstrap"
    );
    // The other server lost the compare-and-swap: it adopts the clock, does not compact.
    assert_eq!(theirs.compact_now().await.unwrap(), None);

    let exact = |rv: u64| ListOptions {
        resource_version: Some(rv.to_string()),
        resource_version_match: Some(ResourceVersionMatch::Exact),
        recursive: true,
        ..Default::default()
    };
    assert!(
        store
            .list("/pods", &exact(first.resource_version))
            .await
            .is_ok()
    );
    let seen = ours
        .compact_now()
        .await
        .unwrap()
        .expect("second tick compacts");
    assert!(seen > first.resource_version);
    assert_eq!(ours.compacted_revision(), seen);
    let r = store.list("/pods", &exact(first.resource_version)).await;
    assert!(matches!(r, Err(Error::Expired { .. })), "{r:?}");
    // Its clock is now behind: it adopts ours and learns the compacted revision.
    assert_eq!(theirs.compact_now().await.unwrap(), None);
    assert_eq!(theirs.compacted_revision(), seen);
}
