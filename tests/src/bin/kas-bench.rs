//! kas-bench: load against any Kubernetes API endpoint (`load`), and this project's own
//! side-by-side figures measured in one run (`hops`, `roles`).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use http::{HeaderMap, HeaderName, HeaderValue, Method};
use kas_e2e::client::{Proto, Tls};
use kas_e2e::load::{LoadResult, LoadSpec, run};
use kas_local::{Cluster, ClusterSpec, Role};

#[derive(Parser)]
#[command(
    name = "kas-bench",
    about = "Load and side-by-side benchmarks for Kubernetes API servers"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Closed-loop HTTP/2 load of one request against any endpoint.
    Load(LoadArgs),
    /// The same request answered by extensions, sent through aggregator → core →
    /// extensions and straight to extensions with a peer certificate, alternating rounds.
    Hops(HopsArgs),
    /// Start-to-ready time and idle RSS of each role.
    Roles(RolesArgs),
    /// GET, LIST, CREATE, UPDATE, APPLY (server-side) or WATCH of configmaps against any
    /// Kubernetes API endpoint.
    Api(ApiArgs),
    /// API Priority and Fairness isolation: one user floods LISTs of `--objects` config maps
    /// while a second user in its own flow schema GETs one (idle first, then under the
    /// flood) and the controller manager renews a leader-election Lease every 2 s.
    ApfIsolation(kas_e2e::apf_load::Args),
    /// Raw etcd puts of configmap-sized values: the ceiling of CREATE against that etcd.
    EtcdPut(EtcdPutArgs),
    /// Loads RoleBindings and ClusterRoles, then GETs of one configmap as the admin and as
    /// an RBAC-authorized user, alternating rounds; with `--pid`, the RSS that process grew
    /// by while the policy loaded.
    Rbac(RbacArgs),
    /// One `spec.nodeName=` watch of pods per node through the aggregator while pods are
    /// written at a fixed rate: event delivery and CPU per event with core's watch-cache
    /// index and without it (`--watch-cache-index=false`), a fresh cluster for each,
    /// alternating.
    NodeWatch(NodeWatchArgs),
}

#[derive(Args)]
struct NodeWatchArgs {
    #[arg(long)]
    bin_dir: Option<PathBuf>,
    /// Watchers, one per node.
    #[arg(long, default_value_t = 5_000)]
    nodes: usize,
    /// Pods, spread over the nodes (default: one per node).
    #[arg(long)]
    pods: Option<usize>,
    #[arg(long, default_value_t = 100)]
    writes_per_second: u64,
    #[arg(long, default_value_t = 30)]
    seconds: u64,
    /// Rounds of each mode.
    #[arg(long, default_value_t = 2)]
    rounds: usize,
    /// Watch streams per HTTP/2 connection to the aggregator.
    #[arg(long, default_value_t = 100)]
    streams_per_connection: usize,
    /// Seconds the open watches are left idle first: core's CPU per event is also given
    /// above that idle rate.
    #[arg(long, default_value_t = 10)]
    idle_seconds: u64,
}

#[derive(Args)]
struct RbacArgs {
    /// Base URL of the aggregator, e.g. https://127.0.0.1:6443
    #[arg(long)]
    url: String,
    /// The admin's bearer token.
    #[arg(long)]
    token: String,
    #[arg(long)]
    ca_file: PathBuf,
    /// The user's client certificate and key (the cluster CA's; `kas-local kubeconfig`
    /// issues one).
    #[arg(long)]
    client_cert: PathBuf,
    #[arg(long)]
    client_key: PathBuf,
    /// The user name of that certificate (its common name).
    #[arg(long)]
    user: String,
    #[arg(long, default_value = "default")]
    namespace: String,
    #[arg(long, default_value_t = 10_000)]
    role_bindings: usize,
    #[arg(long, default_value_t = 1_000)]
    cluster_roles: usize,
    /// A process whose RSS to report before and after loading (an aggregator's pid).
    #[arg(long)]
    pid: Option<u32>,
    #[arg(short, long, default_value_t = 64)]
    concurrency: usize,
    #[arg(long, default_value_t = 5)]
    seconds: u64,
    #[arg(long, default_value_t = 3)]
    rounds: usize,
}

#[derive(Args)]
struct ApiArgs {
    /// Base URL, e.g. https://127.0.0.1:6443
    #[arg(long)]
    url: String,
    /// Bearer token.
    #[arg(long)]
    token: String,
    #[arg(long)]
    ca_file: PathBuf,
    #[arg(long, value_enum)]
    op: kas_e2e::api_load::Op,
    #[arg(long, default_value = "default")]
    namespace: String,
    /// What to read and write.
    #[arg(long, value_enum, default_value = "configmaps")]
    resource: kas_e2e::api_load::Resource,
    #[arg(short, long, default_value_t = 64)]
    concurrency: usize,
    #[arg(long, default_value = "10")]
    seconds: u64,
    /// LIST: objects in the listed set.
    #[arg(long, default_value_t = 100)]
    objects: usize,
    /// Bytes of data per object.
    #[arg(long, default_value_t = 1024)]
    object_size: usize,
    /// WATCH: concurrent watchers of one object.
    #[arg(long, default_value_t = 100)]
    watchers: usize,
    /// WATCH: writes per second to the watched object.
    #[arg(long, default_value_t = 100)]
    writes_per_second: u64,
    /// LIST: extra query, e.g. `resourceVersion=0`, or
    /// `resourceVersionMatch=Exact&resourceVersion={rv}` to read from etcd.
    #[arg(long, default_value = "")]
    list_query: String,
    /// Ask for Kubernetes protobuf, as client-go's typed clients do (GET, LIST, WATCH).
    #[arg(long)]
    protobuf: bool,
}

#[derive(Args)]
struct EtcdPutArgs {
    /// etcd client URL, e.g. http://127.0.0.1:2379
    #[arg(long)]
    endpoint: String,
    #[arg(short, long, default_value_t = 64)]
    concurrency: usize,
    #[arg(long, default_value = "10")]
    seconds: u64,
    /// Bytes of data per value (wrapped in a ConfigMap's JSON, as the API server writes).
    #[arg(long, default_value_t = 1024)]
    object_size: usize,
}

#[derive(Args)]
struct LoadArgs {
    /// Base URL, e.g. https://127.0.0.1:6443
    #[arg(long)]
    url: String,
    #[arg(long, default_value = "/version")]
    path: String,
    #[arg(long, default_value = "GET")]
    method: String,
    /// Bearer token.
    #[arg(long)]
    token: Option<String>,
    #[arg(long)]
    ca_file: PathBuf,
    #[arg(long, requires = "client_key")]
    client_cert: Option<PathBuf>,
    #[arg(long)]
    client_key: Option<PathBuf>,
    /// Extra header, `Name: value`; repeatable.
    #[arg(long = "header")]
    headers: Vec<String>,
    #[arg(short, long, default_value_t = 64)]
    concurrency: usize,
    #[arg(long, default_value_t = 1)]
    connections: usize,
    #[arg(long, default_value = "10")]
    seconds: u64,
    /// Processes (`name=pid`, repeatable) whose CPU time per answered request the run
    /// reports (user + system, from /proc).
    #[arg(long = "pid")]
    pids: Vec<String>,
}

#[derive(Args)]
struct HopsArgs {
    /// Directory holding the role binaries (default: beside kas-bench).
    #[arg(long)]
    bin_dir: Option<PathBuf>,
    #[arg(short, long, default_value_t = 64)]
    concurrency: usize,
    #[arg(long, default_value_t = 5)]
    seconds: u64,
    #[arg(long, default_value_t = 3)]
    rounds: usize,
}

#[derive(Args)]
struct RolesArgs {
    #[arg(long)]
    bin_dir: Option<PathBuf>,
    /// Starts of each role to take the median of.
    #[arg(long, default_value_t = 5)]
    starts: usize,
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    match cli.command {
        Command::Load(args) => rt.block_on(load(args)),
        Command::Hops(args) => rt.block_on(hops(args)),
        Command::Roles(args) => roles(args),
        Command::Api(args) => rt.block_on(api(args)),
        Command::ApfIsolation(args) => rt.block_on(kas_e2e::apf_load::main(args)),
        Command::EtcdPut(args) => rt.block_on(etcd_put(args)),
        Command::Rbac(args) => rt.block_on(rbac(args)),
        Command::NodeWatch(args) => rt.block_on(node_watch(args)),
    }
}

fn header_map(pairs: &[(String, String)]) -> Result<HeaderMap> {
    let mut map = HeaderMap::new();
    for (k, v) in pairs {
        map.append(
            HeaderName::from_bytes(k.as_bytes())?,
            HeaderValue::from_str(v)?,
        );
    }
    Ok(map)
}

async fn load(args: LoadArgs) -> Result<()> {
    let client = match (&args.client_cert, &args.client_key) {
        (Some(c), Some(k)) => Some((c.as_path(), k.as_path())),
        _ => None,
    };
    let mut pairs = Vec::new();
    if let Some(token) = &args.token {
        pairs.push(("authorization".to_owned(), format!("Bearer {token}")));
    }
    for h in &args.headers {
        let Some((k, v)) = h.split_once(':') else {
            bail!("header {h:?} is not `Name: value`")
        };
        pairs.push((k.trim().to_owned(), v.trim().to_owned()));
    }
    let spec = LoadSpec {
        base: args.url.parse()?,
        tls: Tls::new(&args.ca_file, client, Proto::H2)?,
        method: Method::from_bytes(args.method.as_bytes())?,
        path: args.path,
        headers: header_map(&pairs)?,
        body: bytes::Bytes::new(),
        concurrency: args.concurrency,
        connections: args.connections,
        duration: Duration::from_secs(args.seconds),
    };
    let mut pids = Vec::new();
    for p in &args.pids {
        let Some((name, pid)) = p.split_once('=') else {
            bail!("--pid {p:?} is not `name=pid`")
        };
        pids.push((name, pid.parse::<u32>()?));
    }
    let before = cpu_ticks(&pids);
    let result = run(&spec).await?;
    let after = cpu_ticks(&pids);
    println!("{}", result.summary());
    if !pids.is_empty() {
        let cpu = cpu_per_request(&pids, &before, &after, result.answered());
        println!("CPU µs per request: {}", show_cpu(&cpu));
    }
    Ok(())
}

async fn api(args: ApiArgs) -> Result<()> {
    let mut headers = vec![("authorization".into(), format!("Bearer {}", args.token))];
    if args.protobuf {
        headers.push((
            "accept".into(),
            kas_e2e::api_load::PROTOBUF_ACCEPT.to_owned(),
        ));
    }
    let spec = kas_e2e::api_load::Spec {
        target: kas_e2e::api_load::Target {
            base: args.url.parse()?,
            tls: Tls::new(&args.ca_file, None, Proto::H2)?,
            headers: header_map(&headers)?,
            namespace: args.namespace,
            resource: args.resource,
        },
        op: args.op,
        concurrency: args.concurrency,
        duration: Duration::from_secs(args.seconds),
        objects: args.objects,
        object_size: args.object_size,
        watchers: args.watchers,
        writes_per_second: args.writes_per_second,
        list_query: args.list_query,
    };
    let result = kas_e2e::api_load::run(&spec).await?;
    println!("{:?}: {}", args.op, result.summary());
    Ok(())
}

async fn rbac(args: RbacArgs) -> Result<()> {
    let spec = kas_e2e::rbac_load::Spec {
        base: args.url.parse()?,
        admin_tls: Tls::new(&args.ca_file, None, Proto::H2)?,
        admin_headers: header_map(&[("authorization".into(), format!("Bearer {}", args.token))])?,
        user_tls: Tls::new(
            &args.ca_file,
            Some((&args.client_cert, &args.client_key)),
            Proto::H2,
        )?,
        user: args.user,
        namespace: args.namespace,
        role_bindings: args.role_bindings,
        cluster_roles: args.cluster_roles,
        concurrency: args.concurrency,
        duration: Duration::from_secs(args.seconds),
        rounds: args.rounds,
    };
    let before = args.pid.map(rss_kib).transpose()?;
    let loaded = kas_e2e::rbac_load::load(&spec).await?;
    println!(
        "loaded {} RoleBindings and {} ClusterRoles: {} KiB of JSON",
        spec.role_bindings,
        spec.cluster_roles,
        loaded.json_bytes / 1024
    );
    // Let the watches deliver, and the allocator settle.
    tokio::time::sleep(Duration::from_secs(2)).await;
    if let (Some(pid), Some(before)) = (args.pid, before) {
        let after = rss_kib(pid)?;
        println!(
            "pid {pid}: RSS {before} KiB -> {after} KiB (+{} KiB)",
            after.saturating_sub(before)
        );
    }
    for (i, (admin, user)) in kas_e2e::rbac_load::measure(&spec).await?.iter().enumerate() {
        println!(
            "round {i}: admin {}; user {}; user/admin {:.3}",
            admin.summary(),
            user.summary(),
            user.throughput() / admin.throughput()
        );
    }
    Ok(())
}

async fn etcd_put(args: EtcdPutArgs) -> Result<()> {
    let client = etcd_client::Client::connect([args.endpoint.as_str()], None).await?;
    let value = kas_e2e::api_load::config_map(Some("raw"), args.object_size, serde_json::json!({}));
    let value = serde_json::to_vec(&value)?;
    let start = std::time::Instant::now();
    let deadline = start + Duration::from_secs(args.seconds);
    let mut tasks = Vec::new();
    for w in 0..args.concurrency.max(1) {
        let (mut kv, value) = (client.kv_client(), value.clone());
        tasks.push(tokio::spawn(async move {
            let mut r = kas_e2e::load::LoadResult::default();
            let mut seq = 0u64;
            while std::time::Instant::now() < deadline {
                let key = format!("/kas-bench/raw/{w}-{seq}");
                seq += 1;
                let sent = std::time::Instant::now();
                match kv.put(key, value.clone(), None).await {
                    Ok(_) => {
                        r.latencies.push(sent.elapsed());
                        *r.codes.entry(200).or_default() += 1;
                    }
                    Err(_) => r.errors += 1,
                }
            }
            r
        }));
    }
    let mut out = kas_e2e::load::LoadResult::default();
    for task in tasks {
        let r = task.await?;
        for (code, n) in r.codes {
            *out.codes.entry(code).or_default() += n;
        }
        out.errors += r.errors;
        out.latencies.extend(r.latencies);
    }
    out.latencies.sort();
    out.elapsed = start.elapsed();
    // Leave the etcd as it was found.
    client
        .kv_client()
        .delete(
            "/kas-bench/raw/",
            Some(etcd_client::DeleteOptions::new().with_prefix()),
        )
        .await?;
    println!("etcd put: {}", out.summary());
    Ok(())
}

fn bin_dir(arg: Option<PathBuf>) -> PathBuf {
    arg.unwrap_or_else(ClusterSpec::default_bin_dir)
}

async fn hops(args: HopsArgs) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let mut spec = ClusterSpec::new(dir.path());
    spec.bin_dir = bin_dir(args.bin_dir);
    let cluster = Cluster::up(&spec).context("starting the cluster")?;
    let pki = cluster.pki().clone();
    let path = "/apis/bench.example.com/v1/nothing".to_owned();
    let via = LoadSpec {
        base: cluster.url(Role::Aggregator, 0).parse()?,
        tls: Tls::new(&pki.ca.cert, None, Proto::H2)?,
        method: Method::GET,
        path: path.clone(),
        headers: header_map(&[(
            "authorization".into(),
            format!("Bearer {}", pki.admin_token),
        )])?,
        body: bytes::Bytes::new(),
        concurrency: args.concurrency,
        connections: 1,
        duration: Duration::from_secs(args.seconds),
    };
    let fp = &pki.front_proxy_client;
    let direct = LoadSpec {
        base: cluster.url(Role::Extensions, 0).parse()?,
        tls: Tls::new(&pki.ca.cert, Some((&fp.cert, &fp.key)), Proto::H2)?,
        headers: header_map(&[
            ("x-remote-user".into(), "admin".into()),
            ("x-remote-group".into(), "system:masters".into()),
        ])?,
        ..via.clone()
    };
    // Warm both paths (connections, pools) before measuring.
    for s in [&via, &direct] {
        let mut warm = s.clone();
        warm.duration = Duration::from_secs(1);
        run(&warm).await?;
    }
    let mut ratios = Vec::new();
    let mut added = Vec::new();
    let mut stage_ratios = Vec::new();
    let pids: Vec<(&str, u32)> = [
        ("aggregator", Role::Aggregator),
        ("core", Role::Core),
        ("extensions", Role::Extensions),
    ]
    .into_iter()
    .filter_map(|(name, role)| Some((name, cluster.pid(role, 0)?)))
    .chain([("client", std::process::id())])
    .collect();
    for round in 1..=args.rounds {
        let before = cpu_ticks(&pids);
        let a = run(&via).await?;
        let between = cpu_ticks(&pids);
        let b = run(&direct).await?;
        let after = cpu_ticks(&pids);
        check(&a)?;
        check(&b)?;
        let via_cpu = cpu_per_request(&pids, &before, &between, a.answered());
        let direct_cpu = cpu_per_request(&pids, &between, &after, b.answered());
        println!(
            "round {round}: CPU µs per request via:    {}",
            show_cpu(&via_cpu)
        );
        println!(
            "round {round}: CPU µs per request direct: {}",
            show_cpu(&direct_cpu)
        );
        // With a core of its own per role, a pipeline runs at the pace of its costliest
        // stage: the ratio the same code reaches when the roles do not share 2 cores.
        let costliest = |cpu: &[(&str, f64)], stages: &[&str]| {
            cpu.iter()
                .filter(|(n, _)| stages.contains(n))
                .map(|(_, us)| *us)
                .fold(0.0, f64::max)
        };
        let stage_ratio = costliest(&direct_cpu, &["extensions"])
            / costliest(&via_cpu, &["aggregator", "core", "extensions"]);
        stage_ratios.push(stage_ratio);
        let ratio = a.throughput() / b.throughput();
        let per_hop =
            (a.percentile(50.0).as_secs_f64() - b.percentile(50.0).as_secs_f64()) / 2.0 * 1e3;
        println!("round {round}: via aggregator+core  {}", a.summary());
        println!("round {round}: straight to extensions {}", b.summary());
        println!("round {round}: throughput ratio {ratio:.3}, added p50 per hop {per_hop:.3} ms");
        ratios.push(ratio);
        added.push(per_hop);
    }
    println!(
        "median over {} rounds at {} streams: throughput ratio {:.3}, added p50 per hop {:.3} ms",
        args.rounds,
        args.concurrency,
        median(&mut ratios),
        median(&mut added)
    );
    println!(
        "median ratio of the costliest stage's CPU per request (extensions direct / slowest role via): {:.3}",
        median(&mut stage_ratios)
    );
    drop(cluster);
    Ok(())
}

/// utime + stime of each process, in clock ticks (`/proc/<pid>/stat` fields 14 and 15).
fn cpu_ticks(pids: &[(&str, u32)]) -> Vec<u64> {
    pids.iter()
        .map(|(_, pid)| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // The command may hold spaces; fields count from after its closing parenthesis.
            let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
            let field = |n: usize| -> u64 {
                rest.split_whitespace()
                    .nth(n - 3)
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0)
            };
            field(14) + field(15)
        })
        .collect()
}

/// CPU microseconds each process spent per answered request between two samples.
fn cpu_per_request<'a>(
    pids: &[(&'a str, u32)],
    from: &[u64],
    to: &[u64],
    requests: u64,
) -> Vec<(&'a str, f64)> {
    // /proc reports in USER_HZ, which Linux fixes at 100 on every architecture it runs.
    let tick = 1e6 / 100.0;
    pids.iter()
        .zip(from.iter().zip(to))
        .map(|((name, _), (a, b))| (*name, (b - a) as f64 * tick / requests.max(1) as f64))
        .collect()
}

fn show_cpu(cpu: &[(&str, f64)]) -> String {
    cpu.iter()
        .map(|(n, us)| format!("{n} {us:.1}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn check(r: &LoadResult) -> Result<()> {
    if r.errors > 0 || r.codes.keys().any(|c| *c != 404) {
        bail!("unexpected answers: {}", r.summary());
    }
    Ok(())
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn roles(args: RolesArgs) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let mut spec = ClusterSpec::new(dir.path());
    spec.bin_dir = bin_dir(args.bin_dir);
    let cluster = Cluster::up(&spec).context("starting the cluster")?;
    std::thread::sleep(Duration::from_secs(2));
    let ca = std::fs::read(&cluster.pki().ca.cert)?;
    for role in [Role::Extensions, Role::Core, Role::Aggregator] {
        let delegates = match role.delegate() {
            Some(next) => cluster.urls(next),
            None => Vec::new(),
        };
        let mut times = Vec::new();
        for _ in 0..args.starts {
            let port = std::net::TcpListener::bind("127.0.0.1:0")?
                .local_addr()?
                .port();
            let flags = kas_local::cluster::role_args(
                role,
                port,
                cluster.pki(),
                &cluster.etcd_url(),
                &delegates,
            );
            let started = Instant::now();
            let mut child = std::process::Command::new(spec.bin_dir.join(role.binary_name()))
                .args(&flags)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()?;
            let url = format!("https://127.0.0.1:{port}/readyz");
            let ready = loop {
                if let Ok((200, _)) = kas_local::probe::get(&url, &ca, None, None) {
                    break started.elapsed();
                }
                if started.elapsed() > Duration::from_secs(10) {
                    let _ = child.kill();
                    bail!("{role} did not become ready");
                }
                std::thread::sleep(Duration::from_millis(2));
            };
            let _ = child.kill();
            let _ = child.wait();
            times.push(ready.as_secs_f64() * 1e3);
        }
        let pid = cluster.pid(role, 0).context("pid")?;
        let rss = rss_kib(pid)?;
        println!(
            "{role}: start-to-ready median {:.0} ms over {} starts; idle RSS {:.1} MiB",
            median(&mut times),
            args.starts,
            rss as f64 / 1024.0
        );
    }
    Ok(())
}

/// What one mode measured in one round: delivery p50 and p99 (ms), the CPU µs per event
/// of core and of the aggregator, and core's above what it spends with the watches idle.
struct NodeWatchRound {
    p50: f64,
    p99: f64,
    core: f64,
    aggregator: f64,
    core_above_idle: f64,
}

async fn node_watch(args: NodeWatchArgs) -> Result<()> {
    let mut by_mode: [Vec<NodeWatchRound>; 2] = Default::default();
    for round in 1..=args.rounds {
        // Alternate which mode goes first, so that drift on the machine hits both.
        let order = if round % 2 == 1 {
            [true, false]
        } else {
            [false, true]
        };
        for indexed in order {
            let r = node_watch_round(&args, indexed).await?;
            let mode = if indexed { "index   " } else { "no index" };
            println!(
                "round {round} {mode}: delivery p50 {:.2} ms, p99 {:.2} ms; CPU µs per event: core {:.1} ({:.1} above idle), aggregator {:.1}",
                r.p50, r.p99, r.core, r.core_above_idle, r.aggregator
            );
            by_mode[usize::from(!indexed)].push(r);
        }
    }
    for (mode, rounds) in ["index", "no index"].iter().zip(&by_mode) {
        let field = |f: fn(&NodeWatchRound) -> f64| -> f64 {
            median(&mut rounds.iter().map(f).collect::<Vec<_>>())
        };
        println!(
            "median of {} rounds, {mode}: delivery p50 {:.2} ms, p99 {:.2} ms; CPU µs per event: core {:.1} ({:.1} above idle), aggregator {:.1}",
            rounds.len(),
            field(|r| r.p50),
            field(|r| r.p99),
            field(|r| r.core),
            field(|r| r.core_above_idle),
            field(|r| r.aggregator)
        );
    }
    Ok(())
}

async fn node_watch_round(args: &NodeWatchArgs, indexed: bool) -> Result<NodeWatchRound> {
    use kas_e2e::node_watch;
    let dir = tempfile::tempdir()?;
    let mut spec = ClusterSpec::new(dir.path());
    spec.bin_dir = bin_dir(args.bin_dir.clone());
    if !indexed {
        let core = spec.extra_args.entry(Role::Core).or_default();
        core.push("--watch-cache-index=false".to_owned());
    }
    let cluster = Cluster::up(&spec).context("starting the cluster")?;
    let pki = cluster.pki().clone();
    let load = node_watch::Spec {
        target: kas_e2e::api_load::Target {
            base: cluster.url(Role::Aggregator, 0).parse()?,
            tls: Tls::new(&pki.ca.cert, None, Proto::H2)?,
            headers: header_map(&[(
                "authorization".into(),
                format!("Bearer {}", pki.admin_token),
            )])?,
            namespace: "default".to_owned(),
            resource: kas_e2e::api_load::Resource::Pods,
        },
        nodes: args.nodes,
        pods: args.pods.unwrap_or(args.nodes),
        writes_per_second: args.writes_per_second,
        duration: Duration::from_secs(args.seconds),
        streams_per_connection: args.streams_per_connection,
        idle: Duration::from_secs(args.idle_seconds),
    };
    node_watch::prepare(&load).await?;
    let pids: Vec<(&str, u32)> = [("core", Role::Core), ("aggregator", Role::Aggregator)]
        .into_iter()
        .filter_map(|(name, role)| Some((name, cluster.pid(role, 0)?)))
        .collect();
    let mut samples = Vec::new();
    let measured = node_watch::run(&load, || samples.push(cpu_ticks(&pids))).await?;
    drop(cluster);
    let r = &measured.result;
    if r.errors > 0 || r.answered() < measured.writes {
        bail!(
            "{} events of another node's pods, {} of {} writes delivered",
            r.errors,
            r.answered(),
            measured.writes
        );
    }
    let [idle, before, after] = samples.as_slice() else {
        bail!("CPU was not sampled");
    };
    let cpu = cpu_per_request(&pids, before, after, measured.writes);
    let of = |name: &str| {
        cpu.iter()
            .find(|(n, _)| *n == name)
            .map_or(0.0, |(_, us)| *us)
    };
    // Core's idle rate, over as long as the writing took, per event.
    let idle_cpu = cpu_per_request(&pids, idle, before, measured.writes);
    let idle_share = idle_cpu.first().map_or(0.0, |(_, us)| *us) * args.seconds as f64
        / args.idle_seconds.max(1) as f64;
    Ok(NodeWatchRound {
        p50: r.percentile(50.0).as_secs_f64() * 1e3,
        p99: r.percentile(99.0).as_secs_f64() * 1e3,
        core: of("core"),
        aggregator: of("aggregator"),
        core_above_idle: of("core") - idle_share,
    })
}

fn rss_kib(pid: u32) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .context("VmRSS")
}
