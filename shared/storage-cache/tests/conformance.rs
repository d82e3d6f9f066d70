//! kas-storage's conformance suite against the watch cache over a real etcd: one etcd per
//! test, because several tests compact the whole history. Each store is a [`Cacher`] of
//! `/pods` (the suite's other keys go through to etcd), and compactions are told to every
//! cacher as the compactor does.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use kas_local::etcd::TestEtcd;
use kas_storage::Storage;
use kas_storage::testing::Harness;
use kas_storage_cache::{Cacher, CacherConfig};
use kas_storage_etcd::{Client, EtcdStore, WatchProgressSupport};

struct CacheHarness {
    _etcd: TestEtcd,
    _dir: tempfile::TempDir,
    client: Client,
    stores: AtomicUsize,
    cachers: Mutex<Vec<Arc<Cacher>>>,
}

impl CacheHarness {
    async fn start() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().to_path_buf();
        let etcd = tokio::task::spawn_blocking(move || TestEtcd::start(&path))
            .await
            .expect("join")
            .expect("etcd starts (apt-get install etcd-server)");
        let client = Client::connect([etcd.url()], None).await.expect("connect");
        CacheHarness {
            _etcd: etcd,
            _dir: dir,
            client,
            stores: AtomicUsize::new(0),
            cachers: Mutex::new(Vec::new()),
        }
    }
}

#[async_trait]
impl Harness for CacheHarness {
    async fn store(&self) -> Arc<dyn Storage> {
        let n = self.stores.fetch_add(1, Ordering::Relaxed);
        // As over an etcd that answers progress requests reliably (3.4.31+, 3.5.13+): a
        // consistent read brings the cache up to date, which the suite's later reads at
        // "0" count on. These tests' watches start caught up, where older etcds answer
        // correctly too.
        let etcd = EtcdStore::new(self.client.clone(), &format!("/registry-{n}"))
            .with_watch_progress_support(WatchProgressSupport::Enabled);
        let etcd = Arc::new(etcd);
        let mut config = CacherConfig::new("/pods");
        config.get_attrs = kas_storage::testing::attrs();
        // Indexed by the suite's own field, as pods are by `spec.nodeName`.
        config.index_field = Some("spec.v".to_owned());
        let cacher = Arc::new(Cacher::new(etcd, config));
        // Listed and watching before the test writes: its watch starts caught up.
        assert!(cacher.wait_ready(std::time::Duration::from_secs(10)).await);
        self.cachers.lock().unwrap().push(Arc::clone(&cacher));
        cacher
    }

    async fn compact(&self, revision: u64) {
        EtcdStore::new(self.client.clone(), "/registry")
            .compact(revision)
            .await
            .expect("compact");
        for cacher in self.cachers.lock().unwrap().iter() {
            cacher.compacted(revision);
        }
    }
}

kas_storage::conformance_suite!(CacheHarness::start());
