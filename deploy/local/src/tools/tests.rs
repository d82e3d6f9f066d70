use std::os::unix::fs::PermissionsExt;
use std::sync::Barrier;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

use super::*;

/// An executable script at `path` that prints `says`.
fn fake_etcd(path: &Path, says: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, format!("#!/bin/sh\necho {says}\n")).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

fn output_of(program: &Path) -> String {
    let out = Command::new(program).output().unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn etcd_comes_from_path_first_then_from_the_cache_without_obtaining() {
    let cache = tempfile::tempdir().unwrap();
    let on_path = tempfile::tempdir().unwrap();
    fake_etcd(&cache.path().join("etcd/bin/etcd"), "cached");
    fake_etcd(&on_path.path().join("etcd"), "on path");

    let with_path = Tools::new(cache.path(), Some(on_path.path().as_os_str().into()));
    assert_eq!(output_of(&with_path.etcd().unwrap()), "on path");

    // No PATH entry has it: the cache answers, and nothing is obtained (nothing could
    // be: the lock file that obtaining takes is never made).
    let empty_path = tempfile::tempdir().unwrap();
    let without = Tools::new(cache.path(), Some(empty_path.path().as_os_str().into()));
    let etcd = without.etcd().unwrap();
    assert_eq!(etcd, cache.path().join("etcd/bin/etcd"));
    assert_eq!(output_of(&etcd), "cached");
    assert!(!cache.path().join(".lock").exists());
}

#[test]
fn a_cache_entry_that_is_no_executable_is_reported_not_run() {
    let cache = tempfile::tempdir().unwrap();
    fs::create_dir_all(cache.path().join("etcd/bin")).unwrap();
    fs::write(cache.path().join("etcd/bin/etcd"), "not a program").unwrap();
    let tools = Tools::new(cache.path(), None);
    match tools.etcd() {
        Err(Error::ToolUnavailable {
            tool: "etcd",
            reason,
        }) => {
            assert!(reason.contains("remove"), "{reason}")
        }
        other => panic!("expected ToolUnavailable, got {other:?}"),
    }
}

#[test]
fn callers_asking_at_once_obtain_once() {
    let cache = tempfile::tempdir().unwrap();
    let tools = Tools::new(cache.path(), None);
    let obtained = AtomicUsize::new(0);
    let start = Barrier::new(4);
    let dirs: Vec<PathBuf> = thread::scope(|s| {
        let workers: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    start.wait();
                    tools
                        .cached("thing", |staging, into| {
                            assert_eq!(into, cache.path().join("thing"));
                            obtained.fetch_add(1, Ordering::SeqCst);
                            // Long enough for the others to find it missing and wait.
                            thread::sleep(Duration::from_millis(300));
                            fs::write(staging.join("made"), "once").unwrap();
                            Ok(())
                        })
                        .unwrap()
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    assert_eq!(obtained.load(Ordering::SeqCst), 1);
    for dir in dirs {
        assert_eq!(dir, cache.path().join("thing"));
        assert_eq!(fs::read_to_string(dir.join("made")).unwrap(), "once");
    }
    assert!(!cache.path().join("thing.partial").exists());
}

#[test]
fn a_failed_or_interrupted_obtain_leaves_nothing_to_use_and_is_redone() {
    let cache = tempfile::tempdir().unwrap();
    let tools = Tools::new(cache.path(), None);
    let failed = tools.cached("thing", |staging, _| {
        fs::write(staging.join("half"), "").unwrap();
        Err(Error::ToolUnavailable {
            tool: "thing",
            reason: "no network".into(),
        })
    });
    assert!(matches!(failed, Err(Error::ToolUnavailable { .. })));
    assert!(!cache.path().join("thing").exists());

    // What the failed (or a killed) run left in staging is cleared before trying again.
    let calls = AtomicUsize::new(0);
    let dir = tools
        .cached("thing", |staging, _| {
            calls.fetch_add(1, Ordering::SeqCst);
            assert!(!staging.join("half").exists());
            fs::write(staging.join("whole"), "").unwrap();
            Ok(())
        })
        .unwrap();
    assert!(dir.join("whole").exists() && !dir.join("half").exists());
    // And once there, it is reused.
    tools
        .cached("thing", |_, _| panic!("obtained again"))
        .unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn print_uris_names_the_deb_and_its_version() {
    let out = "'http://deb.debian.org/debian/pool/main/e/etcd/etcd-server_3.4.23-4%2bb4_amd64.deb' etcd-server_3.4.23-4+b4_amd64.deb 8438488 SHA256:3a94\n";
    let deb = DebFile::from_print_uris(out).unwrap();
    assert_eq!(deb.file_name, "etcd-server_3.4.23-4+b4_amd64.deb");
    assert_eq!(deb.version, "3.4.23-4+b4");
    assert_eq!(deb.upstream_version(), "3.4.23");

    let epoch =
        DebFile::from_print_uris("'u' etcd-server_1%3a3.5.16-4_arm64.deb 1 SHA256:0\n").unwrap();
    assert_eq!(epoch.version, "1:3.5.16-4");
    assert_eq!(epoch.upstream_version(), "3.5.16");

    for bad in [
        "",
        "E: Unable to locate package etcd-server",
        "'u' etcd-server.deb 1 x",
    ] {
        assert!(DebFile::from_print_uris(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn a_deb_unpacks_to_bin_etcd() {
    if process::find_in_path("dpkg-deb").is_none() {
        eprintln!("no dpkg-deb on this machine: Debian's source is not used here");
        return;
    }
    // A package of the same layout as etcd-server, built here: no network.
    let work = tempfile::tempdir().unwrap();
    let pkg = work.path().join("pkg");
    fake_etcd(&pkg.join("usr/bin/etcd"), "etcd from a deb");
    fs::create_dir_all(pkg.join("DEBIAN")).unwrap();
    fs::write(
        pkg.join("DEBIAN/control"),
        "Package: etcd-server\nVersion: 3.4.23-4\nArchitecture: all\nMaintainer: t <t@t>\nDescription: t\n",
    )
    .unwrap();
    let deb = work.path().join("etcd-server_3.4.23-4_all.deb");
    run(Command::new("dpkg-deb").arg("--build").arg(&pkg).arg(&deb)).unwrap();

    let dir = work.path().join("etcd.partial");
    fs::create_dir_all(&dir).unwrap();
    unpack_etcd_deb(&deb, &dir).unwrap();
    // The link is relative, so it still works after the staging directory is renamed.
    let done = work.path().join("etcd");
    fs::rename(&dir, &done).unwrap();
    assert_eq!(output_of(&done.join("bin/etcd")), "etcd from a deb");
}

#[test]
fn the_client_directory_goes_in_front_of_pythonpath() {
    let dir = Path::new("/cache/python");
    let joined = python_path(dir);
    let first = std::env::split_paths(&joined).next().unwrap();
    assert_eq!(first, dir);
    let inherited = std::env::var_os("PYTHONPATH").unwrap_or_default();
    let rest: Vec<PathBuf> = std::env::split_paths(&joined).skip(1).collect();
    let expected: Vec<PathBuf> = std::env::split_paths(&inherited)
        .filter(|p| !p.as_os_str().is_empty())
        .collect();
    assert_eq!(rest, expected);
}

#[test]
fn a_failing_command_reports_itself_and_its_stderr() {
    let err = run(Command::new("sh").args(["-c", "echo out; echo oops >&2; exit 3"])).unwrap_err();
    assert!(
        err.starts_with("sh -c echo out; echo oops >&2; exit 3 failed"),
        "{err}"
    );
    assert!(err.ends_with("oops"), "{err}");
    assert_eq!(
        run(Command::new("sh").args(["-c", "echo out"])).unwrap(),
        "out\n"
    );
}
