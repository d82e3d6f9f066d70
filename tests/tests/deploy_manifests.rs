//! deploy/manifests, as an operator uses it: the launcher's `pki` subcommand writes the
//! secretGenerator's input, every overlay renders with kubectl's kustomize, a cluster of
//! ours accepts each overlay in a server-side dry run, the pods meet the restricted Pod
//! Security level, and the three binaries run with exactly the arguments of their
//! Deployments, chained aggregator → core → extensions through the headless Services' DNS
//! name.

use std::collections::BTreeMap;
use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use kas_e2e::{NOT_FOUND_BODY, TestCluster, bin_dir, metric_value, start_cluster};
use kas_local::probe;
use serde_json::{Value, json};

const OVERLAYS: [&str; 3] = ["dev", "ha", "loadbalancer"];
const NAMESPACE: &str = "kas-system";
/// A path no role serves.
const NOWHERE: &str = "/apis/nope.example.com/v1/things";

/// A copy of deploy/manifests whose `base/pki` the `pki` subcommand wrote.
struct Manifests {
    dir: tempfile::TempDir,
}

impl Manifests {
    fn new() -> Manifests {
        let dir = tempfile::tempdir().expect("tempdir");
        let source = kas_local::repo_root().join("deploy/manifests");
        copy_tree(&source, dir.path());
        let launcher = bin_dir().join("kas-local");
        assert!(
            launcher.exists(),
            "{} is missing: run `cargo build -p kas-local` before this test",
            launcher.display()
        );
        let out = Command::new(&launcher)
            .args(["pki", "--out"])
            .arg(dir.path().join("base/pki"))
            .args(["--dns", "api.example.com"])
            .output()
            .expect("kas-local runs");
        assert!(
            out.status.success(),
            "kas-local pki: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Manifests { dir }
    }

    fn overlay(&self, name: &str) -> String {
        self.dir
            .path()
            .join("overlays")
            .join(name)
            .display()
            .to_string()
    }
}

/// Copies `from` into `to`, leaving out a `base/pki` an operator may have generated.
fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("mkdir");
    for entry in fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("dir entry");
        let path = entry.path();
        if path.ends_with("base/pki") {
            continue;
        }
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_tree(&path, &target);
        } else {
            fs::copy(&path, &target).expect("copy");
        }
    }
}

fn kubectl_kustomize(dir: &str) -> String {
    let out = Command::new("kubectl")
        .args(["kustomize", dir])
        .output()
        .expect("kubectl on PATH");
    assert!(
        out.status.success(),
        "kubectl kustomize {dir}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `kubectl apply --dry-run=server -k overlay -o json`: the objects as the server would
/// store them, and kubectl's stderr (warnings).
fn dry_run(c: &TestCluster, overlay: &str) -> (Vec<Value>, String) {
    let out = c.kubectl(&["apply", "--dry-run=server", "-k", overlay, "-o", "json"]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "kubectl apply --dry-run=server -k {overlay}: {stderr}"
    );
    let list: Value = serde_json::from_slice(&out.stdout).expect("kubectl's JSON");
    let items = list["items"].as_array().cloned().unwrap_or_default();
    (items, stderr)
}

fn kinds(objects: &[Value]) -> BTreeMap<String, Vec<String>> {
    let mut kinds: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for o in objects {
        kinds
            .entry(o["kind"].as_str().unwrap_or_default().to_owned())
            .or_default()
            .push(
                o["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            );
    }
    kinds
}

fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

#[test]
fn every_overlay_renders_with_the_generated_pki() {
    let m = Manifests::new();
    for overlay in OVERLAYS {
        let yaml = kubectl_kustomize(&m.overlay(overlay));
        let count = |needle: &str| yaml.matches(needle).count();
        assert_eq!(count("\nkind: Deployment\n"), 3, "{overlay}");
        assert_eq!(count("\nkind: HorizontalPodAutoscaler\n"), 3, "{overlay}");
        assert_eq!(count("\nkind: PodDisruptionBudget\n"), 3, "{overlay}");
        assert_eq!(
            count("\nkind: Service\n"),
            3 + usize::from(overlay == "dev")
        );
        assert_eq!(count("\nkind: Secret\n"), 3, "{overlay}");
        assert_eq!(
            count("\nkind: StatefulSet\n"),
            usize::from(overlay == "dev")
        );
        assert_eq!(
            count("type: LoadBalancer"),
            usize::from(overlay == "loadbalancer")
        );
        assert!(yaml.contains("name: kas-aggregator-pki-"), "{overlay}");
    }
    // Without the PKI there is nothing to generate the Secrets from.
    fs::remove_dir_all(m.dir.path().join("base/pki")).expect("rm pki");
    let out = Command::new("kubectl")
        .args(["kustomize", &m.overlay("dev")])
        .output()
        .expect("kubectl on PATH");
    assert!(!out.status.success());
}

#[test]
fn a_cluster_of_ours_accepts_every_overlay_and_restricted_pod_security_admits_the_pods() {
    let m = Manifests::new();
    let c = start_cluster(|_| {});

    // The namespace exactly as the manifests give it (enforce and warn restricted), then
    // each overlay in a server-side dry run: no warning at all, PodSecurity's included.
    // (A dry run creates nothing, so the namespace must exist first.)
    c.kubectl_ok(&["create", "namespace", NAMESPACE]);
    let (dev, _) = dry_run(&c, &m.overlay("dev"));
    let namespace = find(&dev, "Namespace", NAMESPACE);
    let labels = &namespace["metadata"]["labels"];
    assert_eq!(labels["pod-security.kubernetes.io/enforce"], "restricted");
    let applied = c.kubectl_stdin(&["apply"], &namespace.to_string());
    assert!(applied.status.success(), "{applied:?}");

    for overlay in OVERLAYS {
        let (objects, stderr) = dry_run(&c, &m.overlay(overlay));
        assert!(!stderr.contains("Warning"), "{overlay}: {stderr}");
        let kinds = kinds(&objects);
        // One of each per role; dev's etcd adds a Service.
        for kind in ["Deployment", "Service", "PodDisruptionBudget"] {
            let etcd = usize::from(overlay == "dev" && kind == "Service");
            assert_eq!(kinds[kind].len(), 3 + etcd, "{overlay} {kind}");
        }
        assert_eq!(kinds["HorizontalPodAutoscaler"].len(), 3, "{overlay}");
        let replicas = |name: &str| find(&objects, "Deployment", name)["spec"]["replicas"].clone();
        let expected = if overlay == "dev" {
            [1, 1, 1]
        } else {
            [3, 3, 2]
        };
        for (name, n) in ["kas-aggregator", "kas-core", "kas-extensions"]
            .into_iter()
            .zip(expected)
        {
            assert_eq!(replicas(name), json!(n), "{overlay} {name}");
            let hpa = find(&objects, "HorizontalPodAutoscaler", name);
            assert_eq!(hpa["spec"]["minReplicas"], json!(n), "{overlay} {name}");
        }
        let entry = find(&objects, "Service", "kas-aggregator");
        let expected = if overlay == "loadbalancer" {
            "LoadBalancer"
        } else {
            "ClusterIP"
        };
        assert_eq!(entry["spec"]["type"], expected, "{overlay}");
        for headless in ["kas-core", "kas-extensions"] {
            assert_eq!(
                find(&objects, "Service", headless)["spec"]["clusterIP"],
                "None"
            );
        }
    }

    // The Deployments' pods in a namespace that enforces restricted: each pod template is
    // admitted as a Pod. Workloads are only ever warned about, and (as upstream) only by
    // the warn and audit levels: warn=restricted too, and no warning on the Deployments.
    let strict = "strict";
    let manifest = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": strict,
        "labels": {
            "pod-security.kubernetes.io/enforce": "restricted",
            "pod-security.kubernetes.io/warn": "restricted",
        },
    }});
    let created = c.kubectl_stdin(&["create"], &manifest.to_string());
    assert!(created.status.success(), "{created:?}");
    let deployments: Vec<Value> = dev
        .iter()
        .filter(|o| o["kind"] == "Deployment")
        .map(|d| {
            let mut d = d.clone();
            d["metadata"] = json!({"name": d["metadata"]["name"], "namespace": strict});
            d
        })
        .collect();
    assert_eq!(deployments.len(), 3);
    let list = json!({"apiVersion": "v1", "kind": "List", "items": deployments});
    let out = c.kubectl_stdin(&["apply", "--dry-run=server"], &list.to_string());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("PodSecurity"), "{stderr}");
    assert!(!stderr.contains("Warning"), "{stderr}");
    // The check is real: a template whose container lost its securityContext warns.
    let mut bare = deployments[0].clone();
    bare["spec"]["template"]["spec"]["containers"][0]
        .as_object_mut()
        .map(|c| c.remove("securityContext"));
    let out = c.kubectl_stdin(&["apply", "--dry-run=server"], &bare.to_string());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            r#"would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false"#
        ),
        "{stderr}"
    );

    for d in &deployments {
        let name = d["metadata"]["name"].as_str().unwrap_or_default();
        let pod = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": strict,
                         "labels": d["spec"]["template"]["metadata"]["labels"]},
            "spec": d["spec"]["template"]["spec"]});
        let out = c.kubectl_stdin(&["create"], &pod.to_string());
        assert!(
            out.status.success(),
            "pod of {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );

        // The check is real: the same pod without its container's securityContext is
        // refused.
        let mut bare = pod.clone();
        bare["metadata"]["name"] = json!(format!("{name}-bare"));
        bare["spec"]["containers"][0]
            .as_object_mut()
            .map(|c| c.remove("securityContext"));
        let out = c.kubectl_stdin(&["create"], &bare.to_string());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(
            stderr.contains(
                r#"violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false"#
            ),
            "{stderr}"
        );
    }
}

/// A started binary, killed on drop.
struct Running {
    name: String,
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// `$(VAR)` of `arg` replaced from `env`, as the kubelet does.
fn expand(arg: &str, env: &BTreeMap<String, String>) -> String {
    let mut out = arg.to_owned();
    for (name, value) in env {
        out = out.replace(&format!("$({name})"), value);
    }
    assert!(!out.contains("$("), "unexpanded variable in {arg}");
    out
}

/// What the kubelet would give the container: its environment (ConfigMap keys and the pod
/// IP, here loopback) and its volumes (Secret keys as files, emptyDirs), under `root`.
/// Returns the environment and the mount paths mapped to directories.
fn container_world(
    objects: &[Value],
    pod: &Value,
    root: &Path,
) -> (BTreeMap<String, String>, Vec<(String, PathBuf)>) {
    let container = &pod["containers"][0];
    let mut env = BTreeMap::new();
    for e in container["env"].as_array().into_iter().flatten() {
        let name = e["name"].as_str().expect("env name").to_owned();
        let value = if let Some(v) = e["value"].as_str() {
            v.to_owned()
        } else if let Some(r) = e["valueFrom"]["configMapKeyRef"].as_object() {
            let cm = find(objects, "ConfigMap", r["name"].as_str().expect("cm name"));
            cm["data"][r["key"].as_str().expect("key")]
                .as_str()
                .expect("configmap key")
                .to_owned()
        } else if e["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP" {
            "127.0.0.1".to_owned()
        } else {
            panic!("unsupported env source {e}");
        };
        env.insert(name, value);
    }
    let mut mounts = Vec::new();
    for m in container["volumeMounts"].as_array().into_iter().flatten() {
        let name = m["name"].as_str().expect("mount name");
        let volume = pod["volumes"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|v| v["name"] == name)
            .expect("the mount's volume");
        let dir = root.join(name);
        fs::create_dir_all(&dir).expect("mkdir");
        if let Some(secret) = volume["secret"]["secretName"].as_str() {
            let secret = find(objects, "Secret", secret);
            for (key, value) in secret["data"].as_object().expect("secret data") {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(value.as_str().expect("base64"))
                    .expect("base64");
                fs::write(dir.join(key), bytes).expect("write secret file");
            }
        } else {
            assert!(
                volume.get("emptyDir").is_some(),
                "unsupported volume {volume}"
            );
        }
        let path = m["mountPath"].as_str().expect("mountPath").to_owned();
        mounts.push((path, dir));
    }
    (env, mounts)
}

fn get(url: &str, ca: &[u8], bearer: Option<&str>) -> probe::Response {
    let mut request = probe::Request::get(url, ca);
    request.bearer = bearer;
    probe::send(&request).unwrap_or_else(|e| panic!("GET {url}: {e}"))
}

fn wait_ready(r: &mut Running, ca: &[u8]) {
    let url = format!("https://127.0.0.1:{}/readyz", r.port);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(Some(status)) = r.child.try_wait() {
            panic!(
                "{} exited with {status}: {}",
                r.name,
                fs::read_to_string(&r.log).unwrap_or_default()
            );
        }
        let mut request = probe::Request::get(&url, ca);
        request.timeout = Duration::from_secs(2);
        match probe::send(&request) {
            Ok(resp) if resp.status == 200 => return,
            other if Instant::now() > deadline => panic!(
                "{} not ready: {other:?}\n{}",
                r.name,
                fs::read_to_string(&r.log).unwrap_or_default()
            ),
            _ => std::thread::sleep(Duration::from_millis(200)),
        }
    }
}

#[test]
fn the_binaries_run_with_exactly_the_deployments_arguments() {
    let m = Manifests::new();
    let c = start_cluster(|_| {});
    c.kubectl_ok(&["create", "namespace", NAMESPACE]);
    let (objects, _) = dry_run(&c, &m.overlay("dev"));
    let work = tempfile::tempdir().expect("tempdir");

    // Role by Deployment, in start order: a role's delegate first.
    let deployments = ["kas-extensions", "kas-core", "kas-aggregator"];
    let ports: BTreeMap<&str, u16> = deployments.iter().map(|&d| (d, free_port())).collect();
    let mut running: Vec<Running> = Vec::new();
    let mut ca = Vec::new();
    for name in deployments {
        let deployment = find(&objects, "Deployment", name);
        let pod = &deployment["spec"]["template"]["spec"];
        let container = &pod["containers"][0];
        let root = work.path().join(name);
        let (env, mounts) = container_world(&objects, pod, &root);
        let command: Vec<&str> = container["command"]
            .as_array()
            .expect("command")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert_eq!(command.len(), 1, "{name}: {command:?}");
        let binary = bin_dir().join(Path::new(command[0]).file_name().expect("binary name"));

        let mut args = Vec::new();
        for arg in container["args"].as_array().expect("args") {
            let arg = expand(arg.as_str().expect("string arg"), &env);
            let (flag, value) = arg
                .split_once('=')
                .unwrap_or_else(|| panic!("{name}: {arg} is not --flag=value"));
            let value = match flag {
                "--secure-port" => {
                    let port = container["ports"][0]["containerPort"].to_string();
                    assert_eq!(value, port, "{name}");
                    ports[name].to_string()
                }
                "--bind-address" => {
                    assert_eq!(value, "0.0.0.0", "{name}");
                    "127.0.0.1".to_owned()
                }
                "--etcd-servers" => c.etcd_url(),
                "--delegate-endpoints" | "--extensions-endpoints" => {
                    // One URL: the delegate's headless Service by DNS name, which here
                    // is `localhost` (resolving to loopback only).
                    let host = value
                        .strip_prefix("https://")
                        .and_then(|v| v.split_once(':'))
                        .map(|(host, _)| host)
                        .unwrap_or_else(|| panic!("{name}: {value}"));
                    let service = host
                        .strip_suffix(&format!(".{NAMESPACE}.svc"))
                        .unwrap_or_else(|| panic!("{name}: {host} is no Service name"));
                    let svc = find(&objects, "Service", service);
                    assert_eq!(svc["spec"]["clusterIP"], "None", "{service}");
                    let target = find(&objects, "Deployment", service);
                    assert_eq!(
                        svc["spec"]["selector"],
                        target["spec"]["selector"]["matchLabels"]
                    );
                    format!("https://localhost:{}", ports[service])
                }
                // A file of a volume: the same file under the volume's directory here.
                _ => mounts
                    .iter()
                    .find_map(|(mount, dir)| {
                        let rest = value.strip_prefix(mount.as_str())?;
                        rest.starts_with('/')
                            .then(|| format!("{}{rest}", dir.display()))
                    })
                    .unwrap_or_else(|| value.to_owned()),
            };
            args.push(format!("{flag}={value}"));
        }
        if name == "kas-aggregator" {
            ca = fs::read(root.join("pki/ca.crt")).expect("the aggregator's ca.crt");
        }
        let log = work.path().join(format!("{name}.log"));
        let child = Command::new(&binary)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(fs::File::create(&log).expect("log"))
            .stderr(fs::File::create(&log).expect("log"))
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", binary.display()));
        running.push(Running {
            name: name.to_owned(),
            child,
            port: ports[name],
            log,
        });
    }
    for r in &mut running {
        // Every role's serving certificate comes from the same CA.
        wait_ready(r, &ca);
    }

    // The admin token of the generated token file, as the aggregator's Secret holds it.
    let tokens =
        fs::read_to_string(work.path().join("kas-aggregator/pki/tokens.csv")).expect("tokens.csv");
    let token = tokens.split(',').next().expect("a token").to_owned();
    let aggregator = format!("https://127.0.0.1:{}", ports["kas-aggregator"]);

    // Core answers through the aggregator.
    let r = get(
        &format!("{aggregator}/api/v1/namespaces/default"),
        &ca,
        Some(&token),
    );
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let body: Value = serde_json::from_slice(&r.body).expect("JSON");
    assert_eq!(body["kind"], "Namespace");

    // A path nobody serves crosses core to extensions, the end of the chain, whose 404 it
    // is: extensions counted it (asked as core asks it, with the front-proxy client
    // certificate of core's Secret).
    let r = get(&format!("{aggregator}{NOWHERE}"), &ca, Some(&token));
    assert_eq!(r.status, 404);
    assert_eq!(String::from_utf8_lossy(&r.body), NOT_FOUND_BODY);
    let pki = work.path().join("kas-core/pki");
    let cert = fs::read(pki.join("front-proxy-client.crt")).expect("proxy client cert");
    let key = fs::read(pki.join("front-proxy-client.key")).expect("proxy client key");
    let url = format!("https://127.0.0.1:{}/metrics", ports["kas-extensions"]);
    let mut request = probe::Request::get(&url, &ca);
    request.client_cert = Some((&cert, &key));
    request.headers = vec![
        ("X-Remote-User", "admin"),
        ("X-Remote-Group", "system:masters"),
    ];
    let r = probe::send(&request).expect("extensions' /metrics");
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let labels = [
        ("group", "nope.example.com"),
        ("resource", "things"),
        ("verb", "LIST"),
        ("code", "404"),
    ];
    let text = String::from_utf8_lossy(&r.body);
    let count = metric_value(&text, "apiserver_request_total", &labels);
    assert_eq!(count, Some(1.0), "extensions' metrics:\n{text}");

    // Core and extensions trust only the front proxy: a direct request without its
    // certificate is refused (their probes' health paths excepted, as above).
    for role in ["kas-core", "kas-extensions"] {
        let url = format!(
            "https://127.0.0.1:{}/api/v1/namespaces/default",
            ports[role]
        );
        let r = get(&url, &ca, Some(&token));
        assert_eq!(
            r.status,
            401,
            "{role}: {}",
            String::from_utf8_lossy(&r.body)
        );
    }
}
