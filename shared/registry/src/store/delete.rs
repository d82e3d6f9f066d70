//! Deletion on the store, after upstream's `Store.Delete`, `Store.DeleteCollection`,
//! `rest.BeforeDelete`, `markAsDeleting` and the delete-during-update path
//! (`ShouldDeleteDuringUpdate`, `deleteWithoutFinalizers`).

use std::sync::Arc;

use kas_apimachinery::Status;
use kas_storage::{ListResult, Object, ObjectRef, Preconditions, Predicate};
use serde_json::Value;

use super::graceful::{self, Graceful};
use super::{Deleted, Store};
use crate::admission::{Attributes, Operation};
use crate::error::{Error, Result};
use crate::rest::options::{ListOptions, WriteOptions};

/// Upstream's `deleteCollectionPageSize`: DeleteCollection lists in pages of this many.
const DELETE_COLLECTION_PAGE_SIZE: i64 = 10_000;

impl Store {
    /// Delete with preconditions. An object held by finalizers (or, through the strategy,
    /// by something else: a namespace's `spec.finalizers`) is marked for deletion instead of
    /// removed, as upstream's graceful deletion does.
    pub async fn delete(
        &self,
        namespace: &str,
        name: &str,
        preconditions: &Preconditions,
        opts: &WriteOptions,
    ) -> Result<Deleted> {
        let mut attributes =
            Attributes::new(Operation::Delete, self.descriptor, namespace, name, None);
        // The plugins that restrict who deletes (NodeRestriction) look at the user.
        attributes.user = opts.user.as_ref();
        attributes.dry_run = opts.dry_run;
        attributes.warnings = Some(&opts.warnings);
        self.admission.admit(&attributes).await?;
        let key = self.key(namespace, name);
        let current = self.get_stored(namespace, name, None).await?;
        let current_value = current.value()?;
        if self.strategy.custom_delete() {
            preconditions
                .check(&key, &current_value)
                .map_err(|e| self.storage_error(e, name))?;
        } else {
            self.before_delete(preconditions, &current_value)?;
        }
        match self.graceful(&current_value, opts.grace_period_seconds) {
            Graceful::No => {}
            Graceful::Pending => return Ok(Deleted::Pending(self.served(current)?)),
            Graceful::Mark { period } => {
                return self
                    .delete_gracefully(&key, name, preconditions, opts, current, period)
                    .await;
            }
        }
        let held = current_value
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|f| !f.is_empty())
            || self.strategy.holds_deletion(&current_value);
        if held {
            if opts.dry_run {
                return Ok(Deleted::Pending(self.served(current)?));
            }
            let now = crate::meta::rfc3339(std::time::SystemTime::now());
            let mark = |cur: Option<&Value>| -> kas_storage::Result<Option<Value>> {
                Ok(cur.and_then(|cur| self.marked_for_deletion(cur, &now)))
            };
            let marked = self
                .storage
                .guaranteed_update(&key, preconditions, false, &mark, Some(current), None)
                .await
                .map_err(|e| self.storage_error(e, name))?;
            return Ok(Deleted::Pending(self.served(marked)?));
        }
        if opts.dry_run {
            return Ok(Deleted::Gone(self.served(current)?));
        }
        let gone = self
            .storage
            .delete(&key, preconditions, &|_| Ok(()), Some(current))
            .await
            .map_err(|e| self.storage_error(e, name))?;
        self.after_delete(&gone.value()?).await;
        Ok(Deleted::Gone(self.served(gone)?))
    }

    /// A graceful deletion: the object marked with its grace period, then, when that is
    /// zero and no finalizer holds it, deleted. A dry run answers the object unmarked.
    async fn delete_gracefully(
        &self,
        key: &str,
        name: &str,
        preconditions: &Preconditions,
        opts: &WriteOptions,
        current: Arc<Object>,
        period: i64,
    ) -> Result<Deleted> {
        let held = |v: &Value| {
            v.pointer("/metadata/finalizers")
                .and_then(Value::as_array)
                .is_some_and(|f| !f.is_empty())
        };
        if opts.dry_run {
            let gone = period == 0 && !held(&current.value()?);
            let served = self.served(current)?;
            return Ok(if gone {
                Deleted::Gone(served)
            } else {
                Deleted::Pending(served)
            });
        }
        let now = std::time::SystemTime::now();
        let marking = |cur: Option<&Value>| -> kas_storage::Result<Option<Value>> {
            Ok(cur.map(|cur| {
                let mut v = cur.clone();
                graceful::mark(&mut v, period, now);
                v
            }))
        };
        let marked = self
            .storage
            .guaranteed_update(key, preconditions, false, &marking, Some(current), None)
            .await
            .map_err(|e| self.storage_error(e, name))?;
        if period != 0 || held(&marked.value()?) {
            return Ok(Deleted::Pending(self.served(marked)?));
        }
        // The mark moved the resourceVersion a precondition may name.
        let preconditions = Preconditions {
            uid: preconditions.uid.clone(),
            resource_version: preconditions
                .resource_version
                .as_ref()
                .map(|_| marked.resource_version.to_string()),
        };
        let gone = self
            .storage
            .delete(key, &preconditions, &|_| Ok(()), Some(marked))
            .await
            .map_err(|e| self.storage_error(e, name))?;
        self.after_delete(&gone.value()?).await;
        Ok(Deleted::Gone(self.served(gone)?))
    }

    /// Upstream's `DeleteCollection`: every object the options select, listed in pages of
    /// 10,000 (or only the first page when the client set a limit), deleted one by one
    /// with the same preconditions; objects already gone are skipped. Answers the list as
    /// it was listed: the first page's metadata with every page's items.
    pub async fn delete_collection(
        &self,
        namespace: &str,
        list_opts: &ListOptions,
        predicate: Predicate,
        preconditions: &Preconditions,
        opts: &WriteOptions,
    ) -> Result<ListResult> {
        let mut page_opts = list_opts.clone();
        let has_limit = page_opts.limit.is_some_and(|l| l > 0);
        if !has_limit {
            page_opts.limit = Some(DELETE_COLLECTION_PAGE_SIZE);
        }
        let mut listed: Option<ListResult> = None;
        loop {
            let page = self.list(namespace, &page_opts, predicate.clone()).await?;
            for item in &page.items {
                let value = item.value()?;
                let (ns, name) = (crate::meta::namespace(&value), crate::meta::name(&value));
                match self.delete(ns, name, preconditions, opts).await {
                    Ok(_) => {}
                    Err(e) if e.to_status().code == 404 => {}
                    Err(e) => return Err(e),
                }
            }
            let next = page.continue_token.clone();
            match &mut listed {
                None => listed = Some(page),
                Some(all) => all.items.extend(page.items),
            }
            match next {
                Some(token) if !has_limit => {
                    page_opts.continue_token = Some(token);
                    page_opts.resource_version = None;
                    page_opts.resource_version_match = None;
                }
                _ => break,
            }
        }
        Ok(listed.unwrap_or_default())
    }

    /// Upstream's `BeforeDelete` precondition checks on the object read first, with their
    /// messages; they name the internal kind, as upstream's name the object's.
    fn before_delete(&self, preconditions: &Preconditions, current: &Value) -> Result<()> {
        let (group, _, kind) = self.descriptor.storage_version();
        let name = crate::meta::name(current);
        let conflict =
            |message: String| -> Error { Status::conflict(group, kind, name, &message).into() };
        if let Some(uid) = &preconditions.uid {
            let actual = crate::meta::str_field(current, "uid");
            if uid != actual {
                return Err(conflict(format!(
                    "the UID in the precondition ({uid}) does not match the UID in record ({actual}). The object might have been deleted and then recreated"
                )));
            }
        }
        if let Some(rv) = &preconditions.resource_version {
            let actual = crate::meta::str_field(current, "resourceVersion");
            if rv != actual {
                return Err(conflict(format!(
                    "the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in record ({actual}). The object might have been modified"
                )));
            }
        }
        Ok(())
    }

    /// The object marked for deletion, or `None` when it already is: upstream's
    /// `markAsDeleting` (the generation bumped, a zero grace period), or for a resource
    /// with its own delete (a namespace) the deletionTimestamp only; then the strategy's
    /// `prepare_for_deletion` (a namespace turns Terminating).
    fn marked_for_deletion(&self, current: &Value, now: &str) -> Option<Value> {
        let mut v = current.clone();
        let meta = crate::meta::metadata_mut(&mut v);
        if meta.contains_key("deletionTimestamp") {
            return None;
        }
        if !self.strategy.custom_delete() {
            if let Some(generation) = meta
                .get("generation")
                .and_then(Value::as_i64)
                .filter(|g| *g > 0)
            {
                meta.insert("generation".into(), Value::from(generation + 1));
            }
            meta.insert("deletionGracePeriodSeconds".into(), Value::from(0));
        }
        meta.insert("deletionTimestamp".into(), Value::String(now.to_owned()));
        meta.remove("resourceVersion");
        self.strategy.prepare_for_deletion(&mut v);
        Some(v)
    }

    /// Upstream's `ShouldDeleteDuringUpdate` (and a namespace's stricter one, through the
    /// strategy's `holds_deletion`): an update that leaves an object marked for deletion
    /// with no finalizer deletes it instead, when its grace period is over (none or zero).
    fn should_delete_during_update(&self, new: &Value, existing: &Value) -> bool {
        let no_finalizers = new
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .is_none_or(|f| f.is_empty());
        let marked = existing.pointer("/metadata/deletionTimestamp").is_some();
        let grace_over = existing
            .pointer("/metadata/deletionGracePeriodSeconds")
            .and_then(Value::as_i64)
            .is_none_or(|g| g == 0);
        no_finalizers && marked && grace_over && !self.strategy.holds_deletion(new)
    }

    /// The outcome of an update's compare-and-swap loop that [`delete_instead`] may have
    /// stopped: the stored object (`Ok`), or, for an update that emptied the finalizers,
    /// the object is deleted and the answer is the update's object at the revision it
    /// updated (`Err`), as upstream's `deleteWithoutFinalizers` answers.
    pub(super) async fn deleted_instead(
        &self,
        key: &str,
        name: &str,
        written: kas_storage::Result<ObjectRef>,
    ) -> Result<std::result::Result<ObjectRef, ObjectRef>> {
        let answer = match written {
            Ok(stored) => return Ok(Ok(stored)),
            Err(kas_storage::Error::Callback(e)) => match e.downcast::<EmptiedFinalizers>() {
                Ok(emptied) => emptied,
                Err(other) => {
                    return Err(self.storage_error(kas_storage::Error::Callback(other), name));
                }
            },
            Err(e) => return Err(self.storage_error(e, name)),
        };
        match self
            .storage
            .delete(key, &Preconditions::default(), &|_| Ok(()), None)
            .await
        {
            // Deletion races with other updates that emptied the finalizers too.
            Ok(_) | Err(kas_storage::Error::NotFound { .. }) => {}
            Err(e) => return Err(self.storage_error(e, name)),
        }
        let EmptiedFinalizers {
            object,
            resource_version,
        } = *answer;
        let answer = self.served_value(object);
        let answer = Object::new(key, resource_version, answer).map_err(Error::from)?;
        Ok(Err(Arc::new(answer)))
    }
}

/// What an update's compare-and-swap step writes: `new`, or nothing when the update
/// empties the finalizers of an object marked for deletion, whose deletion then replaces
/// the write (see [`Store::deleted_instead`]).
pub(super) fn delete_instead(
    store: &Store,
    current: Option<&Value>,
    new: Option<Value>,
) -> kas_storage::Result<Option<Value>> {
    let (current, object) = match (current, new) {
        (Some(current), Some(object)) => (current, object),
        // A create, or an update that changes nothing: nothing to delete.
        (_, new) => return Ok(new),
    };
    if !store.should_delete_during_update(&object, current) {
        return Ok(Some(object));
    }
    let resource_version = crate::meta::str_field(current, "resourceVersion")
        .parse()
        .unwrap_or(0);
    Err(kas_storage::Error::Callback(Box::new(EmptiedFinalizers {
        object,
        resource_version,
    })))
}

/// Upstream's `errEmptiedFinalizers`: stops the update loop with the object the update
/// made, to be answered once the object is deleted.
#[derive(Debug)]
struct EmptiedFinalizers {
    object: Value,
    resource_version: u64,
}

impl std::fmt::Display for EmptiedFinalizers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("emptied finalizers")
    }
}

impl std::error::Error for EmptiedFinalizers {}
