//! Server-side apply on the store: upstream's patch handler with its apply patcher. The
//! configuration is merged into the live object by the field manager (see
//! `kas_apimachinery::managed_fields::apply`), defaulted, and then written as any update
//! is; a missing object is created from the configuration alone.

use kas_apimachinery::Status;
use kas_apimachinery::managed_fields as mf;
use kas_apimachinery::schema::Kind;
use kas_storage::GetOptions;
use serde_json::Value;

use super::field_manager::managed_form;
use super::validated::Shrink;
use super::{Store, Written};
use crate::admission::{Attributes, Operation};
use crate::error::Result;
use crate::rest::object_meta;
use crate::rest::options::WriteOptions;

impl Store {
    /// PATCH with `application/apply-patch+yaml`: the new state, and whether it was
    /// created.
    pub async fn apply(
        &self,
        namespace: &str,
        name: &str,
        config: Value,
        opts: &WriteOptions,
    ) -> Result<(Written, bool)> {
        let attempt = |current: Option<&Value>| -> Result<Option<Value>> {
            let new = self.applied(namespace, name, current, &config, opts, "")?;
            let client_rv = crate::meta::str_field(&new, "resourceVersion").to_owned();
            self.prepare_update(new, current, &client_rv, opts)
        };
        // A create's validation needs no read ahead: the loop below stops at a missing
        // object and `apply_validated` creates it.
        if opts.dry_run
            || self
                .admission
                .validates(self.descriptor, namespace, "", Operation::Update)
        {
            return self
                .apply_validated(namespace, name, &config, &attempt, opts)
                .await;
        }
        // A missing object is created as `apply_validated` creates it (admitted, mutated
        // and validated as a create, all asynchronous); the loop stops there. An update,
        // the common case, reads nothing more.
        let try_update = |current: Option<&Value>| -> kas_storage::Result<Option<Value>> {
            if current.is_none() {
                return Err(kas_storage::Error::Callback(Box::new(NeedsCreateAdmission)));
            }
            attempt(current).map_err(|e| kas_storage::Error::Callback(Box::new(e)))
        };
        let key = self.key(namespace, name);
        match self.guaranteed_update(&key, true, &try_update).await {
            Err(kas_storage::Error::Callback(e)) if e.is::<NeedsCreateAdmission>() => {
                self.apply_validated(namespace, name, &config, &attempt, opts)
                    .await
            }
            Err(e) => Err(self.storage_error(e, name)),
            Ok(result) => Ok((Written::Stored(self.served(result)?), false)),
        }
    }

    /// An apply computed outside the compare-and-swap loop, for a dry run or for
    /// validating admission: an existing object is rewritten as any validated update; a
    /// missing one is admitted, validated and created (again as an update when another
    /// writer created it first).
    async fn apply_validated(
        &self,
        namespace: &str,
        name: &str,
        config: &Value,
        attempt: &(dyn Fn(Option<&Value>) -> Result<Option<Value>> + Send + Sync),
        opts: &WriteOptions,
    ) -> Result<(Written, bool)> {
        let key = self.key(namespace, name);
        let get = GetOptions {
            resource_version: None,
            ignore_not_found: true,
        };
        loop {
            let stored = self
                .storage
                .get(&key, &get)
                .await
                .map_err(|e| self.storage_error(e, name))?;
            if stored.is_some() {
                let update = |current: &Value| attempt(Some(current));
                let written = self
                    .rewrite_validated(namespace, name, "", &update, opts, Shrink::No)
                    .await;
                match written {
                    Err(e) if e.to_status().code == 404 && !opts.dry_run => continue,
                    other => return Ok((other?, false)),
                }
            }
            self.admit_create(namespace, name, config).await?;
            // Upstream's create: field managers, then mutating admission, then the
            // strategy's rules and validation.
            let mut applied = self.applied(namespace, name, None, config, opts, "")?;
            self.admission
                .mutate_create(self.descriptor, namespace, &mut applied, opts)
                .await?;
            let client_rv = crate::meta::str_field(&applied, "resourceVersion").to_owned();
            let new = self
                .prepare_update(applied, None, &client_rv, opts)?
                .unwrap_or_default();
            self.validate_admission(Operation::Create, namespace, "", &new, None, opts)
                .await?;
            if opts.dry_run {
                return Ok((Written::DryRun(self.served_value(new)), true));
            }
            let ttl = self.strategy.ttl_seconds();
            match self.storage.create(&key, new, ttl).await {
                Ok(created) => return Ok((Written::Stored(self.served(created)?), true)),
                Err(kas_storage::Error::KeyExists { .. }) => continue,
                Err(e) => return Err(self.storage_error(e, name)),
            }
        }
    }

    async fn admit_create(&self, namespace: &str, name: &str, config: &Value) -> Result<()> {
        self.admission
            .admit(&Attributes::new(
                Operation::Create,
                self.descriptor,
                namespace,
                name,
                Some(config),
            ))
            .await
    }

    /// An apply to the `status` subresource: the configuration is applied to the whole
    /// object, with the subresource's reset fields and under its own entry
    /// (`subresource: status`); the result's `.status` is written.
    pub async fn apply_subresource(
        &self,
        namespace: &str,
        name: &str,
        subresource: &str,
        config: Value,
        opts: &WriteOptions,
    ) -> Result<Written> {
        let sent = |current: &Value| -> Result<Value> {
            self.applied(namespace, name, Some(current), &config, opts, subresource)
        };
        self.write_subresource(namespace, name, subresource, &sent, opts)
            .await
    }

    /// The configuration applied to the stored object (or to the empty one), with its
    /// managed fields, defaulted, in the stored form.
    fn applied(
        &self,
        namespace: &str,
        name: &str,
        current: Option<&Value>,
        config: &Value,
        opts: &WriteOptions,
        subresource: &str,
    ) -> Result<Value> {
        let served = self.descriptor.api_version();
        let Some((schema, convert)) = self.version_schema(&served) else {
            return Err(Status::unsupported_media_type(&[
                "application/json-patch+json",
                "application/merge-patch+json",
            ])
            .into());
        };
        let mut live = match current {
            Some(c) => managed_form(c, schema, convert),
            None => kas_apimachinery::schema::zero_value(&Kind::Message(schema)),
        };
        if let Some(map) = live.as_object_mut() {
            map.insert(
                "kind".into(),
                Value::String(self.descriptor.kind.to_owned()),
            );
            map.insert("apiVersion".into(), Value::String(served.clone()));
        }
        let entries = current
            .and_then(|c| mf::decode(c.pointer("/metadata/managedFields")))
            .unwrap_or_default();
        let compare_in = |version: &str, candidate: &Value| -> Option<mf::Comparison> {
            let (other, convert) = self.version_schema(version)?;
            let old = match current {
                Some(c) => managed_form(c, other, convert),
                None => kas_apimachinery::schema::zero_value(&Kind::Message(other)),
            };
            let new = managed_form(&self.to_stored(candidate.clone()), other, convert);
            Some(mf::compare(&old, &new, other))
        };
        let op = mf::Operation {
            manager: &opts.manager,
            api_version: &served,
            subresource,
            time: crate::meta::rfc3339(std::time::SystemTime::now()),
            ignored: mf::field_paths(self.strategy.reset_fields(subresource)),
        };
        let force = opts.force.unwrap_or(false);
        let applied = mf::apply(entries, &live, config, schema, &compare_in, &op, force)
            .map_err(|conflicts| mf::conflict_status(&conflicts))?;
        let mut new = applied.object;
        check_name(&new, name, namespace)?;
        object_meta::check_type(&mut new, self.descriptor)?;
        object_meta::ensure_namespace(&mut new, self.descriptor, namespace)?;
        self.strategy.default(&mut new);
        let meta = crate::meta::metadata_mut(&mut new);
        if applied.entries.is_empty() {
            meta.remove("managedFields");
        } else {
            meta.insert("managedFields".into(), mf::encode(&applied.entries));
        }
        Ok(self.to_stored(new))
    }
}

/// Upstream's `checkName` on the patched object.
fn check_name(obj: &Value, name: &str, namespace: &str) -> Result<()> {
    let obj_name = crate::meta::name(obj);
    if obj_name != name {
        return Err(Status::bad_request(&format!(
            "the name of the object ({obj_name}) does not match the name on the URL ({name})"
        ))
        .into());
    }
    let obj_namespace = crate::meta::str_field(obj, "namespace");
    if !namespace.is_empty() && !obj_namespace.is_empty() && obj_namespace != namespace {
        return Err(Status::bad_request(&format!(
            "the namespace of the object ({obj_namespace}) does not match the namespace on the request ({namespace})"
        ))
        .into());
    }
    Ok(())
}

/// The update loop met a missing object before its create was admitted.
#[derive(Debug)]
struct NeedsCreateAdmission;

impl std::fmt::Display for NeedsCreateAdmission {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the create is not admitted yet")
    }
}

impl std::error::Error for NeedsCreateAdmission {}
