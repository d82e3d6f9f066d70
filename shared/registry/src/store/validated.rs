//! Writes that validating admission looks at (`crate::admission::Validate`). A plugin may
//! do I/O, which the storage's compare-and-swap callback cannot, so an update computes the
//! new state from the object it read, has it validated, and writes it on the condition
//! that the object is still that one; otherwise it runs again on the newer object, as
//! upstream's `GuaranteedUpdate` runs its validation again on a conflict.

use kas_storage::{ObjectRef, Preconditions};
use serde_json::Value;

use super::delete_during_update::delete_instead;
use super::{Store, Written, at_revision};
use crate::admission::{Attributes, Operation};
use crate::error::Result;
use crate::rest::options::WriteOptions;

/// Whether a write too large for etcd is tried again without `managedFields`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Shrink {
    WithoutManagedFields,
    No,
}

impl Store {
    /// The validating plugins on the state a write will store (`old` on an update).
    pub(super) async fn validate_admission(
        &self,
        operation: Operation,
        namespace: &str,
        subresource: &str,
        object: &Value,
        old: Option<&Value>,
        opts: &WriteOptions,
    ) -> Result<()> {
        let mut attributes = self.attributes(operation, namespace, subresource, object, opts);
        attributes.old_object = old;
        self.validate_with(&attributes).await
    }

    /// The validating plugins on a create of `subresource` of object `name` (a pod's
    /// `eviction` or `binding`, an account's `token`) with the object sent, before the
    /// subresource does anything: upstream's handler admits what it decoded first.
    pub async fn validate_subresource_create(
        &self,
        namespace: &str,
        name: &str,
        subresource: &str,
        object: &Value,
        opts: &WriteOptions,
    ) -> Result<()> {
        let operation = Operation::Create;
        let mut attributes = self.attributes(operation, namespace, subresource, object, opts);
        attributes.name = name;
        self.validate_with(&attributes).await
    }

    /// A write's attributes, named by its object.
    fn attributes<'a>(
        &self,
        operation: Operation,
        namespace: &'a str,
        subresource: &'a str,
        object: &'a Value,
        opts: &'a WriteOptions,
    ) -> Attributes<'a> {
        Attributes {
            operation,
            descriptor: self.descriptor,
            namespace,
            name: crate::meta::name(object),
            object: Some(object),
            old_object: None,
            subresource,
            dry_run: opts.dry_run,
            warnings: Some(&opts.warnings),
            user: opts.user.as_ref(),
            audit: Some(&opts.audit),
        }
    }

    /// The validating plugins that handle the write, if any does.
    async fn validate_with(&self, attributes: &Attributes<'_>) -> Result<()> {
        let a = attributes;
        if !self
            .admission
            .validates(self.descriptor, a.namespace, a.subresource, a.operation)
        {
            return Ok(());
        }
        self.admission.validate(attributes).await
    }

    /// `attempt` on the object read, validated, then written if the object is unchanged
    /// (or, dry, answered at the revision read). A missing object is NotFound. `Shrink::
    /// WithoutManagedFields` (updates and patches that are no apply) writes a state too
    /// large for etcd once more without its `managedFields`, as upstream's handlers do.
    pub(super) async fn rewrite_validated(
        &self,
        namespace: &str,
        name: &str,
        subresource: &str,
        attempt: &(dyn Fn(&Value) -> Result<Option<Value>> + Send + Sync),
        opts: &WriteOptions,
        shrink: Shrink,
    ) -> Result<Written> {
        let key = self.key(namespace, name);
        loop {
            let stored = self.get_stored(namespace, name, None).await?;
            let current = stored.value()?;
            let new = attempt(&current)?;
            // An update that changes nothing is validated too, as upstream's (its storage
            // skips the write after the validation).
            self.validate_admission(
                Operation::Update,
                namespace,
                subresource,
                new.as_ref().unwrap_or(&current),
                Some(&current),
                opts,
            )
            .await?;
            if opts.dry_run {
                let new = at_revision(new.unwrap_or(current), stored.resource_version);
                return Ok(Written::DryRun(self.served_value(new)));
            }
            let written = self.write_if_unchanged(&key, name, stored, new, shrink);
            let Some(written) = written.await? else {
                continue;
            };
            return match written {
                Ok(stored) => Ok(Written::Stored(self.served(stored)?)),
                Err(answer) => Ok(Written::Stored(answer)),
            };
        }
    }

    /// Writes `new`, computed on `stored`, on the condition that the object still is
    /// `stored` (no change when `new` is `None`). `None` when it changed meanwhile, for the
    /// caller to compute again; else the stored state, or the last state of an object
    /// whose emptied finalizers deleted it (`deleted_instead`).
    pub(super) async fn write_if_unchanged(
        &self,
        key: &str,
        name: &str,
        stored: ObjectRef,
        new: Option<Value>,
        shrink: Shrink,
    ) -> Result<Option<std::result::Result<ObjectRef, ObjectRef>>> {
        let read = Preconditions {
            uid: None,
            resource_version: Some(stored.resource_version.to_string()),
        };
        let mut written = self
            .write_state(key, name, &read, &new, stored.clone())
            .await;
        if shrink == Shrink::WithoutManagedFields
            && let Err(kas_storage::Error::RequestTooLarge { .. }) = written
        {
            let smaller = new.map(super::field_manager::without_managed_fields);
            written = self.write_state(key, name, &read, &smaller, stored).await;
        }
        if let Err(kas_storage::Error::ResourceVersionConflicts { .. }) = written {
            return Ok(None);
        }
        self.deleted_instead(key, name, written).await.map(Some)
    }

    /// `state` written over `stored` if `read` still holds (an emptied finalizer list
    /// deletes instead).
    async fn write_state(
        &self,
        key: &str,
        name: &str,
        read: &Preconditions,
        state: &Option<Value>,
        stored: ObjectRef,
    ) -> kas_storage::Result<ObjectRef> {
        let try_update = |cur: Option<&Value>| -> kas_storage::Result<Option<Value>> {
            let Some(cur) = cur else {
                return Err(kas_storage::Error::NotFound {
                    key: name.to_owned(),
                });
            };
            delete_instead(self, Some(cur), state.clone())
        };
        let ttl = self.strategy.ttl_seconds();
        self.storage
            .guaranteed_update(key, read, false, &try_update, Some(stored), ttl)
            .await
    }
}
