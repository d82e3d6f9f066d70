//! `kas-local`: start and stop a local cluster (etcd plus every role) on loopback.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use kas_local::{Cluster, ClusterSpec, ClusterState, Role, StopOutcome};

#[derive(Parser, Debug)]
#[command(
    name = "kas-local",
    version,
    about = "Run etcd and the three API server roles on loopback"
)]
struct Cli {
    /// Where the PKI, etcd data, logs, kubeconfig and cluster.json live.
    #[arg(
        long,
        global = true,
        env = "KAS_LOCAL_STATE_DIR",
        default_value = ".local-cluster"
    )]
    state_dir: PathBuf,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Start etcd and every replica, write a kubeconfig, and return once the aggregator is
    /// ready. The processes keep running; stop them with `down`.
    Up {
        #[arg(long, default_value_t = 1)]
        aggregator_replicas: usize,
        #[arg(long, default_value_t = 1)]
        core_replicas: usize,
        #[arg(long, default_value_t = 1)]
        extensions_replicas: usize,
        /// Where aggregator, core-apiserver and extensions-apiserver are [default: the
        /// directory of this executable].
        #[arg(long)]
        bin_dir: Option<PathBuf>,
    },
    /// Stop what `up` started from this state directory.
    Down,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = std::path::absolute(&cli.state_dir)
        .with_context(|| format!("resolving {}", cli.state_dir.display()))
        .and_then(|state_dir| match cli.command {
            Command::Up {
                aggregator_replicas,
                core_replicas,
                extensions_replicas,
                bin_dir,
            } => {
                let mut spec = ClusterSpec::new(&state_dir);
                spec.aggregator_replicas = aggregator_replicas;
                spec.core_replicas = core_replicas;
                spec.extensions_replicas = extensions_replicas;
                if let Some(bin_dir) = bin_dir {
                    spec.bin_dir = bin_dir;
                }
                up(&spec)
            }
            Command::Down => down(&state_dir),
        });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kas-local: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn up(spec: &ClusterSpec) -> anyhow::Result<()> {
    println!(
        "starting etcd and {} aggregator, {} core-apiserver, {} extensions-apiserver replica(s) from {}",
        spec.aggregator_replicas,
        spec.core_replicas,
        spec.extensions_replicas,
        spec.bin_dir.display()
    );
    println!("logs: {}", spec.state_dir.join("logs").display());
    let cluster = Cluster::up(spec).context("starting the cluster")?;
    let kubeconfig = cluster.kubeconfig_path().to_path_buf();
    let aggregator = cluster.url(Role::Aggregator, 0);
    // From here on the processes outlive this one.
    let state = cluster.detach();

    println!();
    println!("  {:<24} {:>7}  {:<24} log", "process", "pid", "url");
    println!(
        "  {:<24} {:>7}  {:<24} {}",
        "etcd",
        state.etcd.pid,
        state.etcd.url,
        state.etcd.log.display()
    );
    for server in &state.servers {
        let p = &server.process;
        println!(
            "  {:<24} {:>7}  {:<24} {}",
            server.name(),
            p.pid,
            p.url,
            p.log.display()
        );
    }
    println!();
    println!("The API is served at {aggregator}. To use it:");
    println!();
    println!("  export KUBECONFIG={}", kubeconfig.display());
    println!("  kubectl version");
    println!();
    println!(
        "Stop it with: kas-local down --state-dir {}",
        state.state_dir.display()
    );
    Ok(())
}

fn down(state_dir: &Path) -> anyhow::Result<()> {
    if ClusterState::read(state_dir)?.is_none() {
        println!(
            "no cluster recorded in {}; nothing to stop",
            state_dir.display()
        );
        return Ok(());
    }
    let stopped = Cluster::down_state_dir(state_dir).context("stopping the cluster")?;
    let mut survivors = 0;
    for s in &stopped {
        let what = match s.outcome {
            StopOutcome::NotRunning => "was not running",
            StopOutcome::Terminated => "stopped",
            StopOutcome::Killed => "killed after the grace period",
            StopOutcome::StillRunning => {
                survivors += 1;
                "STILL RUNNING after SIGKILL"
            }
        };
        println!("{:<24} pid {:>7}  {what}", s.name, s.pid);
    }
    anyhow::ensure!(
        survivors == 0,
        "{survivors} process(es) survived; cluster.json kept in {}",
        state_dir.display()
    );
    Ok(())
}
