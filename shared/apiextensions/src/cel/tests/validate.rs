use kas_apimachinery::validation::field::Path;
use serde_json::json;

use super::{check_rules, errors, object};

#[test]
fn integers_and_runtime_errors() {
    let props = json!({
        "val1": { "type": "integer" },
        "val5": { "type": "integer", "format": "int64" },
    });
    let obj = json!({ "val1": i64::MAX, "val5": i64::MAX });
    check_rules(
        props,
        obj,
        &[
            "self.val1 == self.val5",
            "type(self.val1) == int",
            "self.val1 == 9223372036854775807",
        ],
        &[
            ("self.val1 + 1 == 0", "integer overflow"),
            ("self.val5 + 1 == 0", "integer overflow"),
            ("1 / 0 == 1 / 0", "division by zero"),
        ],
    );
}

#[test]
fn failed_rule_message_as_upstream() {
    let schema = object(json!({ "m": { "type": "integer" } }), &["self.m == 2"]);
    assert_eq!(
        errors(&schema, json!({ "m": 1 }), None),
        ["root: Invalid value: \"object\": failed rule: self.m == 2"]
    );
}

#[test]
fn absent_fields_and_has() {
    let props = json!({
        "a1": { "type": "object", "properties": {
            "d2": { "type": "object", "properties": { "e2": { "type": "string" } } },
        } },
        "val": { "type": "object", "additionalProperties": { "type": "integer" } },
    });
    let obj = json!({ "a1": {}, "val": { "a": 1 } });
    check_rules(
        props,
        obj,
        &[
            "!has(self.a1.d2)",
            "!(has(self.a1.d2) && has(self.a1.d2.e2))",
            "self.val['a'] == 1",
        ],
        &[
            ("has(self.a1.d2.e2)", "no such key: d2"),
            ("self.val['c'] == 1", "no such key: c"),
        ],
    );
}

#[test]
fn runtime_error_wording() {
    let schema = object(json!({ "s": { "type": "string" } }), &["[1, 2][4] == 1"]);
    assert_eq!(
        errors(&schema, json!({ "s": "x" }), None),
        ["root: Invalid value: \"object\": index out of bounds: 4 evaluating rule: [1, 2][4] == 1"]
    );
    let schema = json!({ "type": "object", "properties": {
        "ios": { "x-kubernetes-int-or-string": true, "x-kubernetes-validations": [
            { "rule": "self + 1 == 2", "message": "must be one" },
        ] },
    } });
    // int-or-string is dyn: adding an int to a string fails at run time.
    assert_eq!(
        errors(&schema, json!({ "ios": "a" }), None),
        [
            "root.ios: Invalid value: \"\": 'no such overload': call arguments did not match a supported operator, function or macro signature for rule: must be one"
        ]
    );
    assert!(errors(&schema, json!({ "ios": 1 }), None).is_empty());
}

#[test]
fn message_message_expression_reason_and_field_path() {
    let node = |rule: serde_json::Value| {
        json!({ "type": "object", "properties": {
            "f": { "type": "object", "properties": { "m": { "type": "integer" }, "str": { "type": "string" } },
                   "x-kubernetes-validations": [rule] },
        } })
    };
    let obj = json!({ "f": { "m": 1, "str": "a string" } });
    let cases = [
        (
            json!({ "rule": "self.m == 2", "reason": "FieldValueForbidden" }),
            "root.f: Forbidden: failed rule: self.m == 2",
        ),
        (
            json!({ "rule": "self.m == 2" }),
            "root.f: Invalid value: \"object\": failed rule: self.m == 2",
        ),
        (
            json!({ "rule": "self.m == 2", "fieldPath": ".m", "reason": "FieldValueForbidden" }),
            "root.f.m: Forbidden: failed rule: self.m == 2",
        ),
        (
            json!({ "rule": "self.m == 2", "reason": "FieldValueRequired", "message": " m must be 2 " }),
            "root.f: Required value: m must be 2",
        ),
        (
            json!({ "rule": "self.m == 2", "reason": "FieldValueDuplicate" }),
            "root.f: Duplicate value: \"object\"",
        ),
        (
            json!({ "rule": "false", "messageExpression": "\"str1 \" + self.str" }),
            "root.f: Invalid value: \"object\": str1 a string",
        ),
        (
            json!({ "rule": "false", "message": "invisible", "messageExpression": "\"this is messageExpression\"" }),
            "root.f: Invalid value: \"object\": this is messageExpression",
        ),
        (
            json!({ "rule": "false", "messageExpression": "\"str1 \" + [\"a\"][4]", "message": "message not messageExpression" }),
            "root.f: Invalid value: \"object\": message not messageExpression",
        ),
        (
            json!({ "rule": "false", "messageExpression": "\"str with \\na newline\"", "message": "message not messageExpression" }),
            "root.f: Invalid value: \"object\": message not messageExpression",
        ),
        (
            json!({ "rule": "false", "messageExpression": "string(\"     \")" }),
            "root.f: Invalid value: \"object\": failed rule: false",
        ),
    ];
    for (rule, want) in cases {
        assert_eq!(
            errors(&node(rule.clone()), obj.clone(), None),
            [want],
            "{rule}"
        );
    }
}

#[test]
fn transition_rules_need_an_old_value() {
    let schema = json!({ "type": "object", "properties": {
        "v": { "type": "string", "x-kubernetes-validations": [
            { "rule": "self == oldSelf", "message": "Value is immutable" },
        ] },
    } });
    assert!(errors(&schema, json!({ "v": "a" }), None).is_empty());
    assert!(errors(&schema, json!({ "v": "a" }), Some(json!({}))).is_empty());
    assert_eq!(
        errors(&schema, json!({ "v": "b" }), Some(json!({ "v": "a" }))),
        ["root.v: Invalid value: \"string\": Value is immutable"]
    );
}

#[test]
fn optional_old_self() {
    let schema = json!({ "type": "object", "properties": {
        "v": { "type": "string", "x-kubernetes-validations": [
            { "rule": "!oldSelf.hasValue() || self == oldSelf.value()", "optionalOldSelf": true, "message": "immutable once set" },
            { "rule": "oldSelf.hasValue() || self != 'bad'", "optionalOldSelf": true, "message": "not bad on create" },
        ] },
    } });
    assert!(errors(&schema, json!({ "v": "a" }), None).is_empty());
    assert_eq!(
        errors(&schema, json!({ "v": "bad" }), None),
        ["root.v: Invalid value: \"string\": not bad on create"]
    );
    assert_eq!(
        errors(&schema, json!({ "v": "b" }), Some(json!({ "v": "a" }))),
        ["root.v: Invalid value: \"string\": immutable once set"]
    );
}

#[test]
fn map_list_items_correlate_by_key() {
    let schema = json!({ "type": "object", "properties": {
        "l": { "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
               "items": { "type": "object", "properties": { "k": { "type": "string" }, "v": { "type": "integer" } },
                          "x-kubernetes-validations": [{ "rule": "self.v >= oldSelf.v", "message": "v may not decrease" }] } },
        "atomic": { "type": "array",
               "items": { "type": "object", "properties": { "v": { "type": "integer" } },
                          "x-kubernetes-validations": [{ "rule": "self.v >= oldSelf.v" }] } },
    } });
    let old = json!({ "l": [{ "k": "a", "v": 5 }, { "k": "b", "v": 1 }], "atomic": [{ "v": 9 }] });
    let new = json!({ "l": [{ "k": "b", "v": 2 }, { "k": "a", "v": 4 }, { "k": "c", "v": 0 }], "atomic": [{ "v": 1 }] });
    assert_eq!(
        errors(&schema, new, Some(old)),
        ["root.l[1]: Invalid value: \"object\": v may not decrease"]
    );
}

#[test]
fn ratcheting_unchanged_values() {
    let schema = json!({ "type": "object", "properties": {
        "s": { "type": "string", "x-kubernetes-validations": [{ "rule": "self.size() < 3" }] },
        "t": { "type": "string", "x-kubernetes-validations": [{ "rule": "self.size() < 3" }] },
    } });
    let obj = json!({ "s": "long", "t": "long" });
    // An unchanged invalid value is only warned about upstream.
    assert_eq!(
        errors(
            &schema,
            obj.clone(),
            Some(json!({ "s": "long", "t": "lon" }))
        ),
        ["root.t: Invalid value: \"string\": failed rule: self.size() < 3"]
    );
    assert_eq!(errors(&schema, obj.clone(), None).len(), 2);
    let v = crate::cel::Validator::new(&schema);
    let old = json!({ "s": "long", "t": "lon" });
    let (errs, warnings) = v.validate_with_warnings(&Path::new("root"), &obj, Some(&old));
    assert_eq!(errs.len(), 1);
    assert_eq!(
        warnings,
        ["root.s: Invalid value: \"string\": failed rule: self.size() < 3"]
    );
}

#[test]
fn escaped_property_names() {
    let props = json!({
        "foo-bar": { "type": "string" },
        "namespace": { "type": "string" },
        "a.b": { "type": "integer" },
        "x__y": { "type": "integer" },
        "1x": { "type": "integer" },
    });
    let obj = json!({ "foo-bar": "v", "namespace": "ns", "a.b": 1, "x__y": 2, "1x": 3 });
    check_rules(
        props,
        obj,
        &[
            "self.foo__dash__bar == 'v'",
            "self.__namespace__ == 'ns'",
            "self.a__dot__b == 1",
            "self.x__underscores__y == 2",
        ],
        &[],
    );
}

#[test]
fn embedded_resources_and_root_type_meta() {
    let schema = json!({ "type": "object",
        "x-kubernetes-validations": [{ "rule": "self.kind == 'Foo' && self.metadata.name == 'n'" }],
        "properties": {
            "spec": { "type": "object", "properties": {
                "e": { "type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true,
                       "x-kubernetes-validations": [{ "rule": "self.apiVersion == 'v1' && self.metadata.generateName == 'g-'" }] },
            } },
        } });
    let obj = json!({ "apiVersion": "x/v1", "kind": "Foo", "metadata": { "name": "n", "labels": { "a": "b" } },
        "spec": { "e": { "apiVersion": "v1", "kind": "Pod", "metadata": { "generateName": "g-" } } } });
    assert_eq!(errors(&schema, obj, None), Vec::<String>::new());
}

#[test]
fn formats_and_nullable() {
    let props = json!({
        "d": { "type": "string", "format": "duration" },
        "t": { "type": "string", "format": "date-time" },
        "day": { "type": "string", "format": "date" },
        "b": { "type": "string", "format": "byte" },
        "n": { "type": "string", "nullable": true },
        "f": { "type": "number" },
        "free": { "type": "object", "x-kubernetes-preserve-unknown-fields": true,
                  "properties": { "x": { "type": "array", "items": { "x-kubernetes-int-or-string": true } } } },
    });
    let obj = json!({ "d": "1h30m", "t": "2011-08-18T19:03:37Z", "day": "2021-01-02", "b": "aGVsbG8=",
        "n": null, "f": 1, "free": { "x": [1, "a"] } });
    check_rules(
        props,
        obj,
        &[
            "self.d == duration('90m')",
            "self.t == timestamp('2011-08-18T19:03:37Z')",
            "self.day.getFullYear() == 2021",
            "self.b == b'hello'",
            "!has(self.n)",
            "type(self.f) == double && self.f == 1.0",
            "self.free.x[1] == 'a'",
        ],
        &[],
    );
}

/// A rule at upstream's depth limit evaluates, even on a small thread stack.
#[test]
fn deep_rule_evaluates_on_a_small_stack() {
    let rule = "self.val1 == ".repeat(249) + "self.val1";
    let schema = object(json!({ "val1": { "type": "boolean" } }), &[&rule]);
    let run = move || errors(&schema, json!({ "val1": true }), None);
    let errs = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(run)
        .map(|h| h.join());
    assert!(matches!(errs, Ok(Ok(ref e)) if e.is_empty()), "{errs:?}");
}
