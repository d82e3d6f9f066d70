//! Definitions: the schema object of each API type, read from its description as data
//! (kas-apimachinery's `Message`). One walk serves both documents; they differ only in
//! where references point, in how a reference with siblings is written (Swagger 2.0 allows
//! siblings of `$ref`, OpenAPI 3.0 does not, so upstream wraps it in `allOf`) and in the
//! shape of two well-known types.
//!
//! Defaults follow upstream's generator: a non-pointer struct field defaults to `{}`, a
//! non-pointer scalar without `omitempty` to its zero value, and map values and list items
//! as if they were such fields; lists, maps and byte strings get none.

use std::collections::{BTreeMap, BTreeSet};

use kas_apimachinery::patch::{PatchMeta, PatchStrategy};
use kas_apimachinery::schema::{Field, Kind, ListType, Message};
use serde_json::{Map, Value, json};

/// Which document a schema is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// Swagger 2.0 (`/openapi/v2`): `#/definitions/...`.
    V2,
    /// OpenAPI 3.0 (`/openapi/v3/...`): `#/components/schemas/...`.
    V3,
}

impl Dialect {
    pub fn reference(self, name: &str) -> String {
        match self {
            Dialect::V2 => format!("#/definitions/{name}"),
            Dialect::V3 => format!("#/components/schemas/{name}"),
        }
    }

    /// A schema that is only a reference to the named definition.
    pub fn ref_schema(self, name: &str) -> Value {
        json!({ "$ref": self.reference(name) })
    }
}

/// A group, version and kind, as `x-kubernetes-group-version-kind` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Gvk {
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
}

impl Gvk {
    pub fn to_json(self) -> Value {
        json!({"group": self.group, "kind": self.kind, "version": self.version})
    }
}

pub const TIME: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Time";
pub const MICRO_TIME: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime";
pub const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";
pub const INT_OR_STRING: &str = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
pub const FIELDS_V1: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1";
pub const RAW_EXTENSION: &str = "io.k8s.apimachinery.pkg.runtime.RawExtension";
/// The body of every PATCH operation; not a Go type with fields, so it has no `Message`.
pub const PATCH: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";

/// The Go types with a hand-written schema upstream (custom JSON marshalling), by name.
fn well_known(name: &str, dialect: Dialect) -> Option<Value> {
    let (description, schema) = match name {
        TIME => (
            "A point in time, written as an RFC 3339 string in UTC with second precision.",
            json!({"type": "string", "format": "date-time"}),
        ),
        MICRO_TIME => (
            "A point in time, written as an RFC 3339 string with microsecond precision.",
            json!({"type": "string", "format": "date-time"}),
        ),
        QUANTITY => (
            "A fixed-point number with an optional unit suffix (such as 100m, 1.5Gi or 2e3), \
             written as a string.",
            match dialect {
                Dialect::V2 => json!({"type": "string"}),
                Dialect::V3 => json!({"oneOf": [{"type": "string"}, {"type": "number"}]}),
            },
        ),
        INT_OR_STRING => (
            "A value that is either an integer or a string; the JSON type tells which.",
            match dialect {
                Dialect::V2 => json!({"type": "string", "format": "int-or-string"}),
                Dialect::V3 => json!({
                    "format": "int-or-string",
                    "oneOf": [{"type": "integer"}, {"type": "string"}],
                }),
            },
        ),
        FIELDS_V1 => (
            "A set of field paths written as a trie of JSON keys, as managedFields records them.",
            json!({"type": "object"}),
        ),
        RAW_EXTENSION => (
            "An embedded object of any kind, kept as the JSON it was written in.",
            json!({"type": "object"}),
        ),
        PATCH => (
            "The body of a PATCH request; its shape depends on the patch type named by the \
             Content-Type header.",
            json!({"type": "object"}),
        ),
        _ => return None,
    };
    let mut schema = schema;
    schema["description"] = json!(description);
    Some(schema)
}

/// The definition a value of this kind refers to, for kinds written as a reference.
fn reference_name(kind: &Kind) -> Option<&'static str> {
    Some(match kind {
        Kind::Message(m) => m.name,
        Kind::Time => TIME,
        Kind::MicroTime => MICRO_TIME,
        Kind::Quantity => QUANTITY,
        Kind::IntOrString => INT_OR_STRING,
        Kind::FieldsV1 => FIELDS_V1,
        Kind::RawExtension => RAW_EXTENSION,
        _ => return None,
    })
}

/// Upstream's enforced default: the zero value of a type that JSON always carries.
fn zero_default(kind: &Kind, omit_empty: bool) -> Option<Value> {
    match kind {
        Kind::Array(_) | Kind::Map(_) | Kind::Bytes => None,
        Kind::String => (!omit_empty).then_some(json!("")),
        Kind::Bool => (!omit_empty).then_some(json!(false)),
        Kind::Int32 | Kind::Int64 | Kind::Float64 => (!omit_empty).then_some(json!(0)),
        // Go structs, including the well-known ones: written even when empty.
        _ => Some(json!({})),
    }
}

/// The schema of a value of `kind`, before description, default and extensions.
fn kind_schema(kind: &Kind, dialect: Dialect) -> Map<String, Value> {
    let value = match kind {
        Kind::String => json!({"type": "string"}),
        Kind::Bool => json!({"type": "boolean"}),
        Kind::Int32 => json!({"type": "integer", "format": "int32"}),
        Kind::Int64 => json!({"type": "integer", "format": "int64"}),
        Kind::Float64 => json!({"type": "number", "format": "double"}),
        Kind::Bytes => json!({"type": "string", "format": "byte"}),
        Kind::Array(item) => json!({"type": "array", "items": element(item, dialect)}),
        Kind::Map(value) => {
            json!({"type": "object", "additionalProperties": element(value, dialect)})
        }
        other => match reference_name(other) {
            Some(name) => dialect.ref_schema(name),
            None => json!({}),
        },
    };
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// A list item or map value: defaulted as a field without `omitempty` would be.
fn element(kind: &Kind, dialect: Dialect) -> Value {
    let mut schema = kind_schema(kind, dialect);
    if let Some(default) = zero_default(kind, false) {
        schema.insert("default".into(), default);
    }
    finish(schema, dialect)
}

/// OpenAPI 3.0 ignores the siblings of `$ref`; upstream moves the reference into `allOf`
/// whenever a description, default or extension sits beside it.
fn finish(mut schema: Map<String, Value>, dialect: Dialect) -> Value {
    if dialect == Dialect::V3
        && schema.len() > 1
        && let Some(reference) = schema.remove("$ref")
    {
        schema.insert("allOf".into(), json!([{ "$ref": reference }]));
    }
    Value::Object(schema)
}

fn patch_strategy(patch: PatchMeta) -> Option<&'static str> {
    match (patch.strategy, patch.retain_keys) {
        (PatchStrategy::Merge, true) => Some("merge,retainKeys"),
        (PatchStrategy::Merge, false) => Some("merge"),
        (PatchStrategy::Replace, _) => Some("replace"),
        (PatchStrategy::Default, true) => Some("retainKeys"),
        (PatchStrategy::Default, false) => None,
    }
}

fn field_schema(field: &Field, dialect: Dialect) -> Value {
    let mut schema = kind_schema(&field.kind, dialect);
    if !field.description.is_empty() {
        schema.insert("description".into(), json!(field.description));
    }
    if !field.pointer
        && let Some(default) = zero_default(&field.kind, field.omit_empty)
    {
        schema.insert("default".into(), default);
    }
    if let Some(patch) = field.patch {
        if let Some(strategy) = patch_strategy(patch) {
            schema.insert("x-kubernetes-patch-strategy".into(), json!(strategy));
        }
        if let Some(key) = patch.merge_key {
            schema.insert("x-kubernetes-patch-merge-key".into(), json!(key));
        }
    }
    match field.list_type {
        Some(ListType::Atomic) => {
            schema.insert("x-kubernetes-list-type".into(), json!("atomic"));
        }
        Some(ListType::Set) => {
            schema.insert("x-kubernetes-list-type".into(), json!("set"));
        }
        Some(ListType::Map(keys)) => {
            schema.insert("x-kubernetes-list-type".into(), json!("map"));
            schema.insert("x-kubernetes-list-map-keys".into(), json!(keys));
        }
        None => {}
    }
    finish(schema, dialect)
}

/// The definition of a message; `gvks` are the kinds it is registered as (empty for
/// nested types).
pub fn message_schema(message: &Message, dialect: Dialect, gvks: &[Gvk]) -> Value {
    let mut schema = Map::new();
    if !message.description.is_empty() {
        schema.insert("description".into(), json!(message.description));
    }
    schema.insert("type".into(), json!("object"));
    let fields = message.json_fields();
    if !fields.is_empty() {
        let properties: Map<String, Value> = fields
            .iter()
            .map(|f| (f.name.to_owned(), field_schema(f, dialect)))
            .collect();
        schema.insert("properties".into(), Value::Object(properties));
    }
    if !message.required.is_empty() {
        schema.insert("required".into(), json!(message.required));
    }
    if !gvks.is_empty() {
        let list: Vec<Value> = gvks.iter().map(|g| g.to_json()).collect();
        schema.insert("x-kubernetes-group-version-kind".into(), Value::Array(list));
    }
    if message.atomic {
        schema.insert("x-kubernetes-map-type".into(), json!("atomic"));
    }
    Value::Object(schema)
}

/// The messages a document can name, by definition name, and the kinds each is
/// registered as.
#[derive(Default)]
pub struct Catalog {
    messages: BTreeMap<&'static str, &'static Message>,
    kinds: BTreeMap<&'static str, Vec<Gvk>>,
    /// Definitions written by their resource, in place of their message's.
    published: BTreeMap<&'static str, Value>,
}

impl Catalog {
    /// Adds a message and every message it nests.
    pub fn add(&mut self, message: &'static Message) {
        if self.messages.insert(message.name, message).is_some() {
            return;
        }
        for field in message.json_fields() {
            if let Some(nested) = field.kind.element_message() {
                self.add(nested);
            }
        }
    }

    /// Records that `message` is registered as `gvk` (a top-level kind or list).
    pub fn register(&mut self, message: &'static Message, gvk: Gvk) {
        self.add(message);
        let kinds = self.kinds.entry(message.name).or_default();
        if !kinds.contains(&gvk) {
            kinds.push(gvk);
            kinds.sort();
        }
    }

    /// Publishes `schema` as the definition `name`, whatever message has that name.
    pub fn publish(&mut self, name: &'static str, schema: Value) {
        self.published.insert(name, schema);
    }

    fn schema(&self, name: &str, dialect: Dialect) -> Option<Value> {
        if let Some(schema) = self.published.get(name) {
            return Some(schema.clone());
        }
        if let Some(message) = self.messages.get(name) {
            let gvks = self.kinds.get(name).map(Vec::as_slice).unwrap_or(&[]);
            return Some(message_schema(message, dialect, gvks));
        }
        well_known(name, dialect)
    }

    /// The definitions `roots` need: themselves and everything they refer to, by name.
    pub fn definitions(
        &self,
        roots: impl IntoIterator<Item = String>,
        dialect: Dialect,
    ) -> Map<String, Value> {
        let mut pending: Vec<String> = roots.into_iter().collect();
        let mut seen = BTreeSet::new();
        let mut out = Map::new();
        while let Some(name) = pending.pop() {
            if !seen.insert(name.clone()) {
                continue;
            }
            let Some(schema) = self.schema(&name, dialect) else {
                // Every name comes from a descriptor or a field kind; a miss would be a
                // dangling reference, which clients report but survive.
                tracing::warn!(definition = %name, "OpenAPI definition without a schema");
                continue;
            };
            collect_references(&schema, dialect, &mut pending);
            out.insert(name, schema);
        }
        out
    }
}

/// The definition names `value` refers to, anywhere inside it.
pub fn collect_references(value: &Value, dialect: Dialect, out: &mut Vec<String>) {
    let prefix = dialect.reference("");
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                match (key.as_str(), v) {
                    ("$ref", Value::String(r)) => {
                        if let Some(name) = r.strip_prefix(&prefix) {
                            out.push(name.to_owned());
                        }
                    }
                    _ => collect_references(v, dialect, out),
                }
            }
        }
        Value::Array(items) => items
            .iter()
            .for_each(|v| collect_references(v, dialect, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config_map() -> &'static Message {
        &kas_api::core::v1::CONFIG_MAP
    }

    #[test]
    fn config_map_definition() {
        let gvk = Gvk {
            group: "",
            version: "v1",
            kind: "ConfigMap",
        };
        let v3 = message_schema(config_map(), Dialect::V3, &[gvk]);
        assert_eq!(v3["type"], "object");
        assert_eq!(
            v3["x-kubernetes-group-version-kind"],
            json!([{"group": "", "kind": "ConfigMap", "version": "v1"}])
        );
        let props = &v3["properties"];
        assert_eq!(props["kind"]["type"], "string");
        assert!(
            props["kind"].get("default").is_none(),
            "omitempty: no default"
        );
        assert_eq!(props["immutable"]["type"], "boolean");
        assert_eq!(
            props["data"]["additionalProperties"],
            json!({"type": "string", "default": ""})
        );
        assert_eq!(
            props["binaryData"]["additionalProperties"],
            json!({"type": "string", "format": "byte"})
        );
        let metadata = &props["metadata"];
        assert_eq!(
            metadata["allOf"],
            json!([{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}])
        );
        assert_eq!(metadata["default"], json!({}));
        assert!(metadata.get("$ref").is_none());

        let v2 = message_schema(config_map(), Dialect::V2, &[gvk]);
        let metadata = &v2["properties"]["metadata"];
        assert_eq!(
            metadata["$ref"],
            "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
        );
        assert!(metadata.get("allOf").is_none());
    }

    #[test]
    fn object_meta_carries_patch_and_list_markers() {
        let meta = message_schema(&kas_api::meta::v1::OBJECT_META, Dialect::V3, &[]);
        let props = &meta["properties"];
        let owners = &props["ownerReferences"];
        assert_eq!(owners["x-kubernetes-patch-strategy"], "merge");
        assert_eq!(owners["x-kubernetes-patch-merge-key"], "uid");
        assert_eq!(owners["x-kubernetes-list-type"], "map");
        assert_eq!(owners["x-kubernetes-list-map-keys"], json!(["uid"]));
        assert_eq!(owners["items"]["default"], json!({}));
        assert_eq!(props["finalizers"]["x-kubernetes-list-type"], "set");
        assert_eq!(props["creationTimestamp"]["default"], json!({}));
        // A pointer has no default, but its description still needs the allOf wrapper.
        let deletion = &props["deletionTimestamp"];
        assert!(deletion.get("default").is_none());
        assert_eq!(
            deletion["allOf"][0]["$ref"],
            "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Time"
        );
        assert_eq!(props["generation"]["format"], "int64");
        assert!(meta.get("x-kubernetes-group-version-kind").is_none());
    }

    #[test]
    fn required_scalars_default_to_zero() {
        let owner = message_schema(&kas_api::meta::v1::OWNER_REFERENCE, Dialect::V2, &[]);
        assert_eq!(
            owner["required"],
            json!(["apiVersion", "kind", "name", "uid"])
        );
        assert_eq!(owner["properties"]["uid"]["default"], "");
        assert!(owner["properties"]["controller"].get("default").is_none());
        assert_eq!(owner["x-kubernetes-map-type"], "atomic");
        let meta = message_schema(&kas_api::meta::v1::OBJECT_META, Dialect::V2, &[]);
        assert!(meta.get("x-kubernetes-map-type").is_none());
    }

    #[test]
    fn definitions_follow_references() {
        let mut catalog = Catalog::default();
        catalog.add(config_map());
        let defs = catalog.definitions(["io.k8s.api.core.v1.ConfigMap".to_owned()], Dialect::V2);
        for name in [
            "io.k8s.api.core.v1.ConfigMap",
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
            "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference",
            "io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry",
            TIME,
            FIELDS_V1,
        ] {
            assert!(defs.contains_key(name), "missing {name}");
        }
        assert_eq!(defs[TIME]["format"], "date-time");
        assert!(!defs.contains_key(QUANTITY));
        let v3 = catalog.definitions([QUANTITY.to_owned()], Dialect::V3);
        assert_eq!(v3[QUANTITY]["oneOf"][1]["type"], "number");
    }
}
