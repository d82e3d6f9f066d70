//! A throw-away etcd for storage and registry tests: one process on free loopback ports,
//! data in a directory the caller owns, killed when the value is dropped.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::cluster::{etcd_args, etcd_healthy, wait_ready};
use crate::error::{Error, Result};
use crate::ports::free_ports;
use crate::process::{self, Managed, StopOutcome};
use crate::state::ProcessRecord;
use crate::tools::Tools;

/// How long a test etcd may take to report healthy.
const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// A running etcd started by [`TestEtcd::start`]; dropping it stops it.
#[derive(Debug)]
pub struct TestEtcd {
    managed: Option<Managed>,
}

impl TestEtcd {
    /// Starts etcd (from PATH, else obtained by [`Tools::etcd`]) with its data and log under `dir`, on free loopback ports,
    /// and waits until `/health` passes.
    pub fn start(dir: &Path) -> Result<TestEtcd> {
        let binary = Tools::from_env().etcd()?;
        let dir = std::path::absolute(dir).map_err(Error::io("resolving", dir))?;
        std::fs::create_dir_all(&dir).map_err(Error::io("creating", &dir))?;
        let ports = free_ports(2)?;
        let (port, peer_port) = (ports[0], ports[1]);
        let log = dir.join("etcd.log");
        let child = process::spawn(
            &binary,
            &etcd_args(&dir.join("data"), port, peer_port, None),
            &log,
        )?;
        let mut managed = Managed {
            name: "etcd".into(),
            record: ProcessRecord {
                pid: child.id(),
                port,
                binary,
                url: format!("http://127.0.0.1:{port}"),
                log,
            },
            child: Some(child),
            exit: None,
        };
        let ready = wait_ready(
            &mut managed,
            Instant::now() + READY_TIMEOUT,
            READY_TIMEOUT,
            etcd_healthy,
        );
        let etcd = TestEtcd {
            managed: Some(managed),
        };
        ready.map(|()| etcd)
    }

    /// `http://127.0.0.1:<port>`, for `--etcd-servers`.
    pub fn url(&self) -> String {
        self.managed
            .as_ref()
            .map(|m| m.record.url.clone())
            .unwrap_or_default()
    }

    /// Stops etcd now (SIGTERM, then SIGKILL) and reports how.
    pub fn stop(mut self) -> Option<StopOutcome> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Option<StopOutcome> {
        let managed = self.managed.take()?;
        let stopped = process::stop_all(&mut [managed], Duration::from_secs(5));
        stopped.first().map(|s| s.outcome)
    }
}

impl Drop for TestEtcd {
    fn drop(&mut self) {
        self.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_healthy_and_stops() {
        let dir = tempfile::tempdir().unwrap();
        let etcd = TestEtcd::start(dir.path()).unwrap();
        assert!(etcd_healthy(&etcd.url()).is_ok());
        let url = etcd.url();
        assert_eq!(etcd.stop(), Some(StopOutcome::Terminated));
        assert!(etcd_healthy(&url).is_err());
    }
}
