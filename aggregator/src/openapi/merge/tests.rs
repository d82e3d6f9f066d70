//! kube-openapi's `pkg/aggregator/aggregator_test.go` cases, in JSON.

use serde_json::{Value, json};

use super::*;

fn post(schema_ref: &str) -> Value {
    json!({"post": {"parameters": [{"name": "body", "schema": {"$ref": schema_ref}}]}})
}

fn spec(paths: Value, definitions: Value) -> Value {
    json!({"swagger": "2.0", "paths": paths, "definitions": definitions})
}

/// `TestFilterSpecs` and `TestFilterSpecsWithUnusedDefinitions`: the definitions only the
/// dropped paths used go (transitively), unused ones stay.
#[test]
fn filtering_drops_what_only_the_dropped_paths_used() {
    let test_path = json!({"post": {
        "parameters": [{"in": "body", "name": "body", "schema": {"$ref": "#/definitions/Test"}}],
        "responses": {"405": {"description": "Invalid input", "$ref": "#/definitions/InvalidInput"}}}});
    let full = spec(
        json!({"/test": test_path, "/othertest": post("#/definitions/Test2")}),
        json!({
            "Test": {"type": "object"},
            "InvalidInput": {"type": "string"},
            "Test2": {"type": "object", "properties": {"other": {"$ref": "#/definitions/Other"}}},
            "Other": {"type": "string"},
            "Unused": {"type": "object"},
        }),
    );
    let filtered = filter_by_paths(&full, &["/test".to_owned()]);
    assert_eq!(
        filtered,
        spec(
            json!({"/test": test_path}),
            json!({"Test": {"type": "object"}, "InvalidInput": {"type": "string"},
                   "Unused": {"type": "object"}})
        )
    );
}

/// `TestMergeSpecsSimple`, `TestMergeSpecsEmptyPaths`.
#[test]
fn disjoint_specs_join() {
    let mut a = spec(
        json!({"/test": post("#/definitions/Test")}),
        json!({"Test": {"type": "object"}}),
    );
    let b = spec(
        json!({"/othertest": post("#/definitions/Test2")}),
        json!({"Test2": {"type": "object"}}),
    );
    merge(&mut a, &b).unwrap();
    assert_eq!(
        a,
        spec(
            json!({"/test": post("#/definitions/Test"), "/othertest": post("#/definitions/Test2")}),
            json!({"Test": {"type": "object"}, "Test2": {"type": "object"}})
        )
    );
    let mut no_paths = json!({"swagger": "2.0", "definitions": {"Test": {"type": "object"}}});
    merge(&mut no_paths, &b).unwrap();
    assert_eq!(no_paths["paths"]["/othertest"], post("#/definitions/Test2"));
    assert_eq!(no_paths["definitions"].as_object().unwrap().len(), 2);
}

/// `TestMergeSpecsRenameModelWithExistingV2InDestination` and `...InSource`: a
/// conflicting definition takes the first free `_vN` of both documents.
#[test]
fn conflicting_definitions_are_renamed() {
    let described = json!({"description": "This Test has a description", "type": "object"});
    let mut dest = spec(
        json!({"/test": post("#/definitions/Test"), "/testv2": post("#/definitions/Test_v2")}),
        json!({"Test": {"type": "object"},
               "Test_v2": {"description": "existing in destination", "type": "object"}}),
    );
    let source = spec(
        json!({"/othertest": post("#/definitions/Test")}),
        json!({"Test": described}),
    );
    merge(&mut dest, &source).unwrap();
    assert_eq!(dest["paths"]["/othertest"], post("#/definitions/Test_v3"));
    assert_eq!(dest["definitions"]["Test_v3"], described);

    let mut dest = spec(
        json!({"/test": post("#/definitions/Test")}),
        json!({"Test": {"type": "object"}}),
    );
    let source = spec(
        json!({"/othertest": post("#/definitions/Test"), "/testv2": post("#/definitions/Test_v2")}),
        json!({"Test": described,
               "Test_v2": {"description": "existing in source", "type": "object"}}),
    );
    merge(&mut dest, &source).unwrap();
    assert_eq!(dest["paths"]["/othertest"], post("#/definitions/Test_v3"));
    assert_eq!(dest["paths"]["/testv2"], post("#/definitions/Test_v2"));
    assert_eq!(dest["definitions"]["Test_v3"], described);
}

/// `TestTwoMergeSpecsFirstTwoSchemasHaveSameDefinition` and
/// `TestTwoMergeSpecsLastTwoSchemasHaveSameDefinition`: equal definitions are shared, a
/// renamed one that matches is reused.
#[test]
fn equal_definitions_are_shared() {
    let one = json!({"description": "one", "type": "object"});
    let two = json!({"description": "two", "type": "object"});
    let mut dest = spec(
        json!({"/test": post("#/definitions/Test")}),
        json!({"Test": one}),
    );
    for (path, def) in [("/test2", &one), ("/test3", &two), ("/test4", &two)] {
        let source = spec(
            json!({path: post("#/definitions/Test")}),
            json!({"Test": def}),
        );
        merge(&mut dest, &source).unwrap();
    }
    assert_eq!(dest["paths"]["/test2"], post("#/definitions/Test"));
    assert_eq!(dest["paths"]["/test3"], post("#/definitions/Test_v2"));
    assert_eq!(dest["paths"]["/test4"], post("#/definitions/Test_v2"));
    assert_eq!(dest["definitions"], json!({"Test": one, "Test_v2": two}));
}

/// `TestMergeSpecsIgnorePathConflicts` and `...AllConflicting`: the destination's paths win.
#[test]
fn conflicting_paths_are_ignored() {
    let foo = spec(
        json!({"/foo": post("#/definitions/Foo")}),
        json!({"Foo": {"type": "object"}}),
    );
    let mut dest = foo.clone();
    let bar = spec(
        json!({"/foo": {"post": {"summary": "Should be ignored"}},
               "/bar": post("#/definitions/Bar")}),
        json!({"Bar": {"type": "object"}}),
    );
    merge(&mut dest, &bar).unwrap();
    assert_eq!(dest["paths"]["/foo"], foo["paths"]["/foo"]);
    assert_eq!(dest["paths"]["/bar"], post("#/definitions/Bar"));
    let mut same = foo.clone();
    merge(&mut same, &foo).unwrap();
    assert_eq!(same, foo);
}

/// Definitions equal but for their group-version-kinds merge those, sorted.
#[test]
fn group_version_kinds_are_merged() {
    let gvk = |g: &str, k: &str| json!({"group": g, "version": "v1", "kind": k});
    let opts = |gvks: Vec<Value>| json!({"type": "object", GVK: gvks});
    let mut dest = spec(
        json!({"/a": post("#/definitions/DeleteOptions")}),
        json!({"DeleteOptions": opts(vec![gvk("apps", "DeleteOptions"), gvk("", "DeleteOptions")])}),
    );
    let source = spec(
        json!({"/b": post("#/definitions/DeleteOptions")}),
        json!({"DeleteOptions": opts(vec![gvk("wardle.example.com", "DeleteOptions")])}),
    );
    merge(&mut dest, &source).unwrap();
    assert_eq!(
        dest["definitions"]["DeleteOptions"][GVK],
        json!([
            gvk("", "DeleteOptions"),
            gvk("apps", "DeleteOptions"),
            gvk("wardle.example.com", "DeleteOptions")
        ])
    );
    assert_eq!(dest["paths"]["/b"], post("#/definitions/DeleteOptions"));
}
