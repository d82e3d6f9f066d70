use serde_json::{Value, json};

use super::*;
use crate::graph::{SYNC_ATTACHMENTS, SYNC_PODS, SYNC_PVS, SYNC_SLICES};

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

fn pod_on(ns: &str, name: &str, node: &str, secret: &str) -> Value {
    json!({
        "metadata": {"namespace": ns, "name": name},
        "spec": {"nodeName": node, "volumes": [{"name": "v", "secret": {"secretName": secret}}]}
    })
}

fn secret_reaches(graph: &Graph, node: &str, name: &str) -> bool {
    graph
        .has_path_from(node, VertexType::Secret, "ns", name)
        .is_ok()
}

const KEYS: [&str; 3] = ["/pods", "/persistentvolumes", "/volumeattachments"];

#[tokio::test]
async fn lists_watches_relists_and_stops() {
    let fake = Arc::new(Fake::default());
    fake.set_list(
        "/pods",
        &[
            pod_on("ns", "p1", "n1", "s1"),
            pod_on("ns", "pending", "", "s9"),
        ],
    );
    fake.set_list(
        "/persistentvolumes",
        &[json!({"metadata": {"name": "pv1"}, "spec": {"claimRef": {"namespace": "ns", "name": "c1"}}})],
    );
    fake.set_list(
        "/volumeattachments",
        &[json!({"metadata": {"name": "va1"}, "spec": {"nodeName": "n1"}})],
    );
    let graph = follow(Sources::new(fake.clone()));
    assert!(graph.wait_synced(Duration::from_secs(5)).await);
    assert!(graph.has_synced());
    assert!(secret_reaches(&graph, "n1", "s1"));
    // A pod without a node is not in the graph.
    assert!(!graph.contains(VertexType::Secret, "ns", "s9"));
    assert!(
        graph
            .has_path_from("n1", VertexType::VolumeAttachment, "", "va1")
            .is_ok()
    );
    assert!(graph.contains(VertexType::Pv, "", "pv1"));

    // Each watch starts at its list's revision.
    eventually("watches", || {
        KEYS.iter().all(|k| fake.open_watches(k).len() == 1)
    })
    .await;
    let listed_at = fake.revision().to_string();
    assert_eq!(fake.open_watches("/pods"), [Some(listed_at)]);

    // Events apply: a pod bound later, a pod deleted.
    let bound = fake.object("/pods/ns/pending", &pod_on("ns", "pending", "n2", "s9"));
    assert_eq!(
        fake.send("/pods", || WatchEvent::Modified(bound.clone())),
        1
    );
    eventually("the bound pod", || secret_reaches(&graph, "n2", "s9")).await;
    let gone = fake.object("/pods/ns/p1", &pod_on("ns", "p1", "n1", "s1"));
    fake.send("/pods", || WatchEvent::Deleted(gone.clone()));
    eventually("the deleted pod", || {
        !graph.contains(VertexType::Secret, "ns", "s1")
    })
    .await;
    // An object that does not decode is skipped.
    let bad = fake.object(
        "/pods/ns/bad",
        &json!({"metadata": {"name": "bad"}, "spec": "not a spec"}),
    );
    fake.send("/pods", || WatchEvent::Added(bad.clone()));

    // A 410 Gone lists again, which drops what the list no longer has.
    fake.set_list("/volumeattachments", &[]);
    fake.send("/volumeattachments", || {
        WatchEvent::Error(kas_storage::Error::watch_expired(Some(1), Some(5)))
    });
    eventually("the relist", || fake.list_calls("/volumeattachments") == 2).await;
    eventually("the dropped attachment", || {
        !graph.contains(VertexType::VolumeAttachment, "", "va1")
    })
    .await;
    assert_eq!(fake.list_calls("/pods"), 1);
    assert!(secret_reaches(&graph, "n2", "s9"));

    // Dropping the last handle stops the tasks and their watches.
    drop(graph);
    eventually("the watches to close", || {
        KEYS.iter().all(|k| fake.open_watches(k).is_empty())
    })
    .await;
}

#[tokio::test]
async fn slices_are_followed_when_asked() {
    let fake = Arc::new(Fake::default());
    fake.set_list(
        "/resourceslices",
        &[json!({"metadata": {"name": "s1"}, "spec": {"nodeName": "n1"}})],
    );
    let mut sources = Sources::new(fake.clone());
    sources.resource_slices = Some("/resourceslices".to_owned());
    let graph = follow(sources);
    assert!(graph.wait_synced(Duration::from_secs(5)).await);
    assert!(
        graph
            .has_path_from("n1", VertexType::ResourceSlice, "", "s1")
            .is_ok()
    );
}

#[tokio::test]
async fn wait_synced_times_out_until_every_kind_lists() {
    let graph = Graph::new();
    graph.mark_synced(SYNC_PODS);
    graph.mark_synced(SYNC_PVS);
    assert!(!graph.wait_synced(Duration::from_millis(20)).await);
    graph.mark_synced(SYNC_ATTACHMENTS);
    assert!(graph.wait_synced(Duration::from_millis(20)).await);
    graph.follow_kinds(SYNC_PODS | SYNC_SLICES);
    assert!(!graph.has_synced());
}
