//! Writes with a TTL against a real etcd: they put the key under a lease, recent writes
//! share one (upstream's lease manager), an update with a TTL keeps the key expiring, a
//! plain update takes it out of its lease, and the key goes when the lease does.

mod common;

use std::time::{Duration, Instant};

use kas_storage::{Error, GetOptions, Preconditions, Storage};
use kas_storage_etcd::{Client, EtcdStore};
use serde_json::{Value, json};

/// The lease etcd has the key under (0: none).
async fn lease_of(client: &Client, key: &str) -> i64 {
    let resp = client.kv_client().get(key, None).await.unwrap();
    resp.kvs().first().map_or(0, |kv| kv.lease())
}

async fn remaining_ttl(client: &Client, lease: i64) -> i64 {
    let resp = client
        .lease_client()
        .time_to_live(lease, None)
        .await
        .unwrap();
    resp.ttl()
}

fn event(name: &str, count: i64) -> Value {
    json!({"metadata": {"name": name, "namespace": "ns"}, "count": count})
}

#[tokio::test]
async fn writes_with_a_ttl_share_a_lease_and_expire() {
    let (_etcd, _dir, client) = common::etcd().await;
    let store = EtcdStore::new(client.clone(), "/registry");

    store
        .create("/events/ns/a", event("a", 1), Some(3600))
        .await
        .unwrap();
    let lease = lease_of(&client, "/registry/events/ns/a").await;
    assert_ne!(lease, 0, "a create with a TTL puts the key under a lease");
    // Granted with upstream's reuse window on top: 5 % of an hour, capped at a minute.
    let ttl = remaining_ttl(&client, lease).await;
    assert!((3600..=3660).contains(&ttl), "{ttl}");

    store
        .create("/events/ns/b", event("b", 1), Some(3600))
        .await
        .unwrap();
    assert_eq!(lease_of(&client, "/registry/events/ns/b").await, lease);
    store
        .create("/events/ns/c", event("c", 1), None)
        .await
        .unwrap();
    assert_eq!(lease_of(&client, "/registry/events/ns/c").await, 0);

    let bump = |cur: Option<&Value>| {
        let count = cur.and_then(|v| v["count"].as_i64()).unwrap_or(0);
        Ok(Some(event("a", count + 1)))
    };
    let pre = Preconditions::default();
    store
        .guaranteed_update("/events/ns/a", &pre, false, &bump, None, Some(3600))
        .await
        .unwrap();
    assert_eq!(lease_of(&client, "/registry/events/ns/a").await, lease);
    store
        .guaranteed_update("/events/ns/a", &pre, false, &bump, None, None)
        .await
        .unwrap();
    assert_eq!(
        lease_of(&client, "/registry/events/ns/a").await,
        0,
        "a write without a TTL leaves the key without a lease, as upstream's does"
    );

    store
        .create("/events/ns/short", event("short", 1), Some(1))
        .await
        .unwrap();
    let short = lease_of(&client, "/registry/events/ns/short").await;
    assert!(
        short != 0 && short != lease,
        "a one-second TTL has no reuse window"
    );
    let deadline = Instant::now() + Duration::from_secs(15);
    let opts = GetOptions::default();
    loop {
        match store.get("/events/ns/short", &opts).await {
            Err(Error::NotFound { .. }) => break,
            other => assert!(Instant::now() < deadline, "still there: {other:?}"),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
