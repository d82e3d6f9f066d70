use super::*;

fn flag<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .map(|i| args[i + 1].as_str())
}

#[test]
fn each_role_gets_its_flags() {
    let dir = tempfile::tempdir().unwrap();
    let pki = Pki::ensure(dir.path()).unwrap();
    let p = |path: &Path| path.display().to_string();
    let delegates = [
        "https://127.0.0.1:1".to_string(),
        "https://127.0.0.1:2".to_string(),
    ];

    let agg = role_args(
        Role::Aggregator,
        6443,
        &pki,
        "http://127.0.0.1:2379",
        &delegates,
    );
    assert_eq!(
        agg[..12],
        [
            "--secure-port",
            "6443",
            "--bind-address",
            "127.0.0.1",
            "--tls-cert-file",
            &p(&pki.serving(Role::Aggregator).cert),
            "--tls-private-key-file",
            &p(&pki.serving(Role::Aggregator).key),
            "--etcd-servers",
            "http://127.0.0.1:2379",
            "--shutdown-delay-duration",
            "0s",
        ]
    );
    assert_eq!(
        flag(&agg, "--client-ca-file"),
        Some(p(&pki.ca.cert).as_str())
    );
    assert_eq!(
        flag(&agg, "--token-auth-file"),
        Some(p(&pki.tokens_csv).as_str())
    );
    assert!(agg.contains(&"--anonymous-auth=true".to_string()));
    assert_eq!(flag(&agg, "--authorization-mode"), Some("Node,RBAC"));
    let issuer = Some(SERVICE_ACCOUNT_ISSUER);
    assert_eq!(flag(&agg, "--service-account-issuer"), issuer);
    let public_key = p(&pki.service_account.cert);
    assert_eq!(
        flag(&agg, "--service-account-key-file"),
        Some(public_key.as_str())
    );
    assert!(agg.contains(&"--enable-bootstrap-token-auth=true".to_string()));
    assert_eq!(
        flag(&agg, "--proxy-client-cert-file"),
        Some(p(&pki.front_proxy_client.cert).as_str())
    );
    assert_eq!(
        flag(&agg, "--proxy-client-key-file"),
        Some(p(&pki.front_proxy_client.key).as_str())
    );
    assert_eq!(
        flag(&agg, "--delegate-ca-file"),
        Some(p(&pki.ca.cert).as_str())
    );
    assert_eq!(
        flag(&agg, "--delegate-endpoints"),
        Some("https://127.0.0.1:1,https://127.0.0.1:2")
    );
    // The front-proxy settings it publishes in extension-apiserver-authentication.
    assert_eq!(
        flag(&agg, "--requestheader-client-ca-file"),
        Some(p(&pki.front_proxy_ca.cert).as_str())
    );
    assert_eq!(
        flag(&agg, "--requestheader-allowed-names"),
        Some(FRONT_PROXY_CLIENT_COMMON_NAME)
    );
    assert_eq!(
        flag(&agg, "--requestheader-uid-headers"),
        Some("X-Remote-Uid")
    );

    let core = role_args(Role::Core, 1, &pki, "http://e", &delegates[..1]);
    assert_eq!(
        flag(&core, "--tls-cert-file"),
        Some(p(&pki.serving(Role::Core).cert).as_str())
    );
    assert_eq!(
        flag(&core, "--requestheader-client-ca-file"),
        Some(p(&pki.front_proxy_ca.cert).as_str())
    );
    assert_eq!(
        flag(&core, "--requestheader-allowed-names"),
        Some("front-proxy-client")
    );
    assert_eq!(
        flag(&core, "--requestheader-username-headers"),
        Some("X-Remote-User")
    );
    assert_eq!(
        flag(&core, "--requestheader-group-headers"),
        Some("X-Remote-Group")
    );
    assert_eq!(
        flag(&core, "--requestheader-extra-headers-prefix"),
        Some("X-Remote-Extra-")
    );
    assert_eq!(
        flag(&core, "--delegate-endpoints"),
        Some("https://127.0.0.1:1")
    );
    assert_eq!(
        flag(&core, "--proxy-client-cert-file"),
        Some(p(&pki.front_proxy_client.cert).as_str())
    );
    assert_eq!(flag(&core, "--client-ca-file"), None);
    assert_eq!(flag(&core, "--token-auth-file"), None);
    assert_eq!(
        flag(&core, "--requestheader-uid-headers"),
        Some("X-Remote-Uid")
    );
    assert_eq!(flag(&core, "--authorization-mode"), Some("Node,RBAC"));
    assert_eq!(
        flag(&core, "--enable-admission-plugins"),
        Some("NodeRestriction")
    );
    assert_eq!(
        flag(&core, "--service-account-signing-key-file"),
        Some(p(&pki.service_account.key).as_str())
    );

    let ext = role_args(Role::Extensions, 2, &pki, "http://e", &[]);
    assert_eq!(
        flag(&ext, "--requestheader-allowed-names"),
        Some("front-proxy-client")
    );
    assert_eq!(flag(&ext, "--delegate-endpoints"), None);
    // Extensions is reached only through the roles that authorized the request.
    assert_eq!(flag(&ext, "--authorization-mode"), None);
    assert_eq!(flag(&ext, "--enable-admission-plugins"), None);
    assert_eq!(flag(&ext, "--proxy-client-cert-file"), None);
    assert_eq!(
        flag(&ext, "--tls-private-key-file"),
        Some(p(&pki.serving(Role::Extensions).key).as_str())
    );
}

#[test]
fn roles_are_named_after_their_binaries_and_ordered_along_the_chain() {
    assert_eq!(
        Role::ALL.map(Role::binary_name),
        ["aggregator", "core-apiserver", "extensions-apiserver"]
    );
    assert_eq!(Role::Aggregator.delegate(), Some(Role::Core));
    assert_eq!(Role::Core.delegate(), Some(Role::Extensions));
    assert_eq!(Role::Extensions.delegate(), None);
    let mut sorted = Role::START_ORDER;
    sorted.sort();
    assert_eq!(sorted, Role::ALL, "stop order is Ord order");
    assert_eq!(
        serde_json::to_string(&Role::Core).unwrap(),
        r#""core-apiserver""#
    );
}

#[test]
fn spec_defaults_and_validation() {
    let spec = ClusterSpec::new("/tmp/x");
    assert_eq!(Role::ALL.map(|r| spec.replicas(r)), [1, 1, 1]);
    assert_eq!(spec.ready_timeout, Duration::from_secs(30));
    // From a test binary in target/debug/deps, the binaries are in target/debug.
    let exe = std::env::current_exe().unwrap();
    assert_eq!(spec.bin_dir, exe.parent().unwrap().parent().unwrap());

    let dir = tempfile::tempdir().unwrap();
    let spec = ClusterSpec {
        core_replicas: 0,
        ..ClusterSpec::new(dir.path())
    };
    assert!(matches!(Cluster::up(&spec), Err(Error::Spec(_))));

    let spec = ClusterSpec {
        bin_dir: dir.path().join("nowhere"),
        ..ClusterSpec::new(dir.path())
    };
    match Cluster::up(&spec) {
        Err(Error::BinaryNotFound { path }) => {
            assert!(path.starts_with(dir.path().join("nowhere")))
        }
        other => panic!("expected BinaryNotFound, got {other:?}"),
    }
    assert_eq!(
        ClusterState::read(dir.path()).unwrap(),
        None,
        "nothing started, nothing recorded"
    );
}

#[test]
fn free_ports_are_distinct() {
    let ports = free_ports(20).unwrap();
    let mut unique = ports.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 20);
    assert!(ports.iter().all(|&p| p != 0));
}

fn start_etcd_in(state_dir: &Path) -> Cluster {
    let [port, peer] = free_ports(2).unwrap()[..] else {
        unreachable!()
    };
    let mut cluster = Cluster {
        state_dir: state_dir.to_path_buf(),
        pki: Pki::ensure(&state_dir.join("pki")).unwrap(),
        kubeconfig: state_dir.join("kubeconfig"),
        etcd: None,
        servers: BTreeMap::new(),
        detached: false,
    };
    fs::create_dir_all(state_dir.join("logs")).unwrap();
    let etcd = Tools::from_env().etcd().unwrap();
    cluster
        .start_etcd(&etcd, (port, peer), false, Duration::from_secs(30))
        .unwrap();
    cluster
}

/// etcd's v3 JSON gateway, which etcd 3.4 serves on the client port; keys and values base64.
fn etcd_call(cluster: &Cluster, path: &str, body: &str) -> String {
    let url = format!("{}{path}", cluster.etcd_url());
    let request = probe::Request {
        method: "POST",
        body: body.as_bytes(),
        headers: vec![("Content-Type", "application/json")],
        ..probe::Request::get(&url, b"")
    };
    let response = probe::send(&request).unwrap();
    assert_eq!(
        response.status,
        200,
        "{}",
        String::from_utf8_lossy(&response.body)
    );
    String::from_utf8(response.body).unwrap()
}

#[test]
fn etcd_starts_records_itself_and_stops_from_the_state_file() {
    let dir = tempfile::tempdir().unwrap();
    let cluster = start_etcd_in(dir.path());
    let state = ClusterState::read(dir.path())
        .unwrap()
        .expect("state written once etcd started");
    assert_eq!(state.etcd.url, cluster.etcd_url());
    assert_eq!(state.etcd.binary, Tools::from_env().etcd().unwrap());
    assert!(state.servers.is_empty());
    assert!(etcd_healthy(&cluster.etcd_url()).is_ok());

    // A second launcher on the same state dir refuses.
    match refuse_if_running(dir.path()) {
        Err(Error::AlreadyRunning { pids, .. }) => assert_eq!(pids, [state.etcd.pid]),
        other => panic!("expected AlreadyRunning, got {other:?}"),
    }

    // `down` from "another process": the state file alone.
    let cluster = cluster.detach();
    let stopped = Cluster::down_state_dir(dir.path()).unwrap();
    assert_eq!(
        stopped,
        [Stopped {
            name: "etcd".into(),
            pid: cluster.etcd.pid,
            outcome: StopOutcome::Terminated
        }]
    );
    assert!(!process::runs_binary(
        cluster.etcd.pid,
        &cluster.etcd.binary
    ));
    assert!(etcd_healthy(&cluster.etcd.url).is_err());
    assert_eq!(ClusterState::read(dir.path()).unwrap(), None);
    assert!(Cluster::down_state_dir(dir.path()).unwrap().is_empty());
    // With nothing alive, a new launcher may start.
    refuse_if_running(dir.path()).unwrap();
}

#[test]
fn etcd_keeps_its_data_across_restarts_on_new_ports_and_drop_stops_it() {
    let dir = tempfile::tempdir().unwrap();
    let first = start_etcd_in(dir.path());
    // key "kas" = a2Fz, value "local" = bG9jYWw=
    etcd_call(&first, "/v3/kv/put", r#"{"key":"a2Fz","value":"bG9jYWw="}"#);
    let first_etcd = first.state().etcd;
    drop(first);
    assert!(!process::runs_binary(first_etcd.pid, &first_etcd.binary));
    assert_eq!(
        ClusterState::read(dir.path()).unwrap(),
        None,
        "drop removes cluster.json"
    );

    let second = start_etcd_in(dir.path());
    assert_ne!(second.etcd_url(), first_etcd.url);
    let range = etcd_call(&second, "/v3/kv/range", r#"{"key":"a2Fz"}"#);
    assert!(range.contains("bG9jYWw="), "{range}");
    let stopped = second.stop().unwrap();
    assert_eq!(stopped.len(), 1);
    assert_eq!(stopped[0].outcome, StopOutcome::Terminated);
}
