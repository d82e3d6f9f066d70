//! Connection upgrades through the three roles: a client's upgrade reaches a backend
//! through the aggregator's hop to core (an HTTP/1.1 connection of its own) and core's
//! proxy, and the two connections are spliced both ways.
//!
//! The backend listens in a network namespace of kas-e2e's `netns` (upstream refuses
//! loopback pod IPs).
//!
//! kubectl's exec, attach, cp and port-forward reach a fake kubelet (kas-e2e's, SPDY over
//! HTTPS on 127.0.0.1) through the roles: kubectl 1.33's WebSockets are translated
//! (exec, attach, cp: `v5.channel.k8s.io` → SPDY) or tunneled (port-forward) by core, as
//! upstream 1.33 does with its gates on; with the gates off kubectl falls back to SPDY,
//! which passes through. A user without `create` on `pods/exec` is refused with
//! upstream's 403; one with `get` execs over a WebSocket, as 1.33 allows.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Command;

use kas_e2e::kubelet::FakeKubelet;
use kas_e2e::netns::Netns;
use kas_e2e::{Role, TestCluster, start_cluster};
use kas_local::kubeconfig::Credential;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A listener bound inside `ns` (the socket keeps its namespace), on its address.
fn listen_in(ns: &Netns) -> TcpListener {
    let path = format!("/var/run/netns/{}", ns.name());
    let addr = (ns.ip(), 0);
    std::thread::spawn(move || {
        let file = std::fs::File::open(&path).expect("namespace file");
        nix::sched::setns(file, nix::sched::CloneFlags::CLONE_NEWNET).expect("setns");
        TcpListener::bind(addr).expect("bind in the namespace")
    })
    .join()
    .expect("listener thread")
}

/// Answers upgrades of protocol `echo` with 101 and echoes; anything else gets a 400.
fn upgrade_echo_server(listener: TcpListener) {
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    match stream.read(&mut byte) {
                        Ok(1) => head.push(byte[0]),
                        _ => return,
                    }
                }
                let text = String::from_utf8_lossy(&head).to_ascii_lowercase();
                if !text.contains("\r\nupgrade: echo\r\n") {
                    let _ = stream.write_all(
                        b"HTTP/1.1 400 Bad Request\r\nContent-Length: 10\r\nConnection: close\r\n\r\nno upgrade",
                    );
                    return;
                }
                let target = text.split(' ').nth(1).unwrap_or("").to_owned();
                let reply = format!(
                    "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\nX-Target: {target}\r\n\r\n"
                );
                if stream.write_all(reply.as_bytes()).is_err() {
                    return;
                }
                let mut buf = [0u8; 4096];
                while let Ok(n) = stream.read(&mut buf) {
                    if n == 0 || stream.write_all(&buf[..n]).is_err() {
                        return;
                    }
                }
            });
        }
    });
}

/// Opens an HTTP/1.1 TLS connection to the aggregator as the admin and sends an upgrade
/// request for `path`; returns the connection and the answer's head.
async fn upgrade(
    c: &TestCluster,
    path: &str,
    protocol: &str,
) -> (
    tokio_rustls::client::TlsStream<tokio::net::TcpStream>,
    String,
) {
    let base: http::Uri = c.url(Role::Aggregator, 0).parse().expect("url");
    let tls = c.admin_tls(kas_e2e::client::Proto::H1);
    let mut conn = kas_e2e::client::dial(&base, &tls).await.expect("dial");
    let head = format!(
        "GET {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: {}\r\nConnection: Upgrade\r\nUpgrade: {protocol}\r\n\r\n",
        base.authority().expect("authority"),
        c.bearer()
    );
    conn.write_all(head.as_bytes()).await.expect("write");
    let mut got = Vec::new();
    let mut byte = [0u8; 1];
    while !got.ends_with(b"\r\n\r\n") {
        let n = conn.read(&mut byte).await.expect("read");
        assert_eq!(n, 1, "closed after {:?}", String::from_utf8_lossy(&got));
        got.push(byte[0]);
    }
    (conn, String::from_utf8_lossy(&got).into_owned())
}

#[test]
fn upgrades_reach_a_pod_through_the_roles() {
    let ns = Netns::new();
    let listener = listen_in(&ns);
    let port = listener.local_addr().expect("addr").port();
    upgrade_echo_server(listener);
    let c = start_cluster(|_| {});
    c.kubectl_ok(&["run", "echo", "--image=nginx"]);
    let ip = ns.ip().to_string();
    let status = json!({"status": {"podIP": ip, "podIPs": [{"ip": ip}]}}).to_string();
    c.kubectl_ok(&[
        "patch",
        "pod",
        "echo",
        "--subresource=status",
        "--type=merge",
        "-p",
        &status,
    ]);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let path = format!("/api/v1/namespaces/default/pods/echo:{port}/proxy/chat?room=1");
        let (mut conn, head) = upgrade(&c, &path, "echo").await;
        let lower = head.to_ascii_lowercase();
        assert!(
            lower.starts_with("http/1.1 101 switching protocols\r\n"),
            "{head}"
        );
        assert!(lower.contains("x-target: /chat?room=1\r\n"), "{head}");
        for message in ["hello", "through three hops"] {
            conn.write_all(message.as_bytes()).await.expect("write");
            let mut buf = vec![0u8; message.len()];
            conn.read_exact(&mut buf).await.expect("echo");
            assert_eq!(buf, message.as_bytes());
        }
        // The backend's refusal comes back as it answered.
        let (mut conn, head) = upgrade(&c, &path, "nothing").await;
        assert!(head.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{head}");
        let mut body = Vec::new();
        let mut buf = [0u8; 1024];
        while let Ok(n) = conn.read(&mut buf).await {
            if n == 0 {
                break;
            }
            body.extend_from_slice(&buf[..n]);
        }
        assert_eq!(String::from_utf8_lossy(&body), "no upgrade", "{head}");
    });
}

/// A node whose kubelet is `kubelet`, and a running pod `name` on it with one container
/// `main`.
fn pod_on_fake_kubelet(c: &TestCluster, kubelet: &FakeKubelet, name: &str) {
    let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "fake-node"}});
    let out = c.kubectl_stdin(&["apply"], &node.to_string());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status = json!({"status": {
        "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": kubelet.addr.port()}}}});
    c.kubectl_ok(&[
        "patch",
        "node",
        "fake-node",
        "--subresource=status",
        "--type=merge",
        "-p",
        &status.to_string(),
    ]);
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"nodeName": "fake-node", "containers": [{"name": "main", "image": "busybox"}]}});
    let out = c.kubectl_stdin(&["apply"], &pod.to_string());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let running = json!({"status": {"phase": "Running", "podIP": "10.244.0.5",
        "containerStatuses": [{"name": "main", "ready": true, "restartCount": 0, "image": "busybox",
            "imageID": "", "state": {"running": {"startedAt": "2025-01-01T00:00:00Z"}}}]}});
    c.kubectl_ok(&[
        "patch",
        "pod",
        name,
        "--subresource=status",
        "--type=merge",
        "-p",
        &running.to_string(),
    ]);
}

fn run(c: &TestCluster, args: &[&str], stdin: &[u8]) -> std::process::Output {
    let mut child = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(c.kubeconfig_path())
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("kubectl");
    if let Some(mut input) = child.stdin.take() {
        input.write_all(stdin).expect("stdin");
    }
    child.wait_with_output().expect("kubectl")
}

#[test]
fn kubectl_exec_attach_and_cp_reach_the_kubelet_through_the_roles() {
    let kubelet = FakeKubelet::start();
    let c = start_cluster(|_| {});
    pod_on_fake_kubelet(&c, &kubelet, "shell");

    let out = run(
        &c,
        &[
            "exec",
            "shell",
            "--",
            "sh",
            "-c",
            "echo out; echo err >&2; exit 3",
        ],
        b"",
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "out\n");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("err\n"), "{stderr}");
    assert!(
        stderr.contains("command terminated with exit code 3"),
        "{stderr}"
    );
    assert_eq!(out.status.code(), Some(3));
    let seen = kubelet.seen.lock().expect("seen").clone();
    // kubectl 1.33 asks for a WebSocket (v5.channel.k8s.io); core translates it to SPDY
    // toward the kubelet, which never sees a WebSocket.
    assert_eq!(seen.len(), 1, "{seen:#?}");
    assert!(
        seen[0].starts_with(
            "POST /exec/default/shell/main?command=sh&command=-c&command=echo+out%3B+echo+err+%3E%262%3B+exit+3&error=1&output=1 upgrade=SPDY/3.1"
        ),
        "{seen:#?}"
    );

    let out = run(
        &c,
        &["exec", "-i", "shell", "--", "cat"],
        b"through stdin\n",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "through stdin\n");

    let out = run(&c, &["attach", "-i", "shell", "-c", "main"], b"typed\n");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "attached to main\ntyped\n"
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let local = dir.path().join("copied.txt");
    let out = run(
        &c,
        &["cp", "shell:/tmp/data.txt", local.to_str().expect("path")],
        b"",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&local).expect("copied"),
        "content of /tmp/data.txt\n"
    );
    let upload = dir.path().join("up.txt");
    std::fs::write(&upload, "uploaded\n").expect("write");
    let out = run(
        &c,
        &["cp", upload.to_str().expect("path"), "shell:/tmp/up.txt"],
        b"",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        kubelet.received.lock().expect("received").clone(),
        vec![("up.txt".to_owned(), b"uploaded\n".to_vec())]
    );
}

#[test]
fn kubectl_port_forward_reaches_the_kubelet_through_the_roles() {
    let kubelet = FakeKubelet::start();
    let c = start_cluster(|_| {});
    pod_on_fake_kubelet(&c, &kubelet, "web");
    let local = TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let mut forward = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(c.kubeconfig_path())
        .args(["port-forward", "pod/web", &format!("{local}:8080")])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("kubectl");
    let mut reply = String::new();
    for _ in 0..100 {
        if let Ok(mut conn) = std::net::TcpStream::connect(("127.0.0.1", local)) {
            conn.set_read_timeout(Some(std::time::Duration::from_secs(10)))
                .expect("timeout");
            conn.write_all(b"ping").expect("write");
            let mut buf = [0u8; 64];
            let n = conn.read(&mut buf).expect("read");
            reply = String::from_utf8_lossy(&buf[..n]).into_owned();
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let _ = forward.kill();
    let out = forward.wait_with_output().expect("kubectl");
    assert_eq!(
        reply,
        "port 8080: ping",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen = kubelet.seen.lock().expect("seen").clone();
    // The WebSocket (SPDY/3.1+portforward.k8s.io) is tunneled: the kubelet sees SPDY only.
    assert_eq!(
        seen,
        ["POST /portForward/default/web upgrade=SPDY/3.1"],
        "{seen:#?}"
    );
}

#[test]
fn without_the_gates_kubectl_falls_back_to_spdy_through_the_roles() {
    let kubelet = FakeKubelet::start();
    let c = start_cluster(|spec| {
        spec.extra_args.entry(kas_e2e::Role::Core).or_default().push(
            "--feature-gates=TranslateStreamCloseWebsocketRequests=false,PortForwardWebsockets=false"
                .to_owned(),
        );
    });
    pod_on_fake_kubelet(&c, &kubelet, "plain");
    let out = run(&c, &["exec", "plain", "--", "echo", "hi"], b"");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "hi\n");
    let seen = kubelet.seen.lock().expect("seen").clone();
    // The WebSocket passes through as any upgrade, the kubelet refuses it, and kubectl
    // falls back to SPDY.
    assert_eq!(seen.len(), 2, "{seen:#?}");
    assert!(
        seen[0].starts_with("GET /exec/default/plain/main?command=echo&command=hi")
            && seen[0].ends_with("upgrade=websocket"),
        "{seen:#?}"
    );
    assert!(
        seen[1].starts_with("POST /exec/default/plain/main?")
            && seen[1].ends_with("upgrade=SPDY/3.1")
    );
}

#[test]
fn exec_is_authorized_by_its_method_as_in_1_33() {
    let kubelet = FakeKubelet::start();
    let c = start_cluster(|_| {});
    pod_on_fake_kubelet(&c, &kubelet, "guarded");
    c.kubectl_ok(&[
        "create",
        "role",
        "pod-reader",
        "--verb=get",
        "--resource=pods",
    ]);
    c.kubectl_ok(&[
        "create",
        "rolebinding",
        "eve-reads",
        "--role=pod-reader",
        "--user=eve",
    ]);
    let cert = c.pki().issue_user("eve", None).expect("user");
    let eve = c.kubeconfig_for(0, "eve", Credential::Certificate(&cert));
    let out = kas_e2e::kubectl_with(&eve, &["exec", "guarded", "--", "echo", "hi"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "pods \"guarded\" is forbidden: User \"eve\" cannot create resource \"pods/exec\" in API group \"\" in the namespace \"default\""
        ),
        "{stderr}"
    );
    assert!(
        kubelet
            .seen
            .lock()
            .expect("seen")
            .iter()
            .all(|l| !l.contains("/exec/"))
    );
    // 1.33 authorizes the WebSocket's GET as `get` (the `create` check of
    // AuthorizePodWebsocketUpgradeCreatePermission comes in 1.35): with `get` on
    // pods/exec, kubectl's WebSocket exec goes through.
    c.kubectl_ok(&[
        "create",
        "role",
        "exec-getter",
        "--verb=get",
        "--resource=pods/exec",
    ]);
    c.kubectl_ok(&[
        "create",
        "rolebinding",
        "eve-execs",
        "--role=exec-getter",
        "--user=eve",
    ]);
    let mut out = kas_e2e::kubectl_with(&eve, &["exec", "guarded", "--", "echo", "hi"]);
    for _ in 0..20 {
        if out.status.success() {
            break;
        }
        // RBAC reaches every replica within moments.
        std::thread::sleep(std::time::Duration::from_millis(100));
        out = kas_e2e::kubectl_with(&eve, &["exec", "guarded", "--", "echo", "hi"]);
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "hi\n");
}
