//! Objects with very many keys: the work per object grows with its size, not its square;
//! a write too large for etcd is refused as upstream refuses it (once more without
//! `managedFields` first); and while a role computes over a 3 MB object, every other
//! request keeps being answered and no peer takes the role out of rotation.

use std::time::{Duration, Instant};

use http::Method;
use kas_e2e::{TestCluster, start_cluster};
use serde_json::{Map, Value, json};

const JSON: [(&str, &str); 1] = [("content-type", "application/json")];
const WIDES: &str = "/apis/wide.example.com/v1/namespaces/default/wides";
const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

const CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: wides.wide.example.com}
spec:
  group: wide.example.com
  scope: Namespaced
  names: {plural: wides, singular: wide, kind: Wide}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
"#;

/// `n` short keys (`k0`: `value`, ...).
fn keys(n: usize, value: &str) -> Value {
    let map: Map<String, Value> = (0..n).map(|i| (format!("k{i}"), json!(value))).collect();
    Value::Object(map)
}

fn wide(name: &str, n: usize, value: &str) -> String {
    json!({"apiVersion": "wide.example.com/v1", "kind": "Wide", "metadata": {"name": name},
        "spec": keys(n, value)})
    .to_string()
}

/// Reads a small ConfigMap and a small custom resource in turn until `stop`, and returns
/// each answer's status and latency.
async fn read_until(
    c: &TestCluster,
    stop: tokio::sync::watch::Receiver<bool>,
) -> Vec<(u16, Duration)> {
    let paths = [format!("{CONFIGMAPS}/small"), format!("{WIDES}/small")];
    let mut seen = Vec::new();
    for i in 0.. {
        if *stop.borrow() {
            break;
        }
        let started = Instant::now();
        let a = c.send(Method::GET, &paths[i % 2], &[], "").await;
        seen.push((a.status.as_u16(), started.elapsed()));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    seen
}

#[tokio::test(flavor = "multi_thread")]
async fn wide_objects_are_written_or_refused_while_the_roles_keep_serving() {
    let c = start_cluster(|_| {});
    c.apply_and_wait_served(CRD, WIDES).await;
    let small_cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "small"}, "data": {"a": "b"}});
    let a = c
        .send(Method::POST, CONFIGMAPS, &JSON, &small_cm.to_string())
        .await;
    assert_eq!(a.status, 201, "{}", a.text());
    let a = c
        .send(Method::POST, WIDES, &JSON, &wide("small", 1, "v"))
        .await;
    assert_eq!(a.status, 201, "{}", a.text());

    // 80,000 keys: 1.2 MB of object, over etcd's 1.5 MiB with its managedFields. As
    // upstream, the write is made again without them, and stored.
    for (path, body) in [
        (WIDES, wide("w80k", 80_000, "v")),
        (
            CONFIGMAPS,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm80k"},
                "data": keys(80_000, "v")})
            .to_string(),
        ),
    ] {
        let a = c.send(Method::POST, path, &JSON, &body).await;
        assert_eq!(a.status, 201, "{}", &a.text()[..a.text().len().min(500)]);
        let meta = &a.json()["metadata"];
        assert!(meta["managedFields"].is_null(), "{meta}");
        assert!(meta["resourceVersion"].is_string(), "{meta}");
    }
    let a = c.send(Method::GET, &format!("{WIDES}/w80k"), &[], "").await;
    assert_eq!(a.status, 200);
    assert_eq!(a.json()["spec"].as_object().map(Map::len), Some(80_000));

    // 200,000 keys (3 MB, under the 3 MiB body limit) cannot be stored: upstream's etcd
    // client refuses to send it, and the client gets that error as a plain 500. Meanwhile
    // another client's reads are all answered, quickly.
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let reader = {
        let c = &c;
        async move { read_until(c, stopped).await }
    };
    let writer = async {
        let body = wide("w200k", 200_000, "vvv");
        assert!(
            body.len() > 3_000_000 && body.len() < 3 * 1024 * 1024,
            "{}",
            body.len()
        );
        let mut answers = Vec::new();
        for _ in 0..3 {
            answers.push(c.send(Method::POST, WIDES, &JSON, &body).await);
        }
        let _ = stop.send(true);
        answers
    };
    let (answers, reads) = tokio::join!(writer, reader);
    for a in answers {
        assert_eq!(a.status, 500, "{}", &a.text()[..a.text().len().min(500)]);
        let status = a.json();
        let message = status["message"].as_str().unwrap_or_default();
        assert!(
            message.starts_with(
                "rpc error: code = ResourceExhausted desc = trying to send message larger than max ("
            ) && message.ends_with(" vs. 2097152)"),
            "{status}"
        );
        assert_eq!(status["code"], 500);
        assert!(status.get("reason").is_none(), "{status}");
    }
    let failed: Vec<_> = reads.iter().filter(|(code, _)| *code != 200).collect();
    assert!(
        failed.is_empty(),
        "reads failed while the wide object was refused: {failed:?}"
    );
    let mut latencies: Vec<Duration> = reads.iter().map(|(_, d)| *d).collect();
    latencies.sort();
    assert!(latencies.len() >= 10, "{} reads", latencies.len());
    let p99 = latencies[latencies.len() * 99 / 100];
    assert!(
        p99 < Duration::from_secs(1),
        "p99 {p99:?} of {} reads",
        latencies.len()
    );

    let a = c
        .send(Method::GET, &format!("{WIDES}/w200k"), &[], "")
        .await;
    assert_eq!(a.status, 404);
}

/// An update that validating admission looks at (here a webhook that fails, ignored) takes
/// the validated write path; too large with its managedFields, it is written once more
/// without them there too.
#[tokio::test(flavor = "multi_thread")]
async fn validated_updates_too_large_are_written_without_managed_fields() {
    let c = start_cluster(|_| {});
    let webhook = json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "dead"},
        "webhooks": [{"name": "dead.example.com", "admissionReviewVersions": ["v1"],
            "sideEffects": "None", "failurePolicy": "Ignore", "timeoutSeconds": 1,
            "clientConfig": {"url": "https://127.0.0.1:1/validate"},
            "rules": [{"apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["UPDATE"], "resources": ["configmaps"]}]}]});
    let path = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
    let a = c
        .send(Method::POST, path, &JSON, &webhook.to_string())
        .await;
    assert_eq!(a.status, 201, "{}", a.text());
    // 30,000 keys fit with their managedFields; 70,000 (0.9 MB) only without them.
    let cm = |n: usize, value: &str| {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "grows"},
            "data": keys(n, value)})
        .to_string()
    };
    let a = c
        .send(Method::POST, CONFIGMAPS, &JSON, &cm(30_000, "v"))
        .await;
    assert_eq!(a.status, 201, "{}", &a.text()[..a.text().len().min(500)]);
    assert!(a.json()["metadata"]["managedFields"].is_array());
    // The webhook configuration reaches the role's informer.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let a = c
        .send(
            Method::PUT,
            &format!("{CONFIGMAPS}/grows"),
            &JSON,
            &cm(70_000, "w"),
        )
        .await;
    assert_eq!(a.status, 200, "{}", &a.text()[..a.text().len().min(500)]);
    let written = a.json();
    assert!(
        written["metadata"]["managedFields"].is_null(),
        "{}",
        written["metadata"]
    );
    assert_eq!(written["data"]["k69999"], "w");
}
