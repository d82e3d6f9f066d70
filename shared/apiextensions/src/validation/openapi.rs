//! A version's `openAPIV3Schema`, after upstream's `validateCustomResourceDefinitionValidation`
//! and `ValidateCustomResourceDefinitionOpenAPISchema` with `specStandardValidatorV3`.
//!
//! CEL (`x-kubernetes-validations` compilation and cost) is `crate::cel::compile_errors`;
//! the syntactic rule checks are here.

use kas_apimachinery::validation::field::{self, BadValue, Error, Path};
use serde_json::Value;

use super::Options;
use super::default_values::validate_defaults;
use super::fieldpath::valid_field_path;
use super::structural::{new_structural_error, validate_structural};
use super::util::{arr, bool_of, map_of, obj, opt_bool, opt_str, str_of};

const OPENAPI_V3_TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];

/// Upstream `allowedFieldsAtRootSchema`.
const ALLOWED_AT_ROOT: [&str; 22] = [
    "Description",
    "Type",
    "Format",
    "Title",
    "Maximum",
    "ExclusiveMaximum",
    "Minimum",
    "ExclusiveMinimum",
    "MaxLength",
    "MinLength",
    "Pattern",
    "MaxItems",
    "MinItems",
    "UniqueItems",
    "MultipleOf",
    "Required",
    "Items",
    "Properties",
    "ExternalDocs",
    "Example",
    "XPreserveUnknownFields",
    "XValidations",
];

/// The internal `JSONSchemaProps` fields in declaration order, with their v1 JSON names.
const FIELDS: [(&str, &str); 44] = [
    ("ID", "id"),
    ("Schema", "$schema"),
    ("Ref", "$ref"),
    ("Description", "description"),
    ("Type", "type"),
    ("Nullable", "nullable"),
    ("Format", "format"),
    ("Title", "title"),
    ("Default", "default"),
    ("Maximum", "maximum"),
    ("ExclusiveMaximum", "exclusiveMaximum"),
    ("Minimum", "minimum"),
    ("ExclusiveMinimum", "exclusiveMinimum"),
    ("MaxLength", "maxLength"),
    ("MinLength", "minLength"),
    ("Pattern", "pattern"),
    ("MaxItems", "maxItems"),
    ("MinItems", "minItems"),
    ("UniqueItems", "uniqueItems"),
    ("MultipleOf", "multipleOf"),
    ("Enum", "enum"),
    ("MaxProperties", "maxProperties"),
    ("MinProperties", "minProperties"),
    ("Required", "required"),
    ("Items", "items"),
    ("AllOf", "allOf"),
    ("OneOf", "oneOf"),
    ("AnyOf", "anyOf"),
    ("Not", "not"),
    ("Properties", "properties"),
    ("AdditionalProperties", "additionalProperties"),
    ("PatternProperties", "patternProperties"),
    ("Dependencies", "dependencies"),
    ("AdditionalItems", "additionalItems"),
    ("Definitions", "definitions"),
    ("ExternalDocs", "externalDocs"),
    ("Example", "example"),
    (
        "XPreserveUnknownFields",
        "x-kubernetes-preserve-unknown-fields",
    ),
    ("XEmbeddedResource", "x-kubernetes-embedded-resource"),
    ("XIntOrString", "x-kubernetes-int-or-string"),
    ("XListMapKeys", "x-kubernetes-list-map-keys"),
    ("XListType", "x-kubernetes-list-type"),
    ("XMapType", "x-kubernetes-map-type"),
    ("XValidations", "x-kubernetes-validations"),
];

/// Whether the decoded internal field is not its Go zero value (`reflect.DeepEqual`).
fn is_set(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Bool(b)) => *b,
        Some(_) => true,
    }
}

/// A whole schema as a bad value: Go's `%#v` of the struct.
fn schema_value(schema: &Value) -> BadValue {
    BadValue::Raw(super::gostruct::go_schema(schema))
}

/// The root restrictions when the status subresource is enabled.
fn validate_status_root(schema: &Value, path: &Path) -> Option<Error> {
    for (go_name, key) in FIELDS {
        let v = schema.get(key);
        // `*string`/`*bool` fields are set even when empty or false.
        let set = match key {
            "$ref"
            | "x-kubernetes-list-type"
            | "x-kubernetes-map-type"
            | "x-kubernetes-preserve-unknown-fields" => v.is_some_and(|v| !v.is_null()),
            _ => is_set(v),
        };
        if !set {
            continue;
        }
        if go_name == "Type" {
            let ty = str_of(schema, "type");
            if ty != "object" {
                return Some(field::invalid(
                    &path.child("openAPIV3Schema.type"),
                    ty,
                    r#"only "object" is allowed as the type at the root of the schema if the status subresource is enabled"#,
                ));
            }
            continue;
        }
        if !ALLOWED_AT_ROOT.contains(&go_name) {
            return Some(field::invalid(
                &path.child("openAPIV3Schema"),
                schema_value(schema),
                &format!(
                    "only [{}] fields are allowed at the root of the schema if the status subresource is enabled",
                    ALLOWED_AT_ROOT.join(" ")
                ),
            ));
        }
    }
    None
}

/// Upstream `validateCustomResourceDefinitionValidation` over a `CustomResourceValidation`.
pub fn validate_validation(
    validation: Option<&Value>,
    status_enabled: bool,
    opts: &Options,
    path: &Path,
) -> Vec<Error> {
    let Some(schema) = validation.and_then(|v| obj(v, "openAPIV3Schema")) else {
        return Vec::new();
    };
    let mut errs = Vec::new();
    if status_enabled {
        errs.extend(validate_status_root(schema, path));
    }
    if bool_of(schema, "nullable") {
        errs.push(field::forbidden(
            &path.child("openAPIV3Schema.nullable"),
            "nullable cannot be true at the root",
        ));
    }
    let sp = path.child("openAPIV3Schema");
    let mut init_errs = Vec::new();
    // Upstream builds its CEL context only for a structural schema with valid defaults.
    let mut cel = false;
    if opts.require_structural_schema {
        if let Some(e) = new_structural_error(schema) {
            // These overlap with the errors below and only show without them.
            init_errs.push(field::invalid(&sp, "", &e));
        } else {
            let structural = validate_structural(&sp, schema);
            let defaults = if structural.is_empty() {
                validate_defaults(&sp, schema, opts.require_pruned_defaults)
            } else {
                structural
            };
            cel = defaults.is_empty();
            errs.extend(defaults);
        }
    }
    let ssv = Ssv {
        allow_defaults: opts.allow_defaults,
        disallow_defaults_reason: String::new(),
        inside_resource_meta: false,
        require_valid_property_type: opts.require_valid_property_type,
    };
    let schema_errs = validate_openapi_schema(Some(schema), &sp, &ssv, true, opts);
    // Upstream compiles each node's rules when nothing at or below that node is wrong;
    // here rules compile only when the whole schema is free of schema errors.
    cel &= schema_errs.is_empty();
    errs.extend(schema_errs);
    if cel {
        errs.extend(crate::cel::compile_errors(schema, &sp));
    }
    if errs.is_empty() {
        errs.extend(init_errs);
    }
    errs
}

/// Upstream `specStandardValidatorV3`, without the CEL `oldSelf` bookkeeping.
#[derive(Clone)]
pub struct Ssv {
    pub allow_defaults: bool,
    pub disallow_defaults_reason: String,
    pub inside_resource_meta: bool,
    pub require_valid_property_type: bool,
}

impl Ssv {
    fn with_forbidden_defaults(&self, reason: &str) -> Ssv {
        Ssv {
            allow_defaults: false,
            disallow_defaults_reason: reason.to_owned(),
            ..self.clone()
        }
    }

    fn with_inside_resource_meta(&self) -> Ssv {
        Ssv {
            inside_resource_meta: true,
            ..self.clone()
        }
    }

    /// Upstream `specStandardValidatorV3.validate`.
    fn validate(&self, s: &Value, path: &Path) -> Vec<Error> {
        let mut errs = Vec::new();
        let ty = str_of(s, "type");
        if self.require_valid_property_type && !ty.is_empty() && !OPENAPI_V3_TYPES.contains(&ty) {
            errs.push(field::not_supported(
                &path.child("type"),
                ty,
                &OPENAPI_V3_TYPES,
            ));
        }
        if is_set(s.get("default")) && !self.allow_defaults {
            let mut detail = "must not be set".to_owned();
            if !self.disallow_defaults_reason.is_empty() {
                detail.push(' ');
                detail.push_str(&self.disallow_defaults_reason);
            }
            errs.push(field::forbidden(&path.child("default"), &detail));
        }
        let unsupported = [
            ("id", !str_of(s, "id").is_empty(), "id is not supported"),
            (
                "additionalItems",
                s.get("additionalItems").is_some_and(|v| !v.is_null()),
                "additionalItems is not supported",
            ),
            (
                "patternProperties",
                map_of(s, "patternProperties").is_some_and(|m| !m.is_empty()),
                "patternProperties is not supported",
            ),
            (
                "definitions",
                map_of(s, "definitions").is_some_and(|m| !m.is_empty()),
                "definitions is not supported",
            ),
            (
                "dependencies",
                map_of(s, "dependencies").is_some(),
                "dependencies is not supported",
            ),
            (
                "$ref",
                opt_str(s, "$ref").is_some(),
                "$ref is not supported",
            ),
        ];
        for (key, hit, msg) in unsupported {
            if hit {
                errs.push(field::forbidden(&path.child(key), msg));
            }
        }
        if ty == "null" {
            errs.push(field::forbidden(
                &path.child("type"),
                "type cannot be set to null, use nullable as an alternative",
            ));
        }
        if s.get("items")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
        {
            errs.push(field::forbidden(
                &path.child("items"),
                "items must be a schema object and not an array",
            ));
        }
        if self.inside_resource_meta && bool_of(s, "x-kubernetes-embedded-resource") {
            errs.push(field::forbidden(
                &path.child("x-kubernetes-embedded-resource"),
                "must not be used inside of resource meta",
            ));
        }
        errs
    }
}

fn recurse_children(
    s: &Value,
    path: &Path,
    ssv: &Ssv,
    is_root: bool,
    opts: &Options,
) -> Vec<Error> {
    let mut errs = Vec::new();
    let rec = |child: Option<&Value>, p: &Path, ssv: &Ssv| {
        validate_openapi_schema(child, p, ssv, false, opts)
    };
    if let Some(ap) = s.get("additionalProperties").filter(|a| !a.is_null()) {
        let has_props = map_of(s, "properties").is_some_and(|m| !m.is_empty());
        if has_props && (ap == &Value::Bool(false) || ap.is_object()) {
            errs.push(field::forbidden(
                &path.child("additionalProperties"),
                "additionalProperties and properties are mutual exclusive",
            ));
        }
        let sub = if ssv.inside_resource_meta {
            ssv.with_forbidden_defaults("inside additionalProperties applying to object metadata")
        } else {
            ssv.clone()
        };
        errs.extend(rec(
            ap.as_object().map(|_| ap),
            &path.child("additionalProperties"),
            &sub,
        ));
    }
    let embedded = bool_of(s, "x-kubernetes-embedded-resource");
    for (name, prop) in map_of(s, "properties").into_iter().flatten() {
        let mut sub = ssv.clone();
        if (is_root || embedded) && matches!(name.as_str(), "metadata" | "kind" | "apiVersion") {
            sub = sub.with_inside_resource_meta();
            if is_root {
                sub = sub.with_forbidden_defaults(&format!("in top-level {name}"));
            }
        }
        errs.extend(rec(Some(prop), &path.child("properties").key(name), &sub));
    }
    errs.extend(rec(obj(s, "not"), &path.child("not"), ssv));
    for key in ["allOf", "oneOf", "anyOf"] {
        for (i, sub) in arr(s, key).iter().enumerate() {
            errs.extend(rec(Some(sub), &path.child(key).index(i), ssv));
        }
    }
    for (name, def) in map_of(s, "definitions").into_iter().flatten() {
        errs.extend(rec(Some(def), &path.child("definitions").key(name), ssv));
    }
    match s.get("items") {
        Some(items @ Value::Object(_)) => errs.extend(rec(Some(items), &path.child("items"), ssv)),
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                errs.extend(rec(Some(item), &path.child("items").index(i), ssv));
            }
        }
        _ => {}
    }
    for (name, dep) in map_of(s, "dependencies").into_iter().flatten() {
        let dep = dep.as_object().map(|_| dep);
        errs.extend(rec(dep, &path.child("dependencies").key(name), ssv));
    }
    errs
}

/// Upstream `ValidateCustomResourceDefinitionOpenAPISchema` (its schema errors).
pub fn validate_openapi_schema(
    schema: Option<&Value>,
    path: &Path,
    ssv: &Ssv,
    is_root: bool,
    opts: &Options,
) -> Vec<Error> {
    let Some(s) = schema.filter(|s| s.is_object()) else {
        return Vec::new();
    };
    let mut errs = ssv.validate(s, path);
    if bool_of(s, "uniqueItems") {
        errs.push(field::forbidden(
            &path.child("uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    errs.extend(recurse_children(s, path, ssv, is_root, opts));
    if opt_bool(s, "x-kubernetes-preserve-unknown-fields") == Some(false) {
        errs.push(field::invalid(
            &path.child("x-kubernetes-preserve-unknown-fields"),
            false,
            "must be true or undefined",
        ));
    }
    errs.extend(super::listtype::validate_list_and_map_types(s, path, opts));
    errs.extend(validate_rules(s, path));
    errs
}

fn has_newlines(s: &str) -> bool {
    s.contains(['\n', '\r'])
}

/// The syntactic checks of `x-kubernetes-validations` (CEL compilation is not done here).
fn validate_rules(s: &Value, path: &Path) -> Vec<Error> {
    const REASONS: [&str; 4] = [
        "FieldValueDuplicate",
        "FieldValueForbidden",
        "FieldValueInvalid",
        "FieldValueRequired",
    ];
    let mut errs = Vec::new();
    for (i, rule) in arr(s, "x-kubernetes-validations").iter().enumerate() {
        let p = path.child("x-kubernetes-validations").index(i);
        let (text, message) = (str_of(rule, "rule"), str_of(rule, "message"));
        let (trimmed_rule, trimmed_msg) = (text.trim(), message.trim());
        let message_expression = str_of(rule, "messageExpression");
        if trimmed_rule.is_empty() {
            errs.push(field::required(&p.child("rule"), "rule is not specified"));
        } else if !message.is_empty() && trimmed_msg.is_empty() {
            let msg = "message must be non-empty if specified";
            errs.push(field::invalid(&p.child("message"), message, msg));
        } else if has_newlines(trimmed_msg) {
            let msg = "message must not contain line breaks";
            errs.push(field::invalid(&p.child("message"), message, msg));
        } else if has_newlines(trimmed_rule) && trimmed_msg.is_empty() {
            let msg = "message must be specified if rule contains line breaks";
            errs.push(field::required(&p.child("message"), msg));
        }
        if !message_expression.is_empty() && message_expression.trim().is_empty() {
            let msg = "messageExpression must be non-empty if specified";
            errs.push(field::required(&p.child("messageExpression"), msg));
        }
        if let Some(reason) = opt_str(rule, "reason")
            && !REASONS.contains(&reason)
        {
            errs.push(field::not_supported(&p.child("reason"), reason, &REASONS));
        }
        let field_path = str_of(rule, "fieldPath");
        let fp = p.child("fieldPath");
        if !field_path.is_empty() && field_path.trim().is_empty() {
            let msg = "fieldPath must be non-empty if specified";
            errs.push(field::invalid(&fp, field_path, msg));
        }
        if has_newlines(field_path) {
            let msg = "fieldPath must not contain line breaks";
            errs.push(field::invalid(&fp, field_path, msg));
        }
        if !field_path.is_empty() && !path_valid(s, field_path) {
            errs.push(field::invalid(
                &fp,
                field_path,
                "fieldPath must be a valid path",
            ));
        }
    }
    errs
}

/// Upstream `pathValid`: schemas that do not convert are not judged.
fn path_valid(s: &Value, path: &str) -> bool {
    if new_structural_error(s).is_some() {
        return true;
    }
    valid_field_path(path, s, true).is_ok()
}

/// Upstream `SchemaHas`: `pred` on `s` and every nested schema.
pub fn schema_has(s: &Value, pred: &dyn Fn(&Value) -> bool) -> bool {
    if !s.is_object() {
        return false;
    }
    if pred(s) {
        return true;
    }
    let one = |key: &str| obj(s, key).is_some_and(|x| schema_has(x, pred));
    let list = |key: &str| arr(s, key).iter().any(|x| schema_has(x, pred));
    let map = |key: &str| map_of(s, key).is_some_and(|m| m.values().any(|x| schema_has(x, pred)));
    one("items")
        || list("items")
        || list("allOf")
        || list("anyOf")
        || list("oneOf")
        || one("not")
        || map("properties")
        || one("additionalProperties")
        || map("patternProperties")
        || one("additionalItems")
        || map("definitions")
        || map("dependencies")
}

/// Upstream `schemaHasKubernetesExtensions`.
pub fn has_kubernetes_extensions(s: &Value) -> bool {
    schema_has(s, &|n| {
        bool_of(n, "x-kubernetes-embedded-resource")
            || opt_bool(n, "x-kubernetes-preserve-unknown-fields").is_some()
            || bool_of(n, "x-kubernetes-int-or-string")
            || !arr(n, "x-kubernetes-list-map-keys").is_empty()
            || opt_str(n, "x-kubernetes-list-type").is_some()
            || !arr(n, "x-kubernetes-validations").is_empty()
    })
}

/// Upstream `SchemaHasInvalidTypes`.
pub fn has_invalid_types(s: &Value) -> bool {
    schema_has(s, &|n| {
        let ty = str_of(n, "type");
        !ty.is_empty() && !OPENAPI_V3_TYPES.contains(&ty)
    })
}

#[cfg(test)]
mod tests;
