//! The `x-kubernetes-map-type`, `x-kubernetes-list-type` and `x-kubernetes-list-map-keys`
//! rules of upstream's `ValidateCustomResourceDefinitionOpenAPISchema`, and
//! `validateMapListKeysMapSet`.

use kas_apimachinery::validation::field::{self, BadValue, Error, Path};
use serde_json::Value;

use super::Options;
use super::util::{bool_of, map_of, obj, opt_str, ptr_str, str_of, strings, strings_value};

fn must_be_type(s: &Value, want: &str, ext: &str, path: &Path) -> Option<Error> {
    let ty = str_of(s, "type");
    let msg = format!("must be {want} if {ext} is specified");
    if ty == want {
        None
    } else if ty.is_empty() {
        Some(field::required(&path.child("type"), &msg))
    } else {
        Some(field::invalid(&path.child("type"), ty, &msg))
    }
}

fn validate_set_items(items: &Value, path: &Path) -> Option<Error> {
    const MSG: &str = "must be atomic as item of a list with x-kubernetes-list-type=set";
    let ip = path.child("items");
    match str_of(items, "type") {
        "array" => opt_str(items, "x-kubernetes-list-type")
            .filter(|t| *t != "atomic")
            .map(|_| {
                let p = ip.child("x-kubernetes-list-type");
                field::invalid(&p, list_type_value(items), MSG)
            }),
        "object" if opt_str(items, "x-kubernetes-map-type") != Some("atomic") => {
            // Upstream prints the items' list type here, not the map type.
            let p = ip.child("x-kubernetes-map-type");
            Some(field::invalid(&p, list_type_value(items), MSG))
        }
        _ => None,
    }
}

fn validate_map_list(s: &Value, path: &Path) -> Vec<Error> {
    let mut errs = Vec::new();
    let keys = strings(s, "x-kubernetes-list-map-keys");
    if keys.is_empty() {
        errs.push(field::required(
            &path.child("x-kubernetes-list-map-keys"),
            "must not be empty if x-kubernetes-list-type is map",
        ));
    }
    let items = s.get("items").filter(|i| !i.is_null());
    let Some(items) = items else {
        errs.push(field::required(
            &path.child("items"),
            "must have a schema if x-kubernetes-list-type is map",
        ));
        return errs;
    };
    if !items.is_object() {
        let schemas: Vec<String> = items
            .as_array()
            .into_iter()
            .flatten()
            .map(super::gostruct::go_schema)
            .collect();
        let value = format!(
            "apiextensions.JSONSchemaPropsOrArray{{Schema:(*apiextensions.JSONSchemaProps)(nil), JSONSchemas:[]apiextensions.JSONSchemaProps{{{}}}}}",
            schemas.join(", ")
        );
        errs.push(field::invalid(
            &path.child("items"),
            BadValue::Raw(value),
            "must only have a single schema if x-kubernetes-list-type is map",
        ));
        return errs;
    }
    let item_type = str_of(items, "type");
    if item_type != "object" {
        errs.push(field::invalid(
            &path.child("items").child("type"),
            item_type,
            "must be object if parent array's x-kubernetes-list-type is map",
        ));
        return errs;
    }
    let props = map_of(items, "properties");
    let mut seen: Vec<&str> = Vec::new();
    let kp = path.child("x-kubernetes-list-map-keys");
    for k in &keys {
        match props.and_then(|p| p.get(k)) {
            Some(prop) => {
                if matches!(str_of(prop, "type"), "array" | "object") {
                    let p = path.child("items").child("properties").key(k).child("type");
                    let msg =
                        "must be a scalar type if parent array's x-kubernetes-list-type is map";
                    // Upstream prints the items' type ("object").
                    errs.push(field::invalid(&p, item_type, msg));
                }
            }
            None => errs.push(field::invalid(
                &kp,
                list_map_keys_value(s),
                "entries must all be names of item properties",
            )),
        }
        if seen.contains(&k.as_str()) {
            errs.push(field::invalid(
                &kp,
                list_map_keys_value(s),
                "must not contain duplicate entries",
            ));
        }
        seen.push(k);
    }
    errs
}

/// Upstream `validateMapListKeysMapSet`.
pub fn validate_map_list_keys_map_set(s: &Value, path: &Path) -> Vec<Error> {
    let mut errs = Vec::new();
    let (Some(items), Some(lt)) = (obj(s, "items"), opt_str(s, "x-kubernetes-list-type")) else {
        return errs;
    };
    if lt != "set" && lt != "map" {
        return errs;
    }
    if bool_of(items, "nullable") {
        let msg = format!("cannot be nullable when x-kubernetes-list-type is {lt}");
        errs.push(field::forbidden(
            &path.child("items").child("nullable"),
            &msg,
        ));
    }
    if lt != "map" {
        return errs;
    }
    let required = strings(items, "required");
    let props = map_of(items, "properties");
    for k in strings(s, "x-kubernetes-list-map-keys") {
        let Some(prop) = props.and_then(|p| p.get(&k)) else {
            continue;
        };
        let pp = path.child("items").child("properties").key(&k);
        if !required.contains(&k) && prop.get("default").is_none_or(Value::is_null) {
            errs.push(field::required(
                &pp.child("default"),
                "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
            ));
        }
        if bool_of(prop, "nullable") {
            errs.push(field::forbidden(
                &pp.child("nullable"),
                "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
            ));
        }
    }
    errs
}

/// The list and map type rules, in upstream's order.
pub fn validate_list_and_map_types(s: &Value, path: &Path, opts: &Options) -> Vec<Error> {
    let mut errs = Vec::new();
    let map_type = opt_str(s, "x-kubernetes-map-type");
    if map_type.is_some() {
        errs.extend(must_be_type(s, "object", "x-kubernetes-map-type", path));
    }
    if let Some(mt) = map_type.filter(|t| *t != "atomic" && *t != "granular") {
        let p = path.child("x-kubernetes-map-type");
        errs.push(field::not_supported(&p, mt, &["atomic", "granular"]));
    }
    let list_type = opt_str(s, "x-kubernetes-list-type");
    if list_type.is_some() && str_of(s, "type") != "array" {
        errs.extend(must_be_type(s, "array", "x-kubernetes-list-type", path));
    } else if opts.require_atomic_set_type
        && list_type == Some("set")
        && let Some(items) = obj(s, "items")
    {
        errs.extend(validate_set_items(items, path));
    }
    if let Some(lt) = list_type.filter(|t| !matches!(*t, "atomic" | "set" | "map")) {
        let p = path.child("x-kubernetes-list-type");
        errs.push(field::not_supported(&p, lt, &["atomic", "set", "map"]));
    }
    if !strings(s, "x-kubernetes-list-map-keys").is_empty() {
        let p = path.child("x-kubernetes-list-type");
        const MSG: &str = "must be map if x-kubernetes-list-map-keys is non-empty";
        match list_type {
            None => errs.push(field::required(&p, MSG)),
            Some(lt) if lt != "map" => errs.push(field::invalid(&p, lt, MSG)),
            Some(_) => {}
        }
    }
    if list_type == Some("map") {
        errs.extend(validate_map_list(s, path));
    }
    if opts.require_map_list_keys_map_set_validation {
        errs.extend(validate_map_list_keys_map_set(s, path));
    }
    errs
}

/// For `x-kubernetes-list-map-keys` errors: the `[]string` as upstream prints it.
fn list_map_keys_value(s: &Value) -> BadValue {
    strings_value(s, "x-kubernetes-list-map-keys")
}

/// For `x-kubernetes-list-type` errors that print the `*string`.
fn list_type_value(s: &Value) -> BadValue {
    ptr_str(opt_str(s, "x-kubernetes-list-type"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(s: Value) -> Vec<String> {
        validate_list_and_map_types(&s, &Path::new("s"), &Options::create())
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn map_and_list_types() {
        assert_eq!(
            check(json!({"x-kubernetes-map-type": "foo"})),
            vec![
                "s.type: Required value: must be object if x-kubernetes-map-type is specified",
                r#"s.x-kubernetes-map-type: Unsupported value: "foo": supported values: "atomic", "granular""#,
            ]
        );
        assert_eq!(
            check(json!({"type": "string", "x-kubernetes-list-type": "bar"})),
            vec![
                r#"s.type: Invalid value: "string": must be array if x-kubernetes-list-type is specified"#,
                r#"s.x-kubernetes-list-type: Unsupported value: "bar": supported values: "atomic", "set", "map""#,
            ]
        );
        assert_eq!(
            check(json!({"type": "array", "x-kubernetes-list-type": "set",
                "items": {"type": "object"}})),
            vec![
                r#"s.items.x-kubernetes-map-type: Invalid value: "null": must be atomic as item of a list with x-kubernetes-list-type=set"#
            ]
        );
    }

    #[test]
    fn map_lists() {
        assert_eq!(
            check(json!({"type": "array", "x-kubernetes-list-type": "map"})),
            vec![
                "s.x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map",
                "s.items: Required value: must have a schema if x-kubernetes-list-type is map",
            ]
        );
        assert_eq!(
            check(json!({"type": "array", "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["a", "b", "a"],
                "items": {"type": "object", "properties": {
                    "a": {"type": "object"}, "c": {"type": "string", "nullable": true}}}})),
            vec![
                r#"s.items.properties[a].type: Invalid value: "object": must be a scalar type if parent array's x-kubernetes-list-type is map"#,
                r#"s.x-kubernetes-list-map-keys: Invalid value: []string{"a", "b", "a"}: entries must all be names of item properties"#,
                r#"s.items.properties[a].type: Invalid value: "object": must be a scalar type if parent array's x-kubernetes-list-type is map"#,
                r#"s.x-kubernetes-list-map-keys: Invalid value: []string{"a", "b", "a"}: must not contain duplicate entries"#,
                "s.items.properties[a].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
                "s.items.properties[a].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
            ]
        );
        assert_eq!(
            check(json!({"type": "array", "x-kubernetes-list-type": "set",
                "items": {"type": "string", "nullable": true}})),
            vec![
                "s.items.nullable: Forbidden: cannot be nullable when x-kubernetes-list-type is set"
            ]
        );
    }
}
