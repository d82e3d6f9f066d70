//! An update that empties the finalizers of an object marked for deletion deletes it
//! instead, after upstream's `ShouldDeleteDuringUpdate` and `deleteWithoutFinalizers`.

use std::sync::Arc;

use kas_storage::{Object, ObjectRef, Preconditions};
use serde_json::Value;

use super::Store;
use crate::error::{Error, Result};

impl Store {
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
