//! The store's field manager: each write's `metadata.managedFields`, kept as upstream's
//! field manager keeps them for the Update operation (see
//! `kas_apimachinery::managed_fields`), and dropped from a write too large for etcd.

use kas_apimachinery::managed_fields as mf;
use kas_apimachinery::schema::{Kind, Message};
use kas_storage::{ObjectRef, UpdateFn};
use serde_json::Value;

use super::{Store, go_encoded};
use crate::ResourceDescriptor;
use crate::rest::options::WriteOptions;
use crate::strategy::Conversion;

impl Store {
    /// [`Store::guaranteed_update`] for an update or a patch that is no apply: as
    /// upstream's handlers (`isTooLargeError`), a new state too large for etcd is written
    /// once more without its `managedFields`, which can be as large as the object.
    pub(super) async fn guaranteed_update_or_smaller(
        &self,
        key: &str,
        ignore_not_found: bool,
        try_update: &UpdateFn<'_>,
    ) -> kas_storage::Result<ObjectRef> {
        match self
            .guaranteed_update(key, ignore_not_found, try_update)
            .await
        {
            Err(kas_storage::Error::RequestTooLarge { .. }) => {
                let smaller = |current: Option<&Value>| {
                    let new = try_update(current)?;
                    Ok(new.map(without_managed_fields))
                };
                self.guaranteed_update(key, ignore_not_found, &smaller)
                    .await
            }
            written => written,
        }
    }

    /// Records the write in `metadata.managedFields`. `new` and `live` are stored forms;
    /// each entry is compared in its own version: the request's, the stored one, or one
    /// of the strategy's `other_versions`. A create compares with the empty object. The
    /// entries the client sent are the base, unless it sent none or writes a subresource;
    /// then the live object's are. An update whose base is empty records nothing
    /// (upstream's `skipNonAppliedManager`: an object nobody manages stays unmanaged until
    /// an apply), and `[]` or `[{}]` (upstream's `isResetManagedFields`) empties them so.
    pub(super) fn track_managed_fields(
        &self,
        new: &mut Value,
        live: Option<&Value>,
        subresource: &str,
        opts: &WriteOptions,
    ) {
        if self.fields_schema().is_none() {
            return;
        }
        let served_version = self.descriptor.api_version();
        let managed_of =
            |v: Option<&Value>| mf::decode(v.and_then(|v| v.pointer("/metadata/managedFields")));
        let sent = managed_of(Some(new)).filter(|e| !e.is_empty() && subresource.is_empty());
        let reset = subresource.is_empty() && mf::is_reset(new.pointer("/metadata/managedFields"));
        let entries = sent.or_else(|| managed_of(live)).unwrap_or_default();
        if reset || (live.is_some() && entries.is_empty()) {
            crate::meta::metadata_mut(new).remove("managedFields");
            return;
        }
        let compare_in = |api_version: &str| -> Option<mf::Comparison> {
            let (schema, convert) = self.version_schema(api_version)?;
            let old = match live {
                Some(live) => managed_form(live, schema, convert),
                None => kas_apimachinery::schema::zero_value(&Kind::Message(schema)),
            };
            Some(mf::compare(
                &old,
                &managed_form(new, schema, convert),
                schema,
            ))
        };
        let manager = if opts.manager.is_empty() {
            mf::manager(None, None)
        } else {
            opts.manager.clone()
        };
        let op = mf::Operation {
            manager: &manager,
            api_version: &served_version,
            subresource,
            time: crate::meta::rfc3339(std::time::SystemTime::now()),
            ignored: mf::field_paths(self.strategy.reset_fields(subresource)),
        };
        let is_op = |e: &mf::Entry| {
            (
                e.manager.as_str(),
                e.operation.as_str(),
                e.subresource.as_str(),
            ) == (manager.as_str(), mf::UPDATE, subresource)
                && e.api_version == served_version
        };
        let scale_time = entries
            .iter()
            .find(|e| is_op(e))
            .and_then(|e| e.time.clone());
        let mut entries = mf::update(entries, &compare_in, &op);
        if subresource == "scale" {
            // Upstream's `ScaleHandler.ToParent` gives the scale writer's entry the time
            // the parent had for it: none for a new one.
            if let Some(e) = entries.iter_mut().find(|e| is_op(e)) {
                e.time = scale_time;
            }
        }
        let meta = crate::meta::metadata_mut(new);
        if entries.is_empty() {
            meta.remove("managedFields");
        } else {
            meta.insert("managedFields".into(), mf::encode(&entries));
        }
    }
}

impl Store {
    /// The shape of the served version that field managers compare along: the kind's Go
    /// type, else the strategy's (a custom resource's structural schema).
    pub fn fields_schema(&self) -> Option<&'static Message> {
        self.descriptor
            .schema
            .or_else(|| self.strategy.fields_schema())
    }

    /// The descriptor the OpenAPI documents describe: the kind's, with the strategy's
    /// shapes for a resource without a Go type.
    pub fn openapi_descriptor(&self) -> ResourceDescriptor {
        let d = self.descriptor;
        ResourceDescriptor {
            schema: self.fields_schema(),
            list_schema: d.list_schema.or_else(|| self.strategy.fields_list_schema()),
            ..d.clone()
        }
    }

    /// The schema of `api_version` (served, stored, or one of the strategy's
    /// `other_versions`) and the conversion from the stored form into it.
    pub(super) fn version_schema(
        &self,
        api_version: &str,
    ) -> Option<(&'static Message, Option<&dyn Conversion>)> {
        if api_version == self.descriptor.api_version() {
            Some((self.fields_schema()?, self.strategy.conversion()))
        } else if api_version == self.descriptor.storage_api_version() {
            Some((self.strategy.conversion()?.stored_schema()?, None))
        } else {
            let (_, conversion, schema) = self
                .strategy
                .other_versions()
                .iter()
                .find(|(v, _, _)| *v == api_version)?;
            Some((*schema, Some(*conversion)))
        }
    }
}

/// A stored object in a version's form as Go writes it, without its managed fields: what
/// field managers compare.
pub(super) fn managed_form(
    stored: &Value,
    schema: &'static Message,
    convert: Option<&dyn Conversion>,
) -> Value {
    let v = match convert {
        Some(c) => c.to_served(stored.clone()),
        None => stored.clone(),
    };
    go_encoded(without_managed_fields(v), Some(schema))
}

/// `obj` without `metadata.managedFields`.
pub(super) fn without_managed_fields(mut obj: Value) -> Value {
    if let Some(Value::Object(meta)) = obj.get_mut("metadata") {
        meta.remove("managedFields");
    }
    obj
}
