//! Upstream's store decorators around writes (`BeginCreate`, `BeginUpdate`,
//! `AfterDelete`): what a resource keeps outside its own object, such as a Service's cluster
//! IPs and node ports. A begin hook runs before the strategy's update rules and validation,
//! may change the object (fill in what it allocated), and answers how to finish: keep what
//! it did when the write is stored, undo it when the write fails.

use async_trait::async_trait;
use serde_json::Value;

use crate::error::Result;

/// The work a begin hook started, finished once the write's outcome is known.
#[async_trait]
pub trait Finish: Send {
    /// `success`: the write was stored (or, dry, would have been).
    async fn finish(self: Box<Self>, success: bool);
}

/// A finish with nothing to do.
pub struct Done;

#[async_trait]
impl Finish for Done {
    async fn finish(self: Box<Self>, _success: bool) {}
}

#[async_trait]
pub trait WriteHooks: Send + Sync {
    /// Before a create's update rules and validation (upstream's `BeginCreate`).
    async fn begin_create(&self, obj: &mut Value, dry_run: bool) -> Result<Box<dyn Finish>>;

    /// Before an update's rules and validation, with the stored object it replaces
    /// (upstream's `BeginUpdate`).
    async fn begin_update(
        &self,
        new: &mut Value,
        old: &Value,
        dry_run: bool,
    ) -> Result<Box<dyn Finish>>;

    /// After an object is gone (upstream's `AfterDelete`).
    async fn after_delete(&self, deleted: &Value);
}

/// What a guarded deletion through a subresource (a pod's `eviction`) must respect.
#[derive(Debug)]
pub enum GuardedDelete {
    /// Delete with the request's own options.
    Proceed,
    /// Delete only while the object is still at the revision checked (when the request
    /// named no resourceVersion itself). On a conflict the check runs again on the newer
    /// object when `retry`, else the answer is `conflict` (the storage's own when `None`).
    AtRevision {
        retry: bool,
        conflict: Option<crate::Error>,
    },
}

/// An asynchronous check before a subresource create deletes its object (upstream's
/// `EvictionREST`, which consults and charges PodDisruptionBudgets). It may refuse.
#[async_trait]
pub trait DeleteGuard: Send + Sync {
    async fn before_delete(
        &self,
        subresource: &str,
        object: &Value,
        dry_run: bool,
    ) -> Result<GuardedDelete>;
}
