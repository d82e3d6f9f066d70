//! API Priority and Fairness isolation under load: a flooding user LISTs `objects` config
//! maps from etcd on `flood_concurrency` streams while a second user, in a flow schema of
//! its own, GETs one config map; its latencies are measured idle first, then under the
//! flood. Meanwhile `system:kube-controller-manager` renews a leader-election Lease every
//! 2 s, as its leader election does, and each renewal's latency is recorded.
//!
//! The users are the admin impersonating `kas-bench-flood` and `kas-bench-victim` (both
//! bound to `view`); the victim's schema (`kas-bench-victim`, precedence 500) sends it to
//! `workload-high`, the flood falls in `global-default`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use http::{HeaderMap, HeaderValue, Method};
use serde_json::json;

use crate::api_load::{Resource, Target, merge};
use crate::client::connect_h2;
use crate::load::LoadResult;

pub const FLOOD_USER: &str = "kas-bench-flood";
pub const VICTIM_USER: &str = "kas-bench-victim";
const LEASE_USER: &str = "system:kube-controller-manager";
const LEASE_PERIOD: Duration = Duration::from_secs(2);

/// `kas-bench apf-isolation`'s flags.
#[derive(clap::Args)]
pub struct Args {
    /// Base URL, e.g. https://127.0.0.1:6443
    #[arg(long)]
    url: String,
    /// The admin's bearer token (it impersonates the users).
    #[arg(long)]
    token: String,
    #[arg(long)]
    ca_file: std::path::PathBuf,
    /// An existing namespace for the objects.
    #[arg(long, default_value = "default")]
    namespace: String,
    #[arg(long, default_value_t = 10_000)]
    objects: usize,
    #[arg(long, default_value_t = 1024)]
    object_size: usize,
    #[arg(long, default_value_t = 64)]
    flood_concurrency: usize,
    #[arg(long, default_value_t = 4)]
    victim_concurrency: usize,
    /// Seconds of each phase (idle, loaded).
    #[arg(long, default_value = "10")]
    seconds: u64,
}

/// Runs the scenario of `args` and prints its report.
pub async fn main(args: Args) -> Result<()> {
    let mut headers = HeaderMap::new();
    headers.insert(
        http::header::AUTHORIZATION,
        HeaderValue::from_str(&format!("Bearer {}", args.token))?,
    );
    let spec = Spec {
        admin: Target {
            base: args.url.parse()?,
            tls: crate::client::Tls::new(&args.ca_file, None, crate::client::Proto::H2)?,
            headers,
            namespace: args.namespace,
            resource: Resource::Configmaps,
        },
        objects: args.objects,
        object_size: args.object_size,
        flood_concurrency: args.flood_concurrency,
        victim_concurrency: args.victim_concurrency,
        duration: Duration::from_secs(args.seconds),
    };
    let out = run(&spec).await?;
    let p99 = |r: &LoadResult| r.percentile(99.0).as_secs_f64();
    println!("victim idle:   {}", out.idle.summary());
    println!("victim loaded: {}", out.loaded.summary());
    println!("flood:         {}", out.flood.summary());
    println!(
        "lease renewals: {} (max {:.3} ms)",
        out.lease_renewals.summary(),
        out.lease_renewals.percentile(100.0).as_secs_f64() * 1e3
    );
    println!(
        "victim p99 loaded/idle: {:.2}",
        p99(&out.loaded) / p99(&out.idle)
    );
    Ok(())
}

pub struct Spec {
    /// The admin's target (its headers authenticate; the namespace holds the objects).
    pub admin: Target,
    pub objects: usize,
    pub object_size: usize,
    pub flood_concurrency: usize,
    pub victim_concurrency: usize,
    pub duration: Duration,
}

pub struct Outcome {
    pub idle: LoadResult,
    pub loaded: LoadResult,
    pub flood: LoadResult,
    /// Each lease renewal's latency during the flood, in order.
    pub lease_renewals: LoadResult,
}

fn as_user(admin: &Target, user: &str) -> Result<Target> {
    let mut t = admin.clone();
    let mut headers: HeaderMap = t.headers.clone();
    headers.insert("impersonate-user", HeaderValue::from_str(user)?);
    t.headers = headers;
    Ok(t)
}

pub async fn run(spec: &Spec) -> Result<Outcome> {
    setup(spec).await?;
    let victim = as_user(&spec.admin, VICTIM_USER)?;
    let flood = as_user(&spec.admin, FLOOD_USER)?;
    let get = format!(
        "/api/v1/namespaces/{}/configmaps/kas-bench-apf-0",
        spec.admin.namespace
    );
    let idle = closed_loop(&victim, spec.victim_concurrency, spec.duration, &get).await?;
    let list = format!(
        "/api/v1/namespaces/{}/configmaps?labelSelector=bench%3Dapf",
        spec.admin.namespace
    );
    let stop = Arc::new(AtomicBool::new(false));
    let flood_task = {
        let (flood, list, stop) = (flood.clone(), list.clone(), stop.clone());
        let n = spec.flood_concurrency;
        tokio::spawn(async move { closed_loop_until(&flood, n, &list, stop).await })
    };
    let lease_task = {
        let admin = as_user(&spec.admin, LEASE_USER)?;
        let stop = stop.clone();
        tokio::spawn(async move { renew_lease(&admin, stop).await })
    };
    // Let the flood fill the server first.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let loaded = closed_loop(&victim, spec.victim_concurrency, spec.duration, &get).await?;
    stop.store(true, Ordering::Relaxed);
    let flood = flood_task.await??;
    let lease_renewals = lease_task.await??;
    Ok(Outcome {
        idle,
        loaded,
        flood,
        lease_renewals,
    })
}

async fn setup(spec: &Spec) -> Result<()> {
    let t = &spec.admin;
    let mut sender = connect_h2(&t.base, &t.tls).await?;
    let check = |what: &str, (code, body): (u16, bytes::Bytes)| -> Result<()> {
        if code != 201 && code != 409 && code != 200 {
            bail!("{what}: {code} {}", String::from_utf8_lossy(&body));
        }
        Ok(())
    };
    for user in [FLOOD_USER, VICTIM_USER] {
        let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding", "metadata": {"name": user},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]});
        let path = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings";
        check(
            user,
            t.send(&mut sender, Method::POST, path, Some(binding))
                .await?,
        )?;
    }
    let schema = json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
        "metadata": {"name": VICTIM_USER},
        "spec": {"priorityLevelConfiguration": {"name": "workload-high"}, "matchingPrecedence": 500,
            "distinguisherMethod": {"type": "ByUser"},
            "rules": [{"subjects": [{"kind": "User", "user": {"name": VICTIM_USER}}],
                "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                    "namespaces": ["*"], "clusterScope": true}]}]}});
    let path = "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas";
    check(
        "flow schema",
        t.send(&mut sender, Method::POST, path, Some(schema))
            .await?,
    )?;
    let lease = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "kas-bench-apf", "namespace": "kube-system"},
        "spec": {"holderIdentity": "kas-bench", "leaseDurationSeconds": 15}});
    let path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases";
    check(
        "lease",
        t.send(&mut sender, Method::POST, path, Some(lease)).await?,
    )?;
    // The objects, 64 creates at a time.
    let collection = format!("/api/v1/namespaces/{}/configmaps", t.namespace);
    let workers = 64.min(spec.objects.max(1));
    let mut tasks = Vec::new();
    for w in 0..workers {
        let (t, collection, mut sender) = (t.clone(), collection.clone(), sender.clone());
        let (objects, size) = (spec.objects, spec.object_size);
        tasks.push(tokio::spawn(async move {
            for i in (w..objects).step_by(workers) {
                let name = format!("kas-bench-apf-{i}");
                let body = Resource::Configmaps.object(Some(&name), size, json!({"bench": "apf"}));
                let (code, answer) = t
                    .send(&mut sender, Method::POST, &collection, Some(body))
                    .await?;
                if code != 201 && code != 409 {
                    bail!("{name}: {code} {}", String::from_utf8_lossy(&answer));
                }
            }
            Ok(())
        }));
    }
    for task in tasks {
        task.await??;
    }
    // The schema reaches every role's informer by watch.
    tokio::time::sleep(Duration::from_secs(2)).await;
    Ok(())
}

async fn closed_loop(
    t: &Target,
    concurrency: usize,
    duration: Duration,
    path: &str,
) -> Result<LoadResult> {
    let stop = Arc::new(AtomicBool::new(false));
    let run = closed_loop_with(t, concurrency, path, stop.clone());
    let timer = async {
        tokio::time::sleep(duration).await;
        stop.store(true, Ordering::Relaxed);
    };
    let (result, ()) = tokio::join!(run, timer);
    result
}

async fn closed_loop_until(
    t: &Target,
    concurrency: usize,
    path: &str,
    stop: Arc<AtomicBool>,
) -> Result<LoadResult> {
    closed_loop_with(t, concurrency, path, stop).await
}

async fn closed_loop_with(
    t: &Target,
    concurrency: usize,
    path: &str,
    stop: Arc<AtomicBool>,
) -> Result<LoadResult> {
    let sender = connect_h2(&t.base, &t.tls).await?;
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..concurrency.max(1) {
        let (t, mut sender, stop) = (t.clone(), sender.clone(), stop.clone());
        let path = path.to_owned();
        tasks.push(tokio::spawn(async move {
            let mut r = LoadResult::default();
            while !stop.load(Ordering::Relaxed) {
                let sent = Instant::now();
                match t.send(&mut sender, Method::GET, &path, None).await {
                    Ok((code, _)) => {
                        r.latencies.push(sent.elapsed());
                        *r.codes.entry(code).or_default() += 1;
                    }
                    Err(_) => r.errors += 1,
                }
            }
            r
        }));
    }
    merge(tasks, start).await
}

/// Renews the lease every [`LEASE_PERIOD`] as client-go's leader election does (a GET,
/// then an update of its renew time with the resourceVersion read) until `stop`; a
/// renewal's latency is both requests'.
async fn renew_lease(t: &Target, stop: Arc<AtomicBool>) -> Result<LoadResult> {
    let mut sender = connect_h2(&t.base, &t.tls).await?;
    let path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kas-bench-apf";
    let start = Instant::now();
    let mut r = LoadResult::default();
    while !stop.load(Ordering::Relaxed) {
        let sent = Instant::now();
        let renewed = async {
            let (code, body) = t.send(&mut sender, Method::GET, path, None).await?;
            if code != 200 {
                return Ok::<u16, anyhow::Error>(code);
            }
            let mut lease: serde_json::Value = serde_json::from_slice(&body)?;
            lease["spec"]["renewTime"] = json!(rfc3339_micro_now());
            let (code, _) = t.send(&mut sender, Method::PUT, path, Some(lease)).await?;
            Ok(code)
        };
        match renewed.await {
            Ok(code) => {
                r.latencies.push(sent.elapsed());
                *r.codes.entry(code).or_default() += 1;
            }
            Err(_) => r.errors += 1,
        }
        tokio::time::sleep(LEASE_PERIOD.saturating_sub(sent.elapsed())).await;
    }
    r.elapsed = start.elapsed();
    // The worst renewal is what leader election cares about; keep them sorted as the
    // other results are.
    r.latencies.sort_unstable();
    Ok(r)
}

/// Now as a `MicroTime`: RFC 3339 with microseconds, UTC.
fn rfc3339_micro_now() -> String {
    let micros = crate::api_load::now_micros();
    let secs = i64::try_from(micros / 1_000_000).unwrap_or(0);
    let nanos = i64::try_from(micros % 1_000_000).unwrap_or(0) * 1000;
    kas_apimachinery::golang::time::format_rfc3339_micro(
        kas_apimachinery::golang::time::Time::from_unix(secs, nanos),
    )
}
