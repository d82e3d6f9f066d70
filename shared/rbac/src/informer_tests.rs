use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;
use kas_storage::{
    GetOptions, ListResult, Object, ObjectRef, Preconditions, UpdateFn, ValidateDeletionFn,
    WatchStream,
};
use serde_json::Value;
use tokio::sync::mpsc;

use super::*;
use crate::RbacAuthorizer;
use crate::testutil::*;
use kas_auth::authorization::Decision;

/// A storage that serves lists from a map and watches from channels the test feeds.
#[derive(Default)]
struct Fake {
    items: Mutex<HashMap<String, Vec<ObjectRef>>>,
    revision: Mutex<u64>,
    lists: Mutex<HashMap<String, usize>>,
    watches: Mutex<Vec<Watch>>,
}

/// An open watch: its key, its resourceVersion and where its events go.
type Watch = (String, Option<String>, mpsc::UnboundedSender<WatchEvent>);

fn unsupported<T>() -> kas_storage::Result<T> {
    Err(StorageError::internal("not in the fake"))
}

#[async_trait]
impl Storage for Fake {
    async fn create(&self, _: &str, _: Value, _: Option<i64>) -> kas_storage::Result<ObjectRef> {
        unsupported()
    }
    async fn get(&self, _: &str, _: &GetOptions) -> kas_storage::Result<Option<ObjectRef>> {
        unsupported()
    }
    async fn list(&self, key: &str, opts: &ListOptions) -> kas_storage::Result<ListResult> {
        assert!(opts.recursive);
        *self
            .lists
            .lock()
            .unwrap()
            .entry(key.to_owned())
            .or_default() += 1;
        Ok(ListResult {
            items: self
                .items
                .lock()
                .unwrap()
                .get(key)
                .cloned()
                .unwrap_or_default(),
            resource_version: *self.revision.lock().unwrap(),
            ..ListResult::default()
        })
    }
    async fn guaranteed_update(
        &self,
        _: &str,
        _: &Preconditions,
        _: bool,
        _: &UpdateFn<'_>,
        _: Option<ObjectRef>,
        _: Option<i64>,
    ) -> kas_storage::Result<ObjectRef> {
        unsupported()
    }
    async fn delete(
        &self,
        _: &str,
        _: &Preconditions,
        _: &ValidateDeletionFn<'_>,
        _: Option<ObjectRef>,
    ) -> kas_storage::Result<ObjectRef> {
        unsupported()
    }
    async fn watch(&self, key: &str, opts: &WatchOptions) -> kas_storage::Result<WatchStream> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.watches
            .lock()
            .unwrap()
            .push((key.to_owned(), opts.resource_version.clone(), tx));
        Ok(Box::pin(futures_util::stream::unfold(
            rx,
            |mut rx| async move { rx.recv().await.map(|e| (e, rx)) },
        )))
    }
    async fn count(&self, _: &str) -> kas_storage::Result<i64> {
        unsupported()
    }
    async fn current_revision(&self) -> kas_storage::Result<u64> {
        Ok(*self.revision.lock().unwrap())
    }
}

impl Fake {
    fn object(&self, key: &str, value: &Value) -> ObjectRef {
        let mut rv = self.revision.lock().unwrap();
        *rv += 1;
        Arc::new(Object::new(key, *rv, value.clone()).unwrap())
    }

    fn set_list(&self, key: &str, values: &[Value]) {
        let objects = values.iter().map(|v| self.object(key, v)).collect();
        self.items.lock().unwrap().insert(key.to_owned(), objects);
    }

    /// Sends `event` to the open watches of `key`; how many got it.
    fn send(&self, key: &str, event: impl Fn() -> WatchEvent) -> usize {
        let watches = self.watches.lock().unwrap();
        watches
            .iter()
            .filter(|(k, _, tx)| k == key && tx.send(event()).is_ok())
            .count()
    }

    fn open_watches(&self, key: &str) -> Vec<Option<String>> {
        let watches = self.watches.lock().unwrap();
        watches
            .iter()
            .filter(|(k, _, tx)| k == key && !tx.is_closed())
            .map(|(_, rv, _)| rv.clone())
            .collect()
    }

    fn list_calls(&self, key: &str) -> usize {
        self.lists.lock().unwrap().get(key).copied().unwrap_or(0)
    }
}

async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    for _ in 0..500 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test]
async fn lists_watches_relists_and_stops() {
    let fake = Arc::new(Fake::default());
    fake.set_list(
        "/clusterroles",
        &[cluster_role("view", &[rule_json("get", "", "pods", "")]).1],
    );
    fake.set_list(
        "/clusterrolebindings",
        &[cluster_role_binding("viewers", "view", &["Group:devs"]).1],
    );
    let index = follow(Sources::new(fake.clone()));
    assert!(index.wait_synced(Duration::from_secs(5)).await);
    assert!(index.has_synced());
    let a = RbacAuthorizer::new(index.clone());
    let get_pods = |u: &str, groups: &[&str], ns: &str| {
        a.decide(&resource_request(user(u, groups), "get", "", "pods", ns))
            .0
    };
    assert_eq!(get_pods("alice", &["devs"], ""), Decision::Allow);
    assert_eq!(get_pods("bob", &[], "ns"), Decision::NoOpinion);

    // Each watch starts at its list's revision.
    eventually("watches", || {
        Kind::ALL
            .iter()
            .all(|k| fake.open_watches(Sources::new(fake.clone()).key(*k)).len() == 1)
    })
    .await;
    let listed_at = fake.revision.lock().unwrap().to_string();
    assert_eq!(fake.open_watches("/roles"), [Some(listed_at)]);

    // Events apply.
    let rb = role_binding("ns", "bob", "ClusterRole", "view", &["User:bob"]).1;
    let rb = fake.object("/rolebindings/ns/bob", &rb);
    assert_eq!(
        fake.send("/rolebindings", || WatchEvent::Added(rb.clone())),
        1
    );
    eventually("the added binding", || {
        get_pods("bob", &[], "ns") == Decision::Allow
    })
    .await;
    let crb = cluster_role_binding("viewers", "view", &["Group:devs"]).1;
    let crb = fake.object("/clusterrolebindings/viewers", &crb);
    fake.send("/clusterrolebindings", || WatchEvent::Deleted(crb.clone()));
    eventually("the deleted binding", || {
        get_pods("alice", &["devs"], "") == Decision::NoOpinion
    })
    .await;

    // A 410 Gone lists again, which drops what the list no longer has.
    fake.set_list("/clusterroles", &[]);
    fake.send("/clusterroles", || {
        WatchEvent::Error(StorageError::watch_expired(Some(1), Some(5)))
    });
    eventually("the relist", || fake.list_calls("/clusterroles") == 2).await;
    eventually("the emptied roles", || index.len(Kind::ClusterRole) == 0).await;
    assert_eq!(
        a.decide(&resource_request(user("bob", &[]), "get", "", "pods", "ns"))
            .1,
        r#"RBAC: clusterrole.rbac.authorization.k8s.io "view" not found"#
    );
    assert_eq!(fake.list_calls("/roles"), 1);

    // Dropping the last handle stops the tasks and their watches.
    drop(a);
    drop(index);
    eventually("the watches to close", || {
        [
            "/roles",
            "/rolebindings",
            "/clusterroles",
            "/clusterrolebindings",
        ]
        .iter()
        .all(|k| fake.open_watches(k).is_empty())
    })
    .await;
}

#[tokio::test]
async fn a_watch_that_ends_resumes_from_the_last_revision() {
    let fake = Arc::new(Fake::default());
    let index = follow(Sources::new(fake.clone()));
    assert!(index.wait_synced(Duration::from_secs(5)).await);
    eventually("the watch", || fake.open_watches("/roles").len() == 1).await;
    let r = fake.object("/roles/ns/r", &role("ns", "r", &[]).1);
    fake.send("/roles", || WatchEvent::Added(r.clone()));
    fake.send("/roles", || WatchEvent::Bookmark(40));
    eventually("the role", || index.len(Kind::Role) == 1).await;
    // End the watch: drop our senders.
    fake.watches
        .lock()
        .unwrap()
        .retain(|(k, _, _)| k != "/roles");
    eventually("the new watch", || {
        fake.open_watches("/roles") == [Some("40".to_owned())]
    })
    .await;
    assert_eq!(fake.list_calls("/roles"), 1);
    assert_eq!(index.len(Kind::Role), 1);
}

#[tokio::test]
async fn wait_synced_times_out_when_a_kind_never_lists() {
    let index = Index::new();
    index.mark_synced(Kind::Role);
    index.mark_synced(Kind::ClusterRole);
    index.mark_synced(Kind::RoleBinding);
    assert!(!index.wait_synced(Duration::from_millis(20)).await);
    index.mark_synced(Kind::ClusterRoleBinding);
    assert!(index.wait_synced(Duration::from_millis(20)).await);
}
