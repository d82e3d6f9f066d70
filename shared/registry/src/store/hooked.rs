//! Updates of a resource with write hooks (a Service, whose cluster IPs and node ports
//! live outside it). The begin hook allocates asynchronously, which cannot happen inside
//! the storage's compare-and-swap callback; so the update reads the object, builds the
//! candidate, runs the hook, and writes on the condition that the object is still the one
//! read. When it is not, the hook's work is undone and the whole round runs again, as
//! upstream's `GuaranteedUpdate` runs `BeginUpdate` again on a conflict.

use std::sync::Arc;

use serde_json::Value;

use super::validated::Shrink;
use super::{Store, Written, at_revision};
use crate::admission::Operation;
use crate::error::Result;
use crate::hooks::WriteHooks;
use crate::rest::options::WriteOptions;

impl Store {
    /// An update (PUT, or PATCH with `candidate` applying the patch) through the hooks;
    /// `candidate` gives the object the client means from the stored one.
    pub(super) async fn update_hooked(
        &self,
        hooks: &Arc<dyn WriteHooks>,
        namespace: &str,
        name: &str,
        candidate: &(dyn Fn(&Value) -> Result<Value> + Send + Sync),
        opts: &WriteOptions,
    ) -> Result<Written> {
        let key = self.key(namespace, name);
        loop {
            let stored = self.get_stored(namespace, name, None).await?;
            let current = stored.value()?;
            let mut new = candidate(&current)?;
            let client_rv = crate::meta::str_field(&new, "resourceVersion").to_owned();
            let finish = hooks.begin_update(&mut new, &current, opts.dry_run).await?;
            // The state to write, computed on the object read (the write below is on the
            // condition that it is still the stored one) and validated by admission.
            let prepared = match self.prepare_update(new, Some(&current), &client_rv, opts) {
                Ok(prepared) => prepared,
                Err(e) => {
                    finish.finish(false).await;
                    return Err(e);
                }
            };
            // An update that changes nothing is validated too, as upstream's (its storage
            // skips the write after the validation).
            let validated = self.validate_admission(
                Operation::Update,
                namespace,
                "",
                prepared.as_ref().unwrap_or(&current),
                Some(&current),
                opts,
            );
            if let Err(e) = validated.await {
                finish.finish(false).await;
                return Err(e);
            }
            if opts.dry_run {
                finish.finish(true).await;
                let new = at_revision(prepared.unwrap_or(current), stored.resource_version);
                return Ok(Written::DryRun(self.served_value(new)));
            }
            let outcome = self.write_if_unchanged(&key, name, stored, prepared, Shrink::No);
            let outcome = outcome.await;
            let outcome = match outcome {
                // Changed since it was read: undo and go again on the newer object.
                Ok(None) => {
                    finish.finish(false).await;
                    continue;
                }
                Ok(Some(outcome)) => Ok(outcome),
                Err(e) => Err(e),
            };
            finish.finish(outcome.is_ok()).await;
            return match outcome? {
                Ok(stored) => Ok(Written::Stored(self.served(stored)?)),
                Err(answer) => {
                    if let Ok(gone) = answer.value() {
                        hooks.after_delete(&gone).await;
                    }
                    Ok(Written::Stored(answer))
                }
            };
        }
    }

    /// Upstream's `AfterDelete`: the hooks hear of an object that is gone.
    pub(super) async fn after_delete(&self, gone: &Value) {
        if let Some(hooks) = &self.hooks {
            hooks.after_delete(gone).await;
        }
    }
}
