//! The strategy of one served version of a custom resource, after upstream's
//! `customResourceStrategy` and its status strategy: status reset on create and kept on
//! update when the status subresource is on, `generation` counting every change outside
//! `metadata`, metadata and schema validation, selectable fields and printer columns.

use std::collections::BTreeMap;
use std::sync::Arc;

use kas_apimachinery::validation::meta::name_is_dns_subdomain;
use kas_registry::strategy::FieldErrors;
use kas_registry::validation::{validate_object_meta, validate_object_meta_update};
use serde_json::Value;

use super::jsonpath::JsonPath;
use super::schema::VersionSchema;
use super::table::{self, Column};
use super::validator;

pub struct Strategy {
    kind: &'static str,
    api_version: &'static str,
    namespaced: bool,
    scale: Option<validator::ScalePaths>,
    status: bool,
    columns: Vec<Column>,
    /// `selectableFields`: the field's name (its path without the leading dot) and path.
    selectable: Vec<(String, JsonPath)>,
    schema: Option<Arc<VersionSchema>>,
    fields: Option<&'static kas_apimachinery::schema::Message>,
    list_fields: Option<&'static kas_apimachinery::schema::Message>,
    /// The kind's and list's OpenAPI definitions, written when a document is built.
    openapi: super::openapi::Publisher,
    deprecation: Option<&'static str>,
}

impl Strategy {
    /// The strategy of `version` (an entry of `spec.versions`) of the CRD served as `d`;
    /// `deprecation` is the warning its requests get.
    pub fn new(
        d: &kas_registry::ResourceDescriptor,
        version: &Value,
        deprecation: Option<String>,
    ) -> Strategy {
        let namespaced = d.namespaced();
        let schema = version
            .pointer("/schema/openAPIV3Schema")
            .filter(|s| s.is_object());
        let version_name = version.get("name").and_then(Value::as_str).unwrap_or("");
        let fields = schema.map(|s| super::fields::message(d.kind, d.group, version_name, s));
        let selectable = version
            .get("selectableFields")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|f| f.get("jsonPath").and_then(Value::as_str))
            .filter_map(|p| {
                let name = p.trim_start_matches('.').to_owned();
                JsonPath::parse(p).map(|path| (name, path))
            })
            .collect();
        Strategy {
            kind: d.kind,
            api_version: super::intern(&d.api_version()),
            namespaced,
            scale: validator::ScalePaths::of(version),
            status: version
                .pointer("/subresources/status")
                .is_some_and(|s| !s.is_null()),
            columns: table::definitions(version),
            selectable,
            schema: schema.map(|s| Arc::new(VersionSchema::new(s))),
            deprecation: deprecation.as_deref().map(super::intern),
            openapi: super::openapi::Publisher::new(
                (d.kind, d.list_kind, d.plural),
                d.group,
                version,
            ),
            fields,
            list_fields: fields.map(|item| {
                let names = (d.kind, d.list_kind, d.plural);
                super::fields::list_message(names, d.group, version_name, item)
            }),
        }
    }

    /// Takes the CRD's `spec.preserveUnknownFields` into account: nothing is pruned, and
    /// its OpenAPI v2 definition is a bare object, as upstream's.
    pub fn preserving_unknown_fields(mut self, preserve: bool) -> Strategy {
        self.openapi.preserve_unknown_fields = preserve;
        if let Some(schema) = self.schema.as_mut().and_then(Arc::get_mut) {
            schema.preserve_unknown_fields = preserve;
        }
        self
    }

    /// The version's schema, `None` when it has none.
    pub fn schema(&self) -> Option<&Arc<VersionSchema>> {
        self.schema.as_ref()
    }

    /// Upstream's `ValidateTypeMeta`, which the validator runs first and alone: a body
    /// may name another kind, which the unstructured decoder keeps.
    fn type_errors(&self, obj: &Value) -> Option<FieldErrors> {
        let errs = validator::validate_type_meta(obj, self.kind, self.api_version);
        (!errs.is_empty()).then(|| kas_registry::strategy::causes(errs))
    }

    /// Upstream's `customResourceStrategy.Validate` (`old` for `ValidateUpdate`) after the
    /// metadata's checks: the schema, the scale subresource's paths, then embedded
    /// resources, list types and CEL.
    fn validate_schema(&self, new: &Value, old: Option<&Value>) -> FieldErrors {
        let mut errs = Vec::new();
        if let Some(schema) = &self.schema {
            errs.extend(schema.validate_openapi(new, old));
        }
        if let Some(scale) = &self.scale {
            errs.extend(validator::validate_scale_spec(new, scale));
            errs.extend(validator::validate_scale_status(new, scale));
        }
        if let Some(schema) = &self.schema {
            schema.validate_rest(new, old, true, &mut errs);
        }
        kas_registry::strategy::causes(errs)
    }

    /// Upstream's status strategy's `ValidateUpdate` after the metadata's checks: the
    /// status against its own schema, the scale subresource's status paths, then list
    /// types and CEL over the object.
    fn validate_status_schema(&self, new: &Value, old: &Value) -> FieldErrors {
        let mut errs = Vec::new();
        if let Some(schema) = &self.schema {
            errs.extend(schema.validate_status_openapi(new, old));
        }
        if let Some(scale) = &self.scale {
            errs.extend(validator::validate_scale_status(new, scale));
        }
        if let Some(schema) = &self.schema {
            schema.validate_rest(new, Some(old), false, &mut errs);
        }
        kas_registry::strategy::causes(errs)
    }
}

/// Everything but `metadata` (upstream's `copyNonMetadata`), and but the type, which the
/// sent object carries and the stored one does not (upstream's both carry the same).
fn non_metadata(obj: &Value) -> BTreeMap<&String, &Value> {
    obj.as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| !matches!(k.as_str(), "metadata" | "apiVersion" | "kind"))
        .collect()
}

/// A selectable field's value as field selectors compare it.
fn field_value(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

impl kas_registry::Strategy for Strategy {
    /// Upstream's status strategy keeps the stored metadata but the managed fields.
    fn prepare_for_status_update(&self, new: &mut Value, old: &Value) {
        kas_registry::meta::keep_object_meta(new, old);
    }

    fn reset_fields(&self, subresource: &str) -> &'static [&'static str] {
        match (self.status, subresource) {
            // Upstream's status strategy resets only `spec`: metadata the client sent
            // stays owned though the write keeps the stored metadata.
            (true, "status") => &["spec"],
            (true, _) => &["status"],
            _ => &[],
        }
    }

    fn fields_schema(&self) -> Option<&'static kas_apimachinery::schema::Message> {
        self.fields
    }

    fn deprecation(&self) -> Option<&'static str> {
        self.deprecation
    }

    fn fields_list_schema(&self) -> Option<&'static kas_apimachinery::schema::Message> {
        self.list_fields
    }

    fn openapi_definitions(
        &self,
        dialect: kas_registry::strategy::OpenApiDialect,
    ) -> Option<kas_registry::strategy::OpenApiDefinitions> {
        Some(self.openapi.definitions(dialect))
    }

    fn default(&self, obj: &mut Value) {
        if let Some(schema) = &self.schema {
            schema.default(obj);
        }
    }

    fn prune_unknown(&self, obj: &mut Value) -> Option<Vec<String>> {
        Some(match &self.schema {
            Some(schema) => schema.prune(obj),
            None => Vec::new(),
        })
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        if self.status
            && let Some(map) = obj.as_object_mut()
        {
            map.remove("status");
        }
        kas_registry::meta::first_generation(obj);
    }

    fn validate(&self, obj: &Value) -> FieldErrors {
        if let Some(errs) = self.type_errors(obj) {
            return errs;
        }
        let mut errs = validate_object_meta(obj, self.namespaced, name_is_dns_subdomain);
        errs.extend(self.validate_schema(obj, None));
        errs
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        if self.status {
            kas_registry::meta::keep_status(new, old);
        }
        let changed = non_metadata(new) != non_metadata(old);
        kas_registry::meta::next_generation(new, old, changed);
    }

    fn validate_update(&self, new: &Value, old: &Value) -> FieldErrors {
        if let Some(errs) = self.type_errors(new) {
            return errs;
        }
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(validate_object_meta(
            new,
            self.namespaced,
            name_is_dns_subdomain,
        ));
        errs.extend(self.validate_schema(new, Some(old)));
        errs
    }

    /// Upstream's `ValidateStatusUpdate`: the metadata's update rules, the schema, and of
    /// the scale subresource only the status's paths.
    fn validate_status_update(&self, new: &Value, old: &Value) -> FieldErrors {
        if let Some(errs) = self.type_errors(new) {
            return errs;
        }
        let mut errs = validate_object_meta_update(new, old);
        errs.extend(self.validate_status_schema(new, old));
        errs
    }

    /// Upstream's `customResourceStrategy.AllowUnconditionalUpdate`: an update must name
    /// the resourceVersion it read.
    fn allow_unconditional_update(&self) -> bool {
        false
    }

    fn field_set(&self, obj: &Value) -> BTreeMap<String, String> {
        let mut set = kas_registry::meta::default_field_set(obj);
        if !self.namespaced {
            set.remove("metadata.namespace");
        }
        // A selectable field the object lacks selects as empty, as upstream's does.
        for (name, path) in &self.selectable {
            let value = path.first(obj).and_then(field_value).unwrap_or_default();
            set.insert(name.clone(), value);
        }
        set
    }

    /// Upstream's `crConverter.ConvertFieldLabel`: names, the namespace of a namespaced
    /// resource and the selectable fields; anything else is `field label not supported`.
    fn field_label_conversion(&self) -> bool {
        true
    }

    fn table_cells(&self, obj: &Value) -> Vec<Value> {
        table::cells(&self.columns, obj)
    }
}
