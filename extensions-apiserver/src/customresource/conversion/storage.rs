//! [`ConvertingStorage`]: one served version's view of a CRD's storage (which holds the
//! storage version) through its conversion webhook, as upstream's storage codec of that
//! version: what is written is converted to the storage version first, what is read (a
//! get, a list's items in one review, each watch event, the object an update starts
//! from, what a write returns) to the served version; selectors apply to the served form
//! ([`super::selection`]). The storage version's own view converts only what the cache
//! could not (an object stored in an earlier version while the webhook failed), when it
//! is served. A failed conversion fails the
//! request with the webhook's error (a 500 without a reason, as upstream answers it).

use std::sync::Arc;

use async_trait::async_trait;
use futures_util::StreamExt;
use kas_apimachinery::Status;
use kas_storage::{
    Error, GetOptions, ListOptions, ListResult, Object, ObjectRef, Preconditions, Result, Storage,
    UpdateFn, ValidateDeletionFn, WatchOptions, WatchStream,
};
use serde_json::Value;

use super::{WebhookConverter, selection, with_type, without_type};

#[derive(Clone)]
pub struct ConvertingStorage {
    pub inner: Arc<dyn Storage>,
    pub converter: Arc<WebhookConverter>,
    /// `group/version` served.
    pub served: String,
    /// `group/version` stored.
    pub stored: String,
    pub kind: &'static str,
}

/// A conversion failure as the error the store answers with.
fn failed(message: String) -> Error {
    Error::Callback(Box::new(kas_registry::Error::from(
        Status::from_plain_error(message),
    )))
}

impl ConvertingStorage {
    /// Whether this serves the storage version itself (only objects left in an earlier
    /// version are converted).
    fn is_stored(&self) -> bool {
        self.served == self.stored
    }

    /// Documents to `to`, each from its own version (or `from`); `list` words failures
    /// by index.
    fn convert(&self, docs: Vec<Value>, from: &str, to: &str, list: bool) -> Result<Vec<Value>> {
        let typed = docs
            .into_iter()
            .map(|d| {
                let version = d.get("apiVersion").and_then(Value::as_str);
                let version = version.unwrap_or(from).to_owned();
                with_type(d, &version, self.kind)
            })
            .collect();
        let converted = self.converter.convert(typed, to, list).map_err(failed)?;
        Ok(converted.into_iter().map(without_type).collect())
    }

    fn to_stored(&self, doc: Value) -> Result<Value> {
        if self.is_stored() {
            return Ok(doc);
        }
        let mut out = self.convert(vec![doc], &self.served, &self.stored, false)?;
        Ok(out.pop().unwrap_or_default())
    }

    fn to_served_value(&self, doc: Value) -> Result<Value> {
        let mut out = self.convert(vec![doc], &self.stored, &self.served, false)?;
        Ok(out.pop().unwrap_or_default())
    }

    /// Whether a stored document needs converting to be served.
    fn needs_conversion(&self, doc: &Value) -> bool {
        !self.is_stored() || doc.get("apiVersion").is_some()
    }

    pub(super) fn to_served(&self, obj: ObjectRef) -> Result<ObjectRef> {
        if self.is_stored() && unconverted(&obj).is_none() {
            return Ok(obj);
        }
        let served = self.to_served_value(obj.value()?)?;
        Ok(Arc::new(Object::new(
            obj.key.clone(),
            obj.resource_version,
            served,
        )?))
    }

    /// The served form of `items`, in one review.
    pub(super) fn served_items(&self, items: &[ObjectRef]) -> Result<Vec<ObjectRef>> {
        if items.is_empty() || (self.is_stored() && items.iter().all(|o| unconverted(o).is_none()))
        {
            return Ok(items.to_vec());
        }
        let docs = items
            .iter()
            .map(|o| o.value())
            .collect::<Result<Vec<_>>>()?;
        let served = self.convert(docs, &self.stored, &self.served, true)?;
        items
            .iter()
            .zip(served)
            .map(|(o, doc)| Object::new(o.key.clone(), o.resource_version, doc).map(Arc::new))
            .collect()
    }
}

/// The version of an object the cache could not convert to the storage version when it
/// read it (it keeps its `apiVersion`; converted objects are held without one), to be
/// converted when it is served. Only the top level is looked at, and only documents that
/// contain the key anywhere are decoded for it.
fn unconverted(obj: &Object) -> Option<String> {
    memchr::memmem::find(&obj.json, b"\"apiVersion\"")?;
    let doc: serde_json::Map<String, Value> = serde_json::from_slice(&obj.json).ok()?;
    doc.get("apiVersion")?.as_str().map(str::to_owned)
}

#[async_trait]
impl Storage for ConvertingStorage {
    async fn create(&self, key: &str, value: Value, ttl_seconds: Option<i64>) -> Result<ObjectRef> {
        let stored = self.to_stored(value)?;
        let created = self.inner.create(key, stored, ttl_seconds).await?;
        self.to_served(created)
    }

    async fn get(&self, key: &str, opts: &GetOptions) -> Result<Option<ObjectRef>> {
        match self.inner.get(key, opts).await? {
            Some(obj) => Ok(Some(self.to_served(obj)?)),
            None => Ok(None),
        }
    }

    async fn list(&self, key: &str, opts: &ListOptions) -> Result<ListResult> {
        if !opts.predicate.is_empty() && !self.is_stored() {
            return selection::list(self, key, opts).await;
        }
        let mut list = self.inner.list(key, opts).await?;
        list.items = self.served_items(&list.items)?;
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
        let converting = |current: Option<&Value>| -> Result<Option<Value>> {
            let converted;
            let current = match current {
                Some(c) if self.needs_conversion(c) => {
                    converted = self.to_served_value(c.clone())?;
                    Some(&converted)
                }
                other => other,
            };
            match try_update(current)? {
                Some(new) => Ok(Some(self.to_stored(new)?)),
                None => Ok(None),
            }
        };
        let updated = self
            .inner
            .guaranteed_update(
                key,
                preconditions,
                ignore_not_found,
                &converting,
                cached_existing,
                ttl_seconds,
            )
            .await?;
        self.to_served(updated)
    }

    async fn delete(
        &self,
        key: &str,
        preconditions: &Preconditions,
        validate_deletion: &ValidateDeletionFn<'_>,
        cached_existing: Option<ObjectRef>,
    ) -> Result<ObjectRef> {
        let validate = |current: &ObjectRef| validate_deletion(&self.to_served(current.clone())?);
        let deleted = self
            .inner
            .delete(key, preconditions, &validate, cached_existing)
            .await?;
        self.to_served(deleted)
    }

    async fn watch(&self, key: &str, opts: &WatchOptions) -> Result<WatchStream> {
        if !opts.predicate.is_empty() && !self.is_stored() {
            return selection::watch(self, key, opts).await;
        }
        let events = self.inner.watch(key, opts).await?;
        let this = self.clone();
        Ok(Box::pin(events.map(move |event| {
            event.map_object(|obj| this.to_served(obj))
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
