//! These need root and `ip`, as the end-to-end tests that use namespaces.

use std::io::{Read, Write};
use std::net::TcpStream;

use super::*;

fn namespaces() -> String {
    ip_output(&["netns", "list"]).unwrap_or_default()
}

fn listed(name: &str) -> bool {
    namespaces()
        .lines()
        .any(|l| l.split_whitespace().next() == Some(name))
}

#[test]
fn cidrs_are_masked() {
    assert_eq!(
        parse_cidr("10.0.0.7/24"),
        Some((Ipv4Addr::new(10, 0, 0, 0), 24))
    );
    assert_eq!(parse_cidr("10.0.0.0/33"), None);
    assert_eq!(parse_cidr("fd00::/108"), None);
}

#[test]
fn namespaces_get_their_own_names_and_subnets_and_go_on_drop() {
    let (a, b) = (Netns::new(), Netns::new());
    assert_ne!(a.name(), b.name());
    assert_ne!(a.ip(), b.ip());
    assert!(listed(a.name()) && listed(b.name()), "{}", namespaces());
    let (name, host_if) = (a.name.clone(), a.host_if.clone());
    drop(a);
    assert!(!listed(&name), "{name} is left: {}", namespaces());
    assert!(
        !Path::new("/sys/class/net").join(&host_if).exists(),
        "{host_if} is left"
    );
    assert!(listed(b.name()));
}

#[test]
fn the_host_reaches_a_listener_inside_at_its_ip_and_at_an_added_address() {
    let ns = Netns::new();
    let path = Path::new("/run/netns").join(ns.name());
    let listener = forward::bind_inside(&path, "0.0.0.0:7000".parse().unwrap()).unwrap();
    let cluster_ip = ns.claim_address_in("10.0.0.0/24");
    let again = Netns::new();
    assert_ne!(
        again.claim_address_in("10.0.0.0/24"),
        cluster_ip,
        "one address, two routes"
    );
    for ip in [ns.ip(), cluster_ip] {
        let mut out = TcpStream::connect((ip, 7000)).unwrap();
        out.write_all(b"ping").unwrap();
        let (mut inside, peer) = listener.accept().unwrap();
        assert_eq!(
            peer.ip(),
            std::net::IpAddr::V4(ns.host_ip()),
            "from the host's veth end"
        );
        let mut got = [0u8; 4];
        inside.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"ping");
    }
    ns.remove_address(cluster_ip);
    let routes = ip_output(&["route", "show", &format!("{cluster_ip}/32")]).unwrap();
    assert_eq!(routes.trim(), "", "the host route is left");
    let inside = ip_output(&["-n", ns.name(), "-4", "-o", "addr"]).unwrap();
    assert!(!inside.contains(&cluster_ip.to_string()), "{inside}");
}

#[test]
fn a_forward_reaches_the_hosts_loopback_from_inside() {
    let host = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = host.local_addr().unwrap().port();
    let ns = Netns::new();
    ns.forward(
        SocketAddr::from(([127, 0, 0, 1], port)),
        host.local_addr().unwrap(),
    );
    let log = std::env::temp_dir().join(format!("kas-e2e-forward-{}.log", ns.slot()));
    let script = format!("exec 3<>/dev/tcp/127.0.0.1/{port}; echo hello >&3");
    let mut p = ns.spawn("bash", ["-c", &script], &log);
    let (mut conn, _) = host.accept().unwrap();
    let mut got = String::new();
    conn.read_to_string(&mut got).unwrap();
    assert_eq!(got, "hello\n");
    p.kill();
    let _ = std::fs::remove_file(log);
}

#[test]
fn processes_run_inside_log_and_die_with_the_namespace() {
    let ns = Netns::new();
    let log = std::env::temp_dir().join(format!("kas-e2e-spawn-{}.log", ns.slot()));
    let _ = std::fs::remove_file(&log);
    let mut shown = ns.spawn("ip", ["-4", "-o", "addr", "show", "eth0"], &log);
    while shown.alive() {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        shown.log().contains(&format!("{}/30", ns.ip())),
        "{}",
        shown.log()
    );
    let mut sleeper = ns.spawn("sleep", ["600"], &log);
    assert!(sleeper.alive());
    drop(ns);
    let deadline = Instant::now() + Duration::from_secs(5);
    while sleeper.alive() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!sleeper.alive(), "the process outlived its namespace");
    let _ = std::fs::remove_file(log);
}

#[test]
fn a_stale_namespace_of_a_killed_run_is_replaced() {
    let (slot, lock) = (0..SLOTS)
        .rev()
        .find_map(|s| try_lock(s).map(|l| (s, l)))
        .expect("a free slot");
    let name = format!("kas-e2e-{slot}");
    let host_if = format!("kase2e{slot}h");
    ip_cmd(&["netns", "add", &name]).unwrap();
    ip_cmd(&[
        "link", "add", &host_if, "type", "veth", "peer", "name", "eth0", "netns", &name,
    ])
    .unwrap();
    let mut orphan = Command::new("ip")
        .args(["netns", "exec", &name, "sleep", "600"])
        .spawn()
        .unwrap();
    while !inside(orphan.id(), &name) {
        assert!(
            orphan.try_wait().unwrap().is_none(),
            "the orphan did not start"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    let ns = Netns::claim(slot, lock);
    assert_eq!(ns.name(), name);
    let deadline = Instant::now() + Duration::from_secs(5);
    while orphan.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        orphan.try_wait().unwrap().is_some(),
        "the stale namespace's process survived"
    );
    let addrs = ip_output(&["-n", &name, "-4", "-o", "addr"]).unwrap();
    assert!(addrs.contains(&format!("{}/30", ns.ip())), "{addrs}");
}
