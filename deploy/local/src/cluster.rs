//! Starting etcd and every replica of every role on loopback, and stopping them again.
//!
//! Start order follows the delegation chain backwards (extensions, core, aggregator) so
//! that each role's delegates are ready before it is; stop order is the reverse, and etcd
//! goes last so no replica loses its storage while draining.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use crate::error::{Error, Result};
use crate::kubeconfig;
use crate::pki::{FRONT_PROXY_CLIENT_COMMON_NAME, Pki};
use crate::ports::free_ports;
use crate::probe;
use crate::process::{self, Managed, STOP_GRACE, StopOutcome, Stopped};
use crate::state::{ClusterState, ProcessRecord, ServerRecord};
use crate::tools::Tools;

pub use crate::role::Role;

#[derive(Debug, Clone)]
pub struct ClusterSpec {
    /// PKI, etcd data, logs, kubeconfig and cluster.json live here.
    pub state_dir: PathBuf,
    /// Where `aggregator`, `core-apiserver` and `extensions-apiserver` are.
    pub bin_dir: PathBuf,
    pub aggregator_replicas: usize,
    pub core_replicas: usize,
    pub extensions_replicas: usize,
    /// Appended to a role's flags, after the launcher's own.
    pub extra_args: BTreeMap<Role, Vec<String>>,
    /// Core's admission plugins turned off (`--disable-admission-plugins`). By default the
    /// `ServiceAccount` plugin, as envtest runs kube-apiserver: it refuses pods whose
    /// service account does not exist, and no controller-manager here creates each
    /// namespace's `default` one.
    pub disabled_admission_plugins: Vec<String>,
    /// How long each role (all its replicas together), and etcd, may take to become ready.
    pub ready_timeout: Duration,
    /// Whether the aggregator sends requests for extensions' groups to it straight
    /// (`--extensions-endpoints`) rather than through core.
    pub route_extensions: bool,
    /// Whether etcd serves TLS only and requires client certificates (of its own CA), as
    /// production etcd does; the roles get `--etcd-cafile`, `--etcd-certfile` and
    /// `--etcd-keyfile`.
    pub etcd_tls: bool,
    /// Added to every role's environment (test-only knobs).
    pub env: Vec<(String, String)>,
    /// Audit with this policy: every replica gets `--audit-policy-file` and its own
    /// `--audit-log-path`, `audit/<role>-<index>.log` under the state directory.
    pub audit_policy: Option<PathBuf>,
}

impl ClusterSpec {
    /// One replica per role, binaries from [`ClusterSpec::default_bin_dir`].
    pub fn new(state_dir: impl Into<PathBuf>) -> Self {
        ClusterSpec {
            state_dir: state_dir.into(),
            bin_dir: Self::default_bin_dir(),
            aggregator_replicas: 1,
            core_replicas: 1,
            extensions_replicas: 1,
            extra_args: BTreeMap::new(),
            disabled_admission_plugins: vec!["ServiceAccount".to_owned()],
            ready_timeout: Duration::from_secs(30),
            route_extensions: true,
            etcd_tls: false,
            env: Vec::new(),
            audit_policy: None,
        }
    }

    /// The directory of the running executable, where cargo puts the sibling binaries;
    /// from a test binary (`target/<profile>/deps/`) its parent.
    pub fn default_bin_dir() -> PathBuf {
        let exe_dir = std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent().map(Path::to_path_buf))
            .unwrap_or_default();
        match exe_dir.file_name() {
            Some(name) if name == "deps" => {
                exe_dir.parent().map(Path::to_path_buf).unwrap_or(exe_dir)
            }
            _ => exe_dir,
        }
    }

    pub fn replicas(&self, role: Role) -> usize {
        match role {
            Role::Aggregator => self.aggregator_replicas,
            Role::Core => self.core_replicas,
            Role::Extensions => self.extensions_replicas,
        }
    }
}

impl Default for ClusterSpec {
    fn default() -> Self {
        ClusterSpec::new(".local-cluster")
    }
}

/// A running cluster. Dropping it stops everything it started, unless detached.
#[derive(Debug)]
pub struct Cluster {
    state_dir: PathBuf,
    pki: Pki,
    kubeconfig: PathBuf,
    etcd: Option<Managed>,
    servers: BTreeMap<Role, Vec<Managed>>,
    detached: bool,
}

impl Cluster {
    /// Starts etcd (from PATH, else obtained by [`Tools::etcd`]), then every replica of
    /// extensions, core and aggregator, each once the previous role is ready, and writes
    /// the kubeconfig. On error, whatever was started is stopped again.
    pub fn up(spec: &ClusterSpec) -> Result<Cluster> {
        for role in Role::ALL {
            if spec.replicas(role) == 0 {
                return Err(Error::Spec(format!("{role} needs at least one replica")));
            }
        }
        let state_dir = std::path::absolute(&spec.state_dir)
            .map_err(Error::io("resolving", &spec.state_dir))?;
        let logs = state_dir.join("logs");
        fs::create_dir_all(&logs).map_err(Error::io("creating", &logs))?;
        refuse_if_running(&state_dir)?;

        let mut binaries = BTreeMap::new();
        for role in Role::ALL {
            let path = std::path::absolute(spec.bin_dir.join(role.binary_name()))
                .map_err(Error::io("resolving", &spec.bin_dir))?;
            if !process::is_executable(&path) {
                return Err(Error::BinaryNotFound { path });
            }
            binaries.insert(role, path);
        }
        let etcd_binary = Tools::from_env().etcd()?;
        let pki = Pki::ensure(&state_dir.join("pki"))?;

        let total: usize = Role::ALL.iter().map(|&r| spec.replicas(r)).sum();
        let mut free = free_ports(2 + total)?.into_iter();
        let mut next_port = || free.next().expect("free_ports returned as many as asked");
        let (etcd_port, peer_port) = (next_port(), next_port());
        let ports: BTreeMap<Role, Vec<u16>> = Role::START_ORDER
            .iter()
            .map(|&role| {
                (
                    role,
                    (0..spec.replicas(role)).map(|_| next_port()).collect(),
                )
            })
            .collect();

        let mut cluster = Cluster {
            kubeconfig: state_dir.join("kubeconfig"),
            state_dir,
            pki,
            etcd: None,
            servers: BTreeMap::new(),
            detached: false,
        };
        cluster.start_etcd(
            &etcd_binary,
            (etcd_port, peer_port),
            spec.etcd_tls,
            spec.ready_timeout,
        )?;
        for role in Role::START_ORDER {
            let delegates: Vec<String> = role
                .delegate()
                .map(|d| ports[&d].iter().map(|&p| https_url(p)).collect())
                .unwrap_or_default();
            cluster.start_role(role, &binaries[&role], &ports[&role], &delegates, spec)?;
        }
        kubeconfig::write(
            &cluster.kubeconfig,
            &cluster.url(Role::Aggregator, 0),
            &cluster.pki.ca.cert,
            &cluster.pki.admin_token,
        )?;
        Ok(cluster)
    }

    /// Stops what `state_dir/cluster.json` lists (aggregators, core, extensions, etcd), but
    /// only processes whose `/proc/<pid>/cmdline` still names the recorded binary; then
    /// removes cluster.json. No state file: nothing to do.
    pub fn down_state_dir(state_dir: &Path) -> Result<Vec<Stopped>> {
        let Some(state) = ClusterState::read(state_dir)? else {
            return Ok(Vec::new());
        };
        let mut servers: BTreeMap<Role, Vec<Managed>> = BTreeMap::new();
        for record in state.servers {
            servers.entry(record.role).or_default().push(Managed {
                name: record.name(),
                record: record.process,
                child: None,
                exit: None,
            });
        }
        let etcd = Managed {
            name: "etcd".into(),
            record: state.etcd,
            child: None,
            exit: None,
        };
        stop_in_order(state_dir, &mut servers, Some(etcd))
    }

    /// Stops everything, in order, and removes cluster.json.
    pub fn stop(mut self) -> Result<Vec<Stopped>> {
        let result = self.shutdown();
        self.detached = true;
        result
    }

    /// Leaves the processes running after this value is gone (for `kas-local up`); stop
    /// them later with [`Cluster::down_state_dir`].
    pub fn detach(mut self) -> ClusterState {
        self.detached = true;
        self.state()
    }

    /// Sends `signal` to one replica (0-based `index`). Refuses once it has exited, so a
    /// reused pid is never hit.
    pub fn kill(&mut self, role: Role, index: usize, signal: Signal) -> Result<()> {
        self.replica_mut(role, index)?.signal(signal)
    }

    /// Waits up to `timeout` for a replica to exit; `None` if it is still running (or
    /// there is no such replica).
    pub fn wait_exit(&mut self, role: Role, index: usize, timeout: Duration) -> Option<ExitStatus> {
        self.replica_mut(role, index).ok()?.wait_exit(timeout)
    }

    /// `https://127.0.0.1:<port>` of a replica.
    ///
    /// # Panics
    /// If there is no such replica.
    pub fn url(&self, role: Role, index: usize) -> String {
        self.servers
            .get(&role)
            .and_then(|v| v.get(index))
            .map(|m| m.record.url.clone())
            .unwrap_or_else(|| panic!("no replica {index} of {role}"))
    }

    pub fn urls(&self, role: Role) -> Vec<String> {
        self.servers
            .get(&role)
            .map(|v| v.iter().map(|m| m.record.url.clone()).collect())
            .unwrap_or_default()
    }

    pub fn replicas(&self, role: Role) -> usize {
        self.servers.get(&role).map_or(0, Vec::len)
    }

    pub fn pid(&self, role: Role, index: usize) -> Option<u32> {
        self.servers.get(&role)?.get(index).map(|m| m.record.pid)
    }

    pub fn pki(&self) -> &Pki {
        &self.pki
    }

    pub fn kubeconfig_path(&self) -> &Path {
        &self.kubeconfig
    }

    pub fn state_dir(&self) -> &Path {
        &self.state_dir
    }

    pub fn etcd_url(&self) -> String {
        self.etcd
            .as_ref()
            .map(|m| m.record.url.clone())
            .unwrap_or_default()
    }

    pub fn log_path(&self, role: Role, index: usize) -> PathBuf {
        log_path(&self.state_dir, &format!("{role}-{index}"))
    }

    /// Where a replica writes its audit events, with `ClusterSpec::audit_policy`.
    pub fn audit_log_path(&self, role: Role, index: usize) -> PathBuf {
        self.state_dir
            .join("audit")
            .join(format!("{role}-{index}.log"))
    }

    /// What cluster.json holds.
    pub fn state(&self) -> ClusterState {
        let etcd = self.etcd.as_ref().map(|m| m.record.clone());
        ClusterState {
            state_dir: self.state_dir.clone(),
            kubeconfig: self.kubeconfig.clone(),
            etcd: etcd.unwrap_or_else(|| ProcessRecord {
                pid: 0,
                port: 0,
                binary: PathBuf::new(),
                url: String::new(),
                log: PathBuf::new(),
            }),
            servers: Role::START_ORDER
                .iter()
                .flat_map(|role| {
                    self.servers
                        .get(role)
                        .into_iter()
                        .flatten()
                        .enumerate()
                        .map(|(index, m)| ServerRecord {
                            role: *role,
                            index,
                            process: m.record.clone(),
                        })
                })
                .collect(),
        }
    }

    fn replica_mut(&mut self, role: Role, index: usize) -> Result<&mut Managed> {
        self.servers
            .get_mut(&role)
            .and_then(|v| v.get_mut(index))
            .ok_or(Error::NoSuchReplica { role, index })
    }

    fn save_state(&self) -> Result<()> {
        self.state().write(&self.state_dir)
    }

    fn shutdown(&mut self) -> Result<Vec<Stopped>> {
        if self.etcd.is_none() {
            return Ok(Vec::new()); // nothing started, or already stopped
        }
        let etcd = self.etcd.take();
        stop_in_order(&self.state_dir, &mut self.servers, etcd)
    }

    fn start_etcd(
        &mut self,
        binary: &Path,
        (port, peer_port): (u16, u16),
        tls: bool,
        timeout: Duration,
    ) -> Result<()> {
        let log = log_path(&self.state_dir, "etcd");
        let tls = tls.then_some(&self.pki);
        let args = etcd_args(&self.state_dir.join("etcd"), port, peer_port, tls);
        let scheme = if tls.is_some() { "https" } else { "http" };
        let child = process::spawn(binary, &args, &log)?;
        let mut etcd = Managed {
            name: "etcd".into(),
            record: ProcessRecord {
                pid: child.id(),
                port,
                binary: binary.to_path_buf(),
                url: format!("{scheme}://127.0.0.1:{port}"),
                log,
            },
            child: Some(child),
            exit: None,
        };
        let pki = self.pki.clone();
        let healthy = |url: &str| etcd_healthy_with(url, tls.map(|_| &pki));
        let ready = wait_ready(&mut etcd, Instant::now() + timeout, timeout, healthy);
        self.etcd = Some(etcd);
        self.save_state()?;
        ready
    }

    fn start_role(
        &mut self,
        role: Role,
        binary: &Path,
        ports: &[u16],
        delegates: &[String],
        spec: &ClusterSpec,
    ) -> Result<()> {
        let etcd_url = self.etcd_url();
        for (index, &port) in ports.iter().enumerate() {
            let mut args = role_args(role, port, &self.pki, &etcd_url, delegates);
            if role == Role::Aggregator && spec.route_extensions {
                let extensions = self.urls(Role::Extensions);
                args.push(format!("--extensions-endpoints={}", extensions.join(",")));
            }
            if role == Role::Core && !spec.disabled_admission_plugins.is_empty() {
                args.push(format!(
                    "--disable-admission-plugins={}",
                    spec.disabled_admission_plugins.join(",")
                ));
            }
            if let Some(policy) = &spec.audit_policy {
                args.push(format!("--audit-policy-file={}", policy.display()));
                args.push(format!(
                    "--audit-log-path={}",
                    self.audit_log_path(role, index).display()
                ));
            }
            args.extend(spec.extra_args.get(&role).into_iter().flatten().cloned());
            let log = self.log_path(role, index);
            let child = process::spawn_with_env(binary, &args, &spec.env, &log)?;
            self.servers.entry(role).or_default().push(Managed {
                name: format!("{role}-{index}"),
                record: ProcessRecord {
                    pid: child.id(),
                    port,
                    binary: binary.to_path_buf(),
                    url: https_url(port),
                    log,
                },
                child: Some(child),
                exit: None,
            });
            self.save_state()?;
        }
        let checker = ReadyChecker::new(role, &self.pki)?;
        let deadline = Instant::now() + spec.ready_timeout;
        for replica in self.servers.entry(role).or_default() {
            wait_ready(replica, deadline, spec.ready_timeout, |url| {
                checker.check(url)
            })?;
        }
        Ok(())
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if !self.detached {
            // Errors here have nowhere to go; `stop` reports them.
            let _ = self.shutdown();
        }
    }
}

fn stop_in_order(
    state_dir: &Path,
    servers: &mut BTreeMap<Role, Vec<Managed>>,
    etcd: Option<Managed>,
) -> Result<Vec<Stopped>> {
    let mut report = Vec::new();
    for role in Role::ALL {
        if let Some(mut replicas) = servers.remove(&role) {
            report.extend(process::stop_all(&mut replicas, STOP_GRACE));
        }
    }
    if let Some(etcd) = etcd {
        report.extend(process::stop_all(&mut [etcd], STOP_GRACE));
    }
    // Keep the record of anything that survived SIGKILL, so `down` can be retried.
    if report
        .iter()
        .all(|s| s.outcome != StopOutcome::StillRunning)
    {
        ClusterState::remove(state_dir)?;
    }
    Ok(report)
}

fn refuse_if_running(state_dir: &Path) -> Result<()> {
    let Some(state) = ClusterState::read(state_dir)? else {
        return Ok(());
    };
    let pids: Vec<u32> = std::iter::once(&state.etcd)
        .chain(state.servers.iter().map(|s| &s.process))
        .filter(|r| process::runs_binary(r.pid, &r.binary))
        .map(|r| r.pid)
        .collect();
    if !pids.is_empty() {
        return Err(Error::AlreadyRunning {
            state_dir: state_dir.to_path_buf(),
            pids,
        });
    }
    // Left by a launcher that was killed, or a machine that rebooted.
    ClusterState::remove(state_dir)
}

fn https_url(port: u16) -> String {
    format!("https://127.0.0.1:{port}")
}

fn log_path(state_dir: &Path, name: &str) -> PathBuf {
    state_dir.join("logs").join(format!("{name}.log"))
}

/// etcd's flags; with `tls`, its client port serves TLS only and requires a client
/// certificate of etcd's CA.
pub(crate) fn etcd_args(
    data_dir: &Path,
    port: u16,
    peer_port: u16,
    tls: Option<&Pki>,
) -> Vec<String> {
    let scheme = if tls.is_some() { "https" } else { "http" };
    let client = format!("{scheme}://127.0.0.1:{port}");
    let peer = format!("http://127.0.0.1:{peer_port}");
    let mut args: Vec<String> = [
        "--name",
        "default",
        "--data-dir",
        &data_dir.display().to_string(),
        "--listen-client-urls",
        &client,
        "--advertise-client-urls",
        &client,
        "--listen-peer-urls",
        &peer,
        "--initial-advertise-peer-urls",
        &peer,
        "--initial-cluster",
        &format!("default={peer}"),
    ]
    .map(String::from)
    .to_vec();
    if let Some(pki) = tls {
        let path = |p: &Path| p.display().to_string();
        args.extend([
            format!("--cert-file={}", path(&pki.etcd_server.cert)),
            format!("--key-file={}", path(&pki.etcd_server.key)),
            format!("--trusted-ca-file={}", path(&pki.etcd_ca.cert)),
            "--client-cert-auth=true".to_owned(),
        ]);
    }
    args
}

/// The issuer of service-account tokens: kube-apiserver's usual one, in-cluster.
pub const SERVICE_ACCOUNT_ISSUER: &str = "https://kubernetes.default.svc.cluster.local";

/// The flags of one replica, before the spec's `extra_args` (public so benchmarks can start
/// an extra replica exactly as the launcher does).
pub fn role_args(
    role: Role,
    port: u16,
    pki: &Pki,
    etcd_url: &str,
    delegates: &[String],
) -> Vec<String> {
    let path = |p: &Path| p.display().to_string();
    let serving = pki.serving(role);
    let mut args: Vec<String> = Vec::new();
    let mut push = |items: &[&str]| args.extend(items.iter().map(|s| s.to_string()));
    push(&[
        "--secure-port",
        &port.to_string(),
        "--bind-address",
        "127.0.0.1",
    ]);
    push(&[
        "--tls-cert-file",
        &path(&serving.cert),
        "--tls-private-key-file",
        &path(&serving.key),
    ]);
    push(&[
        "--etcd-servers",
        etcd_url,
        "--shutdown-delay-duration",
        "0s",
    ]);
    if etcd_url.starts_with("https://") {
        push(&[
            "--etcd-cafile",
            &path(&pki.etcd_ca.cert),
            "--etcd-certfile",
            &path(&pki.etcd_client.cert),
            "--etcd-keyfile",
            &path(&pki.etcd_client.key),
        ]);
    }
    match role {
        Role::Aggregator => {
            push(&["--client-ca-file", &path(&pki.ca.cert)]);
            push(&[
                "--token-auth-file",
                &path(&pki.tokens_csv),
                "--anonymous-auth=true",
            ]);
            push(&["--authorization-mode", "Node,RBAC"]);
            push(&["--service-account-issuer", SERVICE_ACCOUNT_ISSUER]);
            push(&[
                "--service-account-key-file",
                &path(&pki.service_account.cert),
            ]);
            push(&["--enable-bootstrap-token-auth=true"]);
            // As kubeadm gives kube-apiserver: the front-proxy settings it publishes to
            // aggregated servers in kube-system/extension-apiserver-authentication.
            push_request_header(&mut push, &path(&pki.front_proxy_ca.cert));
        }
        Role::Core | Role::Extensions => {
            // Core keeps RBAC's index too: its chain checks the user the aggregator
            // vouches for, and its admission and review APIs ask the same authorizer.
            // Extensions is reached only through them, already authorized.
            if role == Role::Core {
                push(&["--authorization-mode", "Node,RBAC"]);
                // As kubeadm: kubelets write only their own node's objects.
                push(&["--enable-admission-plugins", "NodeRestriction"]);
                push(&["--service-account-issuer", SERVICE_ACCOUNT_ISSUER]);
                push(&[
                    "--service-account-key-file",
                    &path(&pki.service_account.cert),
                ]);
                push(&[
                    "--service-account-signing-key-file",
                    &path(&pki.service_account.key),
                ]);
                // TokenReviews accept what the aggregator does (but static tokens).
                push(&["--enable-bootstrap-token-auth=true"]);
            }
            push_request_header(&mut push, &path(&pki.front_proxy_ca.cert));
        }
    }
    if role.delegate().is_some() {
        push(&[
            "--proxy-client-cert-file",
            &path(&pki.front_proxy_client.cert),
        ]);
        push(&[
            "--proxy-client-key-file",
            &path(&pki.front_proxy_client.key),
        ]);
        push(&["--delegate-ca-file", &path(&pki.ca.cert)]);
        push(&["--delegate-endpoints", &delegates.join(",")]);
    }
    args
}

/// The `--requestheader-*` flags trusting the front-proxy CA's `front-proxy-client`.
fn push_request_header(push: &mut impl FnMut(&[&str]), front_proxy_ca: &str) {
    push(&["--requestheader-client-ca-file", front_proxy_ca]);
    push(&[
        "--requestheader-allowed-names",
        FRONT_PROXY_CLIENT_COMMON_NAME,
    ]);
    push(&["--requestheader-username-headers", "X-Remote-User"]);
    push(&["--requestheader-uid-headers", "X-Remote-Uid"]);
    push(&["--requestheader-group-headers", "X-Remote-Group"]);
    push(&["--requestheader-extra-headers-prefix", "X-Remote-Extra-"]);
}

/// Polls `check(url)` until it passes, the process exits, or `deadline`.
pub(crate) fn wait_ready(
    m: &mut Managed,
    deadline: Instant,
    timeout: Duration,
    check: impl Fn(&str) -> Result<(), String>,
) -> Result<()> {
    let not_ready = |m: &Managed, reason: String| Error::NotReady {
        name: m.name.clone(),
        timeout,
        reason,
        log: m.record.log.clone(),
        tail: process::log_tail(&m.record.log, 40),
    };
    loop {
        if !m.alive() {
            let status = m.exit.map_or("an unknown status".into(), |s| s.to_string());
            return Err(not_ready(m, format!("exited with {status}")));
        }
        let reason = match check(&m.record.url) {
            Ok(()) => return Ok(()),
            Err(reason) => reason,
        };
        if Instant::now() >= deadline {
            return Err(not_ready(m, reason));
        }
        thread::sleep(Duration::from_millis(100));
    }
}

pub(crate) fn etcd_healthy(url: &str) -> Result<(), String> {
    etcd_healthy_with(url, None)
}

/// etcd's `/health`, over TLS with the etcd client certificate of `tls`.
pub(crate) fn etcd_healthy_with(url: &str, tls: Option<&Pki>) -> Result<(), String> {
    let files = match tls {
        Some(pki) => {
            let read = |p: &Path| std::fs::read(p).map_err(|e| e.to_string());
            let client = (read(&pki.etcd_client.cert)?, read(&pki.etcd_client.key)?);
            Some((read(&pki.etcd_ca.cert)?, client))
        }
        None => None,
    };
    let (ca, client) = match &files {
        Some((ca, (cert, key))) => (ca.as_slice(), Some((cert.as_slice(), key.as_slice()))),
        None => (&b""[..], None),
    };
    match probe::get(&format!("{url}/health"), ca, client, None) {
        Ok((200, body)) if String::from_utf8_lossy(&body).contains(r#""health":"true""#) => Ok(()),
        Ok((status, body)) => Err(format!(
            "/health: {status} {}",
            String::from_utf8_lossy(&body)
        )),
        Err(e) => Err(error_chain(&e)),
    }
}

/// Asks `/readyz` the way the role's real clients would: the aggregator as the admin user,
/// core and extensions as the front proxy forwarding for a system:masters user.
struct ReadyChecker {
    ca: Vec<u8>,
    client: Option<(Vec<u8>, Vec<u8>)>,
    bearer: Option<String>,
}

impl ReadyChecker {
    fn new(role: Role, pki: &Pki) -> Result<Self> {
        let ca = pki.ca.read_cert()?;
        Ok(match role {
            Role::Aggregator => ReadyChecker {
                ca,
                client: None,
                bearer: Some(pki.admin_token.clone()),
            },
            Role::Core | Role::Extensions => ReadyChecker {
                ca,
                client: Some((
                    pki.front_proxy_client.read_cert()?,
                    pki.front_proxy_client.read_key()?,
                )),
                bearer: None,
            },
        })
    }

    fn check(&self, base: &str) -> Result<(), String> {
        let url = format!("{base}/readyz");
        let mut request = probe::Request::get(&url, &self.ca);
        request.bearer = self.bearer.as_deref();
        if let Some((cert, key)) = &self.client {
            request.client_cert = Some((cert, key));
            request.headers = vec![
                ("X-Remote-User", "system:kas-local"),
                ("X-Remote-Group", "system:masters"),
            ];
        }
        match probe::send(&request) {
            Ok(r) if r.status == 200 => Ok(()),
            Ok(r) => Err(format!(
                "/readyz: {} {}",
                r.status,
                String::from_utf8_lossy(&r.body)
            )),
            Err(e) => Err(error_chain(&e)),
        }
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests;
