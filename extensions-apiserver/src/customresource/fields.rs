//! The shape field managers and server-side apply compare a custom resource along, built
//! from its version's structural schema as upstream builds structured-merge-diff's type
//! (`managedfields.NewTypeConverter` over the CRD's OpenAPI): properties are struct
//! fields, `additionalProperties` a map, `x-kubernetes-list-type` and
//! `x-kubernetes-list-map-keys` the list's kind, `x-kubernetes-map-type: atomic` an atomic
//! struct; integers, booleans, strings and int-or-strings are scalars.
//!
//! A node that keeps unknown fields (`x-kubernetes-preserve-unknown-fields`) takes any
//! other key as a `Deduced` value (structured-merge-diff's deduced element type: objects
//! tracked key by key, lists and scalars whole), beside its declared properties. An
//! embedded resource or a node without a type is one opaque value (`Json`), owned whole
//! by its writer where upstream would track its fields one by one. Every field is a
//! pointer with `omitempty`, so nothing is added and nothing but `null` is dropped: a
//! custom resource keeps what it was sent.
//!
//! Messages are leaked like the descriptors (see `customresource`), once per CRD change.

use kas_apimachinery::schema::{Field, Kind, ListType, Message};
use serde_json::Value;

use super::intern;

/// Upstream's `ToRESTFriendlyName` of `<group>/<version>/<kind>`: the group's domain
/// reversed (`com.example.v1.Widget`), the definition name OpenAPI gives the kind.
pub fn definition_name(group: &str, version: &str, kind: &str) -> String {
    let reversed: Vec<&str> = group.split('.').rev().collect();
    format!("{}.{version}.{kind}", reversed.join("."))
}

/// The list kind's message: type meta, list metadata and the items.
pub fn list_message(
    (kind, list_kind, plural): (&str, &str, &str),
    group: &str,
    version: &str,
    item: &'static Message,
) -> &'static Message {
    let items = Field {
        description: intern(&format!(
            "List of {plural}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md"
        )),
        ..Field::new("items", 2, Kind::Array(leak_kind(Kind::Message(item))))
    };
    let fields = vec![
        field("kind", Kind::String, ""),
        field("apiVersion", Kind::String, ""),
        field("metadata", Kind::Message(&kas_api::meta::v1::LIST_META), ""),
        items,
    ];
    Box::leak(Box::new(Message {
        name: intern(&definition_name(group, version, list_kind)),
        description: intern(&format!("{list_kind} is a list of {kind}")),
        fields: Box::leak(fields.into_boxed_slice()),
        required: &["items"],
        atomic: false,
    }))
}

/// The message of a custom resource whose version has `schema` (its `openAPIV3Schema`).
pub fn message(kind: &str, group: &str, version: &str, schema: &Value) -> &'static Message {
    let name = intern(&definition_name(group, version, kind));
    let mut fields = vec![
        field("kind", Kind::String, ""),
        field("apiVersion", Kind::String, ""),
        field(
            "metadata",
            Kind::Message(&kas_api::meta::v1::OBJECT_META),
            "",
        ),
    ];
    let props = schema.get("properties").and_then(Value::as_object);
    for (key, child) in props.into_iter().flatten() {
        if matches!(key.as_str(), "kind" | "apiVersion" | "metadata") {
            continue;
        }
        fields.push(child_field(key, child, name));
    }
    keep_unknown(schema, &mut fields);
    leak_message(name, schema, fields)
}

/// A node with `x-kubernetes-preserve-unknown-fields` takes any other key, deduced.
fn keep_unknown(schema: &Value, fields: &mut Vec<Field>) {
    if schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
        fields.push(field(
            kas_apimachinery::schema::OTHER_FIELDS,
            Kind::Deduced,
            "",
        ));
    }
}

fn field(name: &str, kind: Kind, description: &str) -> Field {
    Field {
        description: intern(description),
        ..Field::new(intern(name), 0, kind).pointer()
    }
}

fn child_field(key: &str, schema: &Value, parent: &str) -> Field {
    let mut f = field(
        key,
        kind_of(schema, &format!("{parent}.{key}")),
        schema
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or(""),
    );
    f.list_type = list_type(schema);
    f
}

fn list_type(schema: &Value) -> Option<ListType> {
    match schema
        .get("x-kubernetes-list-type")
        .and_then(Value::as_str)?
    {
        "set" => Some(ListType::Set),
        "map" => Some(ListType::Map(super::interned_list(
            schema.get("x-kubernetes-list-map-keys"),
        ))),
        _ => Some(ListType::Atomic),
    }
}

fn leak_kind(kind: Kind) -> &'static Kind {
    Box::leak(Box::new(kind))
}

fn kind_of(schema: &Value, name: &str) -> Kind {
    let flag = |k: &str| schema.get(k).and_then(Value::as_bool) == Some(true);
    if flag("x-kubernetes-int-or-string") {
        return Kind::IntOrString;
    }
    if flag("x-kubernetes-embedded-resource") {
        return Kind::Json;
    }
    let typed_object = schema.get("type").and_then(Value::as_str) == Some("object");
    if flag("x-kubernetes-preserve-unknown-fields") {
        let Some(props) = schema.get("properties").and_then(Value::as_object) else {
            return Kind::Deduced;
        };
        if !typed_object {
            return Kind::Deduced;
        }
        let name = intern(name);
        let mut fields: Vec<Field> = props
            .iter()
            .map(|(key, child)| child_field(key, child, name))
            .collect();
        keep_unknown(schema, &mut fields);
        return Kind::Message(leak_message(name, schema, fields));
    }
    match schema.get("type").and_then(Value::as_str).unwrap_or("") {
        "string" => Kind::String,
        "integer" => Kind::Int64,
        "boolean" => Kind::Bool,
        "number" => Kind::Float64,
        "array" => {
            let items = schema.get("items").unwrap_or(&Value::Null);
            Kind::Array(leak_kind(kind_of(items, &format!("{name}[]"))))
        }
        "object" => {
            let props = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            match (props, additional) {
                (None, Some(values)) => {
                    Kind::Map(leak_kind(kind_of(values, &format!("{name}{{}}"))))
                }
                (Some(props), _) => {
                    let name = intern(name);
                    let fields = props
                        .iter()
                        .map(|(key, child)| child_field(key, child, name))
                        .collect();
                    Kind::Message(leak_message(name, schema, fields))
                }
                (None, None) => Kind::Json,
            }
        }
        _ => Kind::Json,
    }
}

fn leak_message(name: &'static str, schema: &Value, fields: Vec<Field>) -> &'static Message {
    Box::leak(Box::new(Message {
        name,
        description: intern(
            schema
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or(""),
        ),
        fields: Box::leak(fields.into_boxed_slice()),
        required: super::interned_list(schema.get("required")),
        atomic: schema.get("x-kubernetes-map-type").and_then(Value::as_str) == Some("atomic"),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn builds_fields_lists_and_maps() {
        let schema = json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "replicas": {"type": "integer"},
                "ports": {"type": "array", "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "size": {"type": "number"}}}}});
        let m = message("Widget", "example.com", "v1", &schema);
        assert!(m.field("metadata").is_some());
        let Kind::Message(spec) = m.field("spec").unwrap().kind else {
            panic!("spec is a message")
        };
        assert!(matches!(spec.field("replicas").unwrap().kind, Kind::Int64));
        assert_eq!(
            spec.field("ports").unwrap().list_type,
            Some(ListType::Map(&["name"]))
        );
        assert!(matches!(
            spec.field("labels").unwrap().kind,
            Kind::Map(Kind::String)
        ));
        assert!(matches!(spec.field("free").unwrap().kind, Kind::Deduced));
        assert!(matches!(spec.field("size").unwrap().kind, Kind::Float64));
    }

    /// structured-merge-diff's deduced element type: an object that keeps unknown fields
    /// tracks them key by key beside its declared ones.
    #[test]
    fn unknown_fields_are_deduced() {
        let schema = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true,
            "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                "properties": {"size": {"type": "integer"}}}}});
        let m = message("Widget", "example.com", "v1", &schema);
        assert!(matches!(m.field("status").unwrap().kind, Kind::Deduced));
        let Kind::Message(spec) = m.field("spec").unwrap().kind else {
            panic!("spec is a message")
        };
        assert!(matches!(spec.field("size").unwrap().kind, Kind::Int64));
        assert!(matches!(spec.field("other").unwrap().kind, Kind::Deduced));
        let old = json!({"spec": {"size": 1}});
        let new = json!({"spec": {"size": 1, "free": {"a": 1, "b": [1]}}});
        let cmp = kas_apimachinery::managed_fields::compare(&old, &new, m);
        assert_eq!(
            cmp.added.to_json(),
            json!({"f:spec": {"f:free": {".": {}, "f:a": {}, "f:b": {}}}})
        );
    }
}
