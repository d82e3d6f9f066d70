//! A real etcd for these tests, started off the runtime in a directory of its own.

use kas_local::etcd::TestEtcd;
use kas_storage_etcd::Client;

/// A running etcd, the temporary directory holding its data (removed when dropped), and a
/// client of it.
pub async fn etcd() -> (TestEtcd, tempfile::TempDir, Client) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().to_path_buf();
    let etcd = tokio::task::spawn_blocking(move || TestEtcd::start(&path))
        .await
        .expect("join")
        .expect("etcd starts (apt-get install etcd-server)");
    let client = Client::connect([etcd.url()], None).await.expect("connect");
    (etcd, dir, client)
}
