//! kas-e2e: the harness of the end-to-end tests and of `kas-bench`: an HTTP/1.1 and
//! HTTP/2 client over rustls (with or without a client certificate), and a closed-loop
//! load generator with per-request latencies.
//!
//! Clusters come from kas-local, the same launcher users run.

pub mod aggregated;
pub mod apf_load;
pub mod api_load;
pub mod client;
pub mod kms;
pub mod kubelet;
pub mod load;
pub mod netns;
pub mod node_watch;
pub mod pki;
pub mod rbac_load;
pub mod test_apiserver;
pub mod tls_server;

use std::path::PathBuf;

/// Runs kubectl with `kubeconfig` (another user's, another replica's).
/// kubectl keeps its discovery cache beside the kubeconfig, one per cluster: in the shared
/// `~/.kube/cache` a cluster would read what an earlier one on the same port served. A
/// `--cache-dir` in `args` comes later and wins.
pub fn kubectl_with(kubeconfig: &std::path::Path, args: &[&str]) -> std::process::Output {
    kubectl_command(kubeconfig)
        .args(args)
        .output()
        .expect("kubectl on PATH")
}

/// kubectl with `kubeconfig` and the cluster's own discovery cache (see [`kubectl_with`]).
fn kubectl_command(kubeconfig: &std::path::Path) -> std::process::Command {
    let mut command = std::process::Command::new("kubectl");
    command
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .arg("--cache-dir")
        .arg(kubeconfig.with_file_name("kubectl-cache"));
    command
}

/// Where cargo put the role binaries: the test executable lives in `target/<profile>/deps`.
pub fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    let mut dir = exe.parent().expect("exe dir").to_path_buf();
    if dir.ends_with("deps") {
        dir.pop();
    }
    for bin in ["aggregator", "core-apiserver", "extensions-apiserver"] {
        assert!(
            dir.join(bin).exists(),
            "{} is missing: run `cargo build --workspace --bins` before the tests",
            dir.join(bin).display()
        );
    }
    dir
}

pub use kas_local::{Cluster, ClusterSpec, Role};

/// A cluster in a temporary state directory, stopped (and the directory removed) on drop.
pub struct TestCluster {
    pub cluster: Cluster,
    _dir: tempfile::TempDir,
}

impl std::ops::Deref for TestCluster {
    type Target = Cluster;
    fn deref(&self) -> &Cluster {
        &self.cluster
    }
}

impl std::ops::DerefMut for TestCluster {
    fn deref_mut(&mut self) -> &mut Cluster {
        &mut self.cluster
    }
}

/// Starts etcd and the three roles; `tweak` may change replicas and flags.
pub fn start_cluster(tweak: impl FnOnce(&mut ClusterSpec)) -> TestCluster {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut spec = ClusterSpec::new(dir.path());
    spec.bin_dir = bin_dir();
    tweak(&mut spec);
    let cluster = Cluster::up(&spec).unwrap_or_else(|e| panic!("cluster up: {e:#}"));
    TestCluster { cluster, _dir: dir }
}

impl TestCluster {
    /// One admin request through the aggregator over HTTP/2: `path` with its query, the
    /// extra `headers`, and `body`.
    pub async fn send(
        &self,
        method: http::Method,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> client::Answer {
        let url = format!("{}{path}", self.url(Role::Aggregator, 0));
        let bearer = self.bearer();
        let mut all = vec![("authorization", bearer.as_str())];
        all.extend_from_slice(headers);
        let tls = self.admin_tls(client::Proto::H2);
        let body = bytes::Bytes::from(body.to_owned());
        client::request_with_body(&url, method, &all, body, &tls, client::Proto::H2)
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// `role`'s /metrics (replica 0): the aggregator's as the admin, the others' as the
    /// front proxy asking for the admin.
    pub async fn metrics(&self, role: Role) -> String {
        let url = format!("{}/metrics", self.url(role, 0));
        let bearer = self.bearer();
        let (headers, tls) = match role {
            Role::Aggregator => (
                vec![("authorization", bearer.as_str())],
                self.admin_tls(client::Proto::H2),
            ),
            _ => (
                vec![
                    ("x-remote-user", "admin"),
                    ("x-remote-group", "system:masters"),
                ],
                self.peer_tls(client::Proto::H2),
            ),
        };
        let m = client::request(&url, http::Method::GET, &headers, &tls, client::Proto::H2)
            .await
            .unwrap_or_else(|e| panic!("{role} /metrics: {e}"));
        assert_eq!(m.status, 200, "{role}: {}", m.text());
        m.text()
    }

    /// What an admin client uses: the cluster CA, HTTP/2 or HTTP/1.1.
    pub fn admin_tls(&self, proto: client::Proto) -> client::Tls {
        client::Tls::new(&self.pki().ca.cert, None, proto).expect("tls")
    }

    /// What a peer uses: the front-proxy client certificate.
    pub fn peer_tls(&self, proto: client::Proto) -> client::Tls {
        let fp = &self.pki().front_proxy_client;
        client::Tls::new(&self.pki().ca.cert, Some((&fp.cert, &fp.key)), proto).expect("tls")
    }

    pub fn bearer(&self) -> String {
        format!("Bearer {}", self.pki().admin_token)
    }

    /// A kubeconfig for aggregator replica `replica` whose user `name` presents
    /// `credential` (a client certificate of the cluster's CA, or a bearer token).
    pub fn kubeconfig_for(
        &self,
        replica: usize,
        name: &str,
        credential: kas_local::kubeconfig::Credential<'_>,
    ) -> PathBuf {
        let kind = match credential {
            kas_local::kubeconfig::Credential::Token(_) => "token",
            kas_local::kubeconfig::Credential::Certificate(_) => "cert",
        };
        let path = self
            .state_dir()
            .join(format!("kubeconfig-{kind}-{name}-{replica}"));
        let server = self.url(Role::Aggregator, replica);
        kas_local::kubeconfig::write_for(&path, &server, &self.pki().ca.cert, name, credential)
            .expect("kubeconfig");
        path
    }

    /// Runs kubectl against the aggregator with the cluster's kubeconfig.
    pub fn kubectl(&self, args: &[&str]) -> std::process::Output {
        kubectl_with(self.kubeconfig_path(), args)
    }

    /// kubectl's stdout; fails the test when kubectl fails.
    pub fn kubectl_ok(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// kubectl's stderr; fails the test when kubectl succeeds.
    pub fn kubectl_fails(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert!(!out.status.success(), "kubectl {args:?} succeeded");
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    /// kubectl's `-o json` output of `args`, parsed; fails the test when kubectl fails.
    pub fn kubectl_json(&self, args: &[&str]) -> serde_json::Value {
        let mut all = args.to_vec();
        all.extend(["-o", "json"]);
        serde_json::from_str(&self.kubectl_ok(&all)).expect("kubectl's JSON")
    }

    /// Applies `manifest` (a CRD) with kubectl and waits until `probe` answers anything but
    /// a 404: the CRD's resource is served through the aggregator.
    pub async fn apply_and_wait_served(&self, manifest: &str, probe: &str) {
        let out = self.kubectl_stdin(&["apply"], manifest);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for _ in 0..100 {
            if self.send(http::Method::GET, probe, &[], "").await.status != 404 {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        panic!("{probe} is not served");
    }

    /// kubectl with `manifest` on stdin (`-f -` is added after `args`).
    pub fn kubectl_stdin(&self, args: &[&str], manifest: &str) -> std::process::Output {
        use std::io::Write;
        let mut child = kubectl_command(self.kubeconfig_path())
            .args(args)
            .args(["-f", "-"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("kubectl on PATH");
        if let Some(mut stdin) = child.stdin.take() {
            stdin
                .write_all(manifest.as_bytes())
                .expect("kubectl's stdin");
        }
        child.wait_with_output().expect("kubectl")
    }
}

/// The header and first row of a table kubectl printed, cells split where kubectl pads
/// columns (two spaces or more), so cells holding one space stay whole.
pub fn header_and_row(table: &str) -> (Vec<String>, Vec<String>) {
    let mut lines = table.lines();
    let split = |l: Option<&str>| -> Vec<String> {
        l.unwrap_or("")
            .split("  ")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    };
    (split(lines.next()), split(lines.next()))
}

/// Upstream's 404 for a path nobody serves, byte for byte.
pub const NOT_FOUND_BODY: &str = "404 page not found\n";

/// The value of one sample of a Prometheus text exposition, all of whose labels match.
pub fn metric_value(exposition: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    exposition
        .lines()
        .filter(|l| {
            let rest = l.strip_prefix(name).unwrap_or("");
            rest.starts_with('{') || (labels.is_empty() && rest.starts_with(' '))
        })
        .find(|l| {
            labels
                .iter()
                .all(|(k, v)| l.contains(&format!("{k}=\"{v}\"")))
        })
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

/// The document etcd holds at `key` (the caller's key, under `/registry`), whatever the
/// form upstream's codec or this server wrote it in, as the roles read it (without
/// `apiVersion` and `kind`, and without read-time defaults).
pub fn stored_document(key: &str, bytes: &[u8]) -> serde_json::Value {
    kas_storage_etcd::Codec::default()
        .decode(key, bytes)
        .unwrap_or_else(|e| panic!("{key}: {e}"))
}
