//! A read-only view of one JSONSchemaProps node, as raw JSON, with the few accessors the
//! CEL machinery needs (upstream reads the same fields off `schema.Structural`).

use serde_json::{Map, Value as Json};

#[derive(Clone, Copy, Debug)]
pub(crate) struct Node<'a>(pub &'a Json);

impl<'a> Node<'a> {
    fn get(self, key: &str) -> Option<&'a Json> {
        self.0.get(key)
    }

    fn flag(self, key: &str) -> bool {
        self.get(key).and_then(Json::as_bool).unwrap_or(false)
    }

    fn str(self, key: &str) -> &'a str {
        self.get(key).and_then(Json::as_str).unwrap_or("")
    }

    pub fn type_(self) -> &'a str {
        self.str("type")
    }

    pub fn format(self) -> &'a str {
        self.str("format")
    }

    pub fn nullable(self) -> bool {
        self.flag("nullable")
    }

    pub fn int_or_string(self) -> bool {
        self.flag("x-kubernetes-int-or-string")
    }

    pub fn preserve_unknown_fields(self) -> bool {
        self.flag("x-kubernetes-preserve-unknown-fields")
    }

    pub fn embedded_resource(self) -> bool {
        self.flag("x-kubernetes-embedded-resource")
    }

    pub fn list_type(self) -> &'a str {
        self.str("x-kubernetes-list-type")
    }

    pub fn map_type(self) -> Option<&'a str> {
        self.get("x-kubernetes-map-type").and_then(Json::as_str)
    }

    pub fn list_map_keys(self) -> Vec<&'a str> {
        match self.get("x-kubernetes-list-map-keys") {
            Some(Json::Array(keys)) => keys.iter().filter_map(Json::as_str).collect(),
            _ => Vec::new(),
        }
    }

    pub fn properties(self) -> Option<&'a Map<String, Json>> {
        self.get("properties").and_then(Json::as_object)
    }

    pub fn property(self, name: &str) -> Option<Node<'a>> {
        self.properties()?.get(name).map(Node)
    }

    pub fn items(self) -> Option<Node<'a>> {
        self.get("items").filter(|i| i.is_object()).map(Node)
    }

    /// The schema of `additionalProperties`, when it is one (not a bool).
    pub fn additional_properties(self) -> Option<Node<'a>> {
        self.get("additionalProperties")
            .filter(|a| a.is_object())
            .map(Node)
    }

    pub fn all_of(self) -> impl Iterator<Item = Node<'a>> {
        self.get("allOf")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .map(Node)
    }

    pub fn rules(self) -> &'a [Json] {
        match self.get("x-kubernetes-validations") {
            Some(Json::Array(rules)) => rules,
            _ => &[],
        }
    }

    /// Whether upstream's `SchemaDeclType` gives the node a CEL type: values without one
    /// (no `type`, or a list or map of such values) are hidden from CEL entirely.
    pub fn has_decl_type(self) -> bool {
        if self.int_or_string() {
            return true;
        }
        match self.type_() {
            "array" => self.items().is_some_and(Node::has_decl_type),
            "object" => self.additional_properties().is_none_or(Node::has_decl_type),
            "string" | "boolean" | "number" | "integer" => true,
            _ => false,
        }
    }

    pub fn int(self, key: &str) -> Option<i64> {
        self.get(key).and_then(Json::as_i64)
    }
}
