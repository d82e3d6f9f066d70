//! Cases from upstream's `pruning/algorithm_test.go`.

use serde_json::{Value, json};

use super::*;

fn run(obj: Value, schema: Value, root: bool) -> (Value, Vec<String>) {
    let mut obj = obj;
    let pruned = prune(&mut obj, &Structural::new(&schema), root, true);
    (obj, pruned)
}

#[test]
fn object_array_object() {
    let items = json!({"properties": {"a": {}, "c": {}}});
    let (obj, pruned) = run(
        json!({"array": [{"a": 1}, {"b": 1}, {"a": 1, "b": 2, "c": 3}], "unspecified": {"a": 1},
               "specified": {"a": 1, "b": 2, "c": 3}}),
        json!({"properties": {"array": {"items": items.clone()}, "specified": items}}),
        false,
    );
    assert_eq!(
        obj,
        json!({"array": [{"a": 1}, {}, {"a": 1, "c": 3}], "specified": {"a": 1, "c": 3}})
    );
    assert_eq!(
        pruned,
        ["array[1].b", "array[2].b", "specified.b", "unspecified"]
    );
}

#[test]
fn top_level_array_paths_start_with_the_index() {
    let (obj, pruned) = run(
        json!([{"a": 1}, {"b": 1}, {"a": 1, "b": 2, "c": 3}]),
        json!({"items": {"properties": {"a": {}, "c": {}}}}),
        false,
    );
    assert_eq!(obj, json!([{"a": 1}, {}, {"a": 1, "c": 3}]));
    assert_eq!(pruned, ["[1].b", "[2].b"]);
}

#[test]
fn nested_preserve_unknown_fields() {
    let specified = json!({"type": "object", "properties": {"specified": {"type": "object"}}});
    let schema = json!({
        "type": "object", "x-kubernetes-preserve-unknown-fields": true,
        "properties": {
            "alpha": {"type": "string"},
            "pruning": {"type": "object", "properties": {
                "preserving": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "pruning": {"type": "object"}}},
            "preserving": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                "properties": {"pruning": {"type": "object"},
                    "preservingUnknownType": {"x-kubernetes-preserve-unknown-fields": true}}},
            "preservingAP": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                "additionalProperties": specified.clone()},
            "prunedAP": {"type": "object", "additionalProperties": specified},
        },
    });
    let (obj, pruned) = run(
        json!({
            "unspecified": "bar", "alpha": "abc",
            "pruning": {"unspecified": "bar", "pruning": {"unspecified": "bar"},
                "apiVersion": "unknown", "preserving": {"unspecified": "bar"}},
            "preserving": {"unspecified": "bar", "pruning": {"unspecified": "bar"},
                "preservingUnknownType": [{"foo": true}]},
            "preservingAP": {"foo": {"specified": {"unspecified": "bar"}, "unspecified": "bar"}},
            "prunedAP": {"foo": {"specified": {"unspecified": "bar"}, "unspecified": "bar"}},
        }),
        schema,
        false,
    );
    assert_eq!(
        obj,
        json!({
            "unspecified": "bar", "alpha": "abc",
            "pruning": {"pruning": {}, "preserving": {"unspecified": "bar"}},
            "preserving": {"unspecified": "bar", "pruning": {}, "preservingUnknownType": [{"foo": true}]},
            "preservingAP": {"foo": {"specified": {}}},
            "prunedAP": {"foo": {"specified": {}}},
        })
    );
    assert_eq!(
        pruned,
        [
            "preserving.pruning.unspecified",
            "preservingAP.foo.specified.unspecified",
            "preservingAP.foo.unspecified",
            "prunedAP.foo.specified.unspecified",
            "prunedAP.foo.unspecified",
            "pruning.apiVersion",
            "pruning.pruning.unspecified",
            "pruning.unspecified",
        ]
    );
}

#[test]
fn additional_properties_false_prunes_everything_below() {
    let (obj, pruned) = run(
        json!({"a": 1, "b": 1, "c": {"a": 1, "b": 2, "c": {"a": 1, "apiVersion": "unknown"}}}),
        json!({"properties": {"a": {}, "c": {"additionalProperties": false}}}),
        false,
    );
    assert_eq!(obj, json!({"a": 1, "c": {"a": 1, "b": 2, "c": {}}}));
    assert_eq!(pruned, ["b", "c.c.a", "c.c.apiVersion"]);
}

#[test]
fn resource_root_and_embedded_resources_keep_type_and_object_meta() {
    let schema = json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "embedded": {"type": "object", "x-kubernetes-embedded-resource": true,
                "x-kubernetes-preserve-unknown-fields": true,
                "properties": {"spec": {"type": "object"}}},
            "plain": {"type": "object"}}}}});
    let (obj, pruned) = run(
        json!({"apiVersion": "a/v1", "kind": "A", "metadata": {"name": "x", "unknown": 1},
               "unspecified": 1,
               "spec": {"embedded": {"apiVersion": "b/v1", "kind": "B", "metadata": {"x": 1},
                                     "other": 1, "spec": {"unspecified": 1}},
                        "plain": {"apiVersion": "c/v1", "kind": "C", "metadata": {}}}}),
        schema.clone(),
        true,
    );
    assert_eq!(
        obj,
        json!({"apiVersion": "a/v1", "kind": "A", "metadata": {"name": "x", "unknown": 1},
               "spec": {"embedded": {"apiVersion": "b/v1", "kind": "B", "metadata": {"x": 1},
                                     "other": 1, "spec": {}},
                        "plain": {}}})
    );
    assert_eq!(
        pruned,
        [
            "spec.embedded.spec.unspecified",
            "spec.plain.apiVersion",
            "spec.plain.kind",
            "spec.plain.metadata",
            "unspecified",
        ]
    );
    // Not the resource root: root meta fields go, unreported.
    let (obj, pruned) = run(
        json!({"apiVersion": "a/v1", "x": 1}),
        json!({"type": "object"}),
        false,
    );
    assert_eq!(obj, json!({}));
    assert_eq!(pruned, ["x"]);
}

#[test]
fn untracked_pruning_reports_nothing() {
    let mut obj = json!({"a": 1, "b": 2});
    let pruned = prune(
        &mut obj,
        &Structural::new(&json!({"properties": {"a": {}}})),
        false,
        false,
    );
    assert_eq!(obj, json!({"a": 1}));
    assert!(pruned.is_empty());
}
