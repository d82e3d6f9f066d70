//! An in-memory [`Storage`] for the tests of what follows storage (informers): it serves
//! lists from a map the test sets and watches from channels the test feeds, and counts
//! lists; every other operation fails.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::{
    Error, GetOptions, ListOptions, ListResult, Object, ObjectRef, Preconditions, Storage,
    UpdateFn, ValidateDeletionFn, WatchEvent, WatchOptions, WatchStream,
};

/// A storage that serves lists from a map and watches from channels the test feeds.
#[derive(Default)]
pub struct ListWatchFake {
    items: Mutex<HashMap<String, Vec<ObjectRef>>>,
    revision: Mutex<u64>,
    lists: Mutex<HashMap<String, usize>>,
    watches: Mutex<Vec<Watch>>,
}

/// An open watch: its key, its resourceVersion and where its events go.
type Watch = (String, Option<String>, mpsc::UnboundedSender<WatchEvent>);

fn unsupported<T>() -> crate::Result<T> {
    Err(Error::internal("not in the fake"))
}

#[async_trait]
impl Storage for ListWatchFake {
    async fn create(&self, _: &str, _: Value, _: Option<i64>) -> crate::Result<ObjectRef> {
        unsupported()
    }
    async fn get(&self, _: &str, _: &GetOptions) -> crate::Result<Option<ObjectRef>> {
        unsupported()
    }
    async fn list(&self, key: &str, opts: &ListOptions) -> crate::Result<ListResult> {
        assert!(opts.recursive);
        *self
            .lists
            .lock()
            .unwrap()
            .entry(key.to_owned())
            .or_default() += 1;
        Ok(ListResult {
            items: self
                .items
                .lock()
                .unwrap()
                .get(key)
                .cloned()
                .unwrap_or_default(),
            resource_version: *self.revision.lock().unwrap(),
            ..ListResult::default()
        })
    }
    async fn guaranteed_update(
        &self,
        _: &str,
        _: &Preconditions,
        _: bool,
        _: &UpdateFn<'_>,
        _: Option<ObjectRef>,
        _: Option<i64>,
    ) -> crate::Result<ObjectRef> {
        unsupported()
    }
    async fn delete(
        &self,
        _: &str,
        _: &Preconditions,
        _: &ValidateDeletionFn<'_>,
        _: Option<ObjectRef>,
    ) -> crate::Result<ObjectRef> {
        unsupported()
    }
    async fn watch(&self, key: &str, opts: &WatchOptions) -> crate::Result<WatchStream> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.watches
            .lock()
            .unwrap()
            .push((key.to_owned(), opts.resource_version.clone(), tx));
        Ok(Box::pin(futures_util::stream::unfold(
            rx,
            |mut rx| async move { rx.recv().await.map(|e| (e, rx)) },
        )))
    }
    async fn count(&self, _: &str) -> crate::Result<i64> {
        unsupported()
    }
    async fn current_revision(&self) -> crate::Result<u64> {
        Ok(*self.revision.lock().unwrap())
    }
}

impl ListWatchFake {
    pub fn object(&self, key: &str, value: &Value) -> ObjectRef {
        let mut rv = self.revision.lock().unwrap();
        *rv += 1;
        Arc::new(Object::new(key, *rv, value.clone()).unwrap())
    }

    pub fn set_list(&self, key: &str, values: &[Value]) {
        let objects = values.iter().map(|v| self.object(key, v)).collect();
        self.items.lock().unwrap().insert(key.to_owned(), objects);
    }

    /// Sends `event` to the open watches of `key`; how many got it.
    pub fn send(&self, key: &str, event: impl Fn() -> WatchEvent) -> usize {
        let watches = self.watches.lock().unwrap();
        watches
            .iter()
            .filter(|(k, _, tx)| k == key && tx.send(event()).is_ok())
            .count()
    }

    pub fn open_watches(&self, key: &str) -> Vec<Option<String>> {
        let watches = self.watches.lock().unwrap();
        watches
            .iter()
            .filter(|(k, _, tx)| k == key && !tx.is_closed())
            .map(|(_, rv, _)| rv.clone())
            .collect()
    }

    /// The last revision handed out.
    pub fn revision(&self) -> u64 {
        *self.revision.lock().unwrap()
    }

    /// Ends the open watches of `key` (drops their senders).
    pub fn end_watches(&self, key: &str) {
        self.watches.lock().unwrap().retain(|(k, _, _)| k != key);
    }

    pub fn list_calls(&self, key: &str) -> usize {
        self.lists.lock().unwrap().get(key).copied().unwrap_or(0)
    }
}
