use super::*;
use crate::RbacAuthorizer;
use crate::testutil::*;
use kas_auth::authorization::Decision;
use kas_storage::WatchEvent;

use kas_storage::fake::ListWatchFake as Fake;

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
    let listed_at = fake.revision().to_string();
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
        WatchEvent::Error(kas_storage::Error::watch_expired(Some(1), Some(5)))
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
    fake.end_watches("/roles");
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
