//! Starting and stopping child processes, with or without a `Child` handle.
//!
//! With a handle (the `Cluster` that started them) liveness comes from `try_wait`. Without
//! one (`kas-local down`, another process) a pid alone could by now name anything, so a
//! process counts as ours only while `/proc/<pid>/cmdline` still starts with the binary we
//! launched.

use std::fs::{self, File};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::{self, Signal};
use nix::unistd::Pid;

use crate::error::{Error, Result};
use crate::state::ProcessRecord;

/// Time between SIGTERM and SIGKILL.
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(10);
const POLL: Duration = Duration::from_millis(50);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopOutcome {
    /// Already gone, or the pid now belongs to another program: left alone.
    NotRunning,
    /// Exited after SIGTERM.
    Terminated,
    /// Needed SIGKILL.
    Killed,
    /// Still there even after SIGKILL.
    StillRunning,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stopped {
    pub name: String,
    pub pid: u32,
    pub outcome: StopOutcome,
}

/// A process we started (`child` set) or found in the state file (`child` unset).
#[derive(Debug)]
pub(crate) struct Managed {
    pub name: String,
    pub record: ProcessRecord,
    pub child: Option<Child>,
    pub exit: Option<ExitStatus>,
}

impl Managed {
    pub fn alive(&mut self) -> bool {
        if self.exit.is_some() {
            return false;
        }
        match &mut self.child {
            Some(child) => match child.try_wait() {
                Ok(Some(status)) => {
                    self.exit = Some(status);
                    false
                }
                Ok(None) => true,
                Err(_) => false,
            },
            None => runs_binary(self.record.pid, &self.record.binary),
        }
    }

    pub fn signal(&mut self, sig: Signal) -> Result<()> {
        if !self.alive() {
            return Err(Error::NotRunning {
                name: self.name.clone(),
                pid: self.record.pid,
            });
        }
        send_signal(self.record.pid, sig)
    }

    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if !self.alive() {
                return self.exit;
            }
            if Instant::now() >= deadline {
                return None;
            }
            thread::sleep(POLL.min(deadline - Instant::now()));
        }
    }
}

fn send_signal(pid: u32, sig: Signal) -> Result<()> {
    let raw = i32::try_from(pid).map_err(|_| Error::Signal {
        pid,
        signal: sig,
        source: nix::errno::Errno::ESRCH,
    })?;
    signal::kill(Pid::from_raw(raw), sig).map_err(|source| Error::Signal {
        pid,
        signal: sig,
        source,
    })
}

/// Whether `pid` is a live (not zombie) process whose argv\[0\] is `binary`.
pub(crate) fn runs_binary(pid: u32, binary: &Path) -> bool {
    // A zombie has an empty cmdline, so it never matches.
    let Ok(cmdline) = fs::read(format!("/proc/{pid}/cmdline")) else {
        return false;
    };
    let argv0 = cmdline.split(|&b| b == 0).next().unwrap_or_default();
    !argv0.is_empty() && argv0 == binary.as_os_str().as_encoded_bytes()
}

/// Starts `binary` in its own process group, so that a Ctrl-C meant for the launcher does
/// not reach it, with stdout and stderr appended to `log`.
pub(crate) fn spawn(binary: &Path, args: &[String], log: &Path) -> Result<Child> {
    spawn_with_env(binary, args, &[], log)
}

/// [`spawn`] with `env` added to the launcher's environment.
pub(crate) fn spawn_with_env(
    binary: &Path,
    args: &[String],
    env: &[(String, String)],
    log: &Path,
) -> Result<Child> {
    let out = File::create(log).map_err(Error::io("creating", log))?;
    let err = out.try_clone().map_err(Error::io("opening", log))?;
    let mut command = Command::new(binary);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0);
    command.envs(env.iter().map(|(k, v)| (k, v)));
    if std::env::consts::ARCH == "aarch64" && binary.ends_with("etcd") {
        // etcd 3.4 refuses to start on arm64 unless told this is acceptable.
        command.env("ETCD_UNSUPPORTED_ARCH", "arm64");
    }
    command.spawn().map_err(Error::io("starting", binary))
}

/// SIGTERM to every live process, up to `grace` for all of them to exit, then SIGKILL to
/// the rest. All at once, so replicas drain in parallel.
pub(crate) fn stop_all(procs: &mut [Managed], grace: Duration) -> Vec<Stopped> {
    let mut outcomes: Vec<StopOutcome> = procs
        .iter_mut()
        .map(|p| match p.signal(Signal::SIGTERM) {
            Ok(()) => StopOutcome::Terminated,
            Err(_) => StopOutcome::NotRunning,
        })
        .collect();
    let deadline = Instant::now() + grace;
    while procs.iter_mut().any(Managed::alive) && Instant::now() < deadline {
        thread::sleep(POLL);
    }
    for (p, outcome) in procs.iter_mut().zip(outcomes.iter_mut()) {
        if p.signal(Signal::SIGKILL).is_ok() {
            *outcome = if p.wait_exit(Duration::from_secs(2)).is_some() || !p.alive() {
                StopOutcome::Killed
            } else {
                StopOutcome::StillRunning
            };
        }
    }
    procs
        .iter()
        .zip(outcomes)
        .map(|(p, outcome)| Stopped {
            name: p.name.clone(),
            pid: p.record.pid,
            outcome,
        })
        .collect()
}

/// The last `lines` lines of a log, for error messages.
pub(crate) fn log_tail(log: &Path, lines: usize) -> String {
    use std::io::{Read, Seek, SeekFrom};
    const MAX: u64 = 64 * 1024;
    let Ok(mut file) = File::open(log) else {
        return "(no log)".into();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = file.seek(SeekFrom::Start(len.saturating_sub(MAX)));
    let mut bytes = Vec::new();
    let _ = file.read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes);
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Searches PATH like a shell would.
pub(crate) fn find_in_path(name: &str) -> Option<PathBuf> {
    find_in(&std::env::var_os("PATH")?, name)
}

/// Searches `path` (a PATH value) like a shell would.
pub(crate) fn find_in(path: &std::ffi::OsStr, name: &str) -> Option<PathBuf> {
    std::env::split_paths(path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
        .and_then(|p| std::path::absolute(p).ok())
}

pub(crate) fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(pid: u32, binary: &Path) -> ProcessRecord {
        ProcessRecord {
            pid,
            port: 0,
            binary: binary.to_path_buf(),
            url: String::new(),
            log: PathBuf::new(),
        }
    }

    #[test]
    fn a_pid_counts_only_while_it_runs_the_recorded_binary() {
        let me = std::env::current_exe().unwrap();
        // Test binaries are started by cargo with their absolute path as argv[0].
        let argv0 = fs::read(format!("/proc/{}/cmdline", std::process::id())).unwrap();
        let argv0 = PathBuf::from(
            String::from_utf8(argv0.split(|&b| b == 0).next().unwrap().to_vec()).unwrap(),
        );
        assert!(runs_binary(std::process::id(), &argv0));
        assert!(!runs_binary(std::process::id(), Path::new("/usr/bin/etcd")));
        assert!(!runs_binary(u32::MAX, &me));

        // Nothing is signalled when the pid now runs something else: here, this very test.
        let mut impostor = vec![Managed {
            name: "etcd".into(),
            record: record(std::process::id(), Path::new("/usr/bin/etcd")),
            child: None,
            exit: None,
        }];
        let stopped = stop_all(&mut impostor, Duration::from_millis(100));
        assert_eq!(stopped[0].outcome, StopOutcome::NotRunning);
    }

    #[test]
    fn stops_a_child_with_sigterm_and_a_stubborn_one_with_sigkill() {
        let dir = tempfile::tempdir().unwrap();
        let sh = find_in_path("sh").unwrap();
        let start = |script: &str, log: &str| {
            let log = dir.path().join(log);
            let child = spawn(&sh, &["-c".into(), script.into()], &log).unwrap();
            Managed {
                name: log.display().to_string(),
                record: record(child.id(), &sh),
                child: Some(child),
                exit: None,
            }
        };
        let mut procs = vec![
            start("echo started; exec sleep 30", "polite.log"),
            start(
                "trap '' TERM; echo started; while :; do sleep 0.05; done",
                "stubborn.log",
            ),
        ];
        // Let both start (the stubborn one installs its trap first) before they are asked
        // to stop: on a loaded machine a child may not have run its first line yet.
        let deadline = Instant::now() + Duration::from_secs(5);
        let started = |log: &str| log_tail(&dir.path().join(log), 1).contains("started");
        while !(started("stubborn.log") && started("polite.log")) && Instant::now() < deadline {
            thread::sleep(POLL);
        }
        let stopped = stop_all(&mut procs, Duration::from_millis(500));
        let outcomes: Vec<_> = stopped.iter().map(|s| s.outcome).collect();
        assert_eq!(outcomes, [StopOutcome::Terminated, StopOutcome::Killed]);
        assert!(procs.iter_mut().all(|p| !p.alive()));
        assert_eq!(log_tail(&dir.path().join("polite.log"), 5), "started");
        // Stopping again finds nothing to do, and signalling a reaped child is refused.
        assert!(
            stop_all(&mut procs, Duration::ZERO)
                .iter()
                .all(|s| s.outcome == StopOutcome::NotRunning)
        );
        assert!(matches!(
            procs[0].signal(Signal::SIGTERM),
            Err(Error::NotRunning { .. })
        ));
    }

    #[test]
    fn log_tail_keeps_the_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("x.log");
        fs::write(
            &log,
            (1..=100).map(|i| format!("line {i}\n")).collect::<String>(),
        )
        .unwrap();
        assert_eq!(log_tail(&log, 2), "line 99\nline 100");
        assert_eq!(log_tail(&dir.path().join("missing"), 2), "(no log)");
    }
}
