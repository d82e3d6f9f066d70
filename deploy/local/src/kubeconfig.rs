//! Writes kubeconfigs: the admin's (a bearer token) and those of other users (a client
//! certificate). JSON, which kubectl and every client library read as YAML.

use std::fs;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use serde_json::json;

use crate::error::{Error, Result};

pub const CLUSTER_NAME: &str = "kas-local";
pub const CONTEXT_NAME: &str = "kas-local";
pub const USER_NAME: &str = "admin";

/// How a kubeconfig's user authenticates.
pub enum Credential<'a> {
    Token(&'a str),
    /// A client certificate and its key, by path.
    Certificate(&'a crate::CertPaths),
}

/// Writes the admin's kubeconfig for `server` trusting `ca_path` (an absolute path, so the
/// file works from any directory) and authenticating with the bearer `token`.
pub fn write(path: &Path, server: &str, ca_path: &Path, token: &str) -> Result<()> {
    write_for(path, server, ca_path, USER_NAME, Credential::Token(token))
}

/// Writes a kubeconfig for `server` trusting `ca_path`, whose user `user` authenticates with
/// `credential`. Created 0600: it holds a credential.
pub fn write_for(
    path: &Path,
    server: &str,
    ca_path: &Path,
    user: &str,
    credential: Credential<'_>,
) -> Result<()> {
    let absolute = |p: &Path| std::path::absolute(p).map_err(Error::io("resolving", p));
    let ca_path = absolute(ca_path)?;
    let user_entry = match credential {
        Credential::Token(token) => json!({ "token": token }),
        Credential::Certificate(paths) => json!({
            "client-certificate": absolute(&paths.cert)?,
            "client-key": absolute(&paths.key)?,
        }),
    };
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
            "name": user,
            "user": user_entry,
        }],
        "contexts": [{
            "name": CONTEXT_NAME,
            "context": { "cluster": CLUSTER_NAME, "user": user },
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

    #[test]
    fn writes_a_kubeconfig_with_a_client_certificate() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kubeconfig-alice");
        let ca = dir.path().join("ca.crt");
        let cert = crate::CertPaths {
            cert: dir.path().join("alice.crt"),
            key: dir.path().join("alice.key"),
        };
        let credential = Credential::Certificate(&cert);
        write_for(&path, "https://127.0.0.1:6443", &ca, "alice", credential).unwrap();
        let config: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        let user = &config["users"][0];
        assert_eq!(user["name"], "alice");
        assert_eq!(
            user["user"]["client-certificate"],
            cert.cert.to_str().unwrap()
        );
        assert_eq!(user["user"]["client-key"], cert.key.to_str().unwrap());
        assert!(user["user"].get("token").is_none());
        assert_eq!(config["contexts"][0]["context"]["user"], "alice");
        assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o077, 0);
    }
}
