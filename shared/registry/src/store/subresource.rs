//! Subresource writes: PUT and PATCH of `status` (only `.status` is taken from what the
//! client means) and a strategy's own update subresources (a namespace's `finalize`).

use kas_apimachinery::Status;
use serde_json::Value;

use super::{Store, Written};
use crate::error::Result;
use crate::hooks::GuardedDelete;
use crate::rest::object_meta;
use crate::rest::options::WriteOptions;
use crate::strategy::SubresourceEffect;

/// How often a guarded deletion is tried against a changing object.
const GUARDED_DELETE_ATTEMPTS: usize = 5;

impl Store {
    /// PUT of an update subresource: `status` (declared in the descriptor) replaces only
    /// `.status`; others are the strategy's (`subresource_update`). The resourceVersion the
    /// client sent is enforced.
    pub async fn update_subresource(
        &self,
        namespace: &str,
        name: &str,
        subresource: &str,
        mut obj: Value,
        opts: &WriteOptions,
    ) -> Result<Written> {
        object_meta::check_type(&mut obj, self.descriptor)?;
        // Upstream's update handler checks the name and namespace of what it decoded
        // (`checkName`) for a subresource as for the resource.
        object_meta::ensure_namespace(&mut obj, self.descriptor, namespace)?;
        object_meta::check_name(&obj, name)?;
        self.strategy.default(&mut obj);
        let obj = self.to_stored(obj);
        let sent = |_: &Value| -> Result<Value> { Ok(obj.clone()) };
        self.write_subresource(namespace, name, subresource, &sent, opts)
            .await
    }

    /// PATCH of the `status` subresource: `apply` turns the served object into the one
    /// the client means, whose `.status` is then written as a PUT of the subresource
    /// writes it.
    pub async fn patch_subresource(
        &self,
        namespace: &str,
        name: &str,
        subresource: &str,
        apply: &(dyn Fn(&Value) -> Result<Value> + Send + Sync),
        opts: &WriteOptions,
    ) -> Result<Written> {
        let sent = |current: &Value| -> Result<Value> {
            let mut patched = match self.strategy.conversion() {
                Some(c) => apply(&c.to_served(current.clone()))?,
                None => apply(current)?,
            };
            object_meta::check_type(&mut patched, self.descriptor)?;
            self.strategy.default(&mut patched);
            Ok(self.to_stored(patched))
        };
        self.write_subresource(namespace, name, subresource, &sent, opts)
            .await
    }

    /// POST of a create subresource: the strategy says what the body does to the object.
    /// A change (a pod's `binding`) is written inside the compare-and-swap loop; upstream's
    /// binding writes through storage directly, so neither the update's validation nor
    /// the field managers see it. A deletion (a pod's `eviction`) is the store's delete
    /// with the body's options.
    pub async fn create_subresource(
        &self,
        namespace: &str,
        name: &str,
        subresource: &str,
        body: &Value,
        opts: &WriteOptions,
    ) -> Result<()> {
        let effect = |current: &Value| -> Result<SubresourceEffect> {
            self.strategy
                .subresource_create(subresource, body, current)
                .ok_or_else(Status::not_found_path)?
        };
        self.validate_subresource_create(namespace, name, subresource, body, opts)
            .await?;
        let mut current = self.get_stored(namespace, name, None).await?.value()?;
        // A guarded deletion whose revision condition fails because the object changed
        // meanwhile is checked again on the newer object, as upstream's eviction retries.
        for attempt in 1..=GUARDED_DELETE_ATTEMPTS {
            let SubresourceEffect::Delete {
                mut preconditions,
                grace_period_seconds,
                dry_run,
            } = effect(&current)?
            else {
                break;
            };
            let dry_run = dry_run || opts.dry_run;
            let delete_opts = WriteOptions {
                dry_run,
                grace_period_seconds,
                ..WriteOptions::default()
            };
            let guarded = match &self.delete_guard {
                Some(guard) => guard.before_delete(subresource, &current, dry_run).await?,
                None => GuardedDelete::Proceed,
            };
            let on_conflict = match guarded {
                GuardedDelete::AtRevision { retry, conflict }
                    if preconditions.resource_version.is_none() =>
                {
                    preconditions.resource_version =
                        Some(crate::meta::str_field(&current, "resourceVersion").to_owned());
                    Some((retry, conflict))
                }
                _ => None,
            };
            match self
                .delete(namespace, name, &preconditions, &delete_opts)
                .await
            {
                Err(e) if e.to_status().code == 409 => match on_conflict {
                    Some((true, _)) if attempt < GUARDED_DELETE_ATTEMPTS => {
                        current = self.get_stored(namespace, name, None).await?.value()?;
                    }
                    Some((_, Some(answer))) => return Err(answer),
                    _ => return Err(e),
                },
                other => return other.map(|_| ()),
            }
        }
        let attempt = |current: &Value| -> Result<Option<Value>> {
            let SubresourceEffect::Update(mut changed) = effect(current)? else {
                return Err(Status::internal_error("the subresource's effect changed").into());
            };
            if let Some(meta) = changed.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.remove("resourceVersion");
            }
            crate::meta::strip_type_meta(&mut changed);
            Ok(Some(self.go_encoded(changed)))
        };
        self.rewrite_existing(namespace, name, subresource, &attempt, opts)
            .await?;
        Ok(())
    }

    /// A subresource write inside the compare-and-swap loop; `sent` gives the object the
    /// client means (stored form) from the current one.
    pub(super) async fn write_subresource(
        &self,
        namespace: &str,
        name: &str,
        subresource: &str,
        sent: &(dyn Fn(&Value) -> Result<Value> + Send + Sync),
        opts: &WriteOptions,
    ) -> Result<Written> {
        let declared_status = self
            .descriptor
            .subresource(subresource)
            .is_some_and(|s| matches!(s.handler, crate::SubresourceHandler::Status));
        let merge = |current: &Value, obj: &Value, rv: String| -> Result<Value> {
            // Upstream's `BeforeUpdate` before the subresource strategy's
            // `PrepareForUpdate`: what no update changes, and the stored generation, which
            // the strategy may move (a pod's `ephemeralcontainers`).
            let mut sent = obj.clone();
            object_meta::before_update(&mut sent, current);
            let generation = current.pointer("/metadata/generation").cloned();
            let meta = crate::meta::metadata_mut(&mut sent);
            match generation {
                Some(g) => meta.insert("generation".into(), g),
                None => meta.remove("generation"),
            };
            let merged = if declared_status {
                Some(status_update(&sent, current))
            } else {
                self.strategy
                    .subresource_update(subresource, &sent, current)
            };
            let Some(mut merged) = merged else {
                return Err(Status::not_found_path().into());
            };
            crate::meta::metadata_mut(&mut merged)
                .insert("resourceVersion".into(), Value::String(rv));
            Ok(merged)
        };
        let attempt = |current: &Value| -> Result<Option<Value>> {
            let obj = sent(current)?;
            // Upstream's subresource strategies inherit the resource's
            // `AllowUnconditionalUpdate`, and the store checks it first.
            let client_rv = crate::meta::str_field(&obj, "resourceVersion");
            let rv = self.update_resource_version(name, client_rv, current)?;
            let mut merged = merge(current, &obj, rv)?;
            object_meta::check_type(&mut merged, self.descriptor)?;
            if opts.applying {
                // The apply computed the entries; they travel on the applied object.
                let applied = obj.pointer("/metadata/managedFields").cloned();
                let meta = crate::meta::metadata_mut(&mut merged);
                match applied {
                    Some(m) => meta.insert("managedFields".into(), m),
                    None => meta.remove("managedFields"),
                };
            } else {
                self.track_managed_fields(&mut merged, Some(current), subresource, opts);
            }
            // Upstream's status strategies reset what they reset after the field manager
            // recorded what the client sent: a metadata change they drop stays owned.
            if declared_status {
                self.strategy
                    .prepare_for_status_update(&mut merged, current);
            }
            self.admission.mutate_subresource_update(
                self.descriptor,
                subresource,
                &mut merged,
                current,
                opts,
            )?;
            let errors = if declared_status {
                self.strategy.validate_status_update(&merged, current)
            } else {
                self.strategy
                    .validate_subresource_update(subresource, &merged, current)
            };
            if !errors.is_empty() {
                return Err(self.invalid(&merged, errors));
            }
            if let Some(meta) = merged.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.remove("resourceVersion");
            }
            crate::meta::strip_type_meta(&mut merged);
            Ok(Some(self.go_encoded(merged)))
        };
        self.rewrite_existing(namespace, name, subresource, &attempt, opts)
            .await
    }
}

/// What a write through `status` keeps of the object the client sent, as upstream's status
/// strategies' `PrepareForUpdate` (`newObj.Spec = oldObj.Spec`): its metadata and status,
/// with everything else stored; `Strategy::prepare_for_status_update` resets more.
fn status_update(sent: &Value, current: &Value) -> Value {
    let mut merged = current.clone();
    if let Some(map) = merged.as_object_mut() {
        for key in ["metadata", "status"] {
            match sent.get(key) {
                Some(value) => map.insert(key.into(), value.clone()),
                None if key == "status" => map.remove(key),
                None => None,
            };
        }
    }
    merged
}
