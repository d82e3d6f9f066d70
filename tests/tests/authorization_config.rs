//! `--authorization-config` end to end: an aggregator started with a structured
//! authorization configuration (and without the launcher's `--authorization-mode`, which
//! the file excludes) in front of the cluster's core: a webhook whose match conditions
//! send it only the requests in the namespace `guarded`, then `RBAC` (the aggregator's own
//! index of roles and bindings, built because the file names the type). The webhook denies alice there; when it is down, `failurePolicy:
//! Deny` answers 500, and after the file is rewritten with `NoOpinion` (reloaded while the
//! aggregator runs) the request goes on to RBAC, which lets alice read.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::Method;
use kas_e2e::client::{self, Proto};
use kas_e2e::tls_server::TlsServer;
use kas_e2e::{Role, start_cluster};
use serde_json::{Value, json};

/// The guard webhook: denies alice, allows others; answers 500 while `down`. Records the
/// namespace of every review it is asked.
struct Guard {
    _server: TlsServer,
    down: Arc<AtomicBool>,
    seen: Arc<Mutex<Vec<String>>>,
}

fn start_guard(dir: &Path) -> Guard {
    let down = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (is_down, record) = (down.clone(), seen.clone());
    let server = TlsServer::start(move |req| {
        let review: Value = serde_json::from_slice(req.body()).unwrap_or(Value::Null);
        let spec = &review["spec"];
        let namespace = spec["resourceAttributes"]["namespace"]
            .as_str()
            .unwrap_or("<none>");
        record.lock().unwrap().push(namespace.to_owned());
        if is_down.load(Ordering::SeqCst) {
            return http::Response::builder()
                .status(500)
                .header("content-type", "text/plain")
                .body(Bytes::from("guard is down"))
                .unwrap();
        }
        let status = match spec["user"].as_str() {
            Some("alice") => json!({"allowed": false, "denied": true, "reason": "guard says no"}),
            _ => json!({"allowed": true, "reason": "guard says yes"}),
        };
        let out =
            json!({"apiVersion": review["apiVersion"], "kind": review["kind"], "status": status});
        http::Response::builder()
            .header("content-type", "application/json")
            .body(Bytes::from(out.to_string()))
            .unwrap()
    });
    std::fs::write(dir.join("guard-ca.pem"), &server.ca_pem).unwrap();
    let kubeconfig = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: guard\n  cluster:\n    server: {}\n    certificate-authority: guard-ca.pem\nusers:\n- name: apiserver\n  user: {{}}\ncontexts:\n- name: guard\n  context: {{cluster: guard, user: apiserver}}\ncurrent-context: guard\n",
        server.url("/authorize")
    );
    std::fs::write(dir.join("guard.kubeconfig"), kubeconfig).unwrap();
    Guard {
        _server: server,
        down,
        seen,
    }
}

/// The configuration with the guard's `failure_policy`, written as tools write it:
/// renamed into place.
fn write_config(dir: &Path, failure_policy: &str) {
    let text = format!(
        "apiVersion: apiserver.config.k8s.io/v1
kind: AuthorizationConfiguration
authorizers:
- type: Webhook
  name: guard.example.com
  webhook:
    timeout: 5s
    failurePolicy: {failure_policy}
    subjectAccessReviewVersion: v1
    matchConditionSubjectAccessReviewVersion: v1
    authorizedTTL: 1ms
    unauthorizedTTL: 1ms
    connectionInfo:
      type: KubeConfigFile
      kubeConfigFile: {}
    matchConditions:
    - expression: has(request.resourceAttributes)
    - expression: request.resourceAttributes.namespace == 'guarded'
- type: RBAC
  name: rbac
",
        dir.join("guard.kubeconfig").display()
    );
    write_atomically(&dir.join("authz.yaml"), &text);
}

fn write_atomically(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// Kills the extra aggregator when the test ends, however it ends.
struct Process(std::process::Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

#[test]
fn a_structured_configuration_authorizes_and_reloads() {
    let c = start_cluster(|_| {});
    let dir = tempfile::tempdir().unwrap();
    let guard = start_guard(dir.path());
    write_config(dir.path(), "Deny");
    c.kubectl_ok(&["create", "namespace", "guarded"]);
    c.kubectl_ok(&[
        "create",
        "clusterrolebinding",
        "alice-view",
        "--clusterrole=view",
        "--user=alice",
    ]);

    // The launcher's flags but --authorization-mode, which the file excludes.
    let port = free_port();
    let mut args = kas_local::cluster::role_args(
        Role::Aggregator,
        port,
        c.pki(),
        &c.etcd_url(),
        &c.urls(Role::Core),
    );
    let mode = args
        .iter()
        .position(|a| a == "--authorization-mode")
        .unwrap();
    args.drain(mode..mode + 2);
    let config_flag = format!(
        "--authorization-config={}",
        dir.path().join("authz.yaml").display()
    );
    let bin = kas_e2e::bin_dir().join("aggregator");

    // With the legacy flag too, the aggregator refuses to start, with upstream's message.
    let out = std::process::Command::new(&bin)
        .args(&args)
        .args([config_flag.as_str(), "--authorization-mode=RBAC"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined"
        ),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let log_path = c.state_dir().join("authz-aggregator.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let _aggregator = Process(
        std::process::Command::new(&bin)
            .args(&args)
            .arg(&config_flag)
            .stdout(std::process::Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap(),
    );
    let base = format!("https://127.0.0.1:{port}");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let admin = c.admin_tls(Proto::H2);
    let bearer = c.bearer();
    let start = Instant::now();
    loop {
        let ready = rt.block_on(client::request(
            &format!("{base}/readyz"),
            Method::GET,
            &[("authorization", bearer.as_str())],
            &admin,
            Proto::H2,
        ));
        if ready.is_ok_and(|a| a.status == 200) {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the aggregator did not become ready: {}",
            std::fs::read_to_string(&log_path).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    let alice = c.pki().issue_user("alice", None).unwrap();
    let tls =
        client::Tls::new(&c.pki().ca.cert, Some((&alice.cert, &alice.key)), Proto::H2).unwrap();
    let list = |namespace: &str| {
        let url = format!("{base}/api/v1/namespaces/{namespace}/configmaps");
        rt.block_on(client::request(&url, Method::GET, &[], &tls, Proto::H2))
            .unwrap()
    };
    let seen = || std::mem::take(&mut *guard.seen.lock().unwrap());

    // Outside `guarded` the guard is not asked: RBAC allows alice's view.
    assert_eq!(list("default").status, 200);
    assert!(seen().is_empty());
    // In `guarded` it is, and its denial is the 403's reason.
    let denied = list("guarded");
    assert_eq!(denied.status, 403);
    assert_eq!(
        denied.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "configmaps is forbidden: User \"alice\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"guarded\": guard says no",
               "reason": "Forbidden", "details": {"kind": "configmaps"}, "code": 403})
    );
    assert!(seen().iter().all(|ns| ns == "guarded"));

    // Down, with failurePolicy Deny: the error decides (upstream's 500), nothing after it.
    guard.down.store(true, Ordering::SeqCst);
    let failed = list("guarded");
    assert_eq!(failed.status, 500, "{}", failed.text());
    assert!(
        failed.text().starts_with("Internal Server Error: \"/api/v1/namespaces/guarded/configmaps\": an error on the server (\"guard is down\") has prevented the request from succeeding"),
        "{}",
        failed.text()
    );
    assert_eq!(
        list("default").status,
        200,
        "requests the guard does not match go on"
    );

    // An invalid file is logged and changes nothing.
    write_atomically(
        &dir.path().join("authz.yaml"),
        "apiVersion: apiserver.config.k8s.io",
    );
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(list("guarded").status, 500);
    let logged = std::fs::read_to_string(&log_path).unwrap();
    assert!(
        logged.contains("reloading authorization config"),
        "{logged}"
    );

    // failurePolicy NoOpinion, reloaded: the chain goes on to RBAC.
    write_config(dir.path(), "NoOpinion");
    let start = Instant::now();
    let answer = loop {
        let answer = list("guarded");
        if answer.status == 200 || start.elapsed() > Duration::from_secs(30) {
            break answer;
        }
        std::thread::sleep(Duration::from_millis(250));
    };
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert!(
        !seen().is_empty(),
        "the guard is still asked, and fails open"
    );

    // Back up, the guard decides again.
    guard.down.store(false, Ordering::SeqCst);
    assert_eq!(list("guarded").status, 403);
}
