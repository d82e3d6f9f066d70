//! Writes the admin kubeconfig. JSON, which kubectl and every client library read as YAML.

use std::fs;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use serde_json::json;

use crate::error::{Error, Result};

pub const CLUSTER_NAME: &str = "kas-local";
pub const CONTEXT_NAME: &str = "kas-local";
pub const USER_NAME: &str = "admin";

/// Writes a kubeconfig for `server` trusting `ca_path` (an absolute path, so the file works
/// from any directory) and authenticating with the bearer `token`. Created 0600: it holds a
/// credential.
pub fn write(path: &Path, server: &str, ca_path: &Path, token: &str) -> Result<()> {
    let ca_path = std::path::absolute(ca_path).map_err(Error::io("resolving", ca_path))?;
    let config = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{
            "name": CLUSTER_NAME,
            "cluster": {
                "server": server,
                "certificate-authority": ca_path,
            },
        }],
        "users": [{
            "name": USER_NAME,
            "user": { "token": token },
        }],
        "contexts": [{
            "name": CONTEXT_NAME,
            "context": { "cluster": CLUSTER_NAME, "user": USER_NAME },
        }],
        "current-context": CONTEXT_NAME,
        "preferences": {},
    });
    let mut text = serde_json::to_string_pretty(&config).map_err(|source| Error::State {
        path: path.to_path_buf(),
        source,
    })?;
    text.push('\n');
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(Error::io("creating", path))?;
    file.write_all(text.as_bytes())
        .map_err(Error::io("writing", path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn writes_a_kubeconfig_with_the_admin_token() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kubeconfig");
        let ca = dir.path().join("pki/ca.crt");
        write(&path, "https://127.0.0.1:6443", &ca, "abc123").unwrap();

        let config: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        assert_eq!(config["apiVersion"], "v1");
        assert_eq!(config["kind"], "Config");
        assert_eq!(config["current-context"], "kas-local");
        let cluster = &config["clusters"][0];
        assert_eq!(cluster["name"], "kas-local");
        assert_eq!(cluster["cluster"]["server"], "https://127.0.0.1:6443");
        assert_eq!(
            cluster["cluster"]["certificate-authority"],
            ca.to_str().unwrap()
        );
        assert_eq!(config["users"][0]["name"], "admin");
        assert_eq!(config["users"][0]["user"]["token"], "abc123");
        assert_eq!(config["contexts"][0]["context"]["cluster"], "kas-local");
        assert_eq!(config["contexts"][0]["context"]["user"], "admin");
        assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o077, 0);

        // Rewriting replaces, never appends.
        write(&path, "https://127.0.0.1:7443", &ca, "def456").unwrap();
        let config: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        assert_eq!(config["users"][0]["user"]["token"], "def456");
    }
}
