//! Deletion on the store, after upstream's `Store.Delete`, `Store.DeleteCollection`,
//! `rest.BeforeDelete` and `updateForGracefulDeletionAndFinalizers`: an object that
//! finalizers hold (the garbage collector's among them, as the options and the strategy's
//! default policy ask: see `gc`) or that deletes gracefully is marked rather than removed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::SystemTime;

use futures_util::{StreamExt, TryStreamExt};
use kas_apimachinery::Status;
use kas_storage::{ListResult, Object, ObjectRef, Preconditions, Predicate};
use serde_json::Value;

use super::graceful::{self, Graceful};
use super::{Store, gc};
use crate::admission::{Attributes, Operation};
use crate::error::{Error, Result};
use crate::rest::options::{ListOptions, WriteOptions};

/// What a delete did, and how upstream's handler answers it.
pub enum Deleted {
    /// The object is gone; this was its last state. Answered as upstream's
    /// `finalizeDelete`: the object where the strategy returns deleted objects, else a
    /// `Status` naming it.
    Gone(ObjectRef),
    /// Finalizers or a grace period hold it: it was marked for deletion and stays;
    /// answered with the marked object.
    Pending(ObjectRef),
    /// A graceful deletion was already under way and the request did not shorten it:
    /// nothing changed. Answered as `finalizeDelete` answers, but not deleted.
    Unchanged(ObjectRef),
    /// A dry run that would have deleted the object after marking it: answered with what
    /// the mark made (upstream returns it as it is, not through `finalizeDelete`).
    DryRun(ObjectRef),
}

impl Deleted {
    /// Whether the object is gone (upstream's `wasDeleted`).
    pub fn deleted(&self) -> bool {
        matches!(self, Deleted::Gone(_) | Deleted::DryRun(_))
    }
}

/// Upstream's `deleteCollectionPageSize`: DeleteCollection lists in pages of this many.
const DELETE_COLLECTION_PAGE_SIZE: i64 = 10_000;

/// What marking an object for deletion came to (upstream's outcomes of
/// `updateForGracefulDeletionAndFinalizers`).
enum Marked {
    /// Finalizers or a grace period keep the object: this is it, marked.
    Pending(ObjectRef),
    /// A graceful deletion was already under way and the request does not shorten it.
    AlreadyDeleting,
    /// Delete it now. `marked` is the state the mark wrote (a zero grace period), whose
    /// deletion someone else may win (`ignoreNotFound`); `None` when nothing was written
    /// because nothing holds the object (`errDeleteNow`).
    Now { marked: Option<ObjectRef> },
}

/// The sentinels that stop the marking's compare-and-swap loop (upstream's
/// `errDeleteNow` and `errAlreadyDeleting`).
#[derive(Debug)]
enum Stop {
    DeleteNow,
    AlreadyDeleting,
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Stop::DeleteNow => "delete now",
            Stop::AlreadyDeleting => "abort delete",
        })
    }
}

impl std::error::Error for Stop {}

impl Store {
    /// Delete with preconditions and the garbage collector's options. An object held by
    /// finalizers (or, through the strategy, by something else: a namespace's
    /// `spec.finalizers`) is marked for deletion instead of removed.
    pub async fn delete(
        &self,
        namespace: &str,
        name: &str,
        preconditions: &Preconditions,
        opts: &WriteOptions,
    ) -> Result<Deleted> {
        self.warn_default_policy(opts);
        self.delete_one(namespace, name, preconditions, opts).await
    }

    /// Upstream's job `REST.Delete` and `DeleteCollection` warn, once per request, that
    /// a delete naming no policy orphans the Job's pods.
    fn warn_default_policy(&self, opts: &WriteOptions) {
        if opts.propagation_policy.is_none()
            && opts.orphan_dependents.is_none()
            && let Some(warning) = self.strategy.default_policy_warning()
        {
            opts.warnings.add(warning.to_owned());
        }
    }

    async fn delete_one(
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
        let value = current.value()?;
        if self.strategy.custom_delete() {
            // Upstream's namespace and CRD `REST.Delete`: their preconditions checked as
            // storage checks them; the first delete only marks the object their way.
            preconditions
                .check(&key, &value)
                .map_err(|e| self.storage_error(e, name))?;
            if value.pointer("/metadata/deletionTimestamp").is_none() {
                return self
                    .mark_custom(&key, name, preconditions, opts, current)
                    .await;
            }
            if self.strategy.holds_deletion(&value) {
                return Ok(Deleted::Pending(self.served(current)?));
            }
        } else {
            self.before_delete(preconditions, &value)?;
        }
        self.delete_marked(&key, name, preconditions, opts, current, &value)
            .await
    }

    /// Upstream `Store.Delete` after `BeforeDelete`'s checks: mark the object when it
    /// deletes gracefully, when finalizers hold it or when the garbage collector's
    /// finalizers change; delete it when nothing holds it.
    async fn delete_marked(
        &self,
        key: &str,
        name: &str,
        preconditions: &Preconditions,
        opts: &WriteOptions,
        current: ObjectRef,
        value: &Value,
    ) -> Result<Deleted> {
        let graceful = self.graceful(value, opts.grace_period_seconds);
        if graceful == Graceful::Pending {
            return Ok(Deleted::Unchanged(self.served(current)?));
        }
        let pending_finalizers = !gc::finalizers(value).is_empty();
        let gc_finalizers = self.gc_finalizers(value, opts).is_some();
        let mut preconditions = preconditions.clone();
        let mut cached = Some(current.clone());
        let mut last_existing = None;
        if graceful != Graceful::No || pending_finalizers || gc_finalizers {
            let marked = self
                .update_for_graceful_deletion_and_finalizers(
                    key,
                    name,
                    &preconditions,
                    opts,
                    current.clone(),
                )
                .await?;
            cached = None;
            let marked = match marked {
                Marked::Pending(out) => return Ok(Deleted::Pending(self.served(out)?)),
                Marked::AlreadyDeleting => return Ok(Deleted::Unchanged(self.served(current)?)),
                Marked::Now { marked } => marked,
            };
            if opts.dry_run {
                // Upstream answers what the dry-run mark made, which after `errDeleteNow`
                // is the empty object it never filled.
                let out = match marked {
                    Some(out) => out,
                    None => Arc::new(Object::unversioned(key, &self.empty_object())?),
                };
                return Ok(Deleted::DryRun(self.served(out)?));
            }
            if let Some(out) = &marked {
                // The mark moved the resourceVersion a precondition may name.
                if preconditions.resource_version.is_some() {
                    preconditions.resource_version = Some(out.resource_version.to_string());
                }
            }
            last_existing = marked;
        }
        if opts.dry_run {
            return Ok(Deleted::Gone(self.served(current)?));
        }
        let deleted = self
            .storage
            .delete(key, &preconditions, &|_| Ok(()), cached)
            .await;
        let gone = match (deleted, last_existing) {
            (Ok(gone), _) => gone,
            // Whoever else deleted an object whose grace period the mark ended won the
            // race; the mark is the best guess of its last state.
            (Err(kas_storage::Error::NotFound { .. }), Some(last)) => last,
            (Err(e), _) => return Err(self.storage_error(e, name)),
        };
        self.after_delete(&gone.value()?).await;
        Ok(Deleted::Gone(self.served(gone)?))
    }

    /// The garbage collector's finalizers the delete should leave on `obj`, when they
    /// differ from its own (see [`gc::deletion_finalizers`]).
    fn gc_finalizers(&self, obj: &Value, opts: &WriteOptions) -> Option<Vec<String>> {
        let policy = self.strategy.default_garbage_collection_policy();
        gc::deletion_finalizers(policy, obj, opts)
    }

    /// Upstream's `updateForGracefulDeletionAndFinalizers`: in one compare-and-swap,
    /// `BeforeDelete`'s graceful mark, the garbage collector's finalizers, and, for an
    /// object finalizers hold that does not delete gracefully, `markAsDeleting`. A dry run
    /// computes the same on the stored object and writes nothing.
    async fn update_for_graceful_deletion_and_finalizers(
        &self,
        key: &str,
        name: &str,
        preconditions: &Preconditions,
        opts: &WriteOptions,
        current: ObjectRef,
    ) -> Result<Marked> {
        let now = SystemTime::now();
        let pending_finalizers = AtomicBool::new(false);
        let last_graceful = AtomicI64::new(0);
        let try_update = |cur: Option<&Value>| -> kas_storage::Result<Option<Value>> {
            let Some(cur) = cur else {
                return Err(kas_storage::Error::NotFound {
                    key: key.to_owned(),
                });
            };
            let mut v = cur.clone();
            let graceful = self.graceful(&v, opts.grace_period_seconds);
            match graceful {
                Graceful::Pending => return Err(stop(Stop::AlreadyDeleting)),
                Graceful::Mark { period } => graceful::mark(&mut v, period, now),
                Graceful::No => {}
            }
            // After the pending check: a graceful deletion under way keeps its finalizers.
            if let Some(finalizers) = self.gc_finalizers(&v, opts) {
                gc::set_finalizers(&mut v, finalizers);
            }
            let pending = !gc::finalizers(&v).is_empty();
            pending_finalizers.store(pending, Ordering::Relaxed);
            match graceful {
                Graceful::Mark { period } => last_graceful.store(period, Ordering::Relaxed),
                _ if pending => gc::mark_as_deleting(&mut v, now),
                _ => return Err(stop(Stop::DeleteNow)),
            }
            crate::meta::metadata_mut(&mut v).remove("resourceVersion");
            Ok(Some(v))
        };
        let written = self
            .write_mark(key, preconditions, opts, current, &try_update)
            .await;
        let out = match written {
            Ok(out) => out,
            Err(kas_storage::Error::Callback(e)) => match e.downcast::<Stop>() {
                Ok(stop) => {
                    return Ok(match *stop {
                        Stop::DeleteNow => Marked::Now { marked: None },
                        Stop::AlreadyDeleting => Marked::AlreadyDeleting,
                    });
                }
                Err(other) => {
                    return Err(self.storage_error(kas_storage::Error::Callback(other), name));
                }
            },
            Err(e) => return Err(self.storage_error(e, name)),
        };
        if pending_finalizers.load(Ordering::Relaxed) || last_graceful.load(Ordering::Relaxed) > 0 {
            return Ok(Marked::Pending(out));
        }
        Ok(Marked::Now { marked: Some(out) })
    }

    /// The first delete of a resource whose deletion is its own (a namespace, a CRD):
    /// the deletionTimestamp and what the strategy adds (`prepare_for_deletion`), in one
    /// compare-and-swap; the object stays.
    async fn mark_custom(
        &self,
        key: &str,
        name: &str,
        preconditions: &Preconditions,
        opts: &WriteOptions,
        current: ObjectRef,
    ) -> Result<Deleted> {
        let now = crate::meta::rfc3339(SystemTime::now());
        let mark = |cur: Option<&Value>| -> kas_storage::Result<Option<Value>> {
            let Some(cur) = cur else {
                return Err(kas_storage::Error::NotFound {
                    key: key.to_owned(),
                });
            };
            let mut v = cur.clone();
            let meta = crate::meta::metadata_mut(&mut v);
            if !meta.contains_key("deletionTimestamp") {
                meta.insert("deletionTimestamp".into(), Value::String(now.clone()));
            }
            meta.remove("resourceVersion");
            self.strategy.prepare_for_deletion(&mut v, opts);
            Ok(Some(v))
        };
        let marked = self
            .write_mark(key, preconditions, opts, current, &mark)
            .await;
        let marked = marked.map_err(|e| self.storage_error(e, name))?;
        Ok(Deleted::Pending(self.served(marked)?))
    }

    /// A deletion mark's compare-and-swap from the object read, or with `dryRun` what it
    /// would write (upstream's `DryRunnableStorage.GuaranteedUpdate`).
    async fn write_mark(
        &self,
        key: &str,
        preconditions: &Preconditions,
        opts: &WriteOptions,
        current: ObjectRef,
        mark: &kas_storage::UpdateFn<'_>,
    ) -> kas_storage::Result<ObjectRef> {
        if opts.dry_run {
            return dry_run_update(key, preconditions, current, mark);
        }
        self.storage
            .guaranteed_update(key, preconditions, false, mark, Some(current), None)
            .await
    }

    /// The kind's zero value as Go writes it (`e.NewFunc()` encoded).
    fn empty_object(&self) -> Value {
        self.go_encoded(Value::Object(Default::default()))
    }

    /// Upstream's `DeleteCollection`: every object the options select, listed in pages of
    /// 10,000 (or only the first page when the client set a limit), deleted with the same
    /// options by `--delete-collection-workers` at once; objects already gone are skipped,
    /// and the first other error ends it. Answers the list as it was
    /// listed: the first page's metadata with every page's items.
    pub async fn delete_collection(
        &self,
        namespace: &str,
        list_opts: &ListOptions,
        predicate: Predicate,
        preconditions: &Preconditions,
        opts: &WriteOptions,
    ) -> Result<ListResult> {
        self.warn_default_policy(opts);
        let mut page_opts = list_opts.clone();
        let has_limit = page_opts.limit.is_some_and(|l| l > 0);
        if !has_limit {
            page_opts.limit = Some(DELETE_COLLECTION_PAGE_SIZE);
        }
        let mut listed: Option<ListResult> = None;
        loop {
            let page = self.list(namespace, &page_opts, predicate.clone()).await?;
            // Collected first: a stream over the mapping closure is not `Send` for every
            // lifetime the handler's future needs.
            let deletes: Vec<_> = page
                .items
                .iter()
                .map(|item| self.delete_listed(item, preconditions, opts))
                .collect();
            futures_util::stream::iter(deletes)
                .buffer_unordered(self.delete_collection_workers)
                .try_for_each(|()| std::future::ready(Ok(())))
                .await?;
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

    /// One object of a DeleteCollection; one already gone is no error.
    fn delete_listed<'a>(
        &'a self,
        item: &'a ObjectRef,
        preconditions: &'a Preconditions,
        opts: &'a WriteOptions,
    ) -> futures_util::future::BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let value = item.value()?;
            let (ns, name) = (crate::meta::namespace(&value), crate::meta::name(&value));
            match self.delete_one(ns, name, preconditions, opts).await {
                Ok(_) => Ok(()),
                Err(e) if e.to_status().code == 404 => Ok(()),
                Err(e) => Err(e),
            }
        })
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
}

/// Upstream's `DryRunnableStorage.GuaranteedUpdate` with `dryRun`: the update computed
/// on the object read, after its preconditions, at its revision; nothing is written.
fn dry_run_update(
    key: &str,
    preconditions: &Preconditions,
    current: ObjectRef,
    try_update: &kas_storage::UpdateFn<'_>,
) -> kas_storage::Result<ObjectRef> {
    let value = current.value()?;
    preconditions.check(key, &value)?;
    let updated = try_update(Some(&value))?.unwrap_or(value);
    Ok(Arc::new(Object::new(
        key,
        current.resource_version,
        updated,
    )?))
}

fn stop(s: Stop) -> kas_storage::Error {
    kas_storage::Error::Callback(Box::new(s))
}
