//! Upstream `structuraldefaulting.ValidateDefaults`
//! (`pkg/apiserver/schema/defaulting/validation.go`): every `default` of a structural
//! schema must be what the schema would keep (pruned, with `requirePrunedDefaults`), carry
//! valid embedded metadata, pass the schema's OpenAPI validation of its node, and its
//! node's CEL rules. Defaults inside an embedded resource's `metadata`, `apiVersion` or
//! `kind` are checked against their node only (upstream first places them in a
//! surrounding object to coerce its metadata).

use kas_apimachinery::validation::field::{self, Error, Path};
use serde_json::Value;

use crate::schema::{
    ObjectMetaOptions, SchemaValidator, Structural, coerce_object_meta, prune,
    validate_embedded_resources,
};

/// The errors of the defaults in `schema` (the `openAPIV3Schema` at `path`), whose root is
/// a resource root.
pub fn validate_defaults(path: &Path, schema: &Value, require_pruned: bool) -> Vec<Error> {
    let mut errs = Vec::new();
    walk(path, schema, true, false, require_pruned, &mut errs);
    errs
}

fn walk(
    path: &Path,
    schema: &Value,
    resource_root: bool,
    inside_meta: bool,
    require_pruned: bool,
    errs: &mut Vec<Error>,
) {
    let Some(node) = schema.as_object() else {
        return;
    };
    let embedded =
        resource_root || node.get("x-kubernetes-embedded-resource") == Some(&Value::Bool(true));
    let inside_meta = inside_meta && !embedded;
    if let Some(default) = node.get("default").filter(|d| !d.is_null()) {
        let s = Structural::new(schema);
        let found = if inside_meta {
            node_errors(path, &s, schema, default, false, false)
        } else {
            node_errors(path, &s, schema, default, embedded, require_pruned)
        };
        errs.extend(found);
    }
    // `additionalProperties` is not followed: defaults are forbidden there.
    if let Some(items) = node.get("items") {
        walk(
            &path.child("items"),
            items,
            false,
            inside_meta,
            require_pruned,
            errs,
        );
    }
    let properties = node.get("properties").and_then(Value::as_object);
    for (k, sub) in properties.into_iter().flatten() {
        let meta = embedded && matches!(k.as_str(), "metadata" | "apiVersion" | "kind");
        let sub_path = path.child("properties").key(k);
        let embedded_child = sub.get("x-kubernetes-embedded-resource") == Some(&Value::Bool(true));
        walk(
            &sub_path,
            sub,
            embedded_child,
            inside_meta || meta,
            require_pruned,
            errs,
        );
    }
}

/// One default's errors, the first failing step's only, in upstream's order.
fn node_errors(
    path: &Path,
    s: &Structural,
    schema: &Value,
    default: &Value,
    embedded: bool,
    require_pruned: bool,
) -> Vec<Error> {
    let at = path.child("default");
    let mut errs = Vec::new();
    if require_pruned {
        let mut pruned = default.clone();
        prune(&mut pruned, s, embedded, false);
        if &pruned != default {
            errs.push(field::invalid(
                &at,
                crate::schema::bad_value(default),
                "must not have unknown fields",
            ));
        }
    }
    let mut coerced = default.clone();
    let opts = ObjectMetaOptions::default();
    if let Err(e) = coerce_object_meta(&at, &mut coerced, s, embedded, opts) {
        errs.push(e);
        return errs;
    }
    let embedded_errs = validate_embedded_resources(&at, default, s, embedded);
    if !embedded_errs.is_empty() {
        errs.extend(embedded_errs);
        return errs;
    }
    let schema_errs = SchemaValidator::from_structural(s).validate(&at, default);
    if !schema_errs.is_empty() {
        errs.extend(schema_errs);
        return errs;
    }
    let rules = crate::cel::Validator::new(schema);
    if !rules.is_empty() {
        errs.extend(rules.validate(&at, default, Some(default)));
        if errs.is_empty() {
            // With ratcheting, a rule reading `oldSelf` optionally must also pass as a
            // create.
            errs.extend(rules.validate(&at, default, None));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shown(schema: Value) -> Vec<String> {
        let path = Path::new("spec")
            .child("validation")
            .child("openAPIV3Schema");
        validate_defaults(&path, &schema, true)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn a_default_must_have_its_schemas_type() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"size": {"type": "integer", "default": "string"}}}}});
        assert_eq!(
            shown(schema),
            // kube-openapi names the value "" (the validator's root): two spaces.
            [
                "spec.validation.openAPIV3Schema.properties[spec].properties[size].default: Invalid value: \"string\":  in body must be of type integer: \"string\""
            ]
        );
    }

    #[test]
    fn valid_and_pruned_defaults_pass() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "default": {"size": 1},
            "properties": {"size": {"type": "integer", "default": 3, "maximum": 5}}}}});
        assert!(shown(schema).is_empty());
    }

    #[test]
    fn unknown_fields_and_bounds_are_refused() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
            "default": {"size": 9, "extra": true},
            "properties": {"size": {"type": "integer", "maximum": 5}}}}});
        let errs = shown(schema);
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert!(
            errs[0].ends_with("must not have unknown fields"),
            "{errs:?}"
        );
        assert!(
            errs[1].contains("should be less than or equal to 5"),
            "{errs:?}"
        );
    }
}
