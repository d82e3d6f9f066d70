//! Consistent reads from the cache (upstream's ConsistentListFromCache) and streaming
//! lists (`sendInitialEvents`), over a real etcd: while a read waits, the cache asks etcd
//! for watch progress, so a consistent LIST need not go to etcd.

mod common;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::*;
use futures_util::StreamExt;
use kas_storage::{
    Error, ListOptions, REQUEST_WATCH_PROGRESS_DISABLED, Storage, WatchEvent, WatchOptions,
};
use kas_storage_etcd::WatchProgressSupport;

/// A write to another resource: etcd's revision moves, this cache hears nothing of it.
async fn elsewhere(env: &Env, name: &str) -> u64 {
    let s = env
        .storage
        .etcd
        .create(&format!("/secrets/ns/{name}"), object(name, 1), None)
        .await
        .expect("create");
    s.resource_version
}

fn streaming(rv: Option<u64>, bookmarks: bool) -> WatchOptions {
    WatchOptions {
        send_initial_events: Some(true),
        progress_notify: bookmarks,
        ..from(rv)
    }
}

fn lists(env: &Env) -> usize {
    env.storage.lists.load(Ordering::SeqCst)
}

#[tokio::test]
async fn consistent_lists_are_served_from_the_cache_once_it_caught_up() {
    let env = start(|_| {}).await;
    put(&env.cacher, "a", 1).await;
    let before = lists(&env);
    for round in 0..3 {
        let revision = elsewhere(&env, &format!("s{round}")).await;
        // Written behind the cache's back, just before the read: it must be in it.
        put(&env.storage.etcd, &format!("b{round}"), 1).await;
        let started = Instant::now();
        let list = env.cacher.list("/configmaps", &all()).await.unwrap();
        assert!(
            list.resource_version > revision,
            "at etcd's current revision"
        );
        assert_eq!(names(&list).len(), 2 + round);
        assert!(started.elapsed() < Duration::from_secs(2), "progress came");
    }
    // Only the secrets' writes moved etcd: the cache learns its revision from progress.
    let revision = elsewhere(&env, "last").await;
    let list = env.cacher.list("/configmaps", &all()).await.unwrap();
    assert!(list.resource_version >= revision);
    assert_eq!(lists(&env), before, "no consistent list went to etcd");
}

#[tokio::test]
async fn without_trusted_progress_consistent_reads_and_streaming_lists_are_upstreams() {
    let env = start_with(WatchProgressSupport::Disabled, |_| {}).await;
    put(&env.cacher, "a", 1).await;
    elsewhere(&env, "s").await;
    let before = lists(&env);
    let list = env.cacher.list("/configmaps", &all()).await.unwrap();
    assert_eq!(names(&list), ["a"]);
    assert_eq!(lists(&env), before + 1, "the consistent list went to etcd");

    let mut w = env
        .cacher
        .watch("/configmaps", &streaming(None, true))
        .await
        .unwrap();
    match next(&mut w).await {
        WatchEvent::Error(Error::Internal { message, .. }) => {
            assert_eq!(message, REQUEST_WATCH_PROGRESS_DISABLED)
        }
        e => panic!("expected upstream's refusal, got {e:?}"),
    }
    // Any read at "0" is still the cache's.
    let any = ListOptions {
        resource_version: Some("0".into()),
        ..all()
    };
    env.cacher.list("/configmaps", &any).await.unwrap();
    assert_eq!(lists(&env), before + 1);
}

#[tokio::test]
async fn a_streaming_list_is_the_consistent_state_then_a_bookmark_then_changes() {
    let env = start(|_| {}).await;
    let a = put(&env.cacher, "a", 1).await;
    let b = put(&env.storage.etcd, "b", 1).await;
    let revision = elsewhere(&env, "s").await;
    let (lists_before, watches_before) = (lists(&env), env.storage.watches.load(Ordering::SeqCst));
    let mut w = env
        .cacher
        .watch("/configmaps", &streaming(None, true))
        .await
        .unwrap();
    assert!(matches!(next(&mut w).await, WatchEvent::Added(o) if *o == *a));
    assert!(matches!(next(&mut w).await, WatchEvent::Added(o) if *o == *b));
    let end = match next(&mut w).await {
        WatchEvent::InitialEventsEnd(rv) => rv,
        e => panic!("expected the initial-events-end bookmark, got {e:?}"),
    };
    assert!(
        end >= revision,
        "the state is at etcd's revision of the request"
    );
    let c = put(&env.cacher, "c", 1).await;
    assert!(matches!(next(&mut w).await, WatchEvent::Added(o) if *o == *c));
    assert_eq!(lists(&env), lists_before, "served from the cache");
    assert_eq!(env.storage.watches.load(Ordering::SeqCst), watches_before);
}

#[tokio::test]
async fn streaming_lists_from_a_resource_version_and_without_initial_events() {
    let env = start(|_| {}).await;
    let a = put(&env.cacher, "a", 1).await;
    let b = put(&env.cacher, "b", 1).await;

    // Not older than a: the current state, then the bookmark at the cache's revision.
    let mut w = env
        .cacher
        .watch("/configmaps", &streaming(Some(a.resource_version), true))
        .await
        .unwrap();
    assert!(matches!(next(&mut w).await, WatchEvent::Added(o) if *o == *a));
    // The state is at least as new as `a`: `b` is in it when the cache has seen it, else
    // it follows the marker as a change.
    match next(&mut w).await {
        WatchEvent::Added(o) => {
            assert!(*o == *b);
            assert!(
                matches!(next(&mut w).await, WatchEvent::InitialEventsEnd(rv) if rv >= b.resource_version)
            );
        }
        WatchEvent::InitialEventsEnd(rv) => {
            assert!(rv >= a.resource_version);
            assert!(matches!(next(&mut w).await, WatchEvent::Added(o) if *o == *b));
        }
        other => panic!("unexpected {other:?}"),
    }

    // Without bookmarks: the state, and no marker at its end.
    let mut quiet = env
        .cacher
        .watch("/configmaps", &streaming(None, false))
        .await
        .unwrap();
    assert!(matches!(next(&mut quiet).await, WatchEvent::Added(_)));
    assert!(matches!(next(&mut quiet).await, WatchEvent::Added(_)));

    // sendInitialEvents=false from "now": only later changes.
    let now = WatchOptions {
        send_initial_events: Some(false),
        ..from(None)
    };
    let mut later = env.cacher.watch("/configmaps", &now).await.unwrap();
    let c = put(&env.cacher, "c", 1).await;
    assert!(matches!(next(&mut later).await, WatchEvent::Added(o) if *o == *c));
    assert!(matches!(next(&mut quiet).await, WatchEvent::Added(o) if *o == *c));
    assert!(matches!(next(&mut w).await, WatchEvent::Added(o) if *o == *c));
}

#[tokio::test]
async fn a_streaming_list_newer_than_etcd_fails_as_upstreams() {
    let env = start(|c| c.freshness_timeout = Duration::from_millis(300)).await;
    let a = put(&env.cacher, "a", 1).await;
    let mut w = env
        .cacher
        .watch(
            "/configmaps",
            &streaming(Some(a.resource_version + 100), true),
        )
        .await
        .unwrap();
    match next(&mut w).await {
        WatchEvent::Error(Error::TooLargeResourceVersion { requested, .. }) => {
            assert_eq!(requested, a.resource_version + 100)
        }
        e => panic!("expected too large, got {e:?}"),
    }
    assert!(w.next().await.is_none(), "the watch ends after its error");
}
