//! Upstream's watch cache flags on core: `--watch-cache-sizes=<resource>#0` serves a
//! resource straight from etcd, a non-zero size caches even events (which upstream does not
//! cache by default), and `--watch-cache=false` turns every cache off. Seen from outside
//! by a watch from a resourceVersion far ahead: a watch cache answers 504, etcd waits. `--delete-collection-workers` deletes a collection with
//! several deletes at once.

use http::Method;
use kas_e2e::{Role, TestCluster, start_cluster};

fn with_core_flags(flags: &[&str]) -> TestCluster {
    start_cluster(|spec| {
        spec.extra_args
            .entry(Role::Core)
            .or_default()
            .extend(flags.iter().map(|f| (*f).to_owned()));
    })
}

/// Whether a watch from a resourceVersion far ahead is the watch cache's answer: the cache
/// waits for it to become fresh and then answers 504 `Too large resource version`, as
/// upstream's cacher does; etcd just waits for that revision until the timeout.
async fn served_by_a_watch_cache(c: &TestCluster, path: &str) -> bool {
    let a = c
        .send(
            Method::GET,
            &format!("{path}?watch=1&resourceVersion=99999999&timeoutSeconds=1"),
            &[],
            "",
        )
        .await;
    match a.status.as_u16() {
        504 => {
            assert!(
                a.text().contains("Too large resource version"),
                "{path}: {}",
                a.text()
            );
            true
        }
        200 => {
            assert_eq!(a.text(), "", "{path}");
            false
        }
        other => panic!("{path}: {other} {}", a.text()),
    }
}

#[tokio::test]
async fn watch_cache_sizes_choose_between_the_cache_and_etcd() {
    let c = with_core_flags(&["--watch-cache-sizes=configmaps#0,events#100"]);
    c.kubectl_ok(&["create", "configmap", "a"]);
    c.kubectl_ok(&["create", "secret", "generic", "s"]);
    c.kubectl_ok(&["create", "serviceaccount", "sa"]);
    let event = serde_json::json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "e1"},
        "involvedObject": {"kind": "ConfigMap", "name": "a", "namespace": "default"},
        "reason": "Test", "message": "m"
    });
    let out = c.kubectl_stdin(&["create"], &event.to_string());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let base = "/api/v1/namespaces/default";
    assert!(!served_by_a_watch_cache(&c, &format!("{base}/configmaps")).await);
    assert!(served_by_a_watch_cache(&c, &format!("{base}/secrets")).await);
    assert!(served_by_a_watch_cache(&c, &format!("{base}/events")).await);
    // What etcd serves still answers lists and gets as before.
    let list = c.kubectl_json(&["get", "configmaps", "-o", "json"]);
    let names: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["metadata"]["name"].as_str())
        .collect();
    assert!(names.contains(&"a"), "{names:?}");
}

#[tokio::test]
async fn no_watch_cache_at_all_and_parallel_collection_deletes() {
    let c = with_core_flags(&["--watch-cache=false", "--delete-collection-workers=4"]);
    for i in 0..12 {
        c.kubectl_ok(&[
            "create",
            "configmap",
            &format!("cm-{i}"),
            "--from-literal=a=b",
        ]);
    }
    c.kubectl_ok(&["create", "serviceaccount", "sa"]);
    let base = "/api/v1/namespaces/default";
    assert!(!served_by_a_watch_cache(&c, &format!("{base}/configmaps")).await);
    assert!(!served_by_a_watch_cache(&c, &format!("{base}/serviceaccounts")).await);
    let a = c
        .send(
            Method::DELETE,
            &format!("{base}/configmaps?labelSelector="),
            &[],
            "",
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    let left = c.kubectl_json(&["get", "configmaps", "-o", "json"]);
    let names: Vec<&str> = left["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["metadata"]["name"].as_str())
        .filter(|n| n.starts_with("cm-"))
        .collect();
    assert!(names.is_empty(), "{names:?}");
}
