use super::*;
use serde_json::json;

fn check(s: Value) -> Vec<String> {
    let path = Path::new("spec")
        .child("validation")
        .child("openAPIV3Schema");
    validate_structural(&path, &s)
        .iter()
        .map(ToString::to_string)
        .collect()
}

const ROOT: &str = "spec.validation.openAPIV3Schema";

#[test]
fn types_are_required_and_object_at_the_root() {
    assert_eq!(
        check(json!({"properties": {"a": {}, "b": {"type": "array", "items": {}}}})),
        vec![
            format!(
                "{ROOT}.properties[a].type: Required value: must not be empty for specified object fields"
            ),
            format!(
                "{ROOT}.properties[b].items.type: Required value: must not be empty for specified array items"
            ),
            format!("{ROOT}.type: Required value: must not be empty at the root"),
        ]
    );
    assert_eq!(
        check(json!({"type": "array"})),
        vec![
            format!("{ROOT}.items: Required value: must be specified"),
            format!(r#"{ROOT}.type: Invalid value: "array": must be object at the root"#),
        ]
    );
    // int-or-string and preserve-unknown-fields nodes may be untyped.
    assert!(
        check(json!({"type": "object", "properties": {
            "a": {"x-kubernetes-int-or-string": true},
            "b": {"x-kubernetes-preserve-unknown-fields": true},
        }}))
        .is_empty()
    );
}

#[test]
fn metadata_at_the_root_and_in_embedded_resources() {
    let meta = json!({"type": "number", "properties": {
        "name": {"type": "string", "pattern": "abc"},
        "generateName": {"type": "string"},
        "generation": {"type": "integer", "minimum": 42.0},
    }});
    let got = check(json!({"type": "object", "properties": {
        "apiVersion": {"type": "number"},
        "kind": {"type": "number"},
        "metadata": meta,
        "invalid": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {
            "kind": {"type": "number"}, "metadata": meta}},
        "noEmbeddedObject": {"type": "object", "properties": {
            "kind": {"type": "number"}, "metadata": {"type": "number"}}},
    }}));
    assert_eq!(
        got,
        vec![
            format!(
                r#"{ROOT}.properties[apiVersion].type: Invalid value: "number": must be string"#
            ),
            format!(
                r#"{ROOT}.properties[invalid].properties[kind].type: Invalid value: "number": must be string"#
            ),
            format!(
                r#"{ROOT}.properties[invalid].properties[metadata].type: Invalid value: "number": must be object"#
            ),
            format!(r#"{ROOT}.properties[kind].type: Invalid value: "number": must be string"#),
            format!(r#"{ROOT}.properties[metadata].type: Invalid value: "number": must be object"#),
            format!(
                "{ROOT}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified"
            ),
        ]
    );
    // Only name and generateName (with anything inside) are allowed at the root.
    assert!(
        check(
            json!({"type": "object", "properties": {"metadata": {"type": "object",
        "properties": {"name": {"type": "string", "maxLength": 3}}}}})
        )
        .is_empty()
    );
}

#[test]
fn embedded_resources() {
    assert_eq!(
        check(json!({"type": "object", "properties": {
            "e": {"x-kubernetes-embedded-resource": true, "additionalProperties": {"type": "string"}},
            "i": {"x-kubernetes-int-or-string": true, "x-kubernetes-embedded-resource": true, "type": "object",
                "x-kubernetes-preserve-unknown-fields": true},
        }})),
        vec![
            format!(
                "{ROOT}.properties[e].additionalProperties: Forbidden: must not be used if x-kubernetes-embedded-resource is set"
            ),
            format!(
                "{ROOT}.properties[e].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"
            ),
            format!(
                "{ROOT}.properties[e].type: Required value: must be object if x-kubernetes-embedded-resource is true"
            ),
            format!(
                "{ROOT}.properties[i].x-kubernetes-embedded-resource: Invalid value: true: must be false if x-kubernetes-int-or-string is true"
            ),
            format!(
                "{ROOT}.properties[i].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true"
            ),
        ]
    );
}

#[test]
fn value_validations_must_not_be_structural() {
    // Completeness is checked for the root's value validations only (as upstream does).
    assert_eq!(
        check(
            json!({"type": "object", "additionalProperties": false, "properties": {"a": {
                "type": "object",
                "properties": {"b": {"type": "string"}},
                "anyOf": [{"type": "string", "default": 1, "title": "t", "nullable": true,
                    "x-kubernetes-list-type": "set", "x-kubernetes-validations": [{"rule": "true"}],
                    "properties": {"metadata": {}}}],
                "not": {"description": "d", "additionalProperties": true},
            }}})
        ),
        vec![
            format!("{ROOT}.additionalProperties: Forbidden: must not be used at the root"),
            format!(
                "{ROOT}.properties[a].anyOf[0].default: Forbidden: must be undefined to be structural"
            ),
            format!(
                "{ROOT}.properties[a].anyOf[0].nullable: Forbidden: must be false to be structural"
            ),
            format!(
                "{ROOT}.properties[a].anyOf[0].properties[metadata]: Forbidden: must not be specified in a nested context"
            ),
            format!(
                "{ROOT}.properties[a].anyOf[0].title: Forbidden: must be empty to be structural"
            ),
            format!(
                "{ROOT}.properties[a].anyOf[0].type: Forbidden: must be empty to be structural"
            ),
            format!(
                "{ROOT}.properties[a].anyOf[0].x-kubernetes-list-type: Forbidden: must be undefined to be structural"
            ),
            format!(
                "{ROOT}.properties[a].anyOf[0].x-kubernetes-validations: Forbidden: must be empty to be structural"
            ),
            format!(
                "{ROOT}.properties[a].not.additionalProperties: Forbidden: must be undefined to be structural"
            ),
            format!(
                "{ROOT}.properties[a].not.description: Forbidden: must be empty to be structural"
            ),
        ]
    );
}

#[test]
fn int_or_string_patterns_are_allowed() {
    let any_of = json!([{"type": "integer"}, {"type": "string"}]);
    assert!(check(json!({"type": "object", "properties": {
        "a": {"x-kubernetes-int-or-string": true, "anyOf": any_of},
        "b": {"x-kubernetes-int-or-string": true, "allOf": [{"anyOf": any_of}, {"pattern": "x"}]},
    }}))
    .is_empty());
    // Anything else in the branches breaks the pattern.
    assert_eq!(
        check(
            json!({"type": "object", "properties": {"a": {"x-kubernetes-int-or-string": true,
            "anyOf": [{"type": "integer", "minimum": 1}, {"type": "string"}]}}})
        ),
        vec![
            format!(
                "{ROOT}.properties[a].anyOf[0].type: Forbidden: must be empty to be structural"
            ),
            format!(
                "{ROOT}.properties[a].anyOf[1].type: Forbidden: must be empty to be structural"
            ),
        ]
    );
}

#[test]
fn completeness() {
    assert_eq!(
        check(
            json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}}},
            "allOf": [{"properties": {"a": {"items": {"pattern": "x"}}, "b": {"items": {}}}}]})
        ),
        vec![format!(
            "{ROOT}.properties[b]: Required value: because it is defined in {ROOT}.allOf[0].properties[b]"
        )]
    );
}

#[test]
fn patterns_must_compile() {
    assert_eq!(
        check(json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "(a"}}})),
        vec![format!(
            r#"{ROOT}.properties[a].pattern: Invalid value: "(a": must be a valid regular expression, but isn't: error parsing regexp: missing closing ): `(a`"#
        )]
    );
}

#[test]
fn conversion_errors() {
    assert_eq!(new_structural_error(&json!({"type": "object"})), None);
    assert_eq!(
        new_structural_error(&json!({"properties": {"a": {"$schema": "x"}}})).as_deref(),
        Some("OpenAPIV3Schema 'schema' is not supported")
    );
    assert_eq!(
        new_structural_error(&json!({"items": [{}]})).as_deref(),
        Some("OpenAPIV3Schema 'items' must be a schema, but is an array")
    );
    assert_eq!(
        new_structural_error(&json!({"not": {"x-kubernetes-preserve-unknown-fields": false}}))
            .as_deref(),
        Some("internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined")
    );
    // Empty maps are not set values.
    assert_eq!(
        new_structural_error(&json!({"definitions": {}, "$ref": ""})),
        None
    );
}
