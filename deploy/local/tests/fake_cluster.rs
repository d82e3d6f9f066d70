//! `Cluster::up` end to end, with `examples/fake_apiserver.rs` standing in for the three
//! binaries (symlinked under their names) and a real etcd.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use kas_local::probe;
use kas_local::{Cluster, ClusterSpec, ClusterState, Error, Role, StopOutcome};
use nix::sys::signal::Signal;

/// A bin dir whose three binaries are the fake server. Cargo builds examples before it runs
/// integration tests (`cargo test -p kas-local`).
fn fake_bin_dir(root: &Path) -> PathBuf {
    let deps = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let fake = deps.parent().unwrap().join("examples/fake_apiserver");
    assert!(
        fake.is_file(),
        "{} missing: run `cargo test -p kas-local` (it builds examples)",
        fake.display()
    );
    let bin = root.join("bin");
    fs::create_dir_all(&bin).unwrap();
    for role in Role::ALL {
        std::os::unix::fs::symlink(&fake, bin.join(role.binary_name())).unwrap();
    }
    bin
}

fn spec(root: &Path) -> ClusterSpec {
    let mut spec = ClusterSpec::new(root.join("state"));
    spec.bin_dir = fake_bin_dir(root);
    spec
}

/// The arguments the fake printed at start.
fn args_of(cluster: &Cluster, role: Role, index: usize) -> Vec<String> {
    let log = fs::read_to_string(cluster.log_path(role, index)).unwrap();
    log.lines()
        .skip_while(|l| *l != "args:")
        .skip(1)
        .take_while(|l| !l.starts_with("listening on"))
        .map(String::from)
        .collect()
}

fn flag(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .map(|i| args[i + 1].clone())
}

#[test]
fn up_starts_every_replica_in_order_and_down_stops_them() {
    let root = tempfile::tempdir().unwrap();
    let mut spec = spec(root.path());
    spec.core_replicas = 2;
    spec.extensions_replicas = 2;
    spec.extra_args.insert(Role::Core, vec!["--v=4".into()]);
    let mut cluster = Cluster::up(&spec).unwrap();

    // Each role delegates to every replica of the next one.
    let agg = args_of(&cluster, Role::Aggregator, 0);
    assert_eq!(
        flag(&agg, "--delegate-endpoints"),
        Some(cluster.urls(Role::Core).join(","))
    );
    let core1 = args_of(&cluster, Role::Core, 1);
    assert_eq!(
        flag(&core1, "--delegate-endpoints"),
        Some(cluster.urls(Role::Extensions).join(","))
    );
    assert_eq!(flag(&core1, "--etcd-servers"), Some(cluster.etcd_url()));
    assert_eq!(
        core1.last().map(String::as_str),
        Some("--v=4"),
        "extra args come last"
    );
    let port = cluster
        .url(Role::Core, 1)
        .rsplit(':')
        .next()
        .unwrap()
        .to_string();
    assert_eq!(flag(&core1, "--secure-port"), Some(port));
    assert_eq!(
        flag(
            &args_of(&cluster, Role::Extensions, 0),
            "--delegate-endpoints"
        ),
        None
    );

    // The kubeconfig points at the aggregator, and the PKI the cluster hands out works.
    let kubeconfig: serde_json::Value =
        serde_json::from_slice(&fs::read(cluster.kubeconfig_path()).unwrap()).unwrap();
    assert_eq!(
        kubeconfig["clusters"][0]["cluster"]["server"],
        cluster.url(Role::Aggregator, 0)
    );
    assert_eq!(
        kubeconfig["users"][0]["user"]["token"],
        cluster.pki().admin_token.as_str()
    );
    let ca = cluster.pki().ca.read_cert().unwrap();
    let (status, body) = probe::get(
        &format!("{}/readyz", cluster.url(Role::Aggregator, 0)),
        &ca,
        None,
        None,
    )
    .unwrap();
    assert_eq!((status, body.as_slice()), (200, b"ok".as_slice()));

    // cluster.json lists everything, in start order.
    let state = ClusterState::read(cluster.state_dir()).unwrap().unwrap();
    let names: Vec<String> = state.servers.iter().map(|s| s.name()).collect();
    assert_eq!(
        names,
        [
            "extensions-apiserver-0",
            "extensions-apiserver-1",
            "core-apiserver-0",
            "core-apiserver-1",
            "aggregator-0"
        ]
    );
    assert_eq!(
        state.servers[2].process.pid,
        cluster.pid(Role::Core, 0).unwrap()
    );

    // A second `up` on the same state dir refuses and leaves the first cluster alone.
    match Cluster::up(&spec) {
        Err(Error::AlreadyRunning { pids, .. }) => assert_eq!(pids.len(), 6),
        other => panic!("expected AlreadyRunning, got {other:?}"),
    }
    assert!(ClusterState::read(cluster.state_dir()).unwrap().is_some());

    // One replica can be killed and observed.
    assert_eq!(
        cluster.wait_exit(Role::Core, 1, Duration::from_millis(50)),
        None
    );
    cluster.kill(Role::Core, 1, Signal::SIGKILL).unwrap();
    let status = cluster
        .wait_exit(Role::Core, 1, Duration::from_secs(5))
        .expect("exited");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(9));
    assert!(
        cluster.kill(Role::Core, 1, Signal::SIGTERM).is_err(),
        "an exited replica is never signalled"
    );
    assert!(matches!(
        cluster.kill(Role::Core, 7, Signal::SIGTERM),
        Err(Error::NoSuchReplica { .. })
    ));

    let stopped = cluster.stop().unwrap();
    let order: Vec<(&str, StopOutcome)> = stopped
        .iter()
        .map(|s| (s.name.as_str(), s.outcome))
        .collect();
    assert_eq!(
        order,
        [
            ("aggregator-0", StopOutcome::Terminated),
            ("core-apiserver-0", StopOutcome::Terminated),
            ("core-apiserver-1", StopOutcome::NotRunning),
            ("extensions-apiserver-0", StopOutcome::Terminated),
            ("extensions-apiserver-1", StopOutcome::Terminated),
            ("etcd", StopOutcome::Terminated),
        ]
    );
    assert_eq!(ClusterState::read(&spec.state_dir).unwrap(), None);
}

#[test]
fn a_detached_cluster_survives_its_launcher_and_down_stops_it() {
    let root = tempfile::tempdir().unwrap();
    let spec = spec(root.path());
    let cluster = Cluster::up(&spec).unwrap();
    let ca = cluster.pki().ca.read_cert().unwrap();
    let core = cluster.url(Role::Core, 0);
    let state = cluster.detach();

    // Still serving after the Cluster value is gone.
    assert_eq!(probe::get(&core, &ca, None, None).unwrap().0, 200);

    let stopped = Cluster::down_state_dir(&spec.state_dir).unwrap();
    assert_eq!(stopped.len(), 4);
    assert!(
        stopped.iter().all(|s| s.outcome == StopOutcome::Terminated),
        "{stopped:?}"
    );
    assert_eq!(stopped.last().unwrap().name, "etcd");
    assert!(probe::get(&core, &ca, None, None).is_err());
    assert!(state.servers.iter().all(|s| {
        !Path::new(&format!("/proc/{}", s.process.pid)).exists()
            || fs::read(format!("/proc/{}/cmdline", s.process.pid))
                .unwrap_or_default()
                .is_empty()
    }));
    assert_eq!(ClusterState::read(&spec.state_dir).unwrap(), None);

    // Up again on the same state dir: the PKI and token are reused.
    let again = Cluster::up(&spec).unwrap();
    assert_eq!(again.pki().ca.read_cert().unwrap(), ca);
    drop(again);
    assert_eq!(
        ClusterState::read(&spec.state_dir).unwrap(),
        None,
        "drop stops and forgets"
    );
}

#[test]
fn a_role_that_dies_at_start_fails_up_with_its_log_and_stops_the_rest() {
    let root = tempfile::tempdir().unwrap();
    let mut spec = spec(root.path());
    spec.extra_args
        .insert(Role::Core, vec!["--fake-exit".into()]);
    let err = Cluster::up(&spec).unwrap_err();
    let Error::NotReady {
        name, reason, tail, ..
    } = &err
    else {
        panic!("expected NotReady, got {err:?}");
    };
    assert_eq!(name, "core-apiserver-0");
    assert!(reason.contains("exit status: 3"), "{reason}");
    assert!(tail.contains("fake-apiserver: exiting as asked"), "{tail}");
    assert!(err.to_string().contains("fake-apiserver: exiting as asked"));
    // The extensions replica and etcd that did start were stopped, and forgotten.
    assert_eq!(ClusterState::read(&spec.state_dir).unwrap(), None);
    Cluster::up(&ClusterSpec {
        extra_args: Default::default(),
        ..spec
    })
    .unwrap()
    .stop()
    .unwrap();
}

#[test]
fn a_role_that_never_gets_ready_times_out() {
    let root = tempfile::tempdir().unwrap();
    let mut spec = spec(root.path());
    // A bin dir where "aggregator" is a program that runs but never listens.
    fs::remove_file(spec.bin_dir.join("aggregator")).unwrap();
    let script = spec.bin_dir.join("aggregator");
    fs::write(
        &script,
        "#!/bin/sh\necho not listening on purpose\nexec sleep 30\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    spec.ready_timeout = Duration::from_secs(2);
    let err = Cluster::up(&spec).unwrap_err();
    match &err {
        Error::NotReady { name, reason, .. } => {
            assert_eq!(name, "aggregator-0");
            assert!(reason.contains("Connection refused"), "{reason}");
        }
        other => panic!("expected NotReady, got {other:?}"),
    }
    assert!(
        err.to_string().contains("not listening on purpose"),
        "{err}"
    );
    // The sleeping aggregator was stopped with everything else.
    assert_eq!(ClusterState::read(&spec.state_dir).unwrap(), None);
}
