use super::*;
use serde_json::json;

const ROOT: &str = "spec.validation.openAPIV3Schema";

fn check_with(schema: Value, status: bool, opts: &Options) -> Vec<String> {
    let validation = json!({ "openAPIV3Schema": schema });
    let path = Path::new("spec").child("validation");
    validate_validation(Some(&validation), status, opts, &path)
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn check(schema: Value) -> Vec<String> {
    check_with(schema, false, &Options::create())
}

#[test]
fn unsupported_fields() {
    assert_eq!(
        check(json!({"type": "object", "properties": {"a": {
            "type": "null", "id": "x", "$ref": "#/x", "uniqueItems": true,
            "additionalItems": false, "patternProperties": {"x": {}}, "definitions": {"d": {"type": "string"}},
            "dependencies": {}, "items": [{"type": "string"}],
        }}})),
        vec![
            format!(
                r#"{ROOT}.properties[a].type: Unsupported value: "null": supported values: "array", "boolean", "integer", "number", "object", "string""#
            ),
            format!("{ROOT}.properties[a].id: Forbidden: id is not supported"),
            format!(
                "{ROOT}.properties[a].additionalItems: Forbidden: additionalItems is not supported"
            ),
            format!(
                "{ROOT}.properties[a].patternProperties: Forbidden: patternProperties is not supported"
            ),
            format!("{ROOT}.properties[a].definitions: Forbidden: definitions is not supported"),
            format!("{ROOT}.properties[a].dependencies: Forbidden: dependencies is not supported"),
            format!("{ROOT}.properties[a].$ref: Forbidden: $ref is not supported"),
            format!(
                "{ROOT}.properties[a].type: Forbidden: type cannot be set to null, use nullable as an alternative"
            ),
            format!(
                "{ROOT}.properties[a].items: Forbidden: items must be a schema object and not an array"
            ),
            format!(
                "{ROOT}.properties[a].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic"
            ),
        ]
    );
}

#[test]
fn conversion_errors_show_only_alone() {
    // `$schema` is only caught by the structural conversion.
    assert_eq!(
        check(json!({"type": "object", "$schema": "http://json-schema.org/schema"})),
        vec![format!(
            r#"{ROOT}: Invalid value: "": OpenAPIV3Schema 'schema' is not supported"#
        )]
    );
    assert_eq!(
        check(json!({"type": "object", "x-kubernetes-preserve-unknown-fields": false})),
        vec![format!(
            "{ROOT}.x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined"
        )]
    );
}

#[test]
fn defaults_in_resource_meta() {
    assert_eq!(
        check(json!({"type": "object", "properties": {
            "metadata": {"type": "object", "default": {}},
            "embedded": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {
                "metadata": {"type": "object", "properties": {"annotations": {"type": "object",
                    "additionalProperties": {"type": "string", "default": "x"}}}},
                "kind": {"type": "string", "x-kubernetes-embedded-resource": true},
            }},
        }})),
        vec![
            format!(
                "{ROOT}.properties[embedded].properties[kind].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"
            ),
            format!(
                "{ROOT}.properties[embedded].properties[kind].type: Invalid value: \"string\": must be object if x-kubernetes-embedded-resource is true"
            ),
            format!(
                "{ROOT}.properties[embedded].properties[kind].x-kubernetes-embedded-resource: Forbidden: must not be used inside of resource meta"
            ),
            format!(
                "{ROOT}.properties[embedded].properties[metadata].properties[annotations].additionalProperties.default: Forbidden: must not be set inside additionalProperties applying to object metadata"
            ),
            format!(
                "{ROOT}.properties[metadata].default: Forbidden: must not be set in top-level metadata"
            ),
        ]
    );
}

#[test]
fn additional_properties_and_properties() {
    assert_eq!(
        check(
            json!({"type": "object", "properties": {"a": {"type": "object",
            "properties": {"x": {"type": "string"}}, "additionalProperties": false}}})
        ),
        vec![format!(
            "{ROOT}.properties[a].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"
        )]
    );
    assert!(
        check(
            json!({"type": "object", "properties": {"a": {"type": "object",
        "properties": {"x": {"type": "string"}}, "additionalProperties": true}}})
        )
        .is_empty()
    );
}

#[test]
fn status_subresource_root() {
    let opts = Options::create();
    assert_eq!(
        check_with(json!({"type": "string"}), true, &opts),
        vec![
            format!(
                r#"{ROOT}.type: Invalid value: "string": only "object" is allowed as the type at the root of the schema if the status subresource is enabled"#
            ),
            format!(r#"{ROOT}.type: Invalid value: "string": must be object at the root"#),
        ]
    );
    let got = check_with(json!({"type": "object", "nullable": true}), true, &opts);
    assert_eq!(got.len(), 2);
    assert!(got[0].starts_with(&format!(
        r#"{ROOT}: Invalid value: apiextensions.JSONSchemaProps{{ID:"", Schema:"", Ref:(*string)(nil), Description:"", Type:"object", Nullable:true, "#
    )));
    assert!(got[0].ends_with(": only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed at the root of the schema if the status subresource is enabled"));
    assert_eq!(
        got[1],
        format!("{ROOT}.nullable: Forbidden: nullable cannot be true at the root")
    );
}

#[test]
fn validation_rule_syntax() {
    assert_eq!(
        check(
            json!({"type": "object", "properties": {"f": {"type": "string"}}, "x-kubernetes-validations": [
                {"rule": " "},
                {"rule": "true", "message": " "},
                {"rule": "true", "message": "a\nb"},
                {"rule": "a\n&& b"},
                {"rule": "true", "messageExpression": " ", "reason": "Other"},
                {"rule": "true", "fieldPath": ".g"},
                {"rule": "true", "fieldPath": ".f"},
            ]})
        ),
        vec![
            format!(
                "{ROOT}.x-kubernetes-validations[0].rule: Required value: rule is not specified"
            ),
            format!(
                r#"{ROOT}.x-kubernetes-validations[1].message: Invalid value: " ": message must be non-empty if specified"#
            ),
            format!(
                r#"{ROOT}.x-kubernetes-validations[2].message: Invalid value: "a\nb": message must not contain line breaks"#
            ),
            format!(
                "{ROOT}.x-kubernetes-validations[3].message: Required value: message must be specified if rule contains line breaks"
            ),
            format!(
                "{ROOT}.x-kubernetes-validations[4].messageExpression: Required value: messageExpression must be non-empty if specified"
            ),
            format!(
                r#"{ROOT}.x-kubernetes-validations[4].reason: Unsupported value: "Other": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired""#
            ),
            format!(
                r#"{ROOT}.x-kubernetes-validations[5].fieldPath: Invalid value: ".g": fieldPath must be a valid path"#
            ),
        ]
    );
}

#[test]
fn schema_walks() {
    let s =
        json!({"type": "object", "properties": {"a": {"type": "array", "items": {"default": 1}}}});
    assert!(schema_has(&s, &|n| n.get("default").is_some()));
    assert!(!has_kubernetes_extensions(&s));
    let s = json!({"type": "object", "anyOf": [{"x-kubernetes-preserve-unknown-fields": false}]});
    assert!(has_kubernetes_extensions(&s));
    assert!(has_invalid_types(&json!({"not": {"type": "foo"}})));
}

#[test]
fn rules_compile_once_the_schema_is_valid() {
    let bad_rule = json!({"type": "object", "properties": {"f": {"type": "string"}},
        "x-kubernetes-validations": [{"rule": "self.f +"}]});
    let got = check(bad_rule);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].starts_with(&format!(
        "{ROOT}.x-kubernetes-validations[0].rule: Invalid value: "
    )));
    // With a schema error anywhere, rules are not compiled.
    let got = check(
        json!({"type": "object", "properties": {"f": {"type": "string"}, "g": {}},
        "x-kubernetes-validations": [{"rule": "self.f +"}]}),
    );
    assert_eq!(
        got,
        vec![format!(
            "{ROOT}.properties[g].type: Required value: must not be empty for specified object fields"
        )]
    );
}

/// Upstream's `TestValidateCustomResourceDefinitionValidation` runs with zero options.
fn none() -> Options {
    Options {
        allow_defaults: false,
        require_recognized_conversion_review_version: false,
        require_immutable_names: false,
        require_openapi_schema: false,
        require_valid_property_type: false,
        require_structural_schema: false,
        require_pruned_defaults: false,
        require_atomic_set_type: false,
        require_map_list_keys_map_set_validation: false,
        allow_invalid_ca_bundle: false,
    }
}

#[test]
fn upstream_validation_cases() {
    let opts = none();
    assert!(check_with(json!({"type": "string"}), false, &opts).is_empty());
    let got = check_with(
        json!({"anyOf": [{"description": "First schema"}, {"description": "Second schema"}]}),
        true,
        &opts,
    );
    assert_eq!(got.len(), 1);
    assert!(got[0].starts_with(&format!(
        "{ROOT}: Invalid value: apiextensions.JSONSchemaProps{{"
    )));
    let all_allowed = json!({
        "description": "This is a description", "type": "object", "format": "date-time",
        "title": "This is a title", "maximum": 10, "exclusiveMaximum": true, "minimum": 5,
        "exclusiveMinimum": true, "maxLength": 10, "minLength": 5, "pattern": "^[a-z]$",
        "maxItems": 10, "minItems": 5, "multipleOf": 3, "required": ["spec", "status"],
        "properties": {"spec": {"type": "object", "items": {"description": "nested", "type": "string"}},
            "status": {"type": "object"}},
        "externalDocs": {"description": "docs"}, "example": {"a": 1},
    });
    assert!(check_with(all_allowed, true, &opts).is_empty());
    assert_eq!(
        check_with(
            json!({"properties": {"null": {"type": "null"}}}),
            false,
            &opts
        ),
        vec![format!(
            "{ROOT}.properties[null].type: Forbidden: type cannot be set to null, use nullable as an alternative"
        )]
    );
    assert!(
        check_with(
            json!({"properties": {"nullable": {"nullable": true}}}),
            false,
            &opts
        )
        .is_empty()
    );
    let structural = Options {
        require_structural_schema: true,
        ..none()
    };
    assert_eq!(
        check_with(json!({}), false, &structural),
        vec![format!(
            "{ROOT}.type: Required value: must not be empty at the root"
        )]
    );
    let valid_types = Options {
        require_valid_property_type: true,
        ..none()
    };
    assert_eq!(
        check_with(json!({"type": "foo"}), false, &valid_types),
        vec![format!(
            r#"{ROOT}.type: Unsupported value: "foo": supported values: "array", "boolean", "integer", "number", "object", "string""#
        )]
    );
    assert!(check_with(json!({"type": "foo"}), false, &opts).is_empty());
}
