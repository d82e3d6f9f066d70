//! `kas-local`: start and stop a local cluster (etcd plus every role) on loopback.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use kas_local::deploy_pki::{self, DeployPkiSpec};
use kas_local::{Cluster, ClusterSpec, ClusterState, Role, StopOutcome};

#[derive(Parser, Debug)]
#[command(
    name = "kas-local",
    version,
    about = "Run etcd and the three API server roles on loopback"
)]
struct Cli {
    /// Where the PKI, etcd data, logs, kubeconfig and cluster.json live [default:
    /// .local-cluster in the repository].
    #[arg(long, global = true, env = "KAS_LOCAL_STATE_DIR")]
    state_dir: Option<PathBuf>,

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
        /// Send requests for extensions-apiserver's groups through core-apiserver instead
        /// of to extensions straight (the aggregator's `--extensions-endpoints`).
        #[arg(long)]
        no_extensions_routing: bool,
        /// Run etcd with TLS only and client-certificate authentication (its own CA under
        /// the state directory's pki/), as production etcd runs.
        #[arg(long)]
        etcd_tls: bool,
        /// Keep core's ServiceAccount admission plugin on, as kube-apiserver has it (off by
        /// default, as envtest runs kube-apiserver, since nothing creates each namespace's
        /// `default` ServiceAccount unless kube-controller-manager runs beside the cluster).
        #[arg(long)]
        service_account_admission: bool,
        /// Encrypt stored values as this `EncryptionConfiguration` says (every role's
        /// `--encryption-provider-config`).
        #[arg(long)]
        encryption_provider_config: Option<PathBuf>,
        /// Audit as this `audit.k8s.io/v1` Policy says: each replica writes its events to
        /// `audit/<role>-<index>.log` in the state directory.
        #[arg(long)]
        audit_policy_file: Option<PathBuf>,
        /// How the audit log is written (`--audit-log-mode`: blocking, blocking-strict or
        /// batch).
        #[arg(long, default_value = "blocking")]
        audit_log_mode: String,
        /// A further flag for all three roles, as kube-apiserver takes it (repeatable), e.g.
        /// `--apiserver-arg=--enable-priority-and-fairness=false`.
        #[arg(
            long = "apiserver-arg",
            value_name = "FLAG",
            allow_hyphen_values = true
        )]
        apiserver_args: Vec<String>,
    },
    /// Stop what `up` started from this state directory.
    Down,
    /// Write a kubeconfig for a user other than the admin, authenticating with a client
    /// certificate the cluster's CA signs now, and print how to use it. The user has no
    /// permission until RBAC grants one (e.g. `kubectl create rolebinding`).
    Kubeconfig {
        /// The user name (the certificate's common name).
        #[arg(long)]
        user: String,
        /// A group of the user (the certificate's organization).
        #[arg(long)]
        group: Option<String>,
    },
    /// Write the PKI of a deployment on Kubernetes (deploy/manifests) into OUT: serving
    /// certificates naming each role's Service, the CAs, the front-proxy client
    /// certificate, an admin certificate and token, and a kubeconfig for
    /// `kubectl port-forward` of the aggregator. CAs and client credentials already in OUT
    /// are kept; serving certificates are issued again.
    Pki {
        /// Where to write; `deploy/manifests/base/pki` is what the manifests read.
        #[arg(long)]
        out: PathBuf,
        /// A further DNS name or IP address of every serving certificate (repeatable),
        /// e.g. the aggregator's LoadBalancer name.
        #[arg(long = "dns", value_name = "NAME")]
        dns: Vec<String>,
        /// The namespace the manifests deploy to.
        #[arg(long, default_value = kas_local::deploy_pki::DEFAULT_NAMESPACE)]
        namespace: String,
        /// The cluster's DNS domain.
        #[arg(long, default_value = kas_local::deploy_pki::DEFAULT_CLUSTER_DOMAIN)]
        cluster_domain: String,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let state_dir = cli.state_dir.unwrap_or_else(default_state_dir);
    let result = std::path::absolute(&state_dir)
        .with_context(|| format!("resolving {}", state_dir.display()))
        .and_then(|state_dir| match cli.command {
            Command::Up {
                aggregator_replicas,
                core_replicas,
                extensions_replicas,
                bin_dir,
                no_extensions_routing,
                etcd_tls,
                service_account_admission,
                encryption_provider_config,
                audit_policy_file,
                audit_log_mode,
                apiserver_args,
            } => {
                let mut spec = ClusterSpec::new(&state_dir);
                spec.aggregator_replicas = aggregator_replicas;
                spec.core_replicas = core_replicas;
                spec.extensions_replicas = extensions_replicas;
                spec.route_extensions = !no_extensions_routing;
                spec.etcd_tls = etcd_tls;
                if service_account_admission {
                    spec.disabled_admission_plugins
                        .retain(|p| p != "ServiceAccount");
                }
                if let Some(bin_dir) = bin_dir {
                    spec.bin_dir = bin_dir;
                }
                if let Some(config) = encryption_provider_config {
                    let config = std::path::absolute(&config)
                        .with_context(|| format!("resolving {}", config.display()))?;
                    for role in [Role::Aggregator, Role::Core, Role::Extensions] {
                        spec.extra_args
                            .entry(role)
                            .or_default()
                            .push(format!("--encryption-provider-config={}", config.display()));
                    }
                }
                if let Some(policy) = audit_policy_file {
                    let policy = std::path::absolute(&policy)
                        .with_context(|| format!("resolving {}", policy.display()))?;
                    spec.audit_policy = Some(policy);
                    for role in [Role::Aggregator, Role::Core, Role::Extensions] {
                        spec.extra_args
                            .entry(role)
                            .or_default()
                            .push(format!("--audit-log-mode={audit_log_mode}"));
                    }
                }
                for role in [Role::Aggregator, Role::Core, Role::Extensions] {
                    spec.extra_args
                        .entry(role)
                        .or_default()
                        .extend(apiserver_args.iter().cloned());
                }
                up(&spec)
            }
            Command::Down => down(&state_dir),
            Command::Kubeconfig { user, group } => user_kubeconfig(&state_dir, &user, group),
            Command::Pki {
                out,
                dns,
                namespace,
                cluster_domain,
            } => pki(
                &out,
                &DeployPkiSpec {
                    namespace,
                    cluster_domain,
                    extra_names: dns,
                },
            ),
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
    let cluster = Cluster::up(spec).map_err(|e| match e {
        kas_local::Error::AlreadyRunning { .. } => {
            anyhow::anyhow!("{e}; stop it first with: {}", stop_command(&spec.state_dir))
        }
        e => anyhow::Error::new(e).context("starting the cluster"),
    })?;
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
    println!("  export KUBECONFIG={}", shell_quote(&kubeconfig));
    println!("  kubectl version");
    println!();
    println!(
        "The admin is in system:masters. For a user whose permissions RBAC decides: {}",
        launcher_command(&state.state_dir, "kubeconfig --user alice")
    );
    println!();
    println!("Stop it with: {}", stop_command(&state.state_dir));
    Ok(())
}

/// `<repo>/.local-cluster`, wherever the launcher runs from.
fn default_state_dir() -> PathBuf {
    kas_local::repo_root().join(".local-cluster")
}

/// How to stop the cluster in `state_dir`: the README's `deploy/local/cluster down`, as
/// typed from the repository root (the script's full path from anywhere else), with
/// `--state-dir` only when it is not the default.
fn stop_command(state_dir: &Path) -> String {
    launcher_command(state_dir, "down")
}

/// `deploy/local/cluster <args>` as typed from where the user is (see [`stop_command`]).
fn launcher_command(state_dir: &Path, args: &str) -> String {
    let root = kas_local::repo_root();
    let script = if std::env::current_dir().is_ok_and(|cwd| same_path(&cwd, root)) {
        "deploy/local/cluster".to_string()
    } else {
        shell_quote(&root.join("deploy/local/cluster"))
    };
    if same_path(state_dir, &default_state_dir()) {
        format!("{script} {args}")
    } else {
        format!("{script} {args} --state-dir {}", shell_quote(state_dir))
    }
}

fn same_path(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// `path` as a shell word: as it is when it needs no quoting, else in single quotes.
fn shell_quote(path: &Path) -> String {
    let text = path.display().to_string();
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:,@=%".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

fn pki(out: &Path, spec: &DeployPkiSpec) -> anyhow::Result<()> {
    let pki = deploy_pki::write(out, spec).context("writing the deployment PKI")?;
    println!("wrote the PKI to {}", pki.dir.display());
    for role in Role::ALL {
        println!(
            "  {:<24} {}",
            role.binary_name(),
            spec.serving_names(role).join(", ")
        );
    }
    println!();
    println!("Then: kubectl apply -k deploy/manifests/overlays/dev (or ha)");
    println!(
        "      kubectl -n {} port-forward svc/{} {}:443",
        spec.namespace,
        deploy_pki::service_name(Role::Aggregator),
        deploy_pki::CONTAINER_PORT
    );
    println!(
        "      export KUBECONFIG={}",
        shell_quote(&std::path::absolute(out.join("kubeconfig"))?)
    );
    Ok(())
}

fn user_kubeconfig(state_dir: &Path, user: &str, group: Option<String>) -> anyhow::Result<()> {
    let state = ClusterState::read(state_dir)?.with_context(|| {
        format!(
            "no cluster was started from {}; start one with `deploy/local/cluster up`",
            state_dir.display()
        )
    })?;
    let aggregator = state
        .servers
        .iter()
        .find(|s| s.role == Role::Aggregator)
        .context("the cluster's state names no aggregator")?;
    let pki = kas_local::Pki::ensure(&state_dir.join("pki"))?;
    let cert = pki.issue_user(user, group.as_deref())?;
    let path = state_dir.join(format!("kubeconfig-{user}"));
    let credential = kas_local::kubeconfig::Credential::Certificate(&cert);
    kas_local::kubeconfig::write_for(
        &path,
        &aggregator.process.url,
        &pki.ca.cert,
        user,
        credential,
    )?;
    println!(
        "A kubeconfig for user {user:?} is at {}. To use it:",
        path.display()
    );
    println!();
    println!("  export KUBECONFIG={}", shell_quote(&path));
    println!("  kubectl auth whoami");
    println!();
    println!("Grant it permissions as the admin, e.g.:");
    println!();
    println!(
        "  kubectl --kubeconfig {} create rolebinding {user}-view --clusterrole view --user {user} --namespace default",
        shell_quote(&state.kubeconfig)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stop_command_is_the_scripts_and_names_only_a_state_dir_of_its_own() {
        // cargo runs this from deploy/local, not the root: the script's full path.
        let script = kas_local::repo_root().join("deploy/local/cluster");
        assert_eq!(
            stop_command(&default_state_dir()),
            format!("{} down", script.display())
        );
        assert_eq!(
            stop_command(Path::new("/tmp/my cluster")),
            format!("{} down --state-dir '/tmp/my cluster'", script.display())
        );
    }

    #[test]
    fn paths_are_quoted_only_when_the_shell_needs_it() {
        assert_eq!(shell_quote(Path::new("/a/b-c_d.e")), "/a/b-c_d.e");
        assert_eq!(shell_quote(Path::new("/a b")), "'/a b'");
        assert_eq!(shell_quote(Path::new("/it's")), r"'/it'\''s'");
    }
}
