//! An aggregated API server for tests: `kas-test-apiserver` in a network namespace of its
//! own ([`Netns`]), with a serving certificate for its Service's name from a fresh CA
//! ([`ServingCa`]), trusting a cluster's front proxy; and the manifests that register it
//! (Namespace, Service, Endpoints, EndpointSlice, APIService).

use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::client::{Proto, Tls};
use crate::netns::{Netns, NsProcess};
use crate::pki::ServingCa;
use crate::test_apiserver::DiscoveryFailure;

/// The service range of a cluster of kas-local (core's `--service-cluster-ip-range`).
pub const DEFAULT_SERVICE_CIDR: &str = "10.0.0.0/24";

/// How to start a [`TestApiserver`].
#[derive(Clone, Debug)]
pub struct TestApiserverSpec {
    /// The Service's name and namespace: the serving certificate names
    /// `<service>.<namespace>.svc`.
    pub service: String,
    pub namespace: String,
    /// The port it listens on, inside its namespace (the Service's `port` and `targetPort`).
    pub port: u16,
    pub group: String,
    pub version: String,
    /// `--requestheader-client-ca-file`: the CA of the proxy's client certificate.
    pub requestheader_ca: PathBuf,
    /// `--requestheader-allowed-names`; empty allows any certificate of the CA.
    pub allowed_names: Vec<String>,
    pub discovery_failure: DiscoveryFailure,
    /// The service range to claim a ClusterIP of (routed to the server from the host, and
    /// in its serving certificate); `None` for no ClusterIP.
    pub cluster_ip_range: Option<String>,
    /// More flags for `kas-test-apiserver`.
    pub extra_args: Vec<String>,
}

impl TestApiserverSpec {
    /// `wardle.example.com/v1alpha1` behind Service `wardle/api` on port 443, trusting
    /// `cluster`'s front proxy (its front-proxy CA, CN `front-proxy-client`).
    pub fn for_cluster(cluster: &kas_local::Cluster) -> TestApiserverSpec {
        TestApiserverSpec {
            service: "api".into(),
            namespace: "wardle".into(),
            port: 443,
            group: "wardle.example.com".into(),
            version: "v1alpha1".into(),
            requestheader_ca: cluster.pki().front_proxy_ca.cert.clone(),
            allowed_names: vec![kas_local::pki::FRONT_PROXY_CLIENT_COMMON_NAME.into()],
            discovery_failure: DiscoveryFailure::None,
            cluster_ip_range: Some(DEFAULT_SERVICE_CIDR.into()),
            extra_args: Vec::new(),
        }
    }
}

/// A running `kas-test-apiserver` in its own network namespace; everything stops and is
/// removed on drop.
pub struct TestApiserver {
    pub spec: TestApiserverSpec,
    process: Option<NsProcess>,
    /// The namespace it runs in: [`Netns::ip`] is its endpoint address.
    pub netns: Netns,
    /// The CA of its serving certificate (an APIService's `caBundle`).
    pub ca: ServingCa,
    cluster_ip: Option<Ipv4Addr>,
    dir: tempfile::TempDir,
}

impl TestApiserver {
    /// Starts it and waits until `/healthz` answers at its namespace's address.
    pub fn start(spec: TestApiserverSpec) -> TestApiserver {
        let dir = tempfile::tempdir().expect("tempdir");
        let netns = Netns::new();
        let ca = ServingCa::new("kas-test-apiserver CA").expect("CA");
        ca.write_ca(&dir.path().join("ca.crt")).expect("CA file");
        let cluster_ip = spec
            .cluster_ip_range
            .as_deref()
            .map(|cidr| netns.claim_address_in(cidr));
        let mut server = TestApiserver {
            spec,
            process: None,
            netns,
            ca,
            cluster_ip,
            dir,
        };
        server.spawn();
        server
    }

    fn spawn(&mut self) {
        let binary = crate::bin_dir().join("kas-test-apiserver");
        assert!(
            binary.exists(),
            "{} is missing: run `cargo build --workspace --bins` before the tests",
            binary.display()
        );
        let mut ips = vec![IpAddr::V4(self.netns.ip())];
        ips.extend(self.netns.extra_addresses().into_iter().map(IpAddr::V4));
        let serving = self
            .ca
            .issue_for_service(
                self.dir.path(),
                &self.spec.service,
                &self.spec.namespace,
                &ips,
            )
            .expect("serving certificate");
        let s = &self.spec;
        let mut args: Vec<String> = vec![
            format!("--secure-port={}", s.port),
            format!("--tls-cert-file={}", serving.cert.display()),
            format!("--tls-private-key-file={}", serving.key.display()),
            format!(
                "--requestheader-client-ca-file={}",
                s.requestheader_ca.display()
            ),
            format!(
                "--requestheader-allowed-names={}",
                s.allowed_names.join(",")
            ),
            format!("--group={}", s.group),
            format!("--version={}", s.version),
            format!("--discovery-failure={}", failure_flag(s.discovery_failure)),
        ];
        args.extend(s.extra_args.iter().cloned());
        let log = self.dir.path().join("kas-test-apiserver.log");
        self.process = Some(self.netns.spawn(&binary, &args, log));
        self.wait_healthy(Duration::from_secs(20));
    }

    fn wait_healthy(&mut self, timeout: Duration) {
        let url = self.url("/healthz");
        let deadline = Instant::now() + timeout;
        loop {
            let answer = kas_local::probe::get(&url, self.ca.ca_pem().as_bytes(), None, None);
            if matches!(answer, Ok((200, _))) {
                return;
            }
            let process = self.process.as_mut().expect("started");
            if !process.alive() || Instant::now() > deadline {
                panic!(
                    "kas-test-apiserver did not become healthy at {url} ({answer:?}):\n{}",
                    process.log()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Its address: the endpoint an EndpointSlice names.
    pub fn ip(&self) -> Ipv4Addr {
        self.netns.ip()
    }

    pub fn port(&self) -> u16 {
        self.spec.port
    }

    /// `https://<ip>:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        self.url_at(self.ip(), path)
    }

    /// Its ClusterIP (claimed from [`TestApiserverSpec::cluster_ip_range`]): the Service's
    /// `spec.clusterIP`, routed from the host to the server.
    pub fn cluster_ip(&self) -> Option<Ipv4Addr> {
        self.cluster_ip
    }

    /// `https://<address>:<port><path>`, e.g. at [`TestApiserver::cluster_ip`].
    pub fn url_at(&self, address: Ipv4Addr, path: &str) -> String {
        format!("https://{address}:{}{path}", self.spec.port)
    }

    /// `<service>.<namespace>.svc`: the name the aggregator verifies its certificate for.
    pub fn server_name(&self) -> String {
        format!("{}.{}.svc", self.spec.service, self.spec.namespace)
    }

    /// `v<version>.<group>`: its APIService's name.
    pub fn apiservice_name(&self) -> String {
        format!("{}.{}", self.spec.version, self.spec.group)
    }

    /// The base64 PEM of its serving CA: the APIService's `spec.caBundle`.
    pub fn ca_bundle(&self) -> String {
        self.ca.ca_bundle()
    }

    /// The PEM file of its serving CA.
    pub fn ca_path(&self) -> PathBuf {
        self.dir.path().join("ca.crt")
    }

    /// One more address of `cidr` routed from the host to this server, as kube-proxy
    /// routes a ClusterIP (see [`Netns::claim_address_in`]); the serving certificate names
    /// it from the next [`TestApiserver::restart`] on.
    pub fn claim_cluster_ip(&self, cidr: &str) -> Ipv4Addr {
        self.netns.claim_address_in(cidr)
    }

    /// TLS for calling it directly: its CA, and `client` (certificate, key) if given.
    pub fn tls(&self, client: Option<(&Path, &Path)>, proto: Proto) -> Tls {
        Tls::new(&self.ca_path(), client, proto).expect("TLS")
    }

    /// SIGKILLs it (the namespace and its addresses stay): its Service's endpoints stop
    /// answering, connections are refused.
    pub fn kill(&mut self) {
        if let Some(p) = self.process.as_mut() {
            p.kill();
        }
    }

    /// Starts it again (after [`TestApiserver::kill`], or to restart it; objects are lost)
    /// with the same flags and addresses, and a new serving certificate of the same CA.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    pub fn alive(&mut self) -> bool {
        self.process.as_mut().is_some_and(NsProcess::alive)
    }

    /// Makes its discovery fail (or work again) without a restart, through
    /// `PUT /kas-test/discovery-failure`, authenticated with `proxy_client` (a certificate
    /// the request-header CA signed, with an allowed common name).
    pub async fn set_discovery_failure(
        &self,
        proxy_client: (&Path, &Path),
        failure: DiscoveryFailure,
    ) {
        let tls = self.tls(Some(proxy_client), Proto::H1);
        let url = self.url("/kas-test/discovery-failure");
        let headers = [("x-remote-user", "kas-e2e")];
        let body = bytes::Bytes::from_static(failure_flag(failure).as_bytes());
        let answer = crate::client::request_with_body(
            &url,
            http::Method::PUT,
            &headers,
            body,
            &tls,
            Proto::H1,
        )
        .await
        .unwrap_or_else(|e| panic!("{url}: {e}"));
        assert_eq!(answer.status, http::StatusCode::OK, "{}", answer.text());
    }

    /// Its log (each request: method, path, status, user).
    pub fn log(&self) -> String {
        self.process
            .as_ref()
            .map(NsProcess::log)
            .unwrap_or_default()
    }

    /// The Namespace, the selectorless Service (with [`TestApiserver::cluster_ip`] as its
    /// `spec.clusterIP`), its Endpoints and its EndpointSlice naming [`TestApiserver::ip`],
    /// ready. YAML documents for `kubectl apply -f -`.
    pub fn service_manifests(&self) -> String {
        let s = &self.spec;
        let (svc, ns, port, ip) = (&s.service, &s.namespace, s.port, self.ip());
        let cluster_ip = self
            .cluster_ip
            .map(|ip| format!("\n  clusterIP: {ip}"))
            .unwrap_or_default();
        format!(
            "apiVersion: v1
kind: Namespace
metadata:
  name: {ns}
---
apiVersion: v1
kind: Service
metadata:
  name: {svc}
  namespace: {ns}
spec:{cluster_ip}
  ports:
  - name: https
    port: {port}
    protocol: TCP
    targetPort: {port}
---
apiVersion: v1
kind: Endpoints
metadata:
  name: {svc}
  namespace: {ns}
subsets:
- addresses:
  - ip: {ip}
  ports:
  - name: https
    port: {port}
    protocol: TCP
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: {svc}-kas-test
  namespace: {ns}
  labels:
    kubernetes.io/service-name: {svc}
addressType: IPv4
ports:
- name: https
  port: {port}
  protocol: TCP
endpoints:
- addresses:
  - {ip}
  conditions:
    ready: true
"
        )
    }

    /// The APIService `v<version>.<group>` for the Service, with the serving CA as
    /// `caBundle`, `groupPriorityMinimum` 1000 and `versionPriority` 15 (sample-apiserver's).
    pub fn apiservice_manifest(&self) -> String {
        let s = &self.spec;
        format!(
            "apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: {name}
spec:
  group: {group}
  version: {version}
  groupPriorityMinimum: 1000
  versionPriority: 15
  service:
    name: {svc}
    namespace: {ns}
    port: {port}
  caBundle: {bundle}
",
            name = self.apiservice_name(),
            group = s.group,
            version = s.version,
            svc = s.service,
            ns = s.namespace,
            port = s.port,
            bundle = self.ca_bundle(),
        )
    }
}

fn failure_flag(f: DiscoveryFailure) -> &'static str {
    match f {
        DiscoveryFailure::None => "none",
        DiscoveryFailure::Error => "error",
        DiscoveryFailure::Hang => "hang",
    }
}

impl Drop for TestApiserver {
    fn drop(&mut self) {
        // The process before its namespace, so nothing holds the veth pair.
        self.process.take();
    }
}
