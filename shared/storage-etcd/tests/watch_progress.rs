//! The etcd watcher's progress requests and streaming lists against a real etcd: progress
//! answers come back as bookmarks only where the store trusts them, and a watch with
//! `send_initial_events` is the state, the initial-events-end bookmark, then the changes.

mod common;

use std::time::Duration;

use futures_util::StreamExt;
use kas_storage::{Error, Storage, WatchEvent, WatchOptions, WatchProgressRequester, WatchStream};
use kas_storage_etcd::{EtcdStore, WatchProgressSupport, version_supports_progress_requests};
use serde_json::json;

const TIMEOUT: Duration = Duration::from_secs(10);

async fn put(s: &EtcdStore, key: &str) -> u64 {
    let name = key.rsplit('/').next().unwrap_or_default();
    s.create(key, json!({"metadata": {"name": name}}), None)
        .await
        .unwrap()
        .resource_version
}

async fn next(w: &mut WatchStream) -> WatchEvent {
    tokio::time::timeout(TIMEOUT, w.next())
        .await
        .expect("an event in time")
        .expect("the watch stays open")
}

fn progress_watch(requests: &WatchProgressRequester, rv: u64) -> WatchOptions {
    WatchOptions {
        resource_version: Some(rv.to_string()),
        recursive: true,
        progress_notify: true,
        progress_requests: Some(requests.clone()),
        ..Default::default()
    }
}

#[tokio::test]
async fn support_follows_upstreams_version_rule() {
    let (_etcd, _dir, client) = common::etcd().await;
    let version = client.clone().status().await.unwrap().version().to_owned();
    let detected = EtcdStore::new(client.clone(), "/registry");
    assert_eq!(
        detected.request_watch_progress_supported().await,
        version_supports_progress_requests(&version),
        "etcd {version}"
    );
    let forced = EtcdStore::new(client, "/registry")
        .with_watch_progress_support(WatchProgressSupport::Enabled);
    assert!(forced.request_watch_progress_supported().await);
}

#[tokio::test]
async fn a_progress_request_is_answered_with_a_bookmark_where_trusted() {
    let (_etcd, _dir, client) = common::etcd().await;
    let trusted = EtcdStore::new(client.clone(), "/registry")
        .with_watch_progress_support(WatchProgressSupport::Enabled);
    let start = put(&trusted, "/configmaps/ns/a").await;
    let requests = WatchProgressRequester::new();
    let mut w = trusted
        .watch("/configmaps", &progress_watch(&requests, start))
        .await
        .unwrap();
    let elsewhere = put(&trusted, "/secrets/ns/s").await;
    requests.request();
    match next(&mut w).await {
        WatchEvent::Bookmark(rv) => assert!(rv >= elsewhere, "{rv} < {elsewhere}"),
        e => panic!("expected a bookmark, got {e:?}"),
    }

    let untrusted = EtcdStore::new(client, "/registry")
        .with_watch_progress_support(WatchProgressSupport::Disabled);
    let requests = WatchProgressRequester::new();
    let mut w = untrusted
        .watch("/configmaps", &progress_watch(&requests, elsewhere))
        .await
        .unwrap();
    requests.request();
    let quiet = tokio::time::timeout(Duration::from_millis(500), w.next()).await;
    assert!(quiet.is_err(), "never asked: {quiet:?}");
}

#[tokio::test]
async fn streaming_lists_from_etcd() {
    let (_etcd, _dir, client) = common::etcd().await;
    let s = EtcdStore::new(client, "/registry");
    put(&s, "/configmaps/ns/a").await;
    put(&s, "/configmaps/ns/b").await;
    let last = put(&s, "/secrets/ns/s").await;
    let opts = WatchOptions {
        recursive: true,
        progress_notify: true,
        send_initial_events: Some(true),
        ..Default::default()
    };
    let mut w = s.watch("/configmaps", &opts).await.unwrap();
    assert!(matches!(next(&mut w).await, WatchEvent::Added(o) if o.key.ends_with("/a")));
    assert!(matches!(next(&mut w).await, WatchEvent::Added(o) if o.key.ends_with("/b")));
    assert!(matches!(next(&mut w).await, WatchEvent::InitialEventsEnd(rv) if rv >= last));
    put(&s, "/configmaps/ns/c").await;
    assert!(matches!(next(&mut w).await, WatchEvent::Added(o) if o.key.ends_with("/c")));

    // From "now": no initial events.
    let now = WatchOptions {
        send_initial_events: Some(false),
        ..opts.clone()
    };
    let mut w = s.watch("/configmaps", &now).await.unwrap();
    put(&s, "/configmaps/ns/d").await;
    assert!(matches!(next(&mut w).await, WatchEvent::Added(o) if o.key.ends_with("/d")));

    // Not older than a revision etcd does not have yet.
    let future = WatchOptions {
        resource_version: Some((last + 100).to_string()),
        ..opts
    };
    let mut w = s.watch("/configmaps", &future).await.unwrap();
    assert!(matches!(
        next(&mut w).await,
        WatchEvent::Error(Error::TooLargeResourceVersion { .. })
    ));
}
