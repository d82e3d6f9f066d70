//! The conformance suite every [`Storage`] implementation runs (modelled on upstream's
//! storage/testing/store_tests.go and watcher_tests.go). An implementation's test crate
//! provides a [`Harness`] and calls each `test_*` function from its own `#[tokio::test]`.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures_util::StreamExt;
use serde_json::{Value, json};

use crate::{
    Error, GetOptions, ListOptions, ListResult, ObjectRef, Preconditions, Predicate,
    ResourceVersionMatch, Storage, WatchEvent, WatchOptions, WatchStream,
};

/// What the suite needs from an implementation.
#[async_trait]
pub trait Harness: Send + Sync {
    /// A store whose keys do not collide with those of other tests.
    async fn store(&self) -> Arc<dyn Storage>;
    /// Compacts the backend's history up to `revision`.
    async fn compact(&self, revision: u64);
}

/// How long a watch event may take to arrive.
const EVENT_TIMEOUT: Duration = Duration::from_secs(10);

/// The attributes the suite's predicates select on: the defaults plus `spec.v`. A store
/// that keeps attributes (the watch cache) must be built with this function.
pub fn attrs() -> crate::AttrsFunc {
    Arc::new(|obj: &Value| {
        let mut fields = std::collections::BTreeMap::new();
        fields.insert(
            "metadata.name".to_owned(),
            obj["metadata"]["name"].as_str().unwrap_or("").to_owned(),
        );
        fields.insert("spec.v".to_owned(), obj["spec"]["v"].to_string());
        crate::Attrs {
            labels: crate::attrs::object_labels(obj),
            fields: fields.into(),
        }
    })
}

fn spec_v(attrs: &crate::Attrs) -> i64 {
    use kas_apimachinery::labels::Labels;
    attrs
        .fields
        .get("spec.v")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// A test object: `metadata.name`, a uid derived from it, and `spec.v`.
pub fn object(name: &str, v: i64) -> Value {
    json!({"metadata": {"name": name, "uid": format!("uid-{name}")}, "spec": {"v": v}})
}

fn v_of(obj: &ObjectRef) -> i64 {
    obj.value().expect("decodes")["spec"]["v"]
        .as_i64()
        .unwrap_or(-1)
}

fn names(list: &ListResult) -> Vec<String> {
    list.items
        .iter()
        .map(|o| {
            o.value().expect("decodes")["metadata"]["name"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect()
}

fn no_validation(_: &ObjectRef) -> crate::Result<()> {
    Ok(())
}

async fn put(s: &dyn Storage, key: &str, v: i64) -> ObjectRef {
    let name = key.rsplit('/').next().unwrap_or(key);
    s.create(key, object(name, v), None).await.expect("create")
}

async fn set_v(s: &dyn Storage, key: &str, v: i64) -> ObjectRef {
    let update = move |cur: Option<&Value>| {
        let mut value = cur.expect("exists").clone();
        value["spec"]["v"] = json!(v);
        Ok(Some(value))
    };
    s.guaranteed_update(key, &Preconditions::default(), false, &update, None, None)
        .await
        .expect("update")
}

fn list_opts(rv: Option<&str>, m: Option<ResourceVersionMatch>) -> ListOptions {
    ListOptions {
        resource_version: rv.map(str::to_string),
        resource_version_match: m,
        recursive: true,
        ..Default::default()
    }
}

async fn next_event(w: &mut WatchStream) -> WatchEvent {
    tokio::time::timeout(EVENT_TIMEOUT, w.next())
        .await
        .expect("a watch event in time")
        .expect("the watch to stay open")
}

async fn assert_no_event(w: &mut WatchStream) {
    if let Ok(event) = tokio::time::timeout(Duration::from_millis(500), w.next()).await {
        panic!("unexpected watch event {event:?}");
    }
}

/// Create: the resourceVersion is the write's revision; a second create is KeyExists; a
/// value that carries a resourceVersion is refused; a TTL'd key exists until it expires.
pub async fn test_create(h: &dyn Harness) {
    let s = h.store().await;
    let created = put(&*s, "/pods/ns/a", 1).await;
    assert!(created.resource_version > 0);
    assert_eq!(
        created.value().expect("decodes")["metadata"]["resourceVersion"],
        created.resource_version.to_string()
    );
    let got = s.get("/pods/ns/a", &GetOptions::default()).await.unwrap();
    assert_eq!(got.as_deref(), Some(&*created));
    assert_eq!(
        s.current_revision().await.unwrap(),
        created.resource_version
    );

    let again = s.create("/pods/ns/a", object("a", 2), None).await;
    assert!(matches!(again, Err(Error::KeyExists { ref key }) if key == "/pods/ns/a"));

    let mut with_rv = object("b", 1);
    with_rv["metadata"]["resourceVersion"] = json!("5");
    assert!(s.create("/pods/ns/b", with_rv, None).await.is_err());

    let ttl = s.create("/pods/ns/t", object("t", 1), Some(60)).await;
    assert!(ttl.is_ok(), "{ttl:?}");
}

/// Get: NotFound, ignore_not_found, and the minimum-resourceVersion rule.
pub async fn test_get(h: &dyn Harness) {
    let s = h.store().await;
    let missing = s.get("/pods/ns/x", &GetOptions::default()).await;
    assert!(matches!(missing, Err(Error::NotFound { ref key }) if key == "/pods/ns/x"));
    let ignored = GetOptions {
        ignore_not_found: true,
        ..Default::default()
    };
    assert!(s.get("/pods/ns/x", &ignored).await.unwrap().is_none());

    let a = put(&*s, "/pods/ns/a", 1).await;
    let b = set_v(&*s, "/pods/ns/a", 2).await;
    let at = |rv: &str| GetOptions {
        resource_version: Some(rv.into()),
        ignore_not_found: false,
    };
    // "0" is any version and NotOlderThan(a) anything from a on: a cache may answer with
    // either state. NotOlderThan(b) must be b.
    for (rv, oldest) in [
        ("0".to_owned(), a.resource_version),
        (a.resource_version.to_string(), a.resource_version),
        (b.resource_version.to_string(), b.resource_version),
    ] {
        let got = s.get("/pods/ns/a", &at(&rv)).await.unwrap().unwrap();
        assert!(
            got.resource_version >= oldest && got.resource_version <= b.resource_version,
            "rv {rv}: got {}",
            got.resource_version
        );
        let expected_v = if got.resource_version == b.resource_version {
            2
        } else {
            1
        };
        assert_eq!(v_of(&got), expected_v, "rv {rv}");
    }
    let future = (b.resource_version + 100).to_string();
    assert!(matches!(
        s.get("/pods/ns/a", &at(&future)).await,
        Err(Error::TooLargeResourceVersion { requested, .. }) if requested == b.resource_version + 100
    ));
    assert!(matches!(
        s.get("/pods/ns/a", &at("abc")).await,
        Err(Error::BadRequest(_))
    ));
}

/// List: recursive lists see only their own collection; non-recursive lists one key.
pub async fn test_list_prefix_isolation(h: &dyn Harness) {
    let s = h.store().await;
    put(&*s, "/pods/a/x", 1).await;
    put(&*s, "/pods/a/y", 1).await;
    put(&*s, "/pods/ab/z", 1).await;
    let list = s.list("/pods/a", &list_opts(None, None)).await.unwrap();
    assert_eq!(names(&list), ["x", "y"]);
    assert_eq!(list.resource_version, s.current_revision().await.unwrap());
    assert!(list.continue_token.is_none() && list.remaining_item_count.is_none());

    let single = ListOptions::default();
    assert_eq!(names(&s.list("/pods/a/x", &single).await.unwrap()), ["x"]);
    assert!(s.list("/pods/a/q", &single).await.unwrap().items.is_empty());
    assert_eq!(s.count("/pods/a").await.unwrap(), 2);
    assert_eq!(s.count("/pods").await.unwrap(), 3);
}

/// List resourceVersion semantics: unset, "0", NotOlderThan, Exact and the legacy
/// limit rule.
pub async fn test_list_resource_version(h: &dyn Harness) {
    let s = h.store().await;
    let first = put(&*s, "/pods/ns/a", 1).await;
    let second = set_v(&*s, "/pods/ns/a", 2).await;
    let (rv1, rv2) = (first.resource_version, second.resource_version);
    let r1 = rv1.to_string();

    let latest = s.list("/pods", &list_opts(None, None)).await.unwrap();
    assert_eq!(latest.items[0].resource_version, rv2);
    assert!(latest.resource_version >= rv2);
    // "0" is any version, NotOlderThan(rv1) anything from rv1 on: a cache may still be
    // at the first state; never older.
    let any = s.list("/pods", &list_opts(Some("0"), None)).await.unwrap();
    assert!([1, 2].contains(&v_of(&any.items[0])));
    let nolder = list_opts(Some(&r1), Some(ResourceVersionMatch::NotOlderThan));
    let nolder = s.list("/pods", &nolder).await.unwrap();
    assert!(nolder.resource_version >= rv1);
    assert!([1, 2].contains(&v_of(&nolder.items[0])));

    let exact = s
        .list(
            "/pods",
            &list_opts(Some(&r1), Some(ResourceVersionMatch::Exact)),
        )
        .await
        .unwrap();
    assert_eq!(exact.resource_version, rv1);
    assert_eq!(exact.items[0].resource_version, rv1);
    assert_eq!(v_of(&exact.items[0]), 1);

    let mut legacy = list_opts(Some(&r1), None);
    legacy.limit = Some(10);
    let legacy = s.list("/pods", &legacy).await.unwrap();
    assert_eq!((legacy.resource_version, v_of(&legacy.items[0])), (rv1, 1));

    let future = (rv2 + 100).to_string();
    for m in [
        None,
        Some(ResourceVersionMatch::NotOlderThan),
        Some(ResourceVersionMatch::Exact),
    ] {
        let r = s.list("/pods", &list_opts(Some(&future), m)).await;
        assert!(
            matches!(r, Err(Error::TooLargeResourceVersion { .. })),
            "{m:?}: {r:?}"
        );
    }
    let bad = s.list("/pods", &list_opts(Some("x"), None)).await;
    assert!(matches!(bad, Err(Error::BadRequest(_))));
}

/// Paging: pages of `limit` items at the first page's revision, remaining counts, and a
/// predicate that filters (no remaining count, pages still full).
pub async fn test_list_paging(h: &dyn Harness) {
    let s = h.store().await;
    for (i, name) in ["a", "b", "c", "d", "e"].iter().enumerate() {
        put(&*s, &format!("/pods/ns/{name}"), i as i64).await;
    }
    let mut opts = list_opts(None, None);
    opts.limit = Some(2);
    let page1 = s.list("/pods", &opts).await.unwrap();
    assert_eq!(names(&page1), ["a", "b"]);
    assert_eq!(page1.remaining_item_count, Some(3));
    // A write after the first page is not seen by later pages.
    put(&*s, "/pods/ns/bb", 9).await;
    opts.continue_token = page1.continue_token.clone();
    assert!(opts.continue_token.is_some());
    let page2 = s.list("/pods", &opts).await.unwrap();
    assert_eq!(names(&page2), ["c", "d"]);
    assert_eq!(page2.resource_version, page1.resource_version);
    assert_eq!(page2.remaining_item_count, Some(1));
    opts.continue_token = page2.continue_token.clone();
    let page3 = s.list("/pods", &opts).await.unwrap();
    assert_eq!(names(&page3), ["e"]);
    assert!(page3.continue_token.is_none() && page3.remaining_item_count.is_none());

    let mut with_rv = opts.clone();
    with_rv.resource_version = Some(page1.resource_version.to_string());
    with_rv.continue_token = page1.continue_token.clone();
    assert!(matches!(
        s.list("/pods", &with_rv).await,
        Err(Error::BadRequest(_))
    ));
    with_rv.continue_token = Some("not-a-token".into());
    with_rv.resource_version = None;
    assert!(matches!(
        s.list("/pods", &with_rv).await,
        Err(Error::BadRequest(_))
    ));

    // Odd v only: a, c, e (v 0, 2, 4 are even) → b, d, bb.
    let mut filtered = list_opts(None, None);
    filtered.limit = Some(2);
    filtered.predicate = Predicate::new(attrs(), |a| spec_v(a) % 2 == 1);
    let f1 = s.list("/pods", &filtered).await.unwrap();
    assert_eq!(names(&f1), ["b", "bb"]);
    assert_eq!(f1.remaining_item_count, None);
    filtered.continue_token = f1.continue_token.clone();
    let f2 = s.list("/pods", &filtered).await.unwrap();
    assert_eq!(names(&f2), ["d"]);
}

/// A continue token whose revision was compacted is Expired, with a token that continues
/// (inconsistently) at the latest revision; an Exact list at a compacted revision is
/// Expired too.
pub async fn test_list_continue_expired(h: &dyn Harness) {
    let s = h.store().await;
    for name in ["a", "b", "c"] {
        put(&*s, &format!("/pods/ns/{name}"), 1).await;
    }
    let mut opts = list_opts(None, None);
    opts.limit = Some(1);
    let page1 = s.list("/pods", &opts).await.unwrap();
    put(&*s, "/pods/ns/d", 1).await;
    let now = s.current_revision().await.unwrap();
    h.compact(now).await;

    opts.continue_token = page1.continue_token.clone();
    let expired = s.list("/pods", &opts).await;
    let Err(Error::Expired {
        continue_token: Some(token),
        ..
    }) = expired
    else {
        panic!("expected Expired with a continue token, got {expired:?}");
    };
    opts.continue_token = Some(token);
    opts.limit = Some(10);
    let rest = s.list("/pods", &opts).await.unwrap();
    assert_eq!(names(&rest), ["b", "c", "d"]);
    assert_eq!(rest.resource_version, now);

    let old = page1.resource_version.to_string();
    let exact = s
        .list(
            "/pods",
            &list_opts(Some(&old), Some(ResourceVersionMatch::Exact)),
        )
        .await;
    assert!(
        matches!(
            exact,
            Err(Error::Expired {
                continue_token: None,
                ..
            })
        ),
        "{exact:?}"
    );
}

/// GuaranteedUpdate: a change gets a new resourceVersion; an unchanged value (or `None`)
/// keeps the stored one; preconditions; NotFound; ignore_not_found creates; callback
/// errors come back unchanged.
pub async fn test_guaranteed_update(h: &dyn Harness) {
    let s = h.store().await;
    let key = "/pods/ns/a";
    let created = put(&*s, key, 1).await;
    let updated = set_v(&*s, key, 2).await;
    assert!(updated.resource_version > created.resource_version);
    assert_eq!(v_of(&updated), 2);

    let same = set_v(&*s, key, 2).await;
    assert_eq!(same.resource_version, updated.resource_version);
    let none = |_: Option<&Value>| Ok(None);
    let kept = s
        .guaranteed_update(key, &Preconditions::default(), false, &none, None, None)
        .await
        .unwrap();
    assert_eq!(kept.resource_version, updated.resource_version);
    assert_eq!(
        s.current_revision().await.unwrap(),
        updated.resource_version
    );

    let bump = |cur: Option<&Value>| {
        let mut v = cur.cloned().unwrap_or_else(|| object("n", 0));
        v["spec"]["v"] = json!(v["spec"]["v"].as_i64().unwrap_or(0) + 1);
        Ok(Some(v))
    };
    for pre in [
        Preconditions {
            uid: Some("other".into()),
            resource_version: None,
        },
        Preconditions {
            uid: None,
            resource_version: Some(created.resource_version.to_string()),
        },
    ] {
        let r = s
            .guaranteed_update(key, &pre, false, &bump, None, None)
            .await;
        assert!(
            matches!(r, Err(Error::ResourceVersionConflicts { .. })),
            "{r:?}"
        );
    }
    let good = Preconditions {
        uid: Some("uid-a".into()),
        resource_version: Some(updated.resource_version.to_string()),
    };
    assert_eq!(
        v_of(
            &s.guaranteed_update(key, &good, false, &bump, None, None)
                .await
                .unwrap()
        ),
        3
    );

    let missing = s
        .guaranteed_update(
            "/pods/ns/n",
            &Preconditions::default(),
            false,
            &bump,
            None,
            None,
        )
        .await;
    assert!(matches!(missing, Err(Error::NotFound { .. })));
    let made = s
        .guaranteed_update(
            "/pods/ns/n",
            &Preconditions::default(),
            true,
            &bump,
            None,
            None,
        )
        .await
        .unwrap();
    assert_eq!(v_of(&made), 1);

    let refuse =
        |_: Option<&Value>| -> crate::Result<Option<Value>> { Err(Error::BadRequest("no".into())) };
    let r = s
        .guaranteed_update(key, &Preconditions::default(), false, &refuse, None, None)
        .await;
    assert!(matches!(r, Err(Error::BadRequest(ref m)) if m == "no"));
}

/// GuaranteedUpdate retries: from a stale cached object, and under concurrent writers,
/// every increment lands exactly once.
pub async fn test_guaranteed_update_conflicts(h: &dyn Harness) {
    let s = h.store().await;
    let key = "/pods/ns/c";
    let stale = put(&*s, key, 0).await;
    set_v(&*s, key, 5).await;
    let bump = |cur: Option<&Value>| {
        let mut v = cur.expect("exists").clone();
        v["spec"]["v"] = json!(v["spec"]["v"].as_i64().unwrap_or(0) + 1);
        Ok(Some(v))
    };
    let from_stale = s
        .guaranteed_update(
            key,
            &Preconditions::default(),
            false,
            &bump,
            Some(stale.clone()),
            None,
        )
        .await
        .unwrap();
    assert_eq!(v_of(&from_stale), 6);
    // A no-op computed from a stale cache is checked against etcd, not trusted.
    let keep_stale = move |cur: Option<&Value>| Ok(Some(cur.expect("exists").clone()));
    let checked = s
        .guaranteed_update(
            key,
            &Preconditions::default(),
            false,
            &keep_stale,
            Some(stale),
            None,
        )
        .await
        .unwrap();
    assert_eq!(checked.resource_version, from_stale.resource_version);
    assert_eq!(v_of(&checked), 6);

    let writers = (0..10).map(|_| {
        let s = Arc::clone(&s);
        async move {
            s.guaranteed_update(key, &Preconditions::default(), false, &bump, None, None)
                .await
        }
    });
    for r in futures_util::future::join_all(writers).await {
        r.unwrap();
    }
    let end = s.get(key, &GetOptions::default()).await.unwrap().unwrap();
    assert_eq!(v_of(&end), 16);
}

/// Delete: NotFound, preconditions, validate_deletion, and the returned last state
/// stamped with the deletion's revision.
pub async fn test_delete(h: &dyn Harness) {
    let s = h.store().await;
    let key = "/pods/ns/a";
    let none = Preconditions::default();
    let r = s.delete(key, &none, &no_validation, None).await;
    assert!(matches!(r, Err(Error::NotFound { .. })));

    let created = put(&*s, key, 1).await;
    let wrong_uid = Preconditions {
        uid: Some("other".into()),
        resource_version: None,
    };
    let r = s.delete(key, &wrong_uid, &no_validation, None).await;
    assert!(matches!(r, Err(Error::ResourceVersionConflicts { .. })));
    let refuse = |_: &ObjectRef| Err(Error::BadRequest("refused".into()));
    let r = s.delete(key, &none, &refuse, None).await;
    assert!(matches!(r, Err(Error::BadRequest(ref m)) if m == "refused"));
    assert!(s.get(key, &GetOptions::default()).await.is_ok());

    let current = set_v(&*s, key, 2).await;
    let exact = Preconditions {
        uid: Some("uid-a".into()),
        resource_version: Some(current.resource_version.to_string()),
    };
    // A stale cached object is re-read before the preconditions decide.
    let deleted = s
        .delete(key, &exact, &no_validation, Some(created))
        .await
        .unwrap();
    assert_eq!(v_of(&deleted), 2);
    assert!(deleted.resource_version > current.resource_version);
    assert_eq!(
        deleted.resource_version,
        s.current_revision().await.unwrap()
    );
    assert!(
        s.get(key, &GetOptions::default())
            .await
            .unwrap_err()
            .is_not_found()
    );
    let r = s.delete(key, &none, &no_validation, None).await;
    assert!(matches!(r, Err(Error::NotFound { .. })));
}

/// Watch from "now" (rv unset): the current state as ADDED, then ADDED, MODIFIED and
/// DELETED (with the last state at the deletion revision).
pub async fn test_watch_from_current_state(h: &dyn Harness) {
    let s = h.store().await;
    let a = put(&*s, "/pods/ns/a", 1).await;
    put(&*s, "/other/ns/z", 1).await;
    let opts = WatchOptions {
        recursive: true,
        ..Default::default()
    };
    let mut w = s.watch("/pods", &opts).await.unwrap();
    match next_event(&mut w).await {
        WatchEvent::Added(o) => assert_eq!(*o, *a),
        e => panic!("expected initial ADDED, got {e:?}"),
    }
    let b = put(&*s, "/pods/ns/b", 1).await;
    let b2 = set_v(&*s, "/pods/ns/b", 2).await;
    let gone = s
        .delete(
            "/pods/ns/b",
            &Preconditions::default(),
            &no_validation,
            None,
        )
        .await
        .unwrap();
    assert!(matches!(next_event(&mut w).await, WatchEvent::Added(o) if *o == *b));
    assert!(matches!(next_event(&mut w).await, WatchEvent::Modified(o) if *o == *b2));
    match next_event(&mut w).await {
        WatchEvent::Deleted(o) => {
            assert_eq!(v_of(&o), 2);
            assert_eq!(o.resource_version, gone.resource_version);
            assert_eq!(
                o.value().expect("decodes")["metadata"]["resourceVersion"],
                gone.resource_version.to_string()
            );
        }
        e => panic!("expected DELETED, got {e:?}"),
    }
    put(&*s, "/other/ns/y", 1).await;
    assert_no_event(&mut w).await;
}

/// Watch from an explicit resourceVersion: only the changes after it, for one key or a
/// whole collection.
pub async fn test_watch_from_resource_version(h: &dyn Harness) {
    let s = h.store().await;
    let a1 = put(&*s, "/pods/ns/a", 1).await;
    let a2 = set_v(&*s, "/pods/ns/a", 2).await;
    put(&*s, "/pods/ns/ab", 1).await;
    let single = WatchOptions {
        resource_version: Some(a1.resource_version.to_string()),
        ..Default::default()
    };
    let mut w = s.watch("/pods/ns/a", &single).await.unwrap();
    assert!(matches!(next_event(&mut w).await, WatchEvent::Modified(o) if *o == *a2));
    set_v(&*s, "/pods/ns/ab", 2).await;
    assert_no_event(&mut w).await;

    let recursive = WatchOptions {
        resource_version: Some(a2.resource_version.to_string()),
        recursive: true,
        ..Default::default()
    };
    let mut w = s.watch("/pods/ns", &recursive).await.unwrap();
    assert!(matches!(next_event(&mut w).await, WatchEvent::Added(o) if o.key == "/pods/ns/ab"));
    assert!(matches!(next_event(&mut w).await, WatchEvent::Modified(o) if o.key == "/pods/ns/ab"));
}

/// Watch with a predicate: moving into it is ADDED, out of it DELETED.
pub async fn test_watch_predicate(h: &dyn Harness) {
    let s = h.store().await;
    let start = put(&*s, "/pods/ns/a", 0).await;
    let opts = WatchOptions {
        resource_version: Some(start.resource_version.to_string()),
        recursive: true,
        predicate: Predicate::new(attrs(), |a| spec_v(a) == 1),
        ..Default::default()
    };
    let mut w = s.watch("/pods", &opts).await.unwrap();
    let into = set_v(&*s, "/pods/ns/a", 1).await;
    let out = set_v(&*s, "/pods/ns/a", 2).await;
    set_v(&*s, "/pods/ns/a", 3).await;
    assert!(matches!(next_event(&mut w).await, WatchEvent::Added(o) if *o == *into));
    match next_event(&mut w).await {
        WatchEvent::Deleted(o) => {
            assert_eq!(v_of(&o), 1);
            assert_eq!(o.resource_version, out.resource_version);
        }
        e => panic!("expected DELETED, got {e:?}"),
    }
    assert_no_event(&mut w).await;
}

/// A predicate that records its field selector (as a kubelet's `spec.nodeName=` watch does,
/// which a watch cache narrows by): watches and lists select as with the filter alone,
/// an object moving between two pinned values included.
pub async fn test_watch_pinned_field(h: &dyn Harness) {
    let s = h.store().await;
    let pinned = |v: i64| {
        let selector = format!("spec.v={v}");
        let field = kas_apimachinery::fields::parse_selector(&selector).expect("parses");
        Predicate::new(attrs(), move |a| spec_v(a) == v).with_field_selector(field)
    };
    let start = put(&*s, "/pods/ns/a", 0).await;
    let watch = |v: i64| WatchOptions {
        resource_version: Some(start.resource_version.to_string()),
        recursive: true,
        predicate: pinned(v),
        ..Default::default()
    };
    let (mut ones, mut twos) = (
        s.watch("/pods", &watch(1)).await.unwrap(),
        s.watch("/pods", &watch(2)).await.unwrap(),
    );
    let into = set_v(&*s, "/pods/ns/a", 1).await;
    let moved = set_v(&*s, "/pods/ns/a", 2).await;
    let b = put(&*s, "/pods/ns/b", 2).await;
    let gone = s
        .delete(
            "/pods/ns/b",
            &Preconditions::default(),
            &no_validation,
            None,
        )
        .await
        .unwrap();
    let away = set_v(&*s, "/pods/ns/a", 3).await;
    assert!(matches!(next_event(&mut ones).await, WatchEvent::Added(o) if *o == *into));
    match next_event(&mut ones).await {
        WatchEvent::Deleted(o) => {
            assert_eq!((v_of(&o), o.resource_version), (1, moved.resource_version))
        }
        e => panic!("expected DELETED, got {e:?}"),
    }
    assert!(matches!(next_event(&mut twos).await, WatchEvent::Added(o) if *o == *moved));
    assert!(matches!(next_event(&mut twos).await, WatchEvent::Added(o) if *o == *b));
    assert!(
        matches!(next_event(&mut twos).await, WatchEvent::Deleted(o) if o.resource_version == gone.resource_version)
    );
    match next_event(&mut twos).await {
        WatchEvent::Deleted(o) => {
            assert_eq!((v_of(&o), o.resource_version), (2, away.resource_version))
        }
        e => panic!("expected DELETED, got {e:?}"),
    }
    assert_no_event(&mut ones).await;
    assert_no_event(&mut twos).await;
    put(&*s, "/pods/ns/c", 3).await;
    put(&*s, "/pods/other/d", 2).await;
    let list = |v: i64, key: &'static str| {
        let opts = ListOptions {
            predicate: pinned(v),
            ..list_opts(None, None)
        };
        let s = s.clone();
        async move { names(&s.list(key, &opts).await.expect("list")) }
    };
    assert_eq!(list(3, "/pods").await, ["a", "c"]);
    assert_eq!(list(2, "/pods").await, ["d"]);
    assert!(list(3, "/pods/other").await.is_empty());
    assert!(list(1, "/pods").await.is_empty());
}

/// Watch from a compacted resourceVersion: an Expired error event, then the end.
pub async fn test_watch_expired(h: &dyn Harness) {
    let s = h.store().await;
    let a = put(&*s, "/pods/ns/a", 1).await;
    set_v(&*s, "/pods/ns/a", 2).await;
    set_v(&*s, "/pods/ns/a", 3).await;
    h.compact(s.current_revision().await.unwrap()).await;
    let opts = WatchOptions {
        resource_version: Some(a.resource_version.to_string()),
        recursive: true,
        ..Default::default()
    };
    let mut w = s.watch("/pods", &opts).await.unwrap();
    match next_event(&mut w).await {
        WatchEvent::Error(Error::Expired { message, .. }) => {
            assert_eq!(
                message,
                "The resourceVersion for the provided watch is too old."
            )
        }
        e => panic!("expected an Expired error, got {e:?}"),
    }
    let end = tokio::time::timeout(EVENT_TIMEOUT, w.next()).await.unwrap();
    assert!(end.is_none(), "{end:?}");
}

/// Runs the whole suite as `#[tokio::test]`s, each with a harness from `$start` (an
/// expression giving a future of a [`Harness`]). Every implementation calls this once,
/// so a test added here runs against all of them.
#[macro_export]
macro_rules! conformance_suite {
    ($start:expr) => {
        $crate::conformance_suite!(@tests $start;
            test_create,
            test_get,
            test_list_prefix_isolation,
            test_list_resource_version,
            test_list_paging,
            test_list_continue_expired,
            test_guaranteed_update,
            test_guaranteed_update_conflicts,
            test_delete,
            test_watch_from_current_state,
            test_watch_from_resource_version,
            test_watch_predicate,
            test_watch_pinned_field,
            test_watch_expired,
        );
    };
    (@tests $start:expr; $($name:ident),* $(,)?) => {$(
        #[tokio::test]
        async fn $name() {
            let harness = $start.await;
            $crate::testing::$name(&harness).await;
        }
    )*};
}
