//! Cases from upstream's `pkg/apiserver/validation/validation_test.go` (compared as sets
//! there, as lists here) and messages from kube-openapi's `errors/schema.go`.

use serde_json::{Value, json};

use super::*;

fn errors(schema: Value, obj: Value) -> Vec<String> {
    SchemaValidator::new(&schema)
        .validate(&Path::nil(), &obj)
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

fn field_schema(field: Value) -> Value {
    json!({"type": "object", "properties": {"field": field}})
}

#[test]
fn type_errors_name_the_json_type() {
    let schema = field_schema(json!({"type": "object"}));
    for (v, t) in [
        (json!("foo"), "string"),
        (json!(42), "integer"),
        (json!(true), "boolean"),
        (json!(1.2), "number"),
        (json!([]), "array"),
        (json!(null), "null"),
    ] {
        assert_eq!(
            errors(schema.clone(), json!({"field": v})),
            [format!(
                r#"field: Invalid value: "{t}": field in body must be of type object: "{t}""#
            )]
        );
    }
    assert!(
        errors(
            field_schema(json!({"type": "object", "nullable": true})),
            json!({"field": null})
        )
        .is_empty()
    );
    assert!(
        errors(
            field_schema(json!({"type": "integer"})),
            json!({"field": 2.0})
        )
        .is_empty()
    );
    assert!(errors(field_schema(json!({"type": "number"})), json!({"field": 2})).is_empty());
}

#[test]
fn int_or_string() {
    let schema = field_schema(json!({"x-kubernetes-int-or-string": true}));
    assert!(errors(schema.clone(), json!({"field": 42})).is_empty());
    assert!(errors(schema.clone(), json!({"field": "foo"})).is_empty());
    assert_eq!(
        errors(schema, json!({"field": null})),
        [r#"field: Invalid value: "null": field in body must be of type integer,string: "null""#]
    );
    let schema = field_schema(json!({"nullable": true, "x-kubernetes-int-or-string": true,
        "anyOf": [{"type": "integer"}, {"type": "string"}]}));
    assert!(errors(schema.clone(), json!({"field": null})).is_empty());
    assert_eq!(
        sorted(errors(schema, json!({"field": true}))),
        [
            r#"<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)"#,
            r#"field: Invalid value: "boolean": field in body must be of type integer,string: "boolean""#,
            r#"field: Invalid value: "boolean": field in body must be of type integer: "boolean""#,
        ]
    );
    let schema = field_schema(json!({"nullable": true, "x-kubernetes-int-or-string": true,
        "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}]}));
    assert_eq!(
        sorted(errors(schema, json!({"field": []}))),
        [
            r#"<nil>: Invalid value: "": "field" must validate all the schemas (allOf). None validated"#,
            r#"<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)"#,
            r#"field: Invalid value: "array": field in body must be of type integer,string: "array""#,
            r#"field: Invalid value: "array": field in body must be of type integer: "array""#,
        ]
    );
}

#[test]
fn required_and_enum() {
    let schema = json!({"type": "object", "required": ["field"], "properties": {
        "field": {"type": "object", "required": ["nested"], "properties": {"nested": {}}}}});
    assert_eq!(
        errors(schema.clone(), json!({"test": "a"})),
        ["field: Required value"]
    );
    assert_eq!(
        errors(schema, json!({"field": {}})),
        ["field.nested: Required value"]
    );
    let schema = field_schema(
        json!({"type": "object", "required": ["nestedint", "nestedstring"],
        "properties": {"nestedint": {"type": "integer", "enum": [1, 2]},
                       "nestedstring": {"type": "string", "enum": ["a", "b"]}}}),
    );
    assert_eq!(
        errors(schema.clone(), json!({"field": {}})),
        [
            "field.nestedint: Required value",
            "field.nestedstring: Required value"
        ]
    );
    assert_eq!(
        errors(
            schema.clone(),
            json!({"field": {"nestedint": "x", "nestedstring": true}})
        ),
        [
            r#"field.nestedint: Invalid value: "string": field.nestedint in body must be of type integer: "string""#,
            r#"field.nestedint: Unsupported value: "x": supported values: "1", "2""#,
            r#"field.nestedstring: Invalid value: "boolean": field.nestedstring in body must be of type string: "boolean""#,
            r#"field.nestedstring: Unsupported value: true: supported values: "a", "b""#,
        ]
    );
    // An integer enum takes a float with the same value, and a null is never in an enum.
    assert!(
        errors(
            schema.clone(),
            json!({"field": {"nestedint": 1.0, "nestedstring": "a"}})
        )
        .is_empty()
    );
    assert_eq!(
        errors(
            field_schema(json!({"nullable": true, "enum": ["a"]})),
            json!({"field": null})
        ),
        [r#"field: Unsupported value: "null": supported values: "a""#]
    );
}

#[test]
fn numbers() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "multipleOf": 2},
        "ratio": {"type": "number", "exclusiveMinimum": true, "minimum": 0.5, "exclusiveMaximum": true, "maximum": 1e6},
    }}}});
    assert_eq!(
        errors(schema.clone(), json!({"spec": {"replicas": "string"}})),
        [
            r#"spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string""#
        ]
    );
    assert_eq!(
        errors(
            schema.clone(),
            json!({"spec": {"replicas": -1, "ratio": 0.5}})
        ),
        [
            "spec.ratio: Invalid value: 0.5: spec.ratio in body should be greater than 0.5",
            "spec.replicas: Invalid value: -1: spec.replicas in body should be a multiple of 2",
            "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 1",
        ]
    );
    assert_eq!(
        errors(schema, json!({"spec": {"replicas": 12, "ratio": 1e6}})),
        [
            "spec.ratio: Invalid value: 1e+06: spec.ratio in body should be less than 1e+06",
            "spec.replicas: Invalid value: 12: spec.replicas in body should be less than or equal to 10",
        ]
    );
}

#[test]
fn integers_use_the_bounds_truncated_to_int64() {
    // Unlike kube-openapi's own suite (which decodes numbers as float64), a custom
    // resource's integers are int64, checked against int64(bound).
    let schema = field_schema(json!({"type": "number", "multipleOf": 1.5, "maximum": 2.9}));
    assert_eq!(
        errors(schema.clone(), json!({"field": 35})),
        ["field: Invalid value: 35: field in body should be less than or equal to 2"]
    );
    assert_eq!(
        errors(schema, json!({"field": 35.0})),
        [
            "field: Invalid value: 35: field in body should be a multiple of 1.5",
            "field: Invalid value: 35: field in body should be less than or equal to 2.9",
        ]
    );
}

#[test]
fn strings_and_formats() {
    let schema = json!({"type": "object", "properties": {
        "name": {"type": "string", "maxLength": 3, "minLength": 2, "pattern": "^[a-z]+$"},
        "id": {"type": "string", "format": "uuid"},
        "n": {"type": "string", "format": "int32"},
        "when": {"type": "string", "format": "date-time"},
    }});
    assert_eq!(
        errors(schema.clone(), json!({"name": "abcd"})),
        ["name: Too long: may not be more than 3 bytes"]
    );
    assert_eq!(
        errors(schema.clone(), json!({"name": "a"})),
        [r#"name: Invalid value: "a": name in body should be at least 2 chars long"#]
    );
    assert_eq!(
        errors(schema.clone(), json!({"name": "A1"})),
        [r#"name: Invalid value: "A1": name in body should match '^[a-z]+$'"#]
    );
    assert_eq!(
        errors(
            schema.clone(),
            json!({"id": "x", "n": "anything", "when": "2024-01-01"})
        ),
        [
            r#"id: Invalid value: "x": id in body must be of type uuid: "x""#,
            r#"when: Invalid value: "2024-01-01": when in body must be of type date-time: "2024-01-01""#,
        ]
    );
    // A format over a non-string names the value's Go format.
    assert_eq!(
        errors(schema, json!({"id": 5})),
        [r#"id: Invalid value: "int64": id in body must be of type uuid: "int64""#]
    );
}

#[test]
fn arrays_and_objects() {
    let schema = json!({"type": "object", "properties": {
        "list": {"type": "array", "minItems": 1, "maxItems": 2, "uniqueItems": true,
                 "items": {"type": "string"}},
        "labels": {"type": "object", "maxProperties": 1, "minProperties": 1,
                   "additionalProperties": {"type": "string"}},
        "closed": {"type": "object", "additionalProperties": false, "properties": {"a": {}}},
    }});
    assert_eq!(
        errors(schema.clone(), json!({"list": ["a", "a", 1]})),
        [
            r#"list[2]: Invalid value: "integer": list[2] in body must be of type string: "integer""#,
            "list: Too many: 3: must have at most 2 items",
            r#"list: Invalid value: "": list in body shouldn't contain duplicates"#,
        ]
    );
    assert_eq!(
        errors(schema.clone(), json!({"list": [], "labels": {}})),
        [
            "labels: Invalid value: 0: labels in body should have at least 1 properties",
            "list: Invalid value: 0: list in body should have at least 1 items",
        ]
    );
    assert_eq!(
        errors(schema.clone(), json!({"labels": {"a": 1, "b": "x"}})),
        [
            "labels: Too many: 2: must have at most 1 items",
            r#"labels.a: Invalid value: "integer": labels.a in body must be of type string: "integer""#,
        ]
    );
    assert_eq!(
        errors(schema, json!({"closed": {"a": 1, "b": 2}})),
        [r#"closed: Invalid value: "b": closed.b in body is a forbidden property"#]
    );
    // additionalProperties at the root: the name starts with a dot, the path does not.
    assert_eq!(
        errors(
            json!({"type": "object", "additionalProperties": {"type": "integer"}}),
            json!({"x": "y"})
        ),
        [r#"x: Invalid value: "string": .x in body must be of type integer: "string""#]
    );
}

#[test]
fn one_of_and_not() {
    let schema = field_schema(json!({"oneOf": [{"minimum": 1}, {"maximum": 5}]}));
    assert!(errors(schema.clone(), json!({"field": 0})).is_empty());
    assert_eq!(
        errors(schema, json!({"field": 3})),
        [
            r#"<nil>: Invalid value: "": "field" must validate one and only one schema (oneOf). Found 2 valid alternatives"#
        ]
    );
    let schema = field_schema(json!({"not": {"type": "string"}}));
    assert_eq!(
        errors(schema, json!({"field": "x"})),
        [r#"<nil>: Invalid value: "": "field" must not validate the schema (not)"#]
    );
}

#[test]
fn the_field_path_prefixes_names() {
    let errs = SchemaValidator::new(&field_schema(json!({"type": "string"})))
        .validate(&Path::new("root"), &json!({"field": 1}));
    assert_eq!(
        errs[0].to_string(),
        r#"root.field: Invalid value: "integer": field in body must be of type string: "integer""#
    );
}

fn update_errors(schema: &Value, new: Value, old: Value) -> Vec<String> {
    SchemaValidator::new(schema)
        .validate_update(&Path::nil(), &new, &old)
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn ratcheting_keeps_unchanged_invalid_values() {
    // Upstream's ratcheting_test.go: scalar, object and nested object fields.
    let medium = json!({"type": "number", "minimum": 50, "maximum": 10000});
    assert!(update_errors(&medium, json!(1), json!(1)).is_empty());
    assert_eq!(
        update_errors(&medium, json!(1), json!(2)),
        ["<nil>: Invalid value: 1:  in body should be greater than or equal to 50"]
    );
    let object = json!({"type": "object", "properties": {
        "small": {"type": "number", "maximum": 50}, "medium": medium}});
    let nested = json!({"type": "object", "properties": {"nested": object.clone()}});
    for schema in [object, nested] {
        let wrap = |v: Value| {
            if schema["properties"].get("nested").is_some() {
                json!({"nested": v})
            } else {
                v
            }
        };
        assert!(
            update_errors(
                &schema,
                wrap(json!({"small": 500})),
                wrap(json!({"small": 500}))
            )
            .is_empty()
        );
        assert!(
            update_errors(
                &schema,
                wrap(json!({"small": 501})),
                wrap(json!({"small": 501, "medium": 500}))
            )
            .is_empty()
        );
        assert_eq!(
            update_errors(
                &schema,
                wrap(json!({"small": 500})),
                wrap(json!({"small": 501}))
            )
            .len(),
            1
        );
    }
}

#[test]
fn ratcheting_correlates_map_list_items_by_key() {
    let item = json!({"type": "object", "properties": {"k": {"type": "string"},
        "v": {"type": "integer", "maximum": 1}}});
    let map_list = json!({"type": "object", "properties": {"l": {"type": "array",
        "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"], "items": item.clone()}}});
    let atomic = json!({"type": "object", "properties": {"l": {"type": "array", "items": item}}});
    let old = json!({"l": [{"k": "a", "v": 5}, {"k": "b", "v": 1}]});
    // Reordered and one item changed: the unchanged invalid item is kept.
    let new = json!({"l": [{"k": "b", "v": 0}, {"k": "a", "v": 5}]});
    assert!(update_errors(&map_list, new.clone(), old.clone()).is_empty());
    assert_eq!(
        update_errors(&atomic, new, old.clone()),
        ["l[1].v: Invalid value: 5: l[1].v in body should be less than or equal to 1"]
    );
    // An atomic list equal as a whole ratchets.
    assert!(update_errors(&atomic, old.clone(), old).is_empty());
    // TypeMeta at the root is never ratcheted by itself (only with the whole object).
    let typed = json!({"type": "object", "properties": {"kind": {"type": "string", "maxLength": 1},
        "x": {"type": "string", "maxLength": 1}}});
    assert_eq!(
        update_errors(
            &typed,
            json!({"kind": "Foo", "x": "long", "y": 1}),
            json!({"kind": "Foo", "x": "long"})
        ),
        ["kind: Too long: may not be more than 1 byte"]
    );
    assert!(update_errors(&typed, json!({"kind": "Foo"}), json!({"kind": "Foo"})).is_empty());
}
