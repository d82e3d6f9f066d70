//! The connect subresources (upstream's `pods/log`, `pods/exec`, `pods/attach`,
//! `pods/portforward`, and the `proxy` of pods, services and nodes) through the
//! aggregator, as kubectl drives them: upstream's location rules and errors, and real
//! streaming from a fake kubelet and proxying to a plain HTTP server.

use std::io::{Read, Write};
use std::net::{IpAddr, TcpListener};
use std::sync::{Arc, Mutex};

use kas_e2e::{TestCluster, start_cluster};
use serde_json::{Value, json};

type Seen = Arc<Mutex<Vec<String>>>;

/// Answers one HTTP/1.1 request with `<greeting> <request target>`; returns the request
/// line.
fn answer(stream: &mut impl ReadWrite, greeting: &str) -> Option<String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let line = String::from_utf8_lossy(&buf).lines().next()?.to_owned();
    let reply = format!("{greeting} {}", line.split(' ').nth(1)?);
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        reply.len()
    );
    stream.write_all(head.as_bytes()).ok()?;
    stream.write_all(reply.as_bytes()).ok()?;
    stream.flush().ok()?;
    Some(line)
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

/// A TLS "kubelet" on 127.0.0.1 with a self-signed certificate.
fn fake_kubelet(greeting: &'static str) -> (u16, Seen) {
    let ck = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).expect("cert");
    let key = rustls_pki_types::PrivateKeyDer::Pkcs8(ck.signing_key.serialize_der().into());
    let config = rustls::ServerConfig::builder_with_provider(kas_tls::provider())
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(vec![ck.cert.der().clone()], key)
        .expect("server config");
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let seen: Seen = Default::default();
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let Ok(conn) = rustls::ServerConnection::new(config.clone()) else {
                continue;
            };
            let mut tls = rustls::StreamOwned::new(conn, stream);
            if let Some(line) = answer(&mut tls, greeting) {
                log.lock().unwrap().push(line);
            }
            tls.conn.send_close_notify();
            let _ = tls.flush();
        }
    });
    (port, seen)
}

/// A plain HTTP server on every address.
fn plain_server(greeting: &'static str) -> (u16, Seen) {
    let listener = TcpListener::bind("0.0.0.0:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let seen: Seen = Default::default();
    let log = seen.clone();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            if let Some(line) = answer(&mut stream, greeting) {
                log.lock().unwrap().push(line);
            }
        }
    });
    (port, seen)
}

/// This machine's address on its default route, if it is not a loopback one.
fn host_ip() -> Option<IpAddr> {
    let s = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    s.connect("192.0.2.255:9")
        .or_else(|_| s.connect("8.8.8.8:80"))
        .ok()?;
    let ip = s.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

fn apply(c: &TestCluster, manifest: Value) {
    let out = c.kubectl_stdin(&["apply"], &manifest.to_string());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn patch_status(c: &TestCluster, kind: &str, name: &str, status: Value) {
    let patch = json!({ "status": status }).to_string();
    c.kubectl_ok(&[
        "patch",
        kind,
        name,
        "--subresource=status",
        "--type=merge",
        "-p",
        &patch,
    ]);
}

/// A node whose kubelet is at `address` (none when empty) and `port`.
fn node(c: &TestCluster, name: &str, address: &str, port: u16) {
    apply(
        c,
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}),
    );
    let addresses = match address {
        "" => json!([]),
        a => json!([{"type": "InternalIP", "address": a}]),
    };
    patch_status(
        c,
        "node",
        name,
        json!({"addresses": addresses, "daemonEndpoints": {"kubeletEndpoint": {"Port": port}}}),
    );
}

/// A pod named `name` (one container of the same name), bound to `node` when given.
fn pod(c: &TestCluster, name: &str, node: Option<&str>) {
    c.kubectl_ok(&["run", name, "--image=nginx", "--port=8080"]);
    if let Some(node) = node {
        let binding = json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
            "target": {"kind": "Node", "name": node}});
        let path = format!("/api/v1/namespaces/default/pods/{name}/binding");
        let out = c.kubectl_stdin(&["create", "--raw", &path], &binding.to_string());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

#[test]
fn discovery_lists_the_connect_subresources_as_upstream() {
    let c = start_cluster(|_| {});
    let doc: Value = serde_json::from_str(&c.kubectl_ok(&["get", "--raw", "/api/v1"])).unwrap();
    let entry = |name: &str| {
        doc["resources"]
            .as_array()
            .and_then(|r| r.iter().find(|r| r["name"] == name))
            .cloned()
            .unwrap_or_default()
    };
    let proxy = json!(["create", "delete", "get", "patch", "update"]);
    for (name, kind, verbs) in [
        ("pods/log", "Pod", json!(["get"])),
        ("pods/exec", "PodExecOptions", json!(["create", "get"])),
        ("pods/attach", "PodAttachOptions", json!(["create", "get"])),
        (
            "pods/portforward",
            "PodPortForwardOptions",
            json!(["create", "get"]),
        ),
        ("pods/proxy", "PodProxyOptions", proxy.clone()),
        ("services/proxy", "ServiceProxyOptions", proxy.clone()),
        ("nodes/proxy", "NodeProxyOptions", proxy.clone()),
    ] {
        let e = entry(name);
        assert_eq!((&e["kind"], &e["verbs"]), (&json!(kind), &verbs), "{e}");
        assert!(e.get("group").is_none(), "{e}");
    }
}

#[test]
fn logs_and_exec_resolve_their_kubelet_as_upstream() {
    let c = start_cluster(|_| {});
    pod(&c, "idle", None);
    // No node yet: no logs, and nothing to exec in.
    assert_eq!(c.kubectl_ok(&["logs", "idle"]), "");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let logs = rt.block_on(c.send(
        http::Method::GET,
        "/api/v1/namespaces/default/pods/idle/log",
        &[],
        "",
    ));
    assert_eq!(logs.status, 204, "{}", logs.text());
    let err = c.kubectl_fails(&["logs", "idle", "-c", "nope"]);
    assert!(
        err.contains("container nope is not valid for pod idle"),
        "{err}"
    );
    let err = c.kubectl_fails(&["exec", "idle", "--", "ls"]);
    assert!(
        err.contains("pod idle does not have a host assigned"),
        "{err}"
    );
    let invalid = rt.block_on(c.send(
        http::Method::GET,
        "/api/v1/namespaces/default/pods/idle/log?tailLines=-2",
        &[],
        "",
    ));
    assert_eq!(invalid.status, 422);
    assert_eq!(
        invalid.json()["message"],
        "PodLogOptions \"idle\" is invalid: tailLines: Invalid value: -2: must be greater than or equal to 0"
    );
    let bad = rt.block_on(c.send(
        http::Method::GET,
        "/api/v1/namespaces/default/pods/idle/log?limitBytes=x",
        &[],
        "",
    ));
    assert_eq!(bad.status, 400);
    assert_eq!(
        bad.json()["message"],
        "strconv.ParseInt: parsing \"x\": invalid syntax"
    );
    let err = c.kubectl_fails(&["logs", "missing"]);
    assert!(err.contains("pods \"missing\" not found"), "{err}");

    // Bound to a node that does not exist, that has no address, whose kubelet is down.
    pod(&c, "orphan", Some("ghost"));
    let err = c.kubectl_fails(&["logs", "orphan"]);
    assert!(err.contains("nodes \"ghost\" not found"), "{err}");
    node(&c, "bare", "", 10250);
    pod(&c, "unreachable", Some("bare"));
    let err = c.kubectl_fails(&["logs", "unreachable"]);
    assert!(
        err.contains("no preferred addresses found; known addresses: []"),
        "{err}"
    );
    let port = closed_port();
    node(&c, "down", "127.0.0.1", port);
    pod(&c, "dead", Some("down"));
    let err = c.kubectl_fails(&["logs", "dead"]);
    let expected = format!(
        "Get \"https://127.0.0.1:{port}/containerLogs/default/dead/dead\": dial tcp 127.0.0.1:{port}: connect: connection refused"
    );
    assert!(err.contains(&expected), "{err}");

    // A kubelet that answers.
    let (port, seen) = fake_kubelet("logs of");
    node(&c, "live", "127.0.0.1", port);
    pod(&c, "alive", Some("live"));
    let out = c.kubectl_ok(&["logs", "alive", "--tail=3", "--timestamps"]);
    let target = "/containerLogs/default/alive/alive?tailLines=3&timestamps=true";
    assert_eq!(out, format!("logs of {target}"));
    assert_eq!(
        seen.lock().unwrap().clone(),
        vec![format!("GET {target} HTTP/1.1")]
    );
    // exec resolves its kubelet, then wants an upgrade the aggregator's HTTP/2 hop does
    // not carry.
    let exec = rt.block_on(c.send(
        http::Method::POST,
        "/api/v1/namespaces/default/pods/alive/exec?command=ls&stdout=true",
        &[],
        "",
    ));
    assert_eq!(
        (exec.status.as_u16(), exec.json()["message"].clone()),
        (400, json!("Upgrade request required"))
    );
    let pf = rt.block_on(c.send(
        http::Method::GET,
        "/api/v1/namespaces/default/pods/idle/portforward?ports=80",
        &[],
        "",
    ));
    assert_eq!(
        pf.json()["message"],
        "pod idle does not have a host assigned"
    );
}

#[test]
fn proxies_resolve_and_forward_as_upstream() {
    let c = start_cluster(|_| {});
    let rt = tokio::runtime::Runtime::new().unwrap();
    let get = |path: &str| rt.block_on(c.send(http::Method::GET, path, &[], ""));

    pod(&c, "local", None);
    patch_status(
        &c,
        "pod",
        "local",
        json!({"podIP": "127.0.0.1", "podIPs": [{"ip": "127.0.0.1"}]}),
    );
    let err = c.kubectl_fails(&[
        "get",
        "--raw",
        "/api/v1/namespaces/default/pods/local/proxy/",
    ]);
    assert!(err.contains("address not allowed"), "{err}");
    let a = get("/api/v1/namespaces/default/pods/a:b:c:d/proxy");
    assert_eq!(
        (a.status.as_u16(), a.json()["message"].clone()),
        (400, json!("invalid pod request \"a:b:c:d\""))
    );
    let a = get("/api/v1/namespaces/default/pods/nobody/proxy");
    assert_eq!(a.status.as_u16(), 404);

    // Nodes' kubelets on loopback addresses are refused too.
    node(&c, "loop", "127.0.0.1", 10250);
    let a = get("/api/v1/nodes/loop/proxy/metrics");
    assert_eq!(
        (a.status.as_u16(), a.json()["message"].clone()),
        (400, json!("address not allowed"))
    );

    // Services: a port number names its service port; no endpoints is a 503.
    apply(
        &c,
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc"},
        "spec": {"ports": [{"port": 80, "targetPort": 8080}]}}),
    );
    let a = get("/api/v1/namespaces/default/services/svc:81/proxy/");
    assert_eq!(
        (a.status.as_u16(), a.json()["message"].clone()),
        (503, json!("no service port 81 found for service \"svc\""))
    );
    let a = get("/api/v1/namespaces/default/services/svc/proxy/");
    assert_eq!(
        (a.status.as_u16(), a.json()["message"].clone()),
        (404, json!("endpoints \"svc\" not found"))
    );
    apply(
        &c,
        json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "svc"}}),
    );
    let a = get("/api/v1/namespaces/default/services/svc/proxy/");
    assert_eq!(
        (a.status.as_u16(), a.json()["message"].clone()),
        (503, json!("no endpoints available for service \"svc\""))
    );

    let Some(ip) = host_ip() else {
        eprintln!("no non-loopback address: the forwarding half is skipped");
        return;
    };
    let (port, seen) = plain_server("hello from");
    pod(&c, "backend", None);
    let ip = ip.to_string();
    patch_status(
        &c,
        "pod",
        "backend",
        json!({"podIP": ip, "podIPs": [{"ip": ip}]}),
    );
    let path = format!("/api/v1/namespaces/default/pods/backend:{port}/proxy/a/b?x=1");
    assert_eq!(
        c.kubectl_ok(&["get", "--raw", &path]),
        "hello from /a/b?x=1"
    );
    // Endpoints whose pod has the address; a pod that does not is skipped.
    apply(
        &c,
        json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "svc"},
        "subsets": [{"addresses": [{"ip": ip, "targetRef": {"kind": "Pod", "namespace": "default", "name": "backend"}}],
                     "ports": [{"port": port}]}]}),
    );
    let out = c.kubectl_ok(&[
        "get",
        "--raw",
        "/api/v1/namespaces/default/services/svc:80/proxy/there/",
    ]);
    assert_eq!(out, "hello from /there/");
    assert_eq!(seen.lock().unwrap().len(), 2);
    apply(
        &c,
        json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "svc"},
        "subsets": [{"addresses": [{"ip": ip, "targetRef": {"kind": "Pod", "namespace": "default", "name": "local"}}],
                     "ports": [{"port": port}]}]}),
    );
    let a = get("/api/v1/namespaces/default/services/http:svc:80/proxy/");
    assert_eq!(
        (a.status.as_u16(), a.json()["message"].clone()),
        (
            503,
            json!("no endpoints available for service \"http:svc:80\"")
        )
    );
    // A backend that is down: the reverse proxy's error, as a 500.
    let closed = closed_port();
    let a = get(&format!(
        "/api/v1/namespaces/default/pods/backend:{closed}/proxy/"
    ));
    assert_eq!(a.status.as_u16(), 500);
    assert_eq!(
        a.json()["message"],
        format!("dial tcp {ip}:{closed}: connect: connection refused")
    );
}
