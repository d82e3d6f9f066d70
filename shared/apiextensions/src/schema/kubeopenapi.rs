//! Upstream `Structural.ToKubeOpenAPI` (`kubeopenapi.go`): the structural schema written
//! back as an OpenAPI schema object, as kube-openapi's `spec.Schema` marshals it (empty
//! and zero fields left out), and upstream's v2 conversion of it (`ToStructuralOpenAPIV2`,
//! `pkg/controller/openapi/v2`): what Swagger 2.0 and kubectl cannot read removed. This is
//! what a CRD publishes in its OpenAPI documents.

use serde_json::{Map, Value, json};

use super::{Extensions, Generic, NestedValueValidation, Structural, ValueValidation};

/// A float as Go's `encoding/json` writes a `float64`: integral values without a
/// fraction.
fn number(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 1e15 {
        json!(f as i64)
    } else {
        json!(f)
    }
}

impl Structural {
    /// Upstream `ToKubeOpenAPI`.
    pub fn to_kube_openapi(&self) -> Value {
        let mut ret = Map::new();
        if let Some(items) = &self.items {
            ret.insert("items".into(), items.to_kube_openapi());
        }
        if !self.properties.is_empty() {
            let props = self
                .properties
                .iter()
                .map(|(k, v)| (k.clone(), v.to_kube_openapi()))
                .collect();
            ret.insert("properties".into(), Value::Object(props));
        }
        if let Some(ap) = &self.additional_properties {
            let value = match &ap.structural {
                Some(s) => s.to_kube_openapi(),
                None => Value::Bool(ap.allows),
            };
            ret.insert("additionalProperties".into(), value);
        }
        generic(&self.generic, &mut ret);
        extensions(&self.extensions, &mut ret);
        value_validation(&self.value_validation, &mut ret);
        x_validations(&self.x_validations, &mut ret);
        Value::Object(ret)
    }

    /// Upstream `ToStructuralOpenAPIV2`: junctors (`allOf`, `anyOf`, `oneOf`, `not`)
    /// dropped; a nullable node loses its type, items and properties; a node keeping
    /// unknown fields loses its items and properties (and its `object` type); an array
    /// without items loses its type; nullable properties are no longer required.
    pub fn to_openapi_v2(&self) -> Structural {
        let mut out = self.clone();
        out.visit_v2();
        out
    }

    fn visit_v2(&mut self) {
        let vv = &mut self.value_validation;
        vv.all_of.clear();
        vv.one_of.clear();
        vv.any_of.clear();
        vv.not = None;
        if self.generic.nullable {
            self.generic.type_.clear();
            self.generic.nullable = false;
            self.items = None;
            self.properties.clear();
        }
        if self.extensions.x_preserve_unknown_fields {
            self.items = None;
            self.properties.clear();
        }
        if self.items.is_none() && self.generic.type_ == "array" {
            self.generic.type_.clear();
        }
        if self.extensions.x_preserve_unknown_fields && self.generic.type_ == "object" {
            self.generic.type_.clear();
        }
        let nullable: Vec<&String> = self
            .properties
            .iter()
            .filter(|(_, p)| p.generic.nullable)
            .map(|(k, _)| k)
            .collect();
        let required = &mut self.value_validation.required;
        required.retain(|r| !nullable.contains(&r));
        let ap_nullable = self
            .additional_properties
            .as_ref()
            .and_then(|ap| ap.structural.as_deref())
            .is_some_and(|s| s.generic.nullable);
        if ap_nullable {
            self.value_validation.required.clear();
        }
        if let Some(items) = self.items.as_deref_mut() {
            items.visit_v2();
        }
        for p in self.properties.values_mut() {
            p.visit_v2();
        }
        if let Some(ap) = self
            .additional_properties
            .as_mut()
            .and_then(|ap| ap.structural.as_deref_mut())
        {
            ap.visit_v2();
        }
    }
}

fn generic(g: &Generic, ret: &mut Map<String, Value>) {
    if !g.type_.is_empty() {
        ret.insert("type".into(), json!(g.type_));
    }
    if g.nullable {
        ret.insert("nullable".into(), json!(true));
    }
    if !g.description.is_empty() {
        ret.insert("description".into(), json!(g.description));
    }
    if !g.title.is_empty() {
        ret.insert("title".into(), json!(g.title));
    }
    if let Some(default) = &g.default {
        ret.insert("default".into(), default.clone());
    }
}

fn extensions(x: &Extensions, ret: &mut Map<String, Value>) {
    let flags = [
        (
            "x-kubernetes-preserve-unknown-fields",
            x.x_preserve_unknown_fields,
        ),
        ("x-kubernetes-embedded-resource", x.x_embedded_resource),
        ("x-kubernetes-int-or-string", x.x_int_or_string),
    ];
    for (key, set) in flags {
        if set {
            ret.insert(key.into(), json!(true));
        }
    }
    if !x.x_list_map_keys.is_empty() {
        ret.insert(
            "x-kubernetes-list-map-keys".into(),
            json!(x.x_list_map_keys),
        );
    }
    if let Some(t) = &x.x_list_type {
        ret.insert("x-kubernetes-list-type".into(), json!(t));
    }
    if let Some(t) = &x.x_map_type {
        ret.insert("x-kubernetes-map-type".into(), json!(t));
    }
}

fn x_validations(rules: &[Value], ret: &mut Map<String, Value>) {
    if !rules.is_empty() {
        ret.insert("x-kubernetes-validations".into(), json!(rules));
    }
}

fn value_validation(v: &ValueValidation, ret: &mut Map<String, Value>) {
    let mut put = |key: &str, value: Value| {
        ret.insert(key.into(), value);
    };
    if !v.format.is_empty() {
        put("format", json!(v.format));
    }
    let floats = [
        ("maximum", v.maximum),
        ("minimum", v.minimum),
        ("multipleOf", v.multiple_of),
    ];
    let ints = [
        ("maxLength", v.max_length),
        ("minLength", v.min_length),
        ("maxItems", v.max_items),
        ("minItems", v.min_items),
        ("maxProperties", v.max_properties),
        ("minProperties", v.min_properties),
    ];
    for (key, f) in floats {
        if let Some(f) = f {
            put(key, number(f));
        }
    }
    for (key, i) in ints {
        if let Some(i) = i {
            put(key, json!(i));
        }
    }
    let flags = [
        ("exclusiveMaximum", v.exclusive_maximum),
        ("exclusiveMinimum", v.exclusive_minimum),
        ("uniqueItems", v.unique_items),
    ];
    for (key, set) in flags {
        if set {
            put(key, json!(true));
        }
    }
    if !v.pattern.is_empty() {
        put("pattern", json!(v.pattern));
    }
    if !v.enum_.is_empty() {
        put("enum", json!(v.enum_));
    }
    if !v.required.is_empty() {
        put("required", json!(v.required));
    }
    let junctors = [
        ("allOf", &v.all_of),
        ("anyOf", &v.any_of),
        ("oneOf", &v.one_of),
    ];
    for (key, list) in junctors {
        if !list.is_empty() {
            put(
                key,
                list.iter()
                    .map(NestedValueValidation::to_kube_openapi)
                    .collect(),
            );
        }
    }
    if let Some(not) = &v.not {
        put("not", not.to_kube_openapi());
    }
}

impl NestedValueValidation {
    fn to_kube_openapi(&self) -> Value {
        let mut ret = Map::new();
        value_validation(&self.value_validation, &mut ret);
        x_validations(&self.x_validations, &mut ret);
        if let Some(items) = &self.items {
            ret.insert("items".into(), items.to_kube_openapi());
        }
        if !self.properties.is_empty() {
            let props = self
                .properties
                .iter()
                .map(|(k, v)| (k.clone(), v.to_kube_openapi()))
                .collect();
            ret.insert("properties".into(), Value::Object(props));
        }
        // Normally empty; the int-or-string pattern's types live here.
        generic(&self.forbidden_generics, &mut ret);
        extensions(&self.forbidden_extensions, &mut ret);
        Value::Object(ret)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Round trip: what a CRD declares is what it publishes (upstream's test calls the
    /// conversion faithful).
    #[test]
    fn to_kube_openapi_is_faithful() {
        let schema = json!({
            "type": "object",
            "description": "A widget.",
            "required": ["spec"],
            "x-kubernetes-validations": [{"rule": "self.spec.size <= 10", "message": "too big"}],
            "properties": {
                "spec": {
                    "type": "object",
                    "title": "Spec",
                    "properties": {
                        "color": {"type": "string", "enum": ["red", "blue"], "default": "red"},
                        "size": {"type": "integer", "format": "int32", "minimum": 1, "maximum": 10,
                                 "exclusiveMaximum": true, "multipleOf": 0.5},
                        "name": {"type": "string", "maxLength": 63, "pattern": "^[a-z]+$"},
                        "ports": {"type": "array", "maxItems": 3, "uniqueItems": true,
                                  "x-kubernetes-list-type": "map",
                                  "x-kubernetes-list-map-keys": ["port"],
                                  "items": {"type": "object", "required": ["port"],
                                            "properties": {"port": {"type": "integer"}}}},
                        "labels": {"type": "object", "maxProperties": 4,
                                   "additionalProperties": {"type": "string", "nullable": true},
                                   "x-kubernetes-map-type": "granular"},
                        "open": {"type": "object", "additionalProperties": false},
                        "either": {"x-kubernetes-int-or-string": true,
                                   "anyOf": [{"type": "integer"}, {"type": "string"}]},
                        "choice": {"type": "string", "oneOf": [{"pattern": "a"}, {"pattern": "b"}],
                                   "not": {"enum": ["c"]}, "allOf": [{"minLength": 1}]},
                        "raw": {"type": "object", "x-kubernetes-embedded-resource": true,
                                "x-kubernetes-preserve-unknown-fields": true},
                    },
                },
            },
        });
        assert_eq!(Structural::new(&schema).to_kube_openapi(), schema);
    }

    /// Upstream's `ToStructuralOpenAPIV2` cases (conversion_test.go).
    #[test]
    fn v2_drops_what_swagger_cannot_say() {
        let cases = [
            (
                json!({"type": "string", "oneOf": [{"pattern": "a"}], "anyOf": [{"pattern": "b"}],
                       "allOf": [{"pattern": "c"}], "not": {"pattern": "d"}}),
                json!({"type": "string"}),
            ),
            (
                json!({"type": "object", "nullable": true,
                       "properties": {"a": {"type": "string"}}}),
                json!({}),
            ),
            (
                json!({"type": "array", "nullable": true, "items": {"type": "string"}}),
                json!({}),
            ),
            (
                json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                       "properties": {"a": {"type": "string"}}}),
                json!({"x-kubernetes-preserve-unknown-fields": true}),
            ),
            (
                json!({"type": "array", "x-kubernetes-preserve-unknown-fields": true,
                       "items": {"type": "string"}}),
                json!({"x-kubernetes-preserve-unknown-fields": true}),
            ),
            (
                json!({"type": "object", "required": ["a", "b", "c"],
                       "properties": {"a": {"type": "string", "nullable": true},
                                      "b": {"type": "string"},
                                      "c": {"type": "string", "nullable": true}}}),
                json!({"type": "object", "required": ["b"],
                       "properties": {"a": {}, "b": {"type": "string"}, "c": {}}}),
            ),
            (
                json!({"type": "object", "required": ["a"],
                       "additionalProperties": {"type": "string", "nullable": true}}),
                json!({"type": "object", "additionalProperties": {}}),
            ),
            (
                json!({"x-kubernetes-int-or-string": true,
                       "anyOf": [{"type": "integer"}, {"type": "string"}]}),
                json!({"x-kubernetes-int-or-string": true}),
            ),
        ];
        for (input, want) in cases {
            let got = Structural::new(&input).to_openapi_v2().to_kube_openapi();
            assert_eq!(got, want, "{input}");
        }
    }

    #[test]
    fn numbers_are_written_as_go_writes_float64() {
        assert_eq!(number(5.0).to_string(), "5");
        assert_eq!(number(-3.0).to_string(), "-3");
        assert_eq!(number(0.5).to_string(), "0.5");
    }
}
