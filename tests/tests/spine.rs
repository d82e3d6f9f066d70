//! The spine end to end: etcd and the three real binaries, kubectl and HTTP clients
//! talking to the aggregator as users do, and to core and extensions as peers do.

use std::time::Duration;

use http::Method;
use kas_e2e::client::{Proto, request};
use kas_e2e::{NOT_FOUND_BODY, Role, metric_value, start_cluster};

const NOWHERE: &str = "/apis/nope.example.com/v1/things";

#[tokio::test]
async fn kubectl_sees_the_version_and_readyz_checks_through_the_aggregator() {
    let c = start_cluster(|_| {});
    let out = c.kubectl(&["version", "-o", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["serverVersion"]["gitVersion"], "v1.33.0");
    assert_eq!(v["serverVersion"]["minor"], "33");

    let out = c.kubectl(&["get", "--raw", "/readyz?verbose"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for line in [
        "[+]ping ok",
        "[+]log ok",
        "[+]etcd ok",
        "[+]etcd-readiness ok",
        "[+]shutdown ok",
        "readyz check passed",
    ] {
        assert!(text.contains(line), "missing {line:?} in:\n{text}");
    }
    // Upstream's `etcd` check is on /livez and /healthz too; `etcd-readiness` is not.
    for endpoint in ["/livez?verbose", "/healthz?verbose"] {
        let text = c.kubectl_ok(&["get", "--raw", endpoint]);
        assert!(text.contains("[+]etcd ok"), "{endpoint}: {text}");
        assert!(!text.contains("etcd-readiness"), "{endpoint}: {text}");
    }
}

#[tokio::test]
async fn a_path_nobody_serves_gets_the_404_extensions_wrote_through_both_hops() {
    let c = start_cluster(|_| {});
    let bearer = c.bearer();
    let auth = [("authorization", bearer.as_str())];
    for proto in [Proto::H2, Proto::H1] {
        let url = format!("{}{NOWHERE}", c.url(Role::Aggregator, 0));
        let a = request(&url, Method::GET, &auth, &c.admin_tls(proto), proto)
            .await
            .unwrap();
        assert_eq!(a.status, 404, "{proto:?}: {}", a.text());
        assert_eq!(a.text(), NOT_FOUND_BODY, "{proto:?}");
        // Go's http.NotFound, upstream's not-found handler at the end of the chain.
        assert_eq!(a.headers["content-type"], "text/plain; charset=utf-8");
        assert_eq!(a.headers["x-content-type-options"], "nosniff");
    }

    let out = c.kubectl(&["get", "--raw", NOWHERE]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("the server could not find the requested resource"),
        "{stderr}"
    );

    // Both roles behind the aggregator counted the request: it crossed both hops.
    for role in [Role::Core, Role::Extensions] {
        let url = format!("{}/metrics", c.url(role, 0));
        let peer = [
            ("x-remote-user", "admin"),
            ("x-remote-group", "system:masters"),
        ];
        let m = request(&url, Method::GET, &peer, &c.peer_tls(Proto::H2), Proto::H2)
            .await
            .unwrap();
        assert_eq!(m.status, 200, "{role}: {}", m.text());
        let labels = [
            ("group", "nope.example.com"),
            ("resource", "things"),
            ("verb", "LIST"),
            ("code", "404"),
        ];
        let count = metric_value(&m.text(), "apiserver_request_total", &labels);
        assert_eq!(count, Some(3.0), "{role} metrics:\n{}", m.text());
    }
}

#[tokio::test]
async fn core_and_extensions_accept_only_front_proxy_peers() {
    let c = start_cluster(|_| {});
    let pki = c.pki().clone();
    // A certificate the front-proxy CA signed, for a name that is not allowed.
    let dir = tempfile::tempdir().unwrap();
    let intruder = kas_e2e::pki::sign_client(&pki.front_proxy_ca, "intruder", dir.path()).unwrap();
    for role in [Role::Core, Role::Extensions] {
        let url = format!("{}{NOWHERE}", c.url(role, 0));
        let claims = [
            ("x-remote-user", "admin"),
            ("x-remote-group", "system:masters"),
        ];

        let anonymous = c.admin_tls(Proto::H2);
        let a = request(&url, Method::GET, &[], &anonymous, Proto::H2)
            .await
            .unwrap();
        assert_eq!(a.status, 401, "{role} without a certificate");
        assert_eq!(a.json()["reason"], "Unauthorized");
        let a = request(&url, Method::GET, &claims, &anonymous, Proto::H2)
            .await
            .unwrap();
        assert_eq!(a.status, 401, "{role}: headers without a certificate");

        let bearer = c.bearer();
        let a = request(
            &url,
            Method::GET,
            &[("authorization", bearer.as_str())],
            &anonymous,
            Proto::H2,
        )
        .await
        .unwrap();
        assert_eq!(
            a.status, 401,
            "{role}: the admin token is for the aggregator only"
        );

        let tls =
            kas_e2e::client::Tls::new(&pki.ca.cert, Some((&intruder.0, &intruder.1)), Proto::H2)
                .unwrap();
        let a = request(&url, Method::GET, &claims, &tls, Proto::H2)
            .await
            .unwrap();
        assert_eq!(
            a.status, 401,
            "{role}: a certificate whose CN is not allowed"
        );

        let tls = kas_e2e::client::Tls::new(
            &pki.ca.cert,
            Some((&pki.admin.cert, &pki.admin.key)),
            Proto::H2,
        )
        .unwrap();
        assert!(
            request(&url, Method::GET, &claims, &tls, Proto::H2)
                .await
                .is_err(),
            "{role}: a certificate the front-proxy CA did not sign is refused at the handshake"
        );

        let a = request(&url, Method::GET, &[], &c.peer_tls(Proto::H2), Proto::H2)
            .await
            .unwrap();
        assert_eq!(a.status, 401, "{role}: a peer that names no user");

        let a = request(
            &url,
            Method::GET,
            &claims,
            &c.peer_tls(Proto::H2),
            Proto::H2,
        )
        .await
        .unwrap();
        assert_eq!(
            (a.status.as_u16(), a.text().as_str()),
            (404, NOT_FOUND_BODY),
            "{role}: a peer"
        );

        // Health stays open to probes that carry no credentials.
        let a = request(
            &format!("{}/readyz", c.url(role, 0)),
            Method::GET,
            &[],
            &anonymous,
            Proto::H1,
        )
        .await
        .unwrap();
        assert_eq!((a.status.as_u16(), a.text().as_str()), (200, "ok"));
    }
}

#[tokio::test]
async fn sigkill_of_one_core_replica_under_load_loses_no_request() {
    let mut c = start_cluster(|s| s.core_replicas = 3);
    let bearer = c.bearer();
    let mut headers = http::HeaderMap::new();
    headers.insert("authorization", bearer.parse().unwrap());
    let spec = kas_e2e::load::LoadSpec {
        base: c.url(Role::Aggregator, 0).parse().unwrap(),
        tls: c.admin_tls(Proto::H2),
        method: Method::GET,
        path: NOWHERE.to_owned(),
        headers,
        body: bytes::Bytes::new(),
        concurrency: 16,
        connections: 2,
        duration: Duration::from_secs(5),
    };
    let load = tokio::spawn(async move { kas_e2e::load::run(&spec).await });
    tokio::time::sleep(Duration::from_millis(1500)).await;
    c.kill(Role::Core, 1, nix::sys::signal::Signal::SIGKILL)
        .unwrap();
    let result = load.await.unwrap().unwrap();
    assert!(
        result.answered() > 500,
        "too little load to prove anything: {}",
        result.summary()
    );
    assert_eq!(result.errors, 0, "{}", result.summary());
    assert_eq!(
        result.codes.keys().copied().collect::<Vec<_>>(),
        [404],
        "{}",
        result.summary()
    );

    // The killed endpoint is out of rotation: every request still succeeds.
    for _ in 0..30 {
        let url = format!("{}{NOWHERE}", c.url(Role::Aggregator, 0));
        let a = request(
            &url,
            Method::GET,
            &[("authorization", bearer.as_str())],
            &c.admin_tls(Proto::H2),
            Proto::H2,
        )
        .await
        .unwrap();
        assert_eq!(a.status, 404);
    }
}

#[tokio::test]
async fn sigterm_fails_readyz_during_the_shutdown_delay_while_livez_succeeds() {
    let mut c = start_cluster(|s| {
        for role in [Role::Aggregator, Role::Extensions] {
            s.extra_args
                .insert(role, vec!["--shutdown-delay-duration".into(), "3s".into()]);
        }
        if let Some(args) = s.extra_args.get_mut(&Role::Extensions) {
            args.extend(["--logging-format".into(), "json".into()]);
        }
    });
    for role in [Role::Extensions, Role::Aggregator] {
        let base = c.url(role, 0);
        let tls = c.admin_tls(Proto::H1);
        c.kill(role, 0, nix::sys::signal::Signal::SIGTERM).unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;

        let ready = request(
            &format!("{base}/readyz?verbose"),
            Method::GET,
            &[],
            &tls,
            Proto::H1,
        )
        .await
        .unwrap();
        assert_eq!(ready.status, 500, "{role}: {}", ready.text());
        assert!(
            ready.text().contains("[-]shutdown failed: reason withheld"),
            "{}",
            ready.text()
        );
        assert!(
            ready.text().ends_with("readyz check failed\n"),
            "{}",
            ready.text()
        );
        let live = request(&format!("{base}/livez"), Method::GET, &[], &tls, Proto::H1)
            .await
            .unwrap();
        assert_eq!(
            (live.status.as_u16(), live.text().as_str()),
            (200, "ok"),
            "{role}"
        );

        let status = c.wait_exit(role, 0, Duration::from_secs(15));
        let status = status.unwrap_or_else(|| panic!("{role} did not exit"));
        assert!(status.success(), "{role} exited with {status}");
    }

    // --logging-format=json: every line extensions wrote is a JSON object, shutdown included.
    let log = std::fs::read_to_string(c.log_path(Role::Extensions, 0)).unwrap();
    let lines: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    assert!(
        lines.iter().any(|l| l["message"] == "shutdown complete"),
        "{log}"
    );
}
