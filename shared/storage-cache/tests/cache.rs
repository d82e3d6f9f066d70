//! The watch cache's own behaviour over a real etcd: reads served from memory, watches
//! from the event buffer, too-old resourceVersions, fan-out, slow watchers, bookmarks.

mod common;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use common::*;
use futures_util::StreamExt;
use kas_storage::{Error, GetOptions, ListOptions, ObjectRef, Preconditions, Storage, WatchEvent};

#[tokio::test]
async fn lists_gets_and_watches_are_served_from_memory() {
    let env = start(|_| {}).await;
    let (lists, watches) = (
        env.storage.lists.load(Ordering::SeqCst),
        env.storage.watches.load(Ordering::SeqCst),
    );
    assert_eq!((lists, watches), (1, 1), "one list and one watch to start");

    // Written behind the cache's back: a consistent list still sees it.
    let b = put(&env.storage.etcd, "b", 1).await;
    let a = put(&env.cacher, "a", 2).await;
    let list = env.cacher.list("/configmaps", &all()).await.unwrap();
    assert_eq!(names(&list), ["a", "b"]);
    assert!(list.resource_version >= a.resource_version.max(b.resource_version));
    // The cached object is the one the watch delivered: same bytes, not re-encoded.
    assert_eq!(list.items[0].json, a.json);

    let mut any = all();
    any.resource_version = Some("0".into());
    let mut w = env
        .cacher
        .watch("/configmaps/ns", &from(None))
        .await
        .unwrap();
    assert!(matches!(next(&mut w).await, WatchEvent::Added(o) if o.key.ends_with("/a")));
    assert!(matches!(next(&mut w).await, WatchEvent::Added(o) if o.key.ends_with("/b")));
    let got = env
        .cacher
        .get(
            "/configmaps/ns/a",
            &GetOptions {
                resource_version: Some("0".into()),
                ignore_not_found: false,
            },
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(got.json, a.json);
    let paged = ListOptions {
        limit: Some(1),
        ..all()
    };
    let page = env.cacher.list("/configmaps", &paged).await.unwrap();
    assert_eq!(
        (names(&page), page.remaining_item_count),
        (vec!["a".to_owned()], Some(1))
    );
    assert_eq!(
        env.storage.lists.load(Ordering::SeqCst),
        1,
        "lists from cache"
    );
    assert_eq!(env.storage.watches.load(Ordering::SeqCst), 1);
    assert_eq!(env.storage.gets.load(Ordering::SeqCst), 0);

    // The second page continues in etcd at the first page's revision.
    let rest = ListOptions {
        continue_token: page.continue_token.clone(),
        ..paged
    };
    let page2 = env.cacher.list("/configmaps", &rest).await.unwrap();
    assert_eq!(names(&page2), ["b"]);
    assert_eq!(page2.resource_version, page.resource_version);
    assert_eq!(env.storage.lists.load(Ordering::SeqCst), 2);

    // Later writes show in "any" lists and live watch events.
    let c = put(&env.cacher, "c", 3).await;
    assert!(matches!(next(&mut w).await, WatchEvent::Added(o) if *o == *c));
    let list = env.cacher.list("/configmaps", &any).await.unwrap();
    assert_eq!(names(&list), ["a", "b", "c"]);
    let deleted = env
        .cacher
        .delete(
            "/configmaps/ns/a",
            &Preconditions::default(),
            &|_| Ok(()),
            None,
        )
        .await
        .unwrap();
    assert!(matches!(next(&mut w).await, WatchEvent::Deleted(o) if *o == *deleted));
    let list = env.cacher.list("/configmaps", &all()).await.unwrap();
    assert_eq!(names(&list), ["b", "c"]);
}

#[tokio::test]
async fn watch_from_an_old_revision_inside_the_buffer() {
    let env = start(|_| {}).await;
    let a = put(&env.cacher, "a", 1).await;
    let b = put(&env.cacher, "b", 1).await;
    let c = put(&env.cacher, "c", 1).await;
    let mut w = env
        .cacher
        .watch("/configmaps", &from(Some(a.resource_version)))
        .await
        .unwrap();
    assert!(matches!(next(&mut w).await, WatchEvent::Added(o) if *o == *b));
    assert!(matches!(next(&mut w).await, WatchEvent::Added(o) if *o == *c));
    let d = put(&env.cacher, "d", 1).await;
    assert!(matches!(next(&mut w).await, WatchEvent::Added(o) if *o == *d));
    assert_eq!(env.storage.watches.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn watch_from_before_the_buffer_is_expired() {
    let env = start(|c| {
        c.initial_capacity = 3;
        c.max_capacity = 3;
    })
    .await;
    let first = put(&env.cacher, "a", 1).await;
    let mut last = first.clone();
    for name in ["b", "c", "d", "e"] {
        last = put(&env.cacher, name, 1).await;
    }
    let list = env.cacher.list("/configmaps", &all()).await.unwrap();
    assert!(list.resource_version >= last.resource_version);
    let mut w = env
        .cacher
        .watch("/configmaps", &from(Some(first.resource_version)))
        .await
        .unwrap();
    match next(&mut w).await {
        WatchEvent::Error(Error::Expired { message, .. }) => assert_eq!(
            message,
            format!(
                "too old resource version: {} ({})",
                first.resource_version,
                first.resource_version + 1
            )
        ),
        e => panic!("expected Expired, got {e:?}"),
    }
    assert!(
        tokio::time::timeout(TIMEOUT, w.next())
            .await
            .unwrap()
            .is_none()
    );
    // The newest three events are still there.
    let mut w = env
        .cacher
        .watch("/configmaps", &from(Some(first.resource_version + 1)))
        .await
        .unwrap();
    assert!(matches!(next(&mut w).await, WatchEvent::Added(o) if o.key.ends_with("/c")));
}

#[tokio::test]
async fn a_thousand_watchers_all_get_the_event() {
    let env = start(|_| {}).await;
    let mut watchers = Vec::new();
    for _ in 0..1000 {
        watchers.push(env.cacher.watch("/configmaps", &from(None)).await.unwrap());
    }
    assert_eq!(env.cacher.watcher_count(), 1000);
    let a = put(&env.cacher, "a", 1).await;
    let mut shared: Option<ObjectRef> = None;
    for w in &mut watchers {
        let WatchEvent::Added(got) = next(w).await else {
            panic!("expected ADDED");
        };
        assert_eq!(*got, *a);
        // One decoded object, shared by every watcher.
        let first = shared.get_or_insert_with(|| got.clone());
        assert!(Arc::ptr_eq(first, &got));
    }
    assert_eq!(env.storage.watches.load(Ordering::SeqCst), 1);
    drop(watchers);
    put(&env.cacher, "b", 1).await;
    let list = env.cacher.list("/configmaps", &all()).await.unwrap();
    assert_eq!(list.items.len(), 2);
    assert_eq!(env.cacher.watcher_count(), 0, "dropped watches are removed");
}

#[tokio::test]
async fn a_slow_watcher_is_terminated_without_blocking_others() {
    let env = start(|c| c.watcher_buffer = 5).await;
    let mut slow = env.cacher.watch("/configmaps", &from(None)).await.unwrap();
    let mut fast = env.cacher.watch("/configmaps", &from(None)).await.unwrap();
    for i in 0..20 {
        put(&env.cacher, &format!("o{i:02}"), i).await;
        assert!(matches!(next(&mut fast).await, WatchEvent::Added(_)));
    }
    // The slow one gets what fitted in its buffer, then its watch ends.
    let mut got = 0;
    while let Some(event) = tokio::time::timeout(TIMEOUT, slow.next()).await.unwrap() {
        assert!(matches!(event, WatchEvent::Added(_)));
        got += 1;
    }
    assert_eq!(got, 5);
    assert_eq!(env.cacher.watcher_count(), 1);
}

#[tokio::test]
async fn bookmarks_when_asked() {
    let env = start(|c| c.bookmark_interval = Duration::from_millis(100)).await;
    let a = put(&env.cacher, "a", 1).await;
    let mut opts = from(Some(a.resource_version));
    opts.progress_notify = true;
    let mut w = env.cacher.watch("/configmaps", &opts).await.unwrap();
    match next(&mut w).await {
        WatchEvent::Bookmark(rv) => assert!(rv >= a.resource_version),
        e => panic!("expected a bookmark, got {e:?}"),
    }
    let mut plain = env
        .cacher
        .watch("/configmaps", &from(Some(a.resource_version)))
        .await
        .unwrap();
    let quiet = tokio::time::timeout(Duration::from_millis(400), plain.next()).await;
    assert!(quiet.is_err(), "no bookmarks unless asked: {quiet:?}");
}

/// Upstream's cacher sends a watch that allows bookmarks one 2 s before its deadline when
/// that comes before the next periodic one (a minute here), and none after.
#[tokio::test]
async fn a_bookmark_comes_before_the_deadline() {
    let env = start(|_| {}).await;
    let a = put(&env.cacher, "a", 1).await;
    let started = tokio::time::Instant::now();
    let deadline = started + Duration::from_secs(3);
    let mut opts = from(Some(a.resource_version));
    opts.progress_notify = true;
    opts.deadline = Some(deadline);
    let mut w = env.cacher.watch("/configmaps", &opts).await.unwrap();
    let mut plain = from(Some(a.resource_version));
    plain.deadline = Some(deadline);
    let mut plain = env.cacher.watch("/configmaps", &plain).await.unwrap();
    match next(&mut w).await {
        WatchEvent::Bookmark(rv) => assert!(rv >= a.resource_version),
        e => panic!("expected a bookmark, got {e:?}"),
    }
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    let after = deadline + Duration::from_millis(500);
    let more = tokio::time::timeout_at(after, w.next()).await;
    assert!(more.is_err(), "one bookmark: {more:?}");
    let none = tokio::time::timeout_at(after, plain.next()).await;
    assert!(none.is_err(), "none unless asked: {none:?}");
}

#[tokio::test]
async fn reads_newer_than_storage_fail_and_other_keys_go_through() {
    let env = start(|_| {}).await;
    let a = put(&env.cacher, "a", 1).await;
    let future = GetOptions {
        resource_version: Some((a.resource_version + 50).to_string()),
        ignore_not_found: false,
    };
    let r = env.cacher.get("/configmaps/ns/a", &future).await;
    assert!(
        matches!(r, Err(Error::TooLargeResourceVersion { .. })),
        "{r:?}"
    );
    let r = env
        .cacher
        .watch("/configmaps", &from(Some(a.resource_version + 50)))
        .await;
    assert!(matches!(r, Err(Error::TooLargeResourceVersion { .. })));

    env.cacher
        .create("/secrets/ns/s", object("s", 1), None)
        .await
        .unwrap();
    let lists = env.storage.lists.load(Ordering::SeqCst);
    let other = env.cacher.list("/secrets", &all()).await.unwrap();
    assert_eq!(names(&other), ["s"]);
    assert_eq!(env.storage.lists.load(Ordering::SeqCst), lists + 1);
}

#[tokio::test]
async fn a_failed_watch_relists_and_ends_the_watches() {
    let env = start(|_| {}).await;
    put(&env.cacher, "a", 1).await;
    let mut w = env.cacher.watch("/configmaps", &from(None)).await.unwrap();
    assert!(matches!(next(&mut w).await, WatchEvent::Added(_)));
    env.storage.cut.send_modify(|n| *n += 1);
    let end = tokio::time::timeout(TIMEOUT, w.next()).await.unwrap();
    assert!(end.is_none(), "watchers end on a re-list: {end:?}");
    let b = put(&env.storage.etcd, "b", 1).await;
    let list = env.cacher.list("/configmaps", &all()).await.unwrap();
    assert_eq!(names(&list), ["a", "b"]);
    assert!(list.resource_version >= b.resource_version);
    assert_eq!(
        env.storage.lists.load(Ordering::SeqCst),
        2,
        "re-listed once"
    );
    assert_eq!(env.storage.watches.load(Ordering::SeqCst), 2);
    let mut w = env
        .cacher
        .watch("/configmaps", &from(Some(b.resource_version)))
        .await
        .unwrap();
    let c = put(&env.cacher, "c", 1).await;
    assert!(matches!(next(&mut w).await, WatchEvent::Added(o) if *o == *c));
}
