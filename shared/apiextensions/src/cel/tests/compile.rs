use kas_apimachinery::validation::field::Path;
use serde_json::{Value as Json, json};

use crate::cel::compile_errors;

fn schema_path() -> Path {
    Path::new("spec")
        .child("versions")
        .index(0)
        .child("schema")
        .child("openAPIV3Schema")
}

fn compile(schema: Json) -> Vec<String> {
    compile_errors(&schema, &schema_path())
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn spec_with(rule: Json, spec_props: Json) -> Json {
    json!({ "type": "object", "properties": {
        "spec": { "type": "object", "properties": spec_props, "x-kubernetes-validations": [rule] },
    } })
}

#[test]
fn valid_rules_have_no_errors() {
    let props = json!({ "a": { "type": "string", "maxLength": 10 }, "l": { "type": "array", "maxItems": 10, "items": { "type": "string", "maxLength": 10 } } });
    for rule in [
        "self.a == 'x'",
        "has(self.a)",
        "self.l.all(x, x.startsWith('a'))",
        "self.l.map(e, e.size()).sum() < 10",
    ] {
        assert!(
            compile(spec_with(json!({ "rule": rule }), props.clone())).is_empty(),
            "{rule}"
        );
    }
}

#[test]
fn syntax_errors_as_cel_go() {
    assert_eq!(
        compile(spec_with(
            json!({ "rule": "self.a +" }),
            json!({ "a": { "type": "integer" } })
        )),
        [
            "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:\"self.a +\", Message:\"\", MessageExpression:\"\", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:9: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | self.a +\n | ........^"
        ]
    );
}

#[test]
fn undeclared_references_and_undefined_fields() {
    let props = json!({ "a": { "type": "integer" } });
    let errs = compile(spec_with(json!({ "rule": "foo == 1" }), props.clone()));
    assert_eq!(errs.len(), 1);
    assert!(
        errs[0].ends_with("compilation failed: ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')\n | foo == 1\n | ^"),
        "{errs:?}"
    );
    let errs = compile(spec_with(json!({ "rule": "self.b == 1" }), props));
    assert!(
        errs[0].ends_with(
            "compilation failed: ERROR: <input>:1:5: undefined field 'b'\n | self.b == 1\n | ....^"
        ),
        "{errs:?}"
    );
}

#[test]
fn rule_must_be_bool_and_message_expression_string() {
    let props = json!({ "a": { "type": "integer" } });
    let errs = compile(spec_with(json!({ "rule": "self.a + 1" }), props.clone()));
    assert!(
        errs[0].ends_with(": cel expression must evaluate to a bool"),
        "{errs:?}"
    );
    let errs = compile(spec_with(
        json!({ "rule": "true", "messageExpression": "42" }),
        props,
    ));
    assert!(
        errs[0].starts_with("spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].messageExpression: Invalid value: apiextensions.ValidationRule{")
            && errs[0].ends_with(": messageExpression must evaluate to a string"),
        "{errs:?}"
    );
}

#[test]
fn old_self_on_uncorrelatable_items() {
    let schema = json!({ "type": "object", "properties": {
        "l": { "type": "array", "items": { "type": "string", "maxLength": 5,
               "x-kubernetes-validations": [{ "rule": "self == oldSelf" }] } },
        "s": { "type": "string", "x-kubernetes-validations": [{ "rule": "self == 'a'", "optionalOldSelf": true }] },
    } });
    assert_eq!(
        compile(schema),
        [
            "spec.versions[0].schema.openAPIV3Schema.properties[l].items.x-kubernetes-validations[0].rule: Invalid value: \"self == oldSelf\": oldSelf cannot be used on the uncorrelatable portion of the schema within spec.versions[0].schema.openAPIV3Schema.properties[l]",
            "spec.versions[0].schema.openAPIV3Schema.properties[s].x-kubernetes-validations[0].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule",
        ]
    );
}

#[test]
fn estimated_cost_over_budget() {
    // Nested iteration over unbounded lists of unbounded strings.
    let schema = json!({ "type": "object", "properties": {
        "l": { "type": "array", "items": { "type": "string" },
               "x-kubernetes-validations": [{ "rule": "self.all(x, self.all(y, x.contains(y)))" }] },
    } });
    let errs = compile(schema);
    assert!(errs.contains(&"spec.versions[0].schema.openAPIV3Schema.properties[l].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)".to_owned()), "{errs:?}");
    assert!(errs.last().is_some_and(|e| e.starts_with("spec.versions[0].schema.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of")), "{errs:?}");
}

#[test]
fn cost_error_factor_format() {
    use crate::cel::crd::cost_error_message;
    assert!(
        cost_error_message("estimated rule cost", 12_000_000, 10_000_000)
            .contains("factor of 1.200000x (")
    );
    assert!(
        cost_error_message("estimated rule cost", 25_000_000, 10_000_000)
            .contains("factor of 2.5x (")
    );
}

#[test]
fn unescapable_property_has_no_type_information() {
    let schema = json!({ "type": "object", "properties": {
        "a:b": { "type": "string", "x-kubernetes-validations": [{ "rule": "self == 'x'" }] },
    } });
    assert_eq!(
        compile(schema),
        [
            "spec.versions[0].schema.openAPIV3Schema.properties[a:b].x-kubernetes-validations: Internal error: internal error: failed to retrieve type information for x-kubernetes-validations"
        ]
    );
}

#[test]
fn resource_root_metadata_has_only_names() {
    let schema = json!({ "type": "object", "x-kubernetes-validations": [
        { "rule": "self.metadata.name.startsWith('a') && self.kind == 'K' && self.apiVersion != ''" },
        { "rule": "has(self.metadata.labels)" },
    ] });
    let errs = compile(schema);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].starts_with(
            "spec.versions[0].schema.openAPIV3Schema.x-kubernetes-validations[1].rule: "
        )
    );
    assert!(errs[0].contains("undefined field 'labels'"), "{errs:?}");
}

#[test]
fn undeclared_functions() {
    let props = json!({ "l": { "type": "array", "maxItems": 5, "items": { "type": "integer" } } });
    let errs = compile(spec_with(
        json!({ "rule": "self.l.sortBy(x, x) == self.l" }),
        props.clone(),
    ));
    assert!(
        errs[0].contains("compilation failed: ERROR: <input>:1:14: undeclared reference to 'sortBy' (in container '')"),
        "{errs:?}"
    );
    for ok in [
        "optional.none() == optional.none()",
        "sets.contains(self.l, [1])",
        "self.l.exists(x, x == 1)",
    ] {
        assert!(
            compile(spec_with(json!({ "rule": ok }), props.clone())).is_empty(),
            "{ok}"
        );
    }
}

/// Upstream's "forbid double-nested rule with no/one limit set" and "allow double-nested
/// rule with three limits set".
#[test]
fn double_nested_rule_limits() {
    let schema = |max_items: Option<i64>, max_props: Option<i64>, max_len: Option<i64>| {
        let mut key = json!({ "type": "string" });
        if let Some(m) = max_len {
            key["maxLength"] = json!(m);
        }
        let mut items = json!({ "type": "object", "additionalProperties": {
            "type": "object", "required": ["key"], "properties": { "key": key } } });
        if let Some(m) = max_props {
            items["maxProperties"] = json!(m);
        }
        let mut value = json!({ "type": "array", "items": items, "x-kubernetes-validations": [
            { "rule": "self.all(x, x.all(y, x[y].key == x[y].key))" } ] });
        if let Some(m) = max_items {
            value["maxItems"] = json!(m);
        }
        json!({ "type": "object", "properties": { "value": value } })
    };
    let rule = "spec.versions[0].schema.openAPIV3Schema.properties[value].x-kubernetes-validations[0].rule: Forbidden: ";
    for forbidden in [schema(None, None, None), schema(None, None, Some(10))] {
        let errs = compile(forbidden);
        assert_eq!(errs.len(), 3, "{errs:?}");
        assert!(
            errs[0].starts_with(&format!(
                "{rule}estimated rule cost exceeds budget by factor of "
            )),
            "{errs:?}"
        );
        assert_eq!(
            errs[1],
            format!(
                "{rule}contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"
            )
        );
        assert!(errs[2].starts_with("spec.versions[0].schema.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total"), "{errs:?}");
    }
    assert_eq!(
        compile(schema(Some(10), Some(10), Some(10))),
        Vec::<String>::new()
    );
}

#[test]
fn literal_validators() {
    let props = json!({ "s": { "type": "string", "maxLength": 10 } });
    let cases = [
        (
            "self.s.matches('[')",
            "ERROR: <input>:1:16: invalid matches argument\n | self.s.matches('[')\n | ...............^",
        ),
        (
            "duration('1x') > duration('1s')",
            "ERROR: <input>:1:10: invalid duration argument",
        ),
        (
            "timestamp('2020') > timestamp('2021-01-01T00:00:00Z')",
            "ERROR: <input>:1:11: invalid timestamp argument",
        ),
        (
            "[1, 'a'].size() == 2",
            "ERROR: <input>:1:5: expected type 'int' but found 'string'",
        ),
        (
            "{'a': 1, 'b': 'x'}.size() == 2",
            "ERROR: <input>:1:15: expected type 'int' but found 'string'",
        ),
    ];
    for (rule, want) in cases {
        let errs = compile(spec_with(json!({ "rule": rule }), props.clone()));
        assert_eq!(errs.len(), 1, "{rule}: {errs:?}");
        assert!(
            errs[0].contains(&format!("compilation failed: {want}")),
            "{rule}: {errs:?}"
        );
    }
    let ok = "self.s.matches('^a+$') && duration('1h') > duration('1s') && [1, 2].size() == 2";
    assert!(compile(spec_with(json!({ "rule": ok }), props)).is_empty());
}

#[test]
fn unknown_and_untyped_fields_are_undefined() {
    let props = json!({
        "free": { "type": "object", "x-kubernetes-preserve-unknown-fields": true },
        "any": { "x-kubernetes-preserve-unknown-fields": true },
        "e": { "type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true },
    });
    for (rule, field) in [
        ("self.free.x == 1", "x"),
        ("has(self.any)", "any"),
        ("self.e.spec == 1", "spec"),
    ] {
        let errs = compile(spec_with(json!({ "rule": rule }), props.clone()));
        assert!(
            errs.len() == 1 && errs[0].contains(&format!("undefined field '{field}'")),
            "{rule}: {errs:?}"
        );
    }
    let ok = "self.e.kind == 'Pod' && self.e.metadata.name != ''";
    assert!(compile(spec_with(json!({ "rule": ok }), props)).is_empty());
}

#[test]
fn columns_count_code_points() {
    let props = json!({ "a": { "type": "string", "maxLength": 5 } });
    let errs = compile(spec_with(json!({ "rule": "'👑👑' == self.foo" }), props));
    assert!(
        errs[0].ends_with(
            "ERROR: <input>:1:13: undefined field 'foo'\n | '👑👑' == self.foo\n | ............^"
        ),
        "{errs:?}"
    );
}

/// Upstream's TestCELMaxRecursionDepth, and deeper rules, which must neither compile nor
/// overflow the stack.
#[test]
fn max_recursion_depth() {
    let props = json!({ "val1": { "type": "boolean" } });
    let chain = |n: usize| "self.val1 == ".repeat(n) + "self.val1";
    assert!(compile(spec_with(json!({ "rule": chain(249) }), props.clone())).is_empty());
    for n in [250, 5000, 100_000] {
        let errs = compile(spec_with(json!({ "rule": chain(n) }), props.clone()));
        assert!(
            errs.len() == 1
                && errs[0].ends_with(
                    "compilation failed: ERROR: <input>:-1:0: max recursion depth exceeded"
                ),
            "{n}: {:?}",
            errs.iter().map(|e| e.len()).collect::<Vec<_>>()
        );
    }
}

#[test]
fn unchanged_schemas_skip_per_expression_cost() {
    let schema = json!({ "type": "object", "properties": {
        "l": { "type": "array", "items": { "type": "string" },
               "x-kubernetes-validations": [{ "rule": "self.all(x, x.contains('a'))" }] },
    } });
    let errs = compile(schema.clone());
    assert!(
        errs.iter()
            .any(|e| e.contains("estimated rule cost exceeds budget")),
        "{errs:?}"
    );
    let suppressed = crate::cel::compile_errors_with(&schema, &schema_path(), true);
    assert!(
        !suppressed
            .iter()
            .any(|e| e.to_string().contains("estimated rule cost exceeds"))
    );
}

/// The deepest rules of each nesting kind the depth estimate lets through (lists, maps,
/// parentheses, calls, ternaries), compiled and evaluated: none may overflow the stack.
#[test]
fn deepest_nestings_compile_and_run_without_overflow() {
    let props = json!({ "val1": { "type": "boolean" } });
    let nest = |open: &str, inner: &str, close: &str, n: usize| {
        format!("{}{inner}{}", open.repeat(n), close.repeat(n))
    };
    let n = crate::cel::depth::MAX_RECURSION_DEPTH - 12;
    let rules = [
        format!("size({}) == 1", nest("[", "1", "]", n)),
        format!("size({}) == 1", nest("{'a': ", "1", "}", n)),
        nest("(", "self.val1", ")", n),
        nest("!", "!self.val1", "", n - n % 2),
        format!("{} == 1", nest("int(", "1", ")", n)),
        nest("true ? (", "self.val1", ") : false", n / 2),
    ];
    for rule in &rules {
        assert!(crate::cel::depth::estimate(rule) <= crate::cel::depth::MAX_RECURSION_DEPTH);
        let schema = spec_with(json!({ "rule": rule }), props.clone());
        let errs = compile(schema.clone());
        assert!(errs.is_empty(), "{}: {errs:?}", &rule[..40]);
        let validator = crate::cel::Validator::new(&schema);
        let _ = validator.validate(&Path::nil(), &json!({ "spec": { "val1": true } }), None);
    }
}
