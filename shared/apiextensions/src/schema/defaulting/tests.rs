//! Cases from upstream's `defaulting/algorithm_test.go` and `prunenulls_test.go`.

use serde_json::{Value, json};

use super::*;

fn defaulted(obj: Value, schema: Value) -> Value {
    let mut obj = obj;
    default(&mut obj, &Structural::new(&schema));
    obj
}

#[test]
fn fills_properties_items_and_additional_properties() {
    let ab = |a: &str, b: &str| json!({"properties": {"a": {"default": a}, "b": {"default": b}}});
    let schema = json!({"properties": {
        "array": {"items": ab("A", "B")},
        "object": ab("N", "O"),
        "additionalProperties": {"additionalProperties": ab("alpha", "beta")},
        "foo": {"default": "bar"},
    }});
    assert_eq!(
        defaulted(
            json!({"array": [{"a": 1}, {"b": 2}], "object": {"a": 1},
                   "additionalProperties": {"x": {"a": 1}, "y": {"b": 2}}}),
            schema
        ),
        json!({"array": [{"a": 1, "b": "B"}, {"a": "A", "b": 2}], "object": {"a": 1, "b": "O"},
               "additionalProperties": {"x": {"a": 1, "b": "beta"}, "y": {"a": "alpha", "b": 2}},
               "foo": "bar"})
    );
}

#[test]
fn empty_values_stay_and_null_takes_the_default() {
    assert_eq!(
        defaulted(
            json!([{}, {"a": 1}, {"a": 0}, {"a": 0.0}, {"a": ""}, {"a": null}, {"a": []}, {"a": {}}]),
            json!({"items": {"properties": {"a": {"default": "A"}}}})
        ),
        json!([{"a": "A"}, {"a": 1}, {"a": 0}, {"a": 0.0}, {"a": ""}, {"a": "A"}, {"a": []}, {"a": {}}])
    );
}

#[test]
fn nullable_nulls_stay() {
    let nullable = json!({"nullable": true, "default": "A"});
    let non_nullable = json!({"default": "A"});
    assert_eq!(
        defaulted(json!([null]), json!({"items": non_nullable.clone()})),
        json!(["A"])
    );
    assert_eq!(
        defaulted(json!([null]), json!({"items": nullable.clone()})),
        json!([null])
    );
    let props = |s: &Value| json!({"properties": {"a": s}});
    assert_eq!(
        defaulted(json!({"a": null}), props(&nullable)),
        json!({"a": null})
    );
    assert_eq!(
        defaulted(json!({"a": null}), props(&non_nullable)),
        json!({"a": "A"})
    );
    let ap = |s: &Value| json!({"additionalProperties": s});
    assert_eq!(
        defaulted(json!({"a": null}), ap(&nullable)),
        json!({"a": null})
    );
    assert_eq!(
        defaulted(json!({"a": null}), ap(&non_nullable)),
        json!({"a": "A"})
    );
    // No default: the null stays for the null pruning (or validation) to handle.
    assert_eq!(
        defaulted(json!({"a": null}), ap(&json!({}))),
        json!({"a": null})
    );
}

#[test]
fn prunes_nulls_without_defaults() {
    let schema = Structural::new(&json!({"properties": {
        "a": {"type": "string"},
        "b": {"type": "string", "nullable": true},
        "c": {"type": "string", "default": "C"},
        "m": {"additionalProperties": {"type": "string"}},
        "l": {"items": {"type": "string"}},
    }}));
    let mut obj = json!({"a": null, "b": null, "c": null, "u": null,
                          "m": {"x": null, "y": "y"}, "l": [null]});
    prune_non_nullable_nulls_without_defaults(&mut obj, Some(&schema));
    assert_eq!(
        obj,
        json!({"b": null, "c": null, "u": null, "m": {"y": "y"}, "l": [null]})
    );
    default(&mut obj, &schema);
    assert_eq!(
        obj,
        json!({"b": null, "c": "C", "u": null, "m": {"y": "y"}, "l": [null]})
    );
}
