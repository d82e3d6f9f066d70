//! Connection upgrades through the three roles: a client's upgrade reaches a backend
//! through the aggregator's hop to core (an HTTP/1.1 connection of its own) and core's
//! proxy, and the two connections are spliced both ways.
//!
//! The backend lives in a network namespace this test creates (upstream refuses loopback
//! pod IPs): a veth pair, the host end 198.18.x.1/30, the namespace end 198.18.x.2/30.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener};
use std::process::Command;

use kas_e2e::{Role, TestCluster, start_cluster};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A network namespace with a veth pair to the host; removed on drop.
struct Netns {
    name: String,
    host_if: String,
    /// The address inside the namespace.
    inside: Ipv4Addr,
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("ip {args:?}: {e}"))?;
    match out.status.success() {
        true => Ok(()),
        false => Err(format!(
            "ip {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        )),
    }
}

impl Netns {
    /// `None` when this process may not create namespaces (not root).
    fn create(tag: u8) -> Option<Netns> {
        use std::os::unix::fs::MetadataExt;
        if std::fs::metadata("/proc/self").map(|m| m.uid()).ok() != Some(0) {
            return None;
        }
        let id = std::process::id();
        let subnet = (id % 200) as u8;
        let name = format!("kas-st-{id}-{tag}");
        let host_if = format!("kst{}h{tag}", id % 100_000);
        let ns_if = format!("kst{}n{tag}", id % 100_000);
        let base = 4 * tag;
        let host = Ipv4Addr::new(198, 18, subnet, base + 1);
        let inside = Ipv4Addr::new(198, 18, subnet, base + 2);
        let ns = Netns {
            name: name.clone(),
            host_if: host_if.clone(),
            inside,
        };
        let exec = |args: &[&str]| {
            let mut all = vec!["netns", "exec", name.as_str(), "ip"];
            all.extend_from_slice(args);
            ip(&all)
        };
        let setup = || -> Result<(), String> {
            ip(&["netns", "add", &name])?;
            ip(&[
                "link", "add", &host_if, "type", "veth", "peer", "name", &ns_if,
            ])?;
            ip(&["link", "set", &ns_if, "netns", &name])?;
            ip(&["addr", "add", &format!("{host}/30"), "dev", &host_if])?;
            ip(&["link", "set", &host_if, "up"])?;
            exec(&["addr", "add", &format!("{inside}/30"), "dev", &ns_if])?;
            exec(&["link", "set", &ns_if, "up"])?;
            exec(&["link", "set", "lo", "up"])
        };
        if let Err(e) = setup() {
            panic!("network namespace: {e}");
        }
        Some(ns)
    }

    /// A listener bound inside the namespace (the socket keeps its namespace).
    fn listen(&self) -> TcpListener {
        let path = format!("/var/run/netns/{}", self.name);
        let addr = (self.inside, 0);
        std::thread::spawn(move || {
            let file = std::fs::File::open(&path).expect("namespace file");
            nix::sched::setns(file, nix::sched::CloneFlags::CLONE_NEWNET).expect("setns");
            TcpListener::bind(addr).expect("bind in the namespace")
        })
        .join()
        .expect("listener thread")
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = ip(&["link", "del", &self.host_if]);
        let _ = ip(&["netns", "del", &self.name]);
    }
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
    let Some(ns) = Netns::create(0) else {
        eprintln!("not root: no network namespace, the test is skipped");
        return;
    };
    let listener = ns.listen();
    let port = listener.local_addr().expect("addr").port();
    upgrade_echo_server(listener);
    let c = start_cluster(|_| {});
    c.kubectl_ok(&["run", "echo", "--image=nginx"]);
    let ip = ns.inside.to_string();
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
