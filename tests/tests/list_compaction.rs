//! A continue token whose revision etcd compacted away: upstream answers 410 Expired with a
//! new token in the Status' `metadata.continue`, which goes on from the same key at the
//! latest revision (the list is then inconsistent), as e2e's API chunking conformance test
//! checks.

use std::time::{Duration, Instant};

use http::Method;
use kas_e2e::{Role, start_cluster};
use serde_json::json;

const JSON: [(&str, &str); 1] = [("content-type", "application/json")];

#[tokio::test(flavor = "multi_thread")]
async fn an_expired_continue_answers_a_token_that_goes_on_from_the_same_key() {
    let c = start_cluster(|spec| {
        spec.extra_args
            .insert(Role::Core, vec!["--etcd-compaction-interval=1s".to_owned()]);
    });
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "chunk"}});
    let a = c
        .send(Method::POST, "/api/v1/namespaces", &JSON, &ns.to_string())
        .await;
    assert_eq!(a.status, 201, "{}", a.text());
    let configmaps = "/api/v1/namespaces/chunk/configmaps";
    for i in 0..30 {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": format!("cm-{i:04}")}});
        let a = c
            .send(Method::POST, configmaps, &JSON, &cm.to_string())
            .await;
        assert_eq!(a.status, 201, "{}", a.text());
    }
    let a = c
        .send(Method::GET, &format!("{configmaps}?limit=10"), &[], "")
        .await;
    let first = a.json();
    let token = first["metadata"]["continue"].as_str().unwrap().to_owned();

    // Writes elsewhere move the revision on; the compactor makes the token's history.
    let deadline = Instant::now() + Duration::from_secs(30);
    let expired = loop {
        let bump = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"generateName": "bump-"}});
        let path = "/api/v1/namespaces/default/configmaps";
        c.send(Method::POST, path, &JSON, &bump.to_string()).await;
        let a = c
            .send(
                Method::GET,
                &format!("{configmaps}?limit=10&continue={token}"),
                &[],
                "",
            )
            .await;
        if a.status == 410 {
            break a.json();
        }
        assert!(Instant::now() < deadline, "never expired: {}", a.text());
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert_eq!(expired["reason"], "Expired", "{expired}");
    assert!(
        expired["message"].as_str().unwrap().starts_with(
            "The provided continue parameter is too old to display a consistent list result."
        ),
        "{expired}"
    );
    let inconsistent = expired["metadata"]["continue"].as_str().unwrap_or_default();
    assert!(!inconsistent.is_empty(), "{expired}");

    let a = c
        .send(
            Method::GET,
            &format!("{configmaps}?limit=10&continue={inconsistent}"),
            &[],
            "",
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    let page = a.json();
    assert_ne!(
        page["metadata"]["resourceVersion"],
        first["metadata"]["resourceVersion"]
    );
    let names: Vec<&str> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.first(), Some(&"cm-0010"), "{names:?}");
    assert_eq!(names.len(), 10);
    assert_eq!(
        page["metadata"]["remainingItemCount"], 10,
        "{}",
        page["metadata"]
    );
}
