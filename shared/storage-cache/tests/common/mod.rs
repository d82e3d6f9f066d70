//! The harness of the watch cache's tests: a real etcd (kas-local's TestEtcd) behind a
//! storage wrapper that counts the reads reaching it.

#![allow(dead_code)] // each test file uses its own part

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use futures_util::StreamExt;
use kas_local::etcd::TestEtcd;
pub use kas_storage::testing::object;
use kas_storage::{
    GetOptions, ListOptions, ListResult, ObjectRef, Preconditions, Result, Storage, UpdateFn,
    ValidateDeletionFn, WatchEvent, WatchOptions, WatchStream,
};
use kas_storage_cache::{Cacher, CacherConfig};
use kas_storage_etcd::{Client, EtcdStore, WatchProgressSupport};
use serde_json::Value;

pub const TIMEOUT: Duration = Duration::from_secs(10);

/// The real etcd store, counting the reads that reach it.
pub struct Counting {
    pub etcd: EtcdStore,
    pub lists: AtomicUsize,
    pub watches: AtomicUsize,
    pub gets: AtomicUsize,
    /// Bumped to end every watch handed out so far, as a broken etcd connection would.
    pub cut: tokio::sync::watch::Sender<u32>,
}

#[async_trait]
impl Storage for Counting {
    async fn create(&self, key: &str, value: Value, ttl: Option<i64>) -> Result<ObjectRef> {
        self.etcd.create(key, value, ttl).await
    }
    async fn get(&self, key: &str, opts: &GetOptions) -> Result<Option<ObjectRef>> {
        self.gets.fetch_add(1, Ordering::SeqCst);
        self.etcd.get(key, opts).await
    }
    async fn list(&self, key: &str, opts: &ListOptions) -> Result<ListResult> {
        self.lists.fetch_add(1, Ordering::SeqCst);
        self.etcd.list(key, opts).await
    }
    async fn guaranteed_update(
        &self,
        key: &str,
        pre: &Preconditions,
        ignore_not_found: bool,
        try_update: &UpdateFn<'_>,
        cached: Option<ObjectRef>,
        ttl_seconds: Option<i64>,
    ) -> Result<ObjectRef> {
        self.etcd
            .guaranteed_update(key, pre, ignore_not_found, try_update, cached, ttl_seconds)
            .await
    }
    async fn delete(
        &self,
        key: &str,
        pre: &Preconditions,
        validate: &ValidateDeletionFn<'_>,
        cached: Option<ObjectRef>,
    ) -> Result<ObjectRef> {
        self.etcd.delete(key, pre, validate, cached).await
    }
    async fn watch(&self, key: &str, opts: &WatchOptions) -> Result<WatchStream> {
        self.watches.fetch_add(1, Ordering::SeqCst);
        let mut cut = self.cut.subscribe();
        let events = self.etcd.watch(key, opts).await?;
        Ok(Box::pin(events.take_until(async move {
            let _ = cut.changed().await;
        })))
    }
    async fn count(&self, key: &str) -> Result<i64> {
        self.etcd.count(key).await
    }
    async fn current_revision(&self) -> Result<u64> {
        self.etcd.current_revision().await
    }
    async fn request_watch_progress_supported(&self) -> bool {
        self.etcd.request_watch_progress_supported().await
    }
}

pub struct Env {
    _etcd: TestEtcd,
    _dir: tempfile::TempDir,
    pub storage: Arc<Counting>,
    pub cacher: Cacher,
}

/// A cache whose etcd store trusts etcd's progress answers, as it does from etcd 3.4.31
/// and 3.5.13 on. The etcd here may be older, whose answers can overtake events of a watch
/// still catching up; these tests' watches start caught up.
pub async fn start(config: impl FnOnce(&mut CacherConfig)) -> Env {
    start_with(WatchProgressSupport::Enabled, config).await
}

pub async fn start_with(
    progress: WatchProgressSupport,
    config: impl FnOnce(&mut CacherConfig),
) -> Env {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().to_path_buf();
    let etcd = tokio::task::spawn_blocking(move || TestEtcd::start(&path))
        .await
        .expect("join")
        .expect("etcd starts (apt-get install etcd-server)");
    let client = Client::connect([etcd.url()], None).await.expect("connect");
    let storage = Arc::new(Counting {
        etcd: EtcdStore::new(client, "/registry").with_watch_progress_support(progress),
        lists: AtomicUsize::new(0),
        watches: AtomicUsize::new(0),
        gets: AtomicUsize::new(0),
        cut: tokio::sync::watch::Sender::new(0),
    });
    let mut cfg = CacherConfig::new("/configmaps");
    cfg.get_attrs = kas_storage::testing::attrs();
    cfg.relist_backoff = Duration::from_millis(50);
    config(&mut cfg);
    let cacher = Cacher::new(storage.clone(), cfg);
    assert!(cacher.wait_ready(TIMEOUT).await, "the cache lists");
    Env {
        _etcd: etcd,
        _dir: dir,
        storage,
        cacher,
    }
}

pub async fn put(s: &dyn Storage, name: &str, v: i64) -> ObjectRef {
    s.create(&format!("/configmaps/ns/{name}"), object(name, v), None)
        .await
        .expect("create")
}

pub async fn next(w: &mut WatchStream) -> WatchEvent {
    tokio::time::timeout(TIMEOUT, w.next())
        .await
        .expect("an event in time")
        .expect("the watch stays open")
}

pub fn all() -> ListOptions {
    ListOptions {
        recursive: true,
        ..Default::default()
    }
}

pub fn from(rv: Option<u64>) -> WatchOptions {
    WatchOptions {
        resource_version: rv.map(|r| r.to_string()),
        recursive: true,
        ..Default::default()
    }
}

pub fn names(list: &ListResult) -> Vec<String> {
    list.items
        .iter()
        .map(|o| {
            let v = o.value().expect("decodes");
            v["metadata"]["name"].as_str().unwrap_or("").to_owned()
        })
        .collect()
}
