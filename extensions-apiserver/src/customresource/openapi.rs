//! The OpenAPI definitions of a custom resource's kind and list kind, as upstream's CRD
//! OpenAPI builder writes them (`pkg/controller/openapi/builder`): the version's
//! structural schema (unfolded; for v2 converted by `ToStructuralOpenAPIV2` and without
//! defaults, as upstream's v2 controller prunes them), with `apiVersion` and `kind` from
//! TypeMeta, `metadata` a reference to ObjectMeta, the same for embedded resources, and
//! `x-kubernetes-group-version-kind` and `x-kubernetes-selectable-fields`. A schema that
//! is not structural or has invalid types, and in v2 one that keeps unknown fields at its
//! root, is published as a bare object.

use kas_apiextensions::schema::Structural;
use kas_apiextensions::validation::{has_invalid_types, new_structural_error, validate_structural};
use kas_apimachinery::validation::field::Path;
use kas_registry::strategy::{OpenApiDefinitions, OpenApiDialect};
use serde_json::{Map, Value, json};

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";

/// What one served version publishes, built with its strategy.
pub struct Publisher {
    group: String,
    version: String,
    kind: String,
    list_kind: String,
    plural: String,
    /// The definition name of the kind (`com.example.v1.Widget`).
    definition: String,
    /// The unfolded structural schema; `None` without a usable one.
    schema: Option<Structural>,
    /// `x-kubernetes-selectable-fields`, when the version has some.
    selectable: Option<Value>,
    /// The CRD's `spec.preserveUnknownFields`, which v2 publishes as a bare object.
    pub preserve_unknown_fields: bool,
}

impl Publisher {
    /// `names` are the kind, list kind and plural; `version` an entry of `spec.versions`.
    pub fn new(
        (kind, list_kind, plural): (&str, &str, &str),
        group: &str,
        version: &Value,
    ) -> Publisher {
        let name = version.get("name").and_then(Value::as_str).unwrap_or("");
        let schema = version
            .pointer("/schema/openAPIV3Schema")
            .filter(|s| s.is_object())
            .filter(|s| !has_invalid_types(s) && new_structural_error(s).is_none())
            .filter(|s| validate_structural(&Path::nil(), s).is_empty())
            .map(|s| {
                let mut structural = Structural::new(s);
                structural.unfold();
                structural
            });
        let selectable: Vec<Value> = version
            .get("selectableFields")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|f| f.get("jsonPath").and_then(Value::as_str))
            .map(|p| json!({"fieldPath": p.trim_start_matches('.')}))
            .collect();
        Publisher {
            group: group.to_owned(),
            version: name.to_owned(),
            kind: kind.to_owned(),
            list_kind: list_kind.to_owned(),
            plural: plural.to_owned(),
            definition: super::fields::definition_name(group, name, kind),
            schema,
            selectable: (!selectable.is_empty()).then_some(Value::Array(selectable)),
            preserve_unknown_fields: false,
        }
    }

    pub fn definitions(&self, dialect: OpenApiDialect) -> OpenApiDefinitions {
        OpenApiDefinitions {
            kind: self.kind_schema(dialect),
            list: self.list_schema(dialect),
        }
    }

    fn gvk(&self, kind: &str) -> Value {
        json!([{"group": self.group, "kind": kind, "version": self.version}])
    }

    /// Upstream `buildKubeNative`.
    fn kind_schema(&self, dialect: OpenApiDialect) -> Value {
        let v2 = dialect == OpenApiDialect::V2;
        let mut ret = match &self.schema {
            Some(s)
                if !(v2
                    && (s.extensions.x_preserve_unknown_fields
                        || self.preserve_unknown_fields)) =>
            {
                let s = if v2 {
                    without_defaults(s.to_openapi_v2())
                } else {
                    s.clone()
                };
                let mut ret = object(s.to_kube_openapi());
                set_property(&mut ret, "metadata", metadata(dialect, OBJECT_META, false));
                set_property(&mut ret, "apiVersion", type_meta("apiVersion"));
                set_property(&mut ret, "kind", type_meta("kind"));
                add_embedded_properties(&mut ret, dialect);
                ret
            }
            _ => object(json!({"type": "object"})),
        };
        ret.insert(
            "x-kubernetes-group-version-kind".into(),
            self.gvk(&self.kind),
        );
        if let Some(fields) = &self.selectable {
            ret.insert("x-kubernetes-selectable-fields".into(), fields.clone());
        }
        Value::Object(ret)
    }

    /// Upstream `buildListSchema`.
    fn list_schema(&self, dialect: OpenApiDialect) -> Value {
        let items = json!({
            "type": "array",
            "description": format!(
                "List of {}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md",
                self.plural
            ),
            "items": {"$ref": reference(dialect, &self.definition)},
        });
        let mut ret = object(json!({
            "type": "object",
            "description": format!("{} is a list of {}", self.list_kind, self.kind),
            "required": ["items"],
            "properties": {
                "items": items,
                "metadata": metadata(dialect, LIST_META, true),
                "apiVersion": type_meta("apiVersion"),
                "kind": type_meta("kind"),
            },
        }));
        ret.insert(
            "x-kubernetes-group-version-kind".into(),
            self.gvk(&self.list_kind),
        );
        if let Some(fields) = &self.selectable {
            ret.insert("x-kubernetes-selectable-fields".into(), fields.clone());
        }
        Value::Object(ret)
    }
}

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// Sets the property `key` of an object schema (upstream `SetProperty`).
fn set_property(schema: &mut Map<String, Value>, key: &str, value: Value) {
    let props = schema
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(props) = props {
        props.insert(key.into(), value);
    }
}

fn reference(dialect: OpenApiDialect, name: &str) -> String {
    match dialect {
        OpenApiDialect::V2 => format!("#/definitions/{name}"),
        OpenApiDialect::V3 => format!("#/components/schemas/{name}"),
    }
}

/// A reference with upstream's description (PartialObjectMetadata's, or its list's),
/// wrapped in `allOf` for v3 as kube-openapi's v3 builder wraps references with siblings.
fn metadata(dialect: OpenApiDialect, definition: &str, list: bool) -> Value {
    use kas_api::meta::v1::{PARTIAL_OBJECT_METADATA, PARTIAL_OBJECT_METADATA_LIST};
    let of = if list {
        &PARTIAL_OBJECT_METADATA_LIST
    } else {
        &PARTIAL_OBJECT_METADATA
    };
    let description = of.field("metadata").map_or("", |f| f.description);
    let r = json!({"$ref": reference(dialect, definition)});
    match dialect {
        OpenApiDialect::V2 => json!({"$ref": r["$ref"], "description": description}),
        OpenApiDialect::V3 => json!({"allOf": [r], "description": description}),
    }
}

/// TypeMeta's property `name` (`apiVersion` or `kind`), with its description.
fn type_meta(name: &str) -> Value {
    let description = kas_api::meta::v1::STATUS
        .field(name)
        .map_or("", |f| f.description);
    json!({"type": "string", "description": description})
}

/// Upstream's PruneDefaults of the v2 document.
fn without_defaults(mut s: Structural) -> Structural {
    fn strip(s: &mut Structural) {
        s.generic.default = None;
        if let Some(items) = s.items.as_deref_mut() {
            strip(items);
        }
        s.properties.values_mut().for_each(strip);
        if let Some(ap) = s
            .additional_properties
            .as_mut()
            .and_then(|ap| ap.structural.as_deref_mut())
        {
            strip(ap);
        }
    }
    strip(&mut s);
    s
}

/// Upstream `addEmbeddedProperties`: every embedded resource gets `apiVersion`, `kind`
/// (required) and `metadata`, but in v2 not one that keeps unknown fields.
fn add_embedded_properties(s: &mut Map<String, Value>, dialect: OpenApiDialect) {
    if let Some(Value::Object(props)) = s.get_mut("properties") {
        for child in props.values_mut() {
            if let Value::Object(child) = child {
                add_embedded_properties(child, dialect);
            }
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(Value::Object(child)) = s.get_mut(key) {
            add_embedded_properties(child, dialect);
        }
    }
    let flag = |s: &Map<String, Value>, k: &str| s.get(k).and_then(Value::as_bool) == Some(true);
    if dialect == OpenApiDialect::V2 && flag(s, "x-kubernetes-preserve-unknown-fields") {
        return;
    }
    if !flag(s, "x-kubernetes-embedded-resource") {
        return;
    }
    set_property(
        s,
        "apiVersion",
        json!({"type": "string", "description": "apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"}),
    );
    set_property(
        s,
        "kind",
        json!({"type": "string", "description": "kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"}),
    );
    set_property(s, "metadata", metadata(dialect, OBJECT_META, false));
    let required = s.entry("required").or_insert_with(|| json!([]));
    if let Value::Array(list) = required {
        for key in ["kind", "apiVersion"] {
            if !list.iter().any(|r| r == key) {
                list.push(json!(key));
            }
        }
    }
}

#[cfg(test)]
#[path = "openapi_tests.rs"]
mod tests;
