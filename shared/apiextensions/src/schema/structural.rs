//! Upstream's `Structural` (`pkg/apiserver/schema/structural.go`) and `NewStructural`
//! (`convert.go`), read from a `JSONSchemaProps` in JSON.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::props::{self, SchemaOrBool};

/// Upstream `Structural`: a structural schema.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Structural {
    pub items: Option<Box<Structural>>,
    pub properties: BTreeMap<String, Structural>,
    pub additional_properties: Option<StructuralOrBool>,
    pub generic: Generic,
    pub extensions: Extensions,
    /// `x-kubernetes-validations`, as written (upstream `ValidationExtensions`).
    pub x_validations: Vec<Value>,
    pub value_validation: ValueValidation,
}

/// Upstream `StructuralOrBool`: `additionalProperties` as a schema (then `allows` is true)
/// or a boolean.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StructuralOrBool {
    pub structural: Option<Box<Structural>>,
    pub allows: bool,
}

/// Upstream `Generic`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Generic {
    pub description: String,
    pub type_: String,
    pub title: String,
    /// `None` for no default (a `null` default is none either).
    pub default: Option<Value>,
    pub nullable: bool,
}

/// Upstream `Extensions`: the Kubernetes vendor extensions.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Extensions {
    pub x_preserve_unknown_fields: bool,
    pub x_embedded_resource: bool,
    pub x_int_or_string: bool,
    pub x_list_map_keys: Vec<String>,
    pub x_list_type: Option<String>,
    pub x_map_type: Option<String>,
}

/// Upstream `ValueValidation`: the fields that do not shape the schema.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ValueValidation {
    pub format: String,
    pub maximum: Option<f64>,
    pub exclusive_maximum: bool,
    pub minimum: Option<f64>,
    pub exclusive_minimum: bool,
    pub max_length: Option<i64>,
    pub min_length: Option<i64>,
    pub pattern: String,
    pub max_items: Option<i64>,
    pub min_items: Option<i64>,
    pub unique_items: bool,
    pub multiple_of: Option<f64>,
    pub enum_: Vec<Value>,
    pub max_properties: Option<i64>,
    pub min_properties: Option<i64>,
    pub required: Vec<String>,
    pub all_of: Vec<NestedValueValidation>,
    pub one_of: Vec<NestedValueValidation>,
    pub any_of: Vec<NestedValueValidation>,
    pub not: Option<Box<NestedValueValidation>>,
}

/// Upstream `NestedValueValidation`: a schema under `allOf`, `anyOf`, `oneOf` or `not`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NestedValueValidation {
    pub value_validation: ValueValidation,
    pub x_validations: Vec<Value>,
    pub items: Option<Box<NestedValueValidation>>,
    pub properties: BTreeMap<String, NestedValueValidation>,
    pub additional_properties: Option<Box<NestedValueValidation>>,
    /// Generic fields, which make a schema non-structural here (but for the
    /// int-or-string patterns).
    pub forbidden_generics: Generic,
    pub forbidden_extensions: Extensions,
}

impl Structural {
    /// Upstream `NewStructural` over JSON, lenient: what it cannot read it leaves unset
    /// (upstream refuses such schemas in CRD validation first). A non-object is the empty
    /// schema.
    pub fn new(schema: &Value) -> Structural {
        schema
            .as_object()
            .map(Structural::from_map)
            .unwrap_or_default()
    }

    fn from_map(s: &Map<String, Value>) -> Structural {
        let additional_properties =
            props::schema_or_bool(s, "additionalProperties").map(|ap| match ap {
                SchemaOrBool::Schema(m) => StructuralOrBool {
                    structural: Some(Box::new(Structural::from_map(m))),
                    allows: true,
                },
                SchemaOrBool::Bool(allows) => StructuralOrBool {
                    structural: None,
                    allows,
                },
            });
        Structural {
            items: props::object(s, "items").map(|m| Box::new(Structural::from_map(m))),
            properties: props::object(s, "properties")
                .map(|p| {
                    p.iter()
                        .filter_map(|(k, v)| {
                            Some((k.clone(), Structural::from_map(v.as_object()?)))
                        })
                        .collect()
                })
                .unwrap_or_default(),
            additional_properties,
            generic: generic(s),
            extensions: extensions(s),
            x_validations: x_validations(s),
            value_validation: value_validation(s),
        }
    }

    /// The schema of the field `key` of an object: its property, else
    /// `additionalProperties`' schema (upstream's lookup in pruning and defaulting).
    pub fn field(&self, key: &str) -> Option<&Structural> {
        self.properties.get(key).or_else(|| {
            self.additional_properties
                .as_ref()
                .and_then(|ap| ap.structural.as_deref())
        })
    }
}

impl NestedValueValidation {
    fn from_map(s: &Map<String, Value>) -> NestedValueValidation {
        let additional_properties = match props::schema_or_bool(s, "additionalProperties") {
            Some(SchemaOrBool::Schema(m)) => Some(Box::new(NestedValueValidation::from_map(m))),
            Some(SchemaOrBool::Bool(true)) => Some(Box::default()),
            _ => None,
        };
        NestedValueValidation {
            value_validation: value_validation(s),
            x_validations: x_validations(s),
            items: props::object(s, "items").map(|m| Box::new(NestedValueValidation::from_map(m))),
            properties: props::object(s, "properties")
                .map(|p| {
                    p.iter()
                        .filter_map(|(k, v)| {
                            Some((k.clone(), NestedValueValidation::from_map(v.as_object()?)))
                        })
                        .collect()
                })
                .unwrap_or_default(),
            additional_properties,
            forbidden_generics: generic(s),
            forbidden_extensions: extensions(s),
        }
    }
}

fn generic(s: &Map<String, Value>) -> Generic {
    Generic {
        description: props::string(s, "description"),
        type_: props::string(s, "type"),
        title: props::string(s, "title"),
        default: props::default(s),
        nullable: props::boolean(s, "nullable"),
    }
}

fn extensions(s: &Map<String, Value>) -> Extensions {
    Extensions {
        x_preserve_unknown_fields: props::boolean(s, "x-kubernetes-preserve-unknown-fields"),
        x_embedded_resource: props::boolean(s, "x-kubernetes-embedded-resource"),
        x_int_or_string: props::boolean(s, "x-kubernetes-int-or-string"),
        x_list_map_keys: props::strings(s, "x-kubernetes-list-map-keys"),
        x_list_type: props::opt_string(s, "x-kubernetes-list-type"),
        x_map_type: props::opt_string(s, "x-kubernetes-map-type"),
    }
}

fn x_validations(s: &Map<String, Value>) -> Vec<Value> {
    s.get("x-kubernetes-validations")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn value_validation(s: &Map<String, Value>) -> ValueValidation {
    let nested = |key| {
        props::objects(s, key)
            .into_iter()
            .map(NestedValueValidation::from_map)
            .collect()
    };
    ValueValidation {
        format: props::string(s, "format"),
        maximum: props::float(s, "maximum"),
        exclusive_maximum: props::boolean(s, "exclusiveMaximum"),
        minimum: props::float(s, "minimum"),
        exclusive_minimum: props::boolean(s, "exclusiveMinimum"),
        max_length: props::int(s, "maxLength"),
        min_length: props::int(s, "minLength"),
        pattern: props::string(s, "pattern"),
        max_items: props::int(s, "maxItems"),
        min_items: props::int(s, "minItems"),
        unique_items: props::boolean(s, "uniqueItems"),
        multiple_of: props::float(s, "multipleOf"),
        enum_: s
            .get("enum")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        max_properties: props::int(s, "maxProperties"),
        min_properties: props::int(s, "minProperties"),
        required: props::strings(s, "required"),
        all_of: nested("allOf"),
        one_of: nested("oneOf"),
        any_of: nested("anyOf"),
        not: props::object(s, "not").map(|m| Box::new(NestedValueValidation::from_map(m))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reads_structure_extensions_and_validations() {
        let s = Structural::new(&json!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "x-kubernetes-validations": [{"rule": "self.a > 0"}],
                    "properties": {
                        "ports": {
                            "type": "array",
                            "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["port"],
                            "items": {"type": "object", "required": ["port"]},
                        },
                        "size": {
                            "x-kubernetes-int-or-string": true,
                            "anyOf": [{"type": "integer"}, {"type": "string"}],
                            "default": 1,
                        },
                        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                        "n": {"type": "integer", "default": null, "maximum": 5, "minLength": 1.5},
                    },
                },
            },
        }));
        let spec = &s.properties["spec"];
        assert_eq!(spec.x_validations, vec![json!({"rule": "self.a > 0"})]);
        let ports = &spec.properties["ports"];
        assert_eq!(ports.extensions.x_list_type.as_deref(), Some("map"));
        assert_eq!(ports.extensions.x_list_map_keys, vec!["port"]);
        let item = ports.items.as_deref().expect("items");
        assert_eq!(item.value_validation.required, vec!["port"]);
        let size = &spec.properties["size"];
        assert!(size.extensions.x_int_or_string);
        assert_eq!(size.generic.default, Some(json!(1)));
        assert_eq!(size.value_validation.any_of.len(), 2);
        assert_eq!(
            size.value_validation.any_of[1].forbidden_generics.type_,
            "string"
        );
        let labels = spec.properties["labels"].additional_properties.as_ref();
        assert!(labels.is_some_and(|ap| ap.allows && ap.structural.is_some()));
        let n = &spec.properties["n"];
        assert_eq!(n.generic.default, None, "a null default is no default");
        assert_eq!(n.value_validation.maximum, Some(5.0));
        assert_eq!(n.value_validation.min_length, None, "not an int64");
        assert_eq!(
            spec.field("ports").map(|p| &p.generic.type_),
            Some(&"array".to_owned())
        );
        assert_eq!(
            spec.properties["labels"]
                .field("x")
                .map(|p| p.generic.type_.as_str()),
            Some("string")
        );
    }

    #[test]
    fn never_fails_on_garbage() {
        assert_eq!(Structural::new(&json!("x")), Structural::default());
        let s =
            Structural::new(&json!({"properties": [1], "items": 3, "additionalProperties": "x"}));
        assert!(s.properties.is_empty() && s.items.is_none() && s.additional_properties.is_none());
        let s = Structural::new(&json!({"additionalProperties": false}));
        assert_eq!(
            s.additional_properties,
            Some(StructuralOrBool {
                structural: None,
                allows: false
            })
        );
    }
}
