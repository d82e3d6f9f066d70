//! The test KMS v2 plugin (`kas-kms-plugin`) as a process of the test: its socket and keys
//! file in a directory of its own, killed on drop.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;

pub struct KmsPlugin {
    dir: tempfile::TempDir,
    child: Option<Child>,
}

impl KmsPlugin {
    /// Starts the plugin with `keys` (one base64 key a line, the first encrypting) and waits
    /// for its socket.
    pub fn start(keys: &str) -> KmsPlugin {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("keys.txt"), keys).expect("keys file");
        let mut plugin = KmsPlugin { dir, child: None };
        plugin.spawn();
        plugin
    }

    fn spawn(&mut self) {
        let _ = std::fs::remove_file(self.socket());
        let child = Command::new(crate::bin_dir().join("kas-kms-plugin"))
            .arg("--socket")
            .arg(self.socket())
            .arg("--keys")
            .arg(self.keys_path())
            .stdin(Stdio::null())
            .spawn()
            .expect("kas-kms-plugin: run `cargo build --workspace --bins` first");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.socket().exists() {
            assert!(Instant::now() < deadline, "the KMS plugin did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn socket(&self) -> PathBuf {
        self.dir.path().join("kms.sock")
    }

    fn keys_path(&self) -> PathBuf {
        self.dir.path().join("keys.txt")
    }

    /// An `EncryptionConfiguration` file that encrypts `resources` with this plugin as
    /// provider `name`, reading plain values too.
    pub fn configuration(&self, name: &str, resources: &[&str]) -> PathBuf {
        let path = self.dir.path().join("encryption.yaml");
        let text = format!(
            "apiVersion: apiserver.config.k8s.io/v1\n\
             kind: EncryptionConfiguration\n\
             resources:\n\
             - resources: [{}]\n  \
               providers:\n  \
               - kms:\n      \
                   apiVersion: v2\n      \
                   name: {name}\n      \
                   endpoint: unix://{}\n  \
               - identity: {{}}\n",
            resources.join(", "),
            self.socket().display()
        );
        std::fs::write(&path, text).expect("configuration");
        path
    }

    /// A new random key first: the key ID `Status` reports changes. Returns the new ID.
    pub fn rotate(&self) -> String {
        let mut key = [0u8; 32];
        aws_lc_rs::rand::fill(&mut key).expect("random");
        let line = base64::engine::general_purpose::STANDARD.encode(key);
        let old = std::fs::read_to_string(self.keys_path()).expect("keys");
        std::fs::write(self.keys_path(), format!("{line}\n{old}")).expect("keys");
        key_id(&key)
    }

    /// The ID of the key that encrypts now.
    pub fn current_key_id(&self) -> String {
        let text = std::fs::read_to_string(self.keys_path()).expect("keys");
        let first = text.lines().next().expect("a key");
        let key = base64::engine::general_purpose::STANDARD
            .decode(first.trim())
            .expect("base64");
        key_id(&key)
    }

    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for KmsPlugin {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The plugin's key ID: `key-` and the first 16 hex digits of the key's SHA-256.
pub fn key_id(key: &[u8]) -> String {
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, key);
    let hex: String = digest.as_ref()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("key-{hex}")
}
