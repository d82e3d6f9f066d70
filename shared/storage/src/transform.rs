//! [`ReadTransform`]: a decorator that rewrites every object read from the storage it wraps
//! (gets, lists and watch events), as upstream's storage codec does on decode. Custom
//! resources use it: their CRD's schema prunes, coerces and defaults what etcd holds, so a
//! default added to a schema shows on objects stored before it. Put under a watch cache,
//! the cache holds the rewritten objects and the rewrite costs once per change, not per
//! read.
//!
//! Without a write transform, writes pass through untouched: what a write returns was just
//! built by the resource's strategy (already in the schema's form). With one (a custom
//! resource with a conversion webhook records the version each object is stored in),
//! what is written goes through it, and what a write returns or an update starts from
//! goes through the read transform.

use std::sync::Arc;

use async_trait::async_trait;
use futures_util::StreamExt;
use serde_json::Value;

use crate::error::Result;
use crate::interface::{Storage, UpdateFn, ValidateDeletionFn, WatchEvent, WatchStream};
use crate::object::{Object, ObjectRef};
use crate::options::{GetOptions, ListOptions, ListResult, Preconditions, WatchOptions};

/// What is done to each document read.
pub type ReadFn = Arc<dyn Fn(&mut Value) + Send + Sync>;

/// What is done to each document written.
pub type WriteFn = Arc<dyn Fn(&mut Value) + Send + Sync>;

pub struct ReadTransform {
    inner: Arc<dyn Storage>,
    read: ReadFn,
    write: Option<WriteFn>,
    /// Objects written after this revision are already in their read form (written
    /// through the strategy of the schema the transform applies), so gets, lists and
    /// ADDED/MODIFIED events of them are not decoded again.
    settled_after: Option<u64>,
}

impl ReadTransform {
    pub fn new(inner: Arc<dyn Storage>, read: ReadFn) -> ReadTransform {
        ReadTransform {
            inner,
            read,
            write: None,
            settled_after: None,
        }
    }

    /// Leaves alone the objects written after `revision` (see `settled_after`): the
    /// transform then costs once per object stored before it, not once per read.
    pub fn settled_after(mut self, revision: u64) -> ReadTransform {
        self.settled_after = Some(revision);
        self
    }

    /// `obj` as read: rewritten unless it was written after the settled revision.
    fn read(&self, obj: ObjectRef) -> ObjectRef {
        read_settled(&self.read, self.settled_after, obj)
    }

    /// Also rewrites what is written with `write`.
    pub fn with_writes(inner: Arc<dyn Storage>, read: ReadFn, write: WriteFn) -> ReadTransform {
        ReadTransform {
            inner,
            read,
            write: Some(write),
            settled_after: None,
        }
    }

    /// A write's result, read back when writes are rewritten.
    fn written(&self, obj: ObjectRef) -> ObjectRef {
        match self.write {
            Some(_) => rewrite(&self.read, obj),
            None => obj,
        }
    }
}

fn read_settled(read: &ReadFn, settled_after: Option<u64>, obj: ObjectRef) -> ObjectRef {
    match settled_after {
        Some(revision) if obj.resource_version > revision => obj,
        _ => rewrite(read, obj),
    }
}

/// `obj` rewritten by `read`; the object as it was when it does not decode (the reader
/// then meets it as it would have without the transform) or comes out the same.
fn rewrite(read: &ReadFn, obj: ObjectRef) -> ObjectRef {
    let Ok(mut value) = obj.value() else {
        return obj;
    };
    read(&mut value);
    match Object::new(obj.key.clone(), obj.resource_version, value) {
        Ok(new) if new.json != obj.json => Arc::new(new),
        _ => obj,
    }
}

#[async_trait]
impl Storage for ReadTransform {
    async fn create(
        &self,
        key: &str,
        mut value: Value,
        ttl_seconds: Option<i64>,
    ) -> Result<ObjectRef> {
        if let Some(write) = &self.write {
            write(&mut value);
        }
        let created = self.inner.create(key, value, ttl_seconds).await?;
        Ok(self.written(created))
    }

    async fn get(&self, key: &str, opts: &GetOptions) -> Result<Option<ObjectRef>> {
        let found = self.inner.get(key, opts).await?;
        Ok(found.map(|obj| self.read(obj)))
    }

    async fn list(&self, key: &str, opts: &ListOptions) -> Result<ListResult> {
        let mut list = self.inner.list(key, opts).await?;
        list.items = std::mem::take(&mut list.items)
            .into_iter()
            .map(|obj| self.read(obj))
            .collect();
        Ok(list)
    }

    async fn guaranteed_update(
        &self,
        key: &str,
        preconditions: &Preconditions,
        ignore_not_found: bool,
        try_update: &UpdateFn<'_>,
        cached_existing: Option<ObjectRef>,
        ttl_seconds: Option<i64>,
    ) -> Result<ObjectRef> {
        let Some(write) = &self.write else {
            return self
                .inner
                .guaranteed_update(
                    key,
                    preconditions,
                    ignore_not_found,
                    try_update,
                    cached_existing,
                    ttl_seconds,
                )
                .await;
        };
        let read = &self.read;
        let rewritten = |current: Option<&Value>| -> Result<Option<Value>> {
            let current = current.map(|c| {
                let mut c = c.clone();
                read(&mut c);
                c
            });
            let new = try_update(current.as_ref())?;
            Ok(new.map(|mut v| {
                write(&mut v);
                v
            }))
        };
        let updated = self
            .inner
            .guaranteed_update(
                key,
                preconditions,
                ignore_not_found,
                &rewritten,
                cached_existing,
                ttl_seconds,
            )
            .await?;
        Ok(self.written(updated))
    }

    async fn delete(
        &self,
        key: &str,
        preconditions: &Preconditions,
        validate_deletion: &ValidateDeletionFn<'_>,
        cached_existing: Option<ObjectRef>,
    ) -> Result<ObjectRef> {
        if self.write.is_none() {
            return self
                .inner
                .delete(key, preconditions, validate_deletion, cached_existing)
                .await;
        }
        let read = &self.read;
        let validate = |current: &ObjectRef| validate_deletion(&rewrite(read, current.clone()));
        let deleted = self
            .inner
            .delete(key, preconditions, &validate, cached_existing)
            .await?;
        Ok(self.written(deleted))
    }

    async fn watch(&self, key: &str, opts: &WatchOptions) -> Result<WatchStream> {
        let (read, settled) = (self.read.clone(), self.settled_after);
        let events = self.inner.watch(key, opts).await?;
        Ok(Box::pin(events.map(move |event| match event {
            // A deletion's revision is not its object's: the last state may be older.
            WatchEvent::Deleted(obj) => WatchEvent::Deleted(rewrite(&read, obj)),
            event => event.map_object(|obj| Ok(read_settled(&read, settled, obj))),
        })))
    }

    async fn count(&self, key: &str) -> Result<i64> {
        self.inner.count(key).await
    }

    async fn current_revision(&self) -> Result<u64> {
        self.inner.current_revision().await
    }

    async fn request_watch_progress_supported(&self) -> bool {
        self.inner.request_watch_progress_supported().await
    }
}

#[cfg(all(test, feature = "testing"))]
mod tests;
