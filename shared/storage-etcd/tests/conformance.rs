//! kas-storage's conformance suite against a real etcd: one etcd per test, because
//! several tests compact the whole history.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use kas_local::etcd::TestEtcd;
use kas_storage::Storage;
use kas_storage::testing::Harness;
use kas_storage_etcd::{Client, EtcdStore};

struct EtcdHarness {
    _etcd: TestEtcd,
    _dir: tempfile::TempDir,
    client: Client,
    stores: AtomicUsize,
}

impl EtcdHarness {
    async fn start() -> Self {
        let (etcd, dir, client) = common::etcd().await;
        EtcdHarness {
            _etcd: etcd,
            _dir: dir,
            client,
            stores: AtomicUsize::new(0),
        }
    }
}

#[async_trait]
impl Harness for EtcdHarness {
    async fn store(&self) -> Arc<dyn Storage> {
        let n = self.stores.fetch_add(1, Ordering::Relaxed);
        Arc::new(EtcdStore::new(
            self.client.clone(),
            &format!("/registry-{n}"),
        ))
    }

    async fn compact(&self, revision: u64) {
        EtcdStore::new(self.client.clone(), "/registry")
            .compact(revision)
            .await
            .expect("compact");
    }
}

kas_storage::conformance_suite!(EtcdHarness::start());
