//! Structural-schema rules over a schema's JSON: the errors of upstream's `NewStructural`
//! (`pkg/apiserver/schema/convert.go`) and `ValidateStructural` (`validation.go`,
//! `complete.go`), which upstream runs on the converted `Structural`. Here the JSON is read
//! with the conversion's rules (which fields are structural, which are value validations).

use kas_apimachinery::validation::field::{self, Error, Path};
use serde_json::Value;

use super::util::{arr, bool_of, map_of, obj, opt_bool, opt_str, str_of};

/// The error of upstream's `NewStructural`, if the schema cannot be converted.
pub fn new_structural_error(s: &Value) -> Option<String> {
    let nonempty_map = |k: &str| map_of(s, k).is_some_and(|m| !m.is_empty());
    let unsupported = [
        ("id", !str_of(s, "id").is_empty()),
        ("schema", !str_of(s, "$schema").is_empty()),
        ("$ref", opt_str(s, "$ref").is_some_and(|r| !r.is_empty())),
        ("patternProperties", nonempty_map("patternProperties")),
        ("dependencies", nonempty_map("dependencies")),
        (
            "additionalItems",
            s.get("additionalItems").is_some_and(|v| !v.is_null()),
        ),
        ("definitions", nonempty_map("definitions")),
    ];
    if let Some((name, _)) = unsupported.iter().find(|(_, hit)| *hit) {
        return Some(format!("OpenAPIV3Schema '{name}' is not supported"));
    }
    let nested = obj(s, "not")
        .into_iter()
        .chain(arr(s, "allOf"))
        .chain(arr(s, "anyOf"))
        .chain(arr(s, "oneOf"));
    for n in nested {
        if let Some(e) = new_structural_error(n) {
            return Some(e);
        }
    }
    if opt_bool(s, "x-kubernetes-preserve-unknown-fields") == Some(false) {
        return Some(
            "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined"
                .to_owned(),
        );
    }
    match s.get("items") {
        Some(Value::Array(a)) if !a.is_empty() => {
            return Some("OpenAPIV3Schema 'items' must be a schema, but is an array".to_owned());
        }
        Some(items @ Value::Object(_)) => {
            if let Some(e) = new_structural_error(items) {
                return Some(e);
            }
        }
        _ => {}
    }
    let children = map_of(s, "properties")
        .into_iter()
        .flat_map(|m| m.values())
        .chain(obj(s, "additionalProperties"));
    children
        .filter(|c| c.is_object())
        .find_map(new_structural_error)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

/// The properties of a structural node (`NewStructural` keeps only a non-empty map).
fn properties(s: &Value) -> impl Iterator<Item = (&String, &Value)> {
    map_of(s, "properties").into_iter().flatten()
}

fn property<'a>(s: &'a Value, name: &str) -> Option<&'a Value> {
    map_of(s, "properties").and_then(|m| m.get(name))
}

fn has(s: &Value, key: &str) -> bool {
    s.get(key).is_some_and(|v| !v.is_null())
}

/// Upstream `ValidateStructural`: the invariants and completeness, sorted by message.
pub fn validate_structural(path: &Path, s: &Value) -> Vec<Error> {
    let mut errs = invariants(s, Level::Root, path);
    errs.extend(completeness(s, Some(s), path, path));
    errs.sort_by_cached_key(ToString::to_string);
    errs
}

fn invariants(s: &Value, lvl: Level, path: &Path) -> Vec<Error> {
    let mut errs = Vec::new();
    let ty = str_of(s, "type");
    if ty == "array" && obj(s, "items").is_none() {
        errs.push(field::required(&path.child("items"), "must be specified"));
    }
    if let Some(items) = obj(s, "items") {
        errs.extend(invariants(items, Level::Item, &path.child("items")));
    }
    for (k, v) in properties(s) {
        errs.extend(invariants(
            v,
            Level::Field,
            &path.child("properties").key(k),
        ));
    }
    if has(s, "additionalProperties") {
        if lvl == Level::Root {
            let p = path.child("additionalProperties");
            errs.push(field::forbidden(&p, "must not be used at the root"));
        }
        if let Some(ap) = obj(s, "additionalProperties") {
            let p = path.child("additionalProperties");
            errs.extend(invariants(ap, Level::Field, &p));
        }
    }
    let int_or_string = bool_of(s, "x-kubernetes-int-or-string");
    let preserve = opt_bool(s, "x-kubernetes-preserve-unknown-fields") == Some(true);
    let embedded = bool_of(s, "x-kubernetes-embedded-resource");
    if int_or_string && preserve {
        let p = path.child("x-kubernetes-preserve-unknown-fields");
        errs.push(field::invalid(
            &p,
            true,
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    if int_or_string && embedded {
        let p = path.child("x-kubernetes-embedded-resource");
        errs.push(field::invalid(
            &p,
            true,
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    let skip_any_of = is_int_or_string_any_of(arr(s, "anyOf"));
    let skip_first_all_of_any_of = arr(s, "allOf")
        .first()
        .is_some_and(|a| is_int_or_string_any_of(arr(a, "anyOf")));
    errs.extend(value_validation(
        s,
        skip_any_of,
        skip_first_all_of_any_of,
        lvl,
        path,
    ));
    errs.extend(type_invariants(
        s,
        lvl,
        path,
        embedded,
        int_or_string || preserve,
    ));
    let check_metadata = lvl == Level::Root || embedded;
    for key in ["kind", "apiVersion"] {
        if let Some(p) = property(s, key).filter(|_| check_metadata) {
            let t = str_of(p, "type");
            if t != "string" {
                let fp = path.child("properties").key(key).child("type");
                errs.push(field::invalid(&fp, t, "must be string"));
            }
        }
    }
    if let Some(m) = property(s, "metadata") {
        let mp = path.child("properties").key("metadata");
        errs.extend(metadata_invariants(m, check_metadata, lvl, &mp));
    }
    let has_properties = map_of(s, "properties").is_some_and(|m| !m.is_empty());
    if embedded && !preserve && !has_properties {
        errs.push(field::required(
            &path.child("properties"),
            "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        ));
    }
    errs
}

fn type_invariants(
    s: &Value,
    lvl: Level,
    path: &Path,
    embedded: bool,
    untyped_ok: bool,
) -> Vec<Error> {
    let mut errs = Vec::new();
    let ty = str_of(s, "type");
    let tp = path.child("type");
    if embedded && ty != "object" {
        let msg = "must be object if x-kubernetes-embedded-resource is true";
        errs.push(if ty.is_empty() {
            field::required(&tp, msg)
        } else {
            field::invalid(&tp, ty, msg)
        });
    } else if ty.is_empty() && !untyped_ok {
        let msg = match lvl {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        errs.push(field::required(&tp, msg));
    }
    if embedded && has(s, "additionalProperties") {
        errs.push(field::forbidden(
            &path.child("additionalProperties"),
            "must not be used if x-kubernetes-embedded-resource is set",
        ));
    }
    if lvl == Level::Root && !ty.is_empty() && ty != "object" {
        errs.push(field::invalid(&tp, ty, "must be object at the root"));
    }
    errs
}

/// Whether the Go field behind `key` is non-zero after conversion into a structural
/// (`nested == false`) or nested value validation node.
fn structural_field_set(key: &str, v: &Value, nested: bool) -> bool {
    match key {
        // Not carried into the structural schema.
        "id" | "$schema" | "$ref" | "patternProperties" | "dependencies" | "additionalItems"
        | "definitions" | "externalDocs" | "example" => false,
        // Built by appending, so an empty list stays nil.
        "enum" | "allOf" | "anyOf" | "oneOf" => v.as_array().is_some_and(|a| !a.is_empty()),
        "properties" if !nested => v.as_object().is_some_and(|m| !m.is_empty()),
        "additionalProperties" if nested => v != &Value::Bool(false) && !v.is_null(),
        "additionalProperties" => !v.is_null(),
        _ => match v {
            Value::Null => false,
            Value::String(s) => {
                !s.is_empty() || matches!(key, "x-kubernetes-list-type" | "x-kubernetes-map-type")
            }
            Value::Bool(b) => *b,
            _ => true,
        },
    }
}

/// Upstream `isIntOrStringAnyOfPattern`: exactly `[{type: integer}, {type: string}]`.
fn is_int_or_string_any_of(any_of: &[Value]) -> bool {
    let only_type = |v: &Value, t: &str| {
        v.as_object().is_some_and(|m| {
            str_of(v, "type") == t
                && m.iter()
                    .all(|(k, x)| k == "type" || !structural_field_set(k, x, true))
        })
    };
    any_of.len() == 2 && only_type(&any_of[0], "integer") && only_type(&any_of[1], "string")
}

/// Upstream `validateStructuralMetadataInvariants`.
fn metadata_invariants(m: &Value, check_metadata: bool, lvl: Level, path: &Path) -> Vec<Error> {
    let mut errs = Vec::new();
    let ty = str_of(m, "type");
    if check_metadata && ty != "object" {
        errs.push(field::invalid(&path.child("type"), ty, "must be object"));
    }
    if lvl != Level::Root {
        return errs;
    }
    let names: Vec<&String> = properties(m).map(|(k, _)| k).collect();
    let only_names = !names.is_empty()
        && names.len() <= 2
        && names.iter().all(|k| *k == "name" || *k == "generateName");
    let other = m
        .as_object()
        .into_iter()
        .flatten()
        .any(|(k, v)| match k.as_str() {
            "type" | "default" => false,
            "properties" => !only_names && structural_field_set(k, v, false),
            _ => structural_field_set(k, v, false),
        });
    if other {
        errs.push(field::forbidden(
            path,
            "must not specify anything other than name and generateName, but metadata is implicitly specified",
        ));
    }
    errs
}

/// Upstream `validateValueValidation` over a node's value validations.
fn value_validation(
    s: &Value,
    skip_any_of: bool,
    skip_first_all_of_any_of: bool,
    lvl: Level,
    path: &Path,
) -> Vec<Error> {
    let mut errs = Vec::new();
    if !skip_any_of {
        for (i, v) in arr(s, "anyOf").iter().enumerate() {
            errs.extend(nested(v, false, false, lvl, &path.child("anyOf").index(i)));
        }
    }
    for (i, v) in arr(s, "allOf").iter().enumerate() {
        let skip = skip_first_all_of_any_of && i == 0;
        errs.extend(nested(v, skip, false, lvl, &path.child("allOf").index(i)));
    }
    for (i, v) in arr(s, "oneOf").iter().enumerate() {
        errs.extend(nested(v, false, false, lvl, &path.child("oneOf").index(i)));
    }
    if let Some(not) = obj(s, "not") {
        errs.extend(nested(not, false, false, lvl, &path.child("not")));
    }
    let pattern = str_of(s, "pattern");
    if let Some(e) = super::regexp::compile_error(pattern).filter(|_| !pattern.is_empty()) {
        let msg = format!("must be a valid regular expression, but isn't: {e}");
        errs.push(field::invalid(&path.child("pattern"), pattern, &msg));
    }
    errs
}

/// Upstream `validateNestedValueValidation`.
fn nested(
    v: &Value,
    skip_any_of: bool,
    skip_all_of_any_of: bool,
    lvl: Level,
    path: &Path,
) -> Vec<Error> {
    if !v.is_object() {
        return Vec::new();
    }
    let mut errs = value_validation(v, skip_any_of, skip_all_of_any_of, lvl, path);
    if let Some(items) = obj(v, "items") {
        errs.extend(nested(items, false, false, lvl, &path.child("items")));
    }
    for (k, p) in properties(v) {
        errs.extend(nested(
            p,
            false,
            false,
            Level::Field,
            &path.child("properties").key(k),
        ));
    }
    let forbidden = |key: &str, msg: &str| field::forbidden(&path.child(key), msg);
    const EMPTY: &str = "must be empty to be structural";
    const UNDEFINED: &str = "must be undefined to be structural";
    const FALSE: &str = "must be false to be structural";
    if !str_of(v, "type").is_empty() {
        errs.push(forbidden("type", EMPTY));
    }
    if structural_field_set(
        "additionalProperties",
        v.get("additionalProperties").unwrap_or(&Value::Null),
        true,
    ) {
        errs.push(forbidden("additionalProperties", UNDEFINED));
    }
    if has(v, "default") {
        errs.push(forbidden("default", UNDEFINED));
    }
    for key in ["title", "description"] {
        if !str_of(v, key).is_empty() {
            errs.push(forbidden(key, EMPTY));
        }
    }
    if bool_of(v, "nullable") {
        errs.push(forbidden("nullable", FALSE));
    }
    if opt_bool(v, "x-kubernetes-preserve-unknown-fields") == Some(true) {
        errs.push(forbidden("x-kubernetes-preserve-unknown-fields", FALSE));
    }
    for key in [
        "x-kubernetes-embedded-resource",
        "x-kubernetes-int-or-string",
    ] {
        if bool_of(v, key) {
            errs.push(forbidden(key, FALSE));
        }
    }
    if !arr(v, "x-kubernetes-list-map-keys").is_empty() {
        errs.push(forbidden("x-kubernetes-list-map-keys", EMPTY));
    }
    for key in ["x-kubernetes-list-type", "x-kubernetes-map-type"] {
        if opt_str(v, key).is_some() {
            errs.push(forbidden(key, UNDEFINED));
        }
    }
    if !arr(v, "x-kubernetes-validations").is_empty() {
        errs.push(forbidden("x-kubernetes-validations", EMPTY));
    }
    if property(v, "metadata").is_some() {
        let p = path.child("properties").key("metadata");
        errs.push(field::forbidden(
            &p,
            "must not be specified in a nested context",
        ));
    }
    errs
}

fn required_by(s_path: &Path, v_path: &Path) -> Error {
    field::required(s_path, &format!("because it is defined in {v_path}"))
}

/// Upstream `validateValueValidationCompleteness`: every node a value validation reaches
/// is specified structurally.
fn completeness(v: &Value, s: Option<&Value>, s_path: &Path, v_path: &Path) -> Vec<Error> {
    let Some(s) = s else {
        return vec![required_by(s_path, v_path)];
    };
    let mut errs = Vec::new();
    if let Some(not) = obj(v, "not") {
        errs.extend(nested_completeness(not, s, s_path, &v_path.child("not")));
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        for (i, x) in arr(v, key).iter().enumerate() {
            errs.extend(nested_completeness(
                x,
                s,
                s_path,
                &v_path.child(key).index(i),
            ));
        }
    }
    errs
}

fn nested_completeness(v: &Value, s: &Value, s_path: &Path, v_path: &Path) -> Vec<Error> {
    let mut errs = completeness(v, Some(s), s_path, v_path);
    if let Some(items) = obj(v, "items") {
        let (sp, vp) = (s_path.child("items"), v_path.child("items"));
        match obj(s, "items") {
            Some(s_items) => errs.extend(nested_completeness(items, s_items, &sp, &vp)),
            None => errs.push(required_by(&sp, &vp)),
        }
    }
    for (k, fld) in properties(v) {
        let sp = s_path.child("properties").key(k);
        let vp = v_path.child("properties").key(k);
        match property(s, k) {
            Some(s_fld) => errs.extend(nested_completeness(fld, s_fld, &sp, &vp)),
            None => errs.push(required_by(&sp, &vp)),
        }
    }
    errs
}

#[cfg(test)]
mod tests;
