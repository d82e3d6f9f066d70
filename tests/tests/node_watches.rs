//! Kubelet-like watches of pods through the aggregator (kube-rs, as a kubelet lists then
//! watches `spec.nodeName=<node>`): each sees only its node's pods, a pod bound to a node
//! arrives at that node's watcher as ADDED, a selector that pins the node and more
//! (`status.phase=Running`) sees a pod enter and leave it, and an unfiltered watcher sees
//! everything. The watch cache files such watchers by node (upstream's trigger index);
//! what each sees is what its selector says.

use futures_util::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::api::WatchParams;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent};
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::json;

async fn client(path: &std::path::Path) -> kube::Client {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let kubeconfig = Kubeconfig::read_from(path).expect("kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("config");
    kube::Client::try_from(config).expect("client")
}

fn pod(name: &str, node: Option<&str>) -> Pod {
    let mut spec = json!({"containers": [{"name": "a", "image": "nginx"}]});
    if let Some(node) = node {
        spec["nodeName"] = json!(node);
    }
    serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec})).expect("a pod")
}

type Events = futures_util::stream::BoxStream<'static, kube::Result<WatchEvent<Pod>>>;

/// As a kubelet starts: a list of the selected pods, then a watch from its revision.
async fn list_then_watch(pods: &Api<Pod>, selector: &str) -> (Vec<String>, Events) {
    let listed = pods
        .list(&ListParams::default().fields(selector))
        .await
        .expect("list");
    let rv = listed
        .metadata
        .resource_version
        .clone()
        .expect("a revision");
    let names = listed.items.iter().map(name).collect();
    let params = WatchParams::default().fields(selector).timeout(60);
    let events = pods.watch(&params, &rv).await.expect("watch").boxed();
    (names, events)
}

fn name(p: &Pod) -> String {
    p.metadata.name.clone().unwrap_or_default()
}

/// `TYPE name` of each event up to and including the first about `last`.
async fn until(events: &mut Events, last: &str) -> Vec<String> {
    let mut seen = Vec::new();
    loop {
        let event = tokio::time::timeout(std::time::Duration::from_secs(20), events.try_next())
            .await
            .unwrap_or_else(|_| panic!("no event about {last} after {seen:?}"))
            .expect("the watch")
            .expect("the watch stays open");
        let (kind, p) = match event {
            WatchEvent::Added(p) => ("ADDED", p),
            WatchEvent::Modified(p) => ("MODIFIED", p),
            WatchEvent::Deleted(p) => ("DELETED", p),
            WatchEvent::Bookmark(_) => continue,
            WatchEvent::Error(e) => panic!("watch error {e:?}"),
        };
        seen.push(format!("{kind} {}", name(&p)));
        if name(&p) == last {
            return seen;
        }
    }
}

#[tokio::test]
async fn kubelet_watches_see_only_their_nodes_pods() {
    let c = kas_e2e::start_cluster(|_| {});
    let client = client(c.kubeconfig_path()).await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let all: Api<Pod> = Api::all(client);
    let post = PostParams::default();
    for (n, node) in [("a1", Some("node-a")), ("b1", Some("node-b")), ("u1", None)] {
        pods.create(&post, &pod(n, node)).await.expect("create");
    }

    let (listed_a, mut a) = list_then_watch(&all, "spec.nodeName=node-a").await;
    let (listed_b, mut b) = list_then_watch(&all, "spec.nodeName=node-b").await;
    let running = "spec.nodeName=node-a,status.phase=Running";
    let (listed_running, mut running_a) = list_then_watch(&all, running).await;
    let (listed_all, mut everything) = list_then_watch(&all, "").await;
    assert_eq!((listed_a, listed_b), (vec!["a1".into()], vec!["b1".into()]));
    assert!(listed_running.is_empty());
    assert_eq!(listed_all, ["a1", "b1", "u1"]);

    // The scheduler binds u1 to node-a; node-a's kubelet reports a1 running; b2 lands on
    // node-b; a1 is deleted at once; each node gets a last pod that ends its watch's read.
    let binding = json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "u1"},
        "target": {"kind": "Node", "name": "node-a"}});
    let bound = c
        .send(
            http::Method::POST,
            "/api/v1/namespaces/default/pods/u1/binding",
            &[("content-type", "application/json")],
            &binding.to_string(),
        )
        .await;
    assert_eq!(bound.status, 201, "{}", bound.text());
    let status = json!({"status": {"phase": "Running"}});
    pods.patch_status("a1", &PatchParams::default(), &Patch::Merge(status))
        .await
        .expect("status");
    pods.create(&post, &pod("b2", Some("node-b")))
        .await
        .expect("b2");
    pods.delete("a1", &DeleteParams::default().grace_period(0))
        .await
        .expect("delete");
    for (n, node) in [("end-a", "node-a"), ("end-b", "node-b")] {
        pods.create(&post, &pod(n, Some(node))).await.expect("end");
    }

    let seen_a = until(&mut a, "end-a").await;
    assert_eq!(seen_a[0], "ADDED u1", "bound to node-a: {seen_a:?}");
    assert!(seen_a.contains(&"DELETED a1".to_owned()), "{seen_a:?}");
    assert!(
        seen_a
            .iter()
            .all(|e| e.ends_with(" u1") || e.ends_with(" a1") || e.ends_with(" end-a")),
        "only node-a's pods: {seen_a:?}"
    );
    let seen_b = until(&mut b, "end-b").await;
    assert_eq!(seen_b, ["ADDED b2", "ADDED end-b"]);
    // Into the selector when it runs, out of it when it goes; nothing else reaches it.
    let seen_running = until(&mut running_a, "a1").await;
    assert_eq!(seen_running, ["ADDED a1"]);
    let mut rest = Vec::new();
    while !rest.iter().any(|e: &String| e.starts_with("DELETED")) {
        rest.extend(until(&mut running_a, "a1").await);
    }
    assert!(
        rest.iter().all(|e| e == "MODIFIED a1" || e == "DELETED a1"),
        "{rest:?}"
    );
    let seen_all = until(&mut everything, "end-b").await;
    for expected in ["MODIFIED u1", "ADDED b2", "DELETED a1", "ADDED end-a"] {
        assert!(
            seen_all.contains(&expected.to_owned()),
            "{expected}: {seen_all:?}"
        );
    }

    // A kubelet's re-list reads its node's pods, from the cache and consistently alike.
    for params in [ListParams::default().match_any(), ListParams::default()] {
        let params = params.fields("spec.nodeName=node-a");
        let list = all.list(&params).await.expect("list");
        let names: Vec<String> = list.iter().map(name).collect();
        assert_eq!(names, ["end-a", "u1"], "{params:?}");
    }
    let stream = all
        .watch(&WatchParams::default().fields("spec.nodeName=node-b"), "0")
        .await
        .expect("watch from 0");
    let initial: Vec<String> = stream
        .take(3)
        .filter_map(|e| async move {
            match e {
                Ok(WatchEvent::Added(p)) => Some(name(&p)),
                _ => None,
            }
        })
        .collect()
        .await;
    assert_eq!(
        initial,
        ["b1", "b2", "end-b"],
        "the state at \"0\" is node-b's only"
    );
}
