//! A closed-loop HTTP/2 load generator: `concurrency` workers share `connections`
//! connections, each sending its next request when the last answer is read whole. Each
//! worker keeps its own latencies; they are merged once at the end, so measuring adds no
//! locking to the loop.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::Result;
use bytes::Bytes;
use http::{HeaderMap, Method, Request};
use http_body_util::{BodyExt, Full};

use crate::client::{Sender, Tls, connect_h2};

#[derive(Clone)]
pub struct LoadSpec {
    pub base: http::Uri,
    pub tls: Tls,
    pub method: Method,
    pub path: String,
    pub headers: HeaderMap,
    pub body: Bytes,
    pub concurrency: usize,
    pub connections: usize,
    pub duration: Duration,
}

#[derive(Debug, Default)]
pub struct LoadResult {
    /// Answers by HTTP status code.
    pub codes: BTreeMap<u16, u64>,
    /// Requests that got no answer (connection errors).
    pub errors: u64,
    /// Latencies of answered requests, sorted.
    pub latencies: Vec<Duration>,
    pub elapsed: Duration,
}

impl LoadResult {
    pub fn answered(&self) -> u64 {
        self.codes.values().sum()
    }

    pub fn throughput(&self) -> f64 {
        self.answered() as f64 / self.elapsed.as_secs_f64()
    }

    pub fn percentile(&self, p: f64) -> Duration {
        if self.latencies.is_empty() {
            return Duration::ZERO;
        }
        let rank = ((p / 100.0) * (self.latencies.len() - 1) as f64).round() as usize;
        self.latencies[rank.min(self.latencies.len() - 1)]
    }

    pub fn summary(&self) -> String {
        format!(
            "{:.0} req/s, p50 {:.3} ms, p99 {:.3} ms, codes {:?}, errors {}",
            self.throughput(),
            self.percentile(50.0).as_secs_f64() * 1e3,
            self.percentile(99.0).as_secs_f64() * 1e3,
            self.codes,
            self.errors
        )
    }
}

struct Worker {
    codes: BTreeMap<u16, u64>,
    errors: u64,
    latencies: Vec<Duration>,
}

pub async fn run(spec: &LoadSpec) -> Result<LoadResult> {
    let mut senders = Vec::new();
    for _ in 0..spec.connections.max(1) {
        senders.push(connect_h2(&spec.base, &spec.tls).await?);
    }
    let start = Instant::now();
    let deadline = start + spec.duration;
    let mut tasks = Vec::new();
    for i in 0..spec.concurrency.max(1) {
        let sender = senders[i % senders.len()].clone();
        let spec = spec.clone();
        tasks.push(tokio::spawn(async move {
            worker(sender, &spec, deadline).await
        }));
    }
    let mut result = LoadResult::default();
    for task in tasks {
        let w = task.await?;
        for (code, n) in w.codes {
            *result.codes.entry(code).or_default() += n;
        }
        result.errors += w.errors;
        result.latencies.extend(w.latencies);
    }
    result.elapsed = start.elapsed();
    result.latencies.sort_unstable();
    Ok(result)
}

async fn worker(mut sender: Sender, spec: &LoadSpec, deadline: Instant) -> Worker {
    let mut w = Worker {
        codes: BTreeMap::new(),
        errors: 0,
        latencies: Vec::with_capacity(64 * 1024),
    };
    let uri: http::Uri = match format!(
        "https://{}{}",
        spec.base.authority().map(|a| a.as_str()).unwrap_or(""),
        spec.path
    )
    .parse()
    {
        Ok(u) => u,
        Err(_) => return w,
    };
    while Instant::now() < deadline {
        let mut req = Request::new(Full::new(spec.body.clone()));
        *req.method_mut() = spec.method.clone();
        *req.uri_mut() = uri.clone();
        *req.headers_mut() = spec.headers.clone();
        let sent = Instant::now();
        let answer = async {
            let resp = sender.send_request(req).await?;
            let code = resp.status().as_u16();
            resp.into_body().collect().await?;
            Ok::<_, hyper::Error>(code)
        }
        .await;
        match answer {
            Ok(code) => {
                w.latencies.push(sent.elapsed());
                *w.codes.entry(code).or_default() += 1;
            }
            Err(_) => {
                w.errors += 1;
                if sender.is_closed() {
                    match connect_h2(&spec.base, &spec.tls).await {
                        Ok(s) => sender = s,
                        Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
                    }
                }
            }
        }
    }
    w
}
