//! Node-scale watches: one `spec.nodeName=node-<i>` watch of all pods per node (what each
//! kubelet keeps open), many HTTP/2 streams per connection, while a writer changes pods at
//! a fixed rate, each pod on one node. Each event should reach one watcher: a watcher that
//! gets another node's pod counts as an error. Latency is from just before the write to
//! the event's arrival at its node's watcher.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use futures_util::StreamExt;
use http::{Method, Request};
use http_body_util::{BodyExt, Full};
use serde_json::json;

use crate::api_load::{Target, next_events, now_micros, pod};
use crate::client::{Sender, connect_h2};
use crate::load::LoadResult;

/// What to load.
pub struct Spec {
    /// Pods are created in `target.namespace`; watches are of every namespace's pods.
    pub target: Target,
    /// Watchers, one per node.
    pub nodes: usize,
    /// Pods, pod `j` on node `j % nodes`.
    pub pods: usize,
    pub writes_per_second: u64,
    pub duration: Duration,
    /// Watch streams per HTTP/2 connection.
    pub streams_per_connection: usize,
    /// How long the open watches are left alone before writing, to measure what they cost
    /// idle.
    pub idle: Duration,
}

fn pod_name(j: usize) -> String {
    format!("bench-node-{j}")
}

/// Creates the pods that are missing (32 at a time), each bound to its node.
pub async fn prepare(spec: &Spec) -> Result<()> {
    let t = &spec.target;
    let sender = connect_h2(&t.base, &t.tls).await?;
    let collection = format!("/api/v1/namespaces/{}/pods", t.namespace);
    let created = futures_util::stream::iter(0..spec.pods)
        .map(|j| {
            let (mut sender, collection) = (sender.clone(), collection.clone());
            async move {
                let mut body = pod(Some(&pod_name(j)), 0, json!({"bench": "node-watch"}));
                body["spec"]["nodeName"] = json!(format!("node-{}", j % spec.nodes.max(1)));
                let (code, answer) = t
                    .send(&mut sender, Method::POST, &collection, Some(body))
                    .await?;
                if code != 201 && code != 409 {
                    bail!(
                        "creating pod {j}: {code} {}",
                        String::from_utf8_lossy(&answer)
                    );
                }
                Ok(())
            }
        })
        .buffer_unordered(32)
        .collect::<Vec<Result<()>>>()
        .await;
    created.into_iter().collect()
}

/// What a run measured.
pub struct Measured {
    /// Delivery latencies of the events the watchers got (code 200), and events of
    /// another node's pods (errors).
    pub result: LoadResult,
    /// Writes answered 200 during the run.
    pub writes: u64,
}

/// Opens the watches, waits until every one has answered, leaves them idle for
/// `spec.idle`, then writes for `spec.duration`; `sample` is called when the idle time
/// starts, when writing starts and when it ends (to sample CPU counters).
pub async fn run(spec: &Spec, mut sample: impl FnMut()) -> Result<Measured> {
    let t = spec.target.clone();
    let per_connection = spec.streams_per_connection.max(1);
    let mut senders = Vec::new();
    for _ in 0..spec.nodes.div_ceil(per_connection).max(1) {
        senders.push(connect_h2(&t.base, &t.tls).await?);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let open = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for node in 0..spec.nodes {
        let sender = senders[node / per_connection].clone();
        let (t, stop, open) = (t.clone(), stop.clone(), open.clone());
        tasks.push(tokio::spawn(async move {
            watch_node(&t, sender, node, &stop, &open).await
        }));
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    while open.load(Ordering::Relaxed) < spec.nodes {
        if Instant::now() > deadline {
            bail!(
                "only {} of {} watches answered",
                open.load(Ordering::Relaxed),
                spec.nodes
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Let the initial events drain.
    tokio::time::sleep(Duration::from_secs(2)).await;
    sample();
    tokio::time::sleep(spec.idle).await;
    sample();
    let start = Instant::now();
    let writes = write(spec).await?;
    sample();
    tokio::time::sleep(Duration::from_secs(1)).await;
    stop.store(true, Ordering::Relaxed);
    let result = crate::api_load::merge(tasks, start).await?;
    Ok(Measured { result, writes })
}

/// One kubelet's watch: the latency of each stamped modification of its node's pods; an
/// event of another node's pod is an error.
async fn watch_node(
    t: &Target,
    mut sender: Sender,
    node: usize,
    stop: &AtomicBool,
    open: &AtomicUsize,
) -> LoadResult {
    let mut r = LoadResult::default();
    let me = format!("node-{node}");
    let path =
        format!("/api/v1/pods?watch=true&fieldSelector=spec.nodeName%3D{me}&resourceVersion=0");
    let mut req = Request::new(Full::new(Bytes::new()));
    *req.uri_mut() = t.url(&path).parse().expect("url");
    *req.headers_mut() = t.headers.clone();
    let resp = sender.send_request(req).await;
    open.fetch_add(1, Ordering::Relaxed);
    let Ok(resp) = resp else {
        r.errors += 1;
        return r;
    };
    let mut body = resp.into_body();
    let mut buf = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        let frame = match tokio::time::timeout(Duration::from_millis(200), body.frame()).await {
            Ok(Some(Ok(f))) => f,
            Ok(_) => break,
            Err(_) => continue,
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        buf.extend_from_slice(&data);
        for event in next_events(&mut buf, false) {
            let object = &event["object"];
            if object["spec"]["nodeName"].as_str() != Some(me.as_str()) {
                r.errors += 1;
                continue;
            }
            let stamp = object["metadata"]["annotations"]["bench/sent"]
                .as_str()
                .and_then(|s| s.parse::<u128>().ok());
            if let (Some("MODIFIED"), Some(sent)) = (event["type"].as_str(), stamp) {
                let micros = now_micros().saturating_sub(sent) as u64;
                r.latencies.push(Duration::from_micros(micros));
                *r.codes.entry(200).or_default() += 1;
            }
        }
    }
    r
}

/// Patches pod after pod at the rate asked, each write on its own stream so that a slow
/// answer does not slow the rate; how many were answered 200.
async fn write(spec: &Spec) -> Result<u64> {
    let t = &spec.target;
    let writer = connect_h2(&t.base, &t.tls).await?;
    let interval = Duration::from_micros(1_000_000 / spec.writes_per_second.max(1));
    let mut ticker = tokio::time::interval(interval);
    let start = Instant::now();
    let mut writes = Vec::new();
    let mut j = 0;
    while start.elapsed() < spec.duration {
        ticker.tick().await;
        let path = format!(
            "/api/v1/namespaces/{}/pods/{}",
            t.namespace,
            pod_name(j % spec.pods.max(1))
        );
        j += 1;
        let (mut sender, t) = (writer.clone(), t.clone());
        writes.push(tokio::spawn(async move {
            let patch =
                json!({"metadata": {"annotations": {"bench/sent": now_micros().to_string()}}});
            let mut req = Request::new(Full::new(Bytes::from(patch.to_string())));
            *req.method_mut() = Method::PATCH;
            *req.uri_mut() = t.url(&path).parse()?;
            *req.headers_mut() = t.headers.clone();
            req.headers_mut().insert(
                http::header::CONTENT_TYPE,
                "application/merge-patch+json".parse()?,
            );
            let resp = sender.send_request(req).await.context("write")?;
            let ok = resp.status() == 200;
            resp.into_body().collect().await?;
            anyhow::Ok(ok)
        }));
    }
    let mut ok = 0;
    for w in writes {
        if w.await?? {
            ok += 1;
        }
    }
    Ok(ok)
}
