//! `<state>/cluster.json`: every process the launcher started, so that another invocation
//! (`kas-local down`) stops exactly those and nothing else.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::role::Role;

pub const STATE_FILE: &str = "cluster.json";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessRecord {
    pub pid: u32,
    pub port: u16,
    /// Absolute path the process was started with: its argv\[0\], which `down` checks in
    /// `/proc/<pid>/cmdline` before signalling, so that a reused pid is never hit.
    pub binary: PathBuf,
    pub url: String,
    pub log: PathBuf,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerRecord {
    pub role: Role,
    pub index: usize,
    #[serde(flatten)]
    pub process: ProcessRecord,
}

impl ServerRecord {
    pub fn name(&self) -> String {
        format!("{}-{}", self.role, self.index)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterState {
    pub state_dir: PathBuf,
    pub kubeconfig: PathBuf,
    pub etcd: ProcessRecord,
    /// In start order: extensions, core, aggregator.
    pub servers: Vec<ServerRecord>,
}

impl ClusterState {
    pub fn path(state_dir: &Path) -> PathBuf {
        state_dir.join(STATE_FILE)
    }

    /// `Ok(None)` when there is no state file.
    pub fn read(state_dir: &Path) -> Result<Option<ClusterState>> {
        let path = Self::path(state_dir);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io("reading", path)(e)),
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|source| Error::State { path, source })
    }

    /// Replaces the state file atomically, so a crash never leaves half a record.
    pub fn write(&self, state_dir: &Path) -> Result<()> {
        let path = Self::path(state_dir);
        let tmp = state_dir.join(format!("{STATE_FILE}.tmp"));
        let json = serde_json::to_vec_pretty(self).map_err(|source| Error::State {
            path: path.clone(),
            source,
        })?;
        fs::write(&tmp, json).map_err(Error::io("writing", &tmp))?;
        fs::rename(&tmp, &path).map_err(Error::io("renaming", &path))
    }

    pub fn remove(state_dir: &Path) -> Result<()> {
        let path = Self::path(state_dir);
        match fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(Error::io("removing", path)(e))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(pid: u32, port: u16, binary: &str) -> ProcessRecord {
        ProcessRecord {
            pid,
            port,
            binary: binary.into(),
            url: format!("https://127.0.0.1:{port}"),
            log: format!("/s/logs/{pid}.log").into(),
        }
    }

    #[test]
    fn round_trips_through_the_state_file() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(ClusterState::read(dir.path()).unwrap(), None);
        let state = ClusterState {
            state_dir: dir.path().into(),
            kubeconfig: dir.path().join("kubeconfig"),
            etcd: record(10, 2379, "/usr/bin/etcd"),
            servers: vec![
                ServerRecord {
                    role: Role::Extensions,
                    index: 0,
                    process: record(11, 4000, "/b/extensions-apiserver"),
                },
                ServerRecord {
                    role: Role::Core,
                    index: 1,
                    process: record(12, 4001, "/b/core-apiserver"),
                },
            ],
        };
        state.write(dir.path()).unwrap();
        assert_eq!(ClusterState::read(dir.path()).unwrap(), Some(state.clone()));

        // The format is for people too: roles by binary name, records flat.
        let json: serde_json::Value =
            serde_json::from_slice(&fs::read(ClusterState::path(dir.path())).unwrap()).unwrap();
        assert_eq!(json["servers"][1]["role"], "core-apiserver");
        assert_eq!(json["servers"][1]["index"], 1);
        assert_eq!(json["servers"][1]["pid"], 12);
        assert_eq!(json["etcd"]["binary"], "/usr/bin/etcd");
        assert_eq!(state.servers[1].name(), "core-apiserver-1");

        ClusterState::remove(dir.path()).unwrap();
        ClusterState::remove(dir.path()).unwrap();
        assert_eq!(ClusterState::read(dir.path()).unwrap(), None);
    }

    #[test]
    fn reports_a_corrupt_state_file() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(ClusterState::path(dir.path()), "{").unwrap();
        assert!(matches!(
            ClusterState::read(dir.path()),
            Err(Error::State { .. })
        ));
    }
}
