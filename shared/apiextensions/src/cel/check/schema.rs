//! The CEL types of schema values: upstream's `SchemaDeclType`
//! (`k8s.io/apiserver/pkg/cel/common/schemas.go`) with the names `MaybeAssignTypeName`
//! gives object types (the root `selfType<n>`, each object field `<parent>.<field>`,
//! objects under lists and maps `object`).

use std::sync::Arc;
use std::sync::LazyLock;

use serde_json::{Value as Json, json};

use super::super::escaping::unescape;
use super::super::node::Node;
use super::types::{Object, Type};

/// What `WithTypeAndObjectMeta` gives a resource's `metadata`: only these two fields.
static OBJECT_META: LazyLock<Json> = LazyLock::new(|| {
    json!({ "type": "object", "properties": {
        "name": { "type": "string" }, "generateName": { "type": "string" },
    } })
});

/// The name objects get where `MaybeAssignTypeName` does not reach.
const UNNAMED: &str = "object";

/// The type of values under `node`, `None` where upstream gives them none (they are
/// hidden from CEL). `name` names an object type; `resource` is upstream's
/// `isResourceRoot`.
pub(crate) fn decl_type<'a>(
    node: Node<'a>,
    name: Option<&str>,
    resource: bool,
) -> Option<Type<'a>> {
    if node.int_or_string() {
        return Some(Type::Dyn);
    }
    Some(match node.type_() {
        "array" => {
            let items = node.items()?;
            Type::list(decl_type(items, None, items.embedded_resource())?)
        }
        "object" => {
            if let Some(ap) = node.additional_properties() {
                let value = decl_type(ap, None, ap.embedded_resource())?;
                return Some(Type::map(Type::String, value));
            }
            let name = name.map_or_else(|| Arc::from(UNNAMED), Arc::from);
            let resource = resource && !has_type_and_object_meta(node);
            Type::Object(Arc::new(Object {
                name,
                node,
                resource,
            }))
        }
        "string" => match node.format() {
            "byte" => Type::Bytes,
            "duration" => Type::Duration,
            "date" | "date-time" => Type::Timestamp,
            _ => Type::String,
        },
        "boolean" => Type::Bool,
        "number" => Type::Double,
        "integer" => Type::Int,
        _ => return None,
    })
}

/// The type of field `field` (as written in the expression, escaped) of `object`; `None`
/// for an undefined field.
pub(crate) fn field_type<'a>(object: &Object<'a>, field: &str) -> Option<Type<'a>> {
    let name = unescape(field)?;
    let child = (object.name.as_ref() != UNNAMED).then(|| format!("{}.{field}", object.name));
    if object.resource {
        match name.as_str() {
            "apiVersion" | "kind" => return Some(Type::String),
            "metadata" => return decl_type(Node(&OBJECT_META), child.as_deref(), false),
            _ => {}
        }
    }
    let prop = object.node.property(&name)?;
    decl_type(prop, child.as_deref(), prop.embedded_resource())
}

/// Whether a resource's schema already declares what `WithTypeAndObjectMeta` would add, in
/// which case upstream keeps it as it is.
fn has_type_and_object_meta(node: Node<'_>) -> bool {
    let is = |n: Option<Node<'_>>, t: &str| n.is_some_and(|n| n.type_() == t);
    let meta = node.property("metadata");
    is(node.property("kind"), "string")
        && is(node.property("apiVersion"), "string")
        && is(meta, "object")
        && is(meta.and_then(|m| m.property("name")), "string")
        && is(meta.and_then(|m| m.property("generateName")), "string")
}
