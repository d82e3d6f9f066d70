//! Go's `%#v` of internal `apiextensions` types (`JSONSchemaProps`, and the
//! `[]CustomResourceDefinitionVersion` of a spec), which upstream prints as the bad value
//! of a few errors. Pointers print as an address in Go, which differs per
//! request; a fixed one stands in for it.

use kas_apimachinery::golang::fmt::sprint_v;
use kas_apimachinery::golang::strconv::quote;
use kas_apimachinery::validation::field::BadValue;
use serde_json::Value;

use super::internal::{Spec, Version};
use super::util::str_of;

const PROPS: &str = "apiextensions.JSONSchemaProps";

enum Kind {
    Str,
    Bool,
    Ptr(&'static str),
    Strings,
    Json,
    Schemas,
    SchemaMap(&'static str),
    Rules,
}

/// The internal fields in declaration order, their v1 JSON names and Go kinds.
const FIELDS: [(&str, &str, Kind); 44] = [
    ("ID", "id", Kind::Str),
    ("Schema", "$schema", Kind::Str),
    ("Ref", "$ref", Kind::Ptr("*string")),
    ("Description", "description", Kind::Str),
    ("Type", "type", Kind::Str),
    ("Nullable", "nullable", Kind::Bool),
    ("Format", "format", Kind::Str),
    ("Title", "title", Kind::Str),
    ("Default", "default", Kind::Ptr("*apiextensions.JSON")),
    ("Maximum", "maximum", Kind::Ptr("*float64")),
    ("ExclusiveMaximum", "exclusiveMaximum", Kind::Bool),
    ("Minimum", "minimum", Kind::Ptr("*float64")),
    ("ExclusiveMinimum", "exclusiveMinimum", Kind::Bool),
    ("MaxLength", "maxLength", Kind::Ptr("*int64")),
    ("MinLength", "minLength", Kind::Ptr("*int64")),
    ("Pattern", "pattern", Kind::Str),
    ("MaxItems", "maxItems", Kind::Ptr("*int64")),
    ("MinItems", "minItems", Kind::Ptr("*int64")),
    ("UniqueItems", "uniqueItems", Kind::Bool),
    ("MultipleOf", "multipleOf", Kind::Ptr("*float64")),
    ("Enum", "enum", Kind::Json),
    ("MaxProperties", "maxProperties", Kind::Ptr("*int64")),
    ("MinProperties", "minProperties", Kind::Ptr("*int64")),
    ("Required", "required", Kind::Strings),
    (
        "Items",
        "items",
        Kind::Ptr("*apiextensions.JSONSchemaPropsOrArray"),
    ),
    ("AllOf", "allOf", Kind::Schemas),
    ("OneOf", "oneOf", Kind::Schemas),
    ("AnyOf", "anyOf", Kind::Schemas),
    ("Not", "not", Kind::Ptr("*apiextensions.JSONSchemaProps")),
    (
        "Properties",
        "properties",
        Kind::SchemaMap("map[string]apiextensions.JSONSchemaProps"),
    ),
    (
        "AdditionalProperties",
        "additionalProperties",
        Kind::Ptr("*apiextensions.JSONSchemaPropsOrBool"),
    ),
    (
        "PatternProperties",
        "patternProperties",
        Kind::SchemaMap("map[string]apiextensions.JSONSchemaProps"),
    ),
    (
        "Dependencies",
        "dependencies",
        Kind::SchemaMap("apiextensions.JSONSchemaDependencies"),
    ),
    (
        "AdditionalItems",
        "additionalItems",
        Kind::Ptr("*apiextensions.JSONSchemaPropsOrBool"),
    ),
    (
        "Definitions",
        "definitions",
        Kind::SchemaMap("apiextensions.JSONSchemaDefinitions"),
    ),
    (
        "ExternalDocs",
        "externalDocs",
        Kind::Ptr("*apiextensions.ExternalDocumentation"),
    ),
    ("Example", "example", Kind::Ptr("*apiextensions.JSON")),
    (
        "XPreserveUnknownFields",
        "x-kubernetes-preserve-unknown-fields",
        Kind::Ptr("*bool"),
    ),
    (
        "XEmbeddedResource",
        "x-kubernetes-embedded-resource",
        Kind::Bool,
    ),
    ("XIntOrString", "x-kubernetes-int-or-string", Kind::Bool),
    ("XListMapKeys", "x-kubernetes-list-map-keys", Kind::Strings),
    ("XListType", "x-kubernetes-list-type", Kind::Ptr("*string")),
    ("XMapType", "x-kubernetes-map-type", Kind::Ptr("*string")),
    ("XValidations", "x-kubernetes-validations", Kind::Rules),
];

/// Go's `%#v` of a decoded JSON value held in an `interface{}`.
fn go_interface(v: &Value) -> String {
    match v {
        Value::Null => "interface {}(nil)".to_owned(),
        Value::String(s) => quote(s),
        Value::Bool(_) | Value::Number(_) => sprint_v(v),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(go_interface).collect();
            format!("[]interface {{}}{{{}}}", parts.join(", "))
        }
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .iter()
                .map(|k| format!("{}:{}", quote(k), go_interface(&m[k.as_str()])))
                .collect();
            format!("map[string]interface {{}}{{{}}}", parts.join(", "))
        }
    }
}

fn go_list(type_name: &str, v: Option<&Value>, item: impl Fn(&Value) -> String) -> String {
    match v.and_then(Value::as_array) {
        None => format!("{type_name}(nil)"),
        Some(items) => {
            let parts: Vec<String> = items.iter().map(item).collect();
            format!("{type_name}{{{}}}", parts.join(", "))
        }
    }
}

fn go_rule(r: &Value) -> String {
    let s = |k: &str| quote(r.get(k).and_then(Value::as_str).unwrap_or(""));
    let set = |k: &str| r.get(k).is_some_and(|v| !v.is_null());
    format!(
        "apiextensions.ValidationRule{{Rule:{}, Message:{}, MessageExpression:{}, Reason:{}, FieldPath:{}, OptionalOldSelf:{}}}",
        s("rule"),
        s("message"),
        s("messageExpression"),
        go_ptr("*apiextensions.FieldValueErrorReason", set("reason")),
        s("fieldPath"),
        go_ptr("*bool", set("optionalOldSelf")),
    )
}

fn go_schema_map(type_name: &str, v: Option<&Value>) -> String {
    let Some(m) = v.and_then(Value::as_object) else {
        return format!("{type_name}(nil)");
    };
    let dependencies = type_name.ends_with("Dependencies");
    let parts: Vec<String> = m
        .iter()
        .map(|(k, x)| {
            let inner = if dependencies {
                let schema = go_ptr("*apiextensions.JSONSchemaProps", x.is_object());
                let strings = go_list("[]string", x.as_array().map(|_| x), go_interface);
                format!("apiextensions.JSONSchemaPropsOrStringArray{{Schema:{schema}, Property:{strings}}}")
            } else {
                go_schema(x)
            };
            format!("{}:{inner}", quote(k))
        })
        .collect();
    format!("{type_name}{{{}}}", parts.join(", "))
}

/// Go's `%#v` of the `JSONSchemaProps` decoded from `s`.
pub fn go_schema(s: &Value) -> String {
    let parts: Vec<String> = FIELDS
        .iter()
        .map(|(name, key, kind)| {
            let v = s.get(*key).filter(|v| !v.is_null());
            let text = match kind {
                Kind::Str => quote(v.and_then(Value::as_str).unwrap_or("")),
                Kind::Bool => v.and_then(Value::as_bool).unwrap_or(false).to_string(),
                Kind::Ptr(t) => go_ptr(t, v.is_some()),
                Kind::Strings => go_list("[]string", v, go_interface),
                Kind::Json => go_list("[]apiextensions.JSON", v, go_interface),
                Kind::Schemas => go_list(&format!("[]{PROPS}"), v, go_schema),
                Kind::SchemaMap(t) => go_schema_map(t, v),
                Kind::Rules => go_list("apiextensions.ValidationRules", v, go_rule),
            };
            format!("{name}:{text}")
        })
        .collect();
    format!("{PROPS}{{{}}}", parts.join(", "))
}

/// Go's `%#v` of a pointer of type `type_name`.
pub fn go_ptr(type_name: &str, set: bool) -> String {
    if set {
        // Upstream prints the address, which differs per request.
        format!("({type_name})(0xc000000000)")
    } else {
        format!("({type_name})(nil)")
    }
}

fn go_column(c: &Value) -> String {
    format!(
        "apiextensions.CustomResourceColumnDefinition{{Name:{}, Type:{}, Format:{}, Description:{}, Priority:{}, JSONPath:{}}}",
        quote(str_of(c, "name")),
        quote(str_of(c, "type")),
        quote(str_of(c, "format")),
        quote(str_of(c, "description")),
        c.get("priority").and_then(Value::as_i64).unwrap_or(0),
        quote(str_of(c, "jsonPath")),
    )
}

fn go_slice(type_name: &str, items: Option<&[Value]>, item: fn(&Value) -> String) -> String {
    match items {
        None => format!("[]{type_name}(nil)"),
        Some(items) => {
            let parts: Vec<String> = items.iter().map(item).collect();
            format!("[]{type_name}{{{}}}", parts.join(", "))
        }
    }
}

fn go_selectable(f: &Value) -> String {
    format!(
        "apiextensions.SelectableField{{JSONPath:{}}}",
        quote(str_of(f, "jsonPath"))
    )
}

/// Go's `%#v` of one internal `CustomResourceDefinitionVersion`, given the per-version
/// fields that remain after conversion from v1.
pub fn go_version(v: &Version<'_>) -> String {
    format!(
        "apiextensions.CustomResourceDefinitionVersion{{Name:{}, Served:{}, Storage:{}, Deprecated:{}, DeprecationWarning:{}, Schema:{}, Subresources:{}, AdditionalPrinterColumns:{}, SelectableFields:{}}}",
        quote(v.name),
        v.served,
        v.storage,
        v.deprecated,
        go_ptr("*string", v.deprecation_warning.is_some()),
        go_ptr(
            "*apiextensions.CustomResourceValidation",
            v.schema.is_some()
        ),
        go_ptr(
            "*apiextensions.CustomResourceSubresources",
            v.subresources.is_some()
        ),
        go_slice(
            "apiextensions.CustomResourceColumnDefinition",
            v.columns,
            go_column
        ),
        go_slice(
            "apiextensions.SelectableField",
            v.selectable_fields,
            go_selectable
        ),
    )
}

/// Go's `%#v` of the internal `[]CustomResourceDefinitionVersion` of `spec`.
pub fn go_versions(spec: &Spec<'_>) -> BadValue {
    const TYPE: &str = "[]apiextensions.CustomResourceDefinitionVersion";
    if !spec.versions_set {
        return BadValue::Raw(format!("{TYPE}(nil)"));
    }
    let versions = &spec.versions;
    let parts: Vec<String> = versions.iter().map(go_version).collect();
    BadValue::Raw(format!("{TYPE}{{{}}}", parts.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prints_like_go() {
        let got = go_schema(
            &json!({"type": "object", "required": ["a"], "enum": ["x", 1, null],
            "properties": {"a": {}}, "nullable": true}),
        );
        assert!(got.starts_with(r#"apiextensions.JSONSchemaProps{ID:"", Schema:"", Ref:(*string)(nil), Description:"", Type:"object", Nullable:true, "#));
        assert!(got.contains(r#"Enum:[]apiextensions.JSON{"x", 1, interface {}(nil)}, "#));
        assert!(got.contains(r#"Required:[]string{"a"}, Items:(*apiextensions.JSONSchemaPropsOrArray)(nil), AllOf:[]apiextensions.JSONSchemaProps(nil), "#));
        assert!(got.contains(r#"Properties:map[string]apiextensions.JSONSchemaProps{"a":apiextensions.JSONSchemaProps{ID:"", "#));
        assert!(got.ends_with("XListType:(*string)(nil), XMapType:(*string)(nil), XValidations:apiextensions.ValidationRules(nil)}"));
    }
}
