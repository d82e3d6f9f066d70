//! The store's field manager: each write's `metadata.managedFields`, kept as upstream's
//! field manager keeps them for the Update operation (see
//! `kas_apimachinery::managed_fields`).

use kas_apimachinery::managed_fields as mf;
use kas_apimachinery::schema::{Kind, Message};
use serde_json::Value;

use super::{Store, go_encoded};
use crate::rest::options::WriteOptions;
use crate::strategy::Conversion;

impl Store {
    /// Records the write in `metadata.managedFields`. `new` and `live` are stored forms;
    /// each entry is compared in its own version: the request's, the stored one, or one
    /// of the strategy's `other_versions`. A create compares with the empty object. The entries the client sent are the base, unless it sent none or
    /// writes a subresource; then the live object's are.
    pub(super) fn track_managed_fields(
        &self,
        new: &mut Value,
        live: Option<&Value>,
        subresource: &str,
        opts: &WriteOptions,
    ) {
        let Some(served_schema) = self.descriptor.schema else {
            return;
        };
        let served_version = self.descriptor.api_version();
        let stored_version = self.descriptor.storage_api_version();
        let managed_of =
            |v: Option<&Value>| mf::decode(v.and_then(|v| v.pointer("/metadata/managedFields")));
        let sent = managed_of(Some(new)).filter(|e| !e.is_empty() && subresource.is_empty());
        let entries = sent.or_else(|| managed_of(live)).unwrap_or_default();
        let compare_in = |api_version: &str| -> Option<mf::Comparison> {
            let (schema, convert): (&'static Message, Option<&dyn Conversion>) =
                if api_version == served_version {
                    (served_schema, self.strategy.conversion())
                } else if api_version == stored_version {
                    (self.strategy.conversion()?.stored_schema()?, None)
                } else {
                    let (_, conversion, schema) = self
                        .strategy
                        .other_versions()
                        .iter()
                        .find(|(v, _, _)| *v == api_version)?;
                    (*schema, Some(*conversion))
                };
            // The object in this version as Go writes it, without its managed fields.
            let form = |v: &Value| {
                let mut v = match convert {
                    Some(c) => c.to_served(v.clone()),
                    None => v.clone(),
                };
                if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
                    meta.remove("managedFields");
                }
                go_encoded(v, Some(schema))
            };
            let old = match live {
                Some(live) => form(live),
                None => kas_apimachinery::schema::zero_value(&Kind::Message(schema)),
            };
            Some(mf::compare(&old, &form(new), schema))
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
            ignored: mf::top_level(self.strategy.reset_fields(subresource)),
        };
        let entries = mf::update(entries, &compare_in, &op);
        let meta = crate::meta::metadata_mut(new);
        if entries.is_empty() {
            meta.remove("managedFields");
        } else {
            meta.insert("managedFields".into(), mf::encode(&entries));
        }
    }
}
