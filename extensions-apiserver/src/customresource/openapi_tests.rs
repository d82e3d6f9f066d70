//! Upstream's builder_test.go cases (`TestNewBuilder`, `TestBuildOpenAPIV2`,
//! `TestBuildOpenAPIV3`): group `bar.k8s.io`, kind `Foo`, plural `foos`.

use serde_json::{Value, json};

use super::*;

fn publisher(schema: Option<Value>, version: &str, selectable: &[&str]) -> Publisher {
    let mut v = json!({"name": version});
    if let Some(schema) = schema {
        v["schema"] = json!({"openAPIV3Schema": schema});
    }
    if !selectable.is_empty() {
        let fields: Vec<Value> = selectable.iter().map(|p| json!({"jsonPath": p})).collect();
        v["selectableFields"] = json!(fields);
    }
    Publisher::new(("Foo", "FooList", "foos"), "bar.k8s.io", &v)
}

/// Upstream's tests blank the descriptions of `kind`, `apiVersion` and `metadata` ("we
/// trust that they match"); `descriptions_are_upstreams` checks them.
fn without_meta_descriptions(mut schema: Value) -> Value {
    if schema["properties"].get("kind").is_some() {
        for key in ["kind", "apiVersion", "metadata"] {
            if let Some(p) = schema["properties"][key].as_object_mut() {
                p.remove("description");
            }
        }
    }
    schema
}

fn kind(p: &Publisher, dialect: OpenApiDialect) -> Value {
    without_meta_descriptions(p.definitions(dialect).kind)
}

const V2_META: &str = r##""apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"$ref":"#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}"##;
const V3_META: &str = r##""apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"allOf":[{"$ref":"#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}]}"##;
const GVK: &str =
    r#""x-kubernetes-group-version-kind":[{"group":"bar.k8s.io","kind":"Foo","version":"v1"}]"#;

fn parse(s: &str) -> Value {
    serde_json::from_str(s).expect("test JSON")
}

#[test]
fn v2_cases() {
    let bare = format!(r#"{{"type":"object",{GVK}}}"#);
    let cases: [(&str, Option<&str>, String, &[&str]); 7] = [
        ("nil", None, bare.clone(), &[]),
        (
            "with properties",
            Some(
                r#"{"type":"object","properties":{"spec":{"type":"object"},"status":{"type":"object"}}}"#,
            ),
            format!(
                r#"{{"type":"object","properties":{{{V2_META},"spec":{{"type":"object"}},"status":{{"type":"object"}}}},{GVK}}}"#
            ),
            &[],
        ),
        (
            "with invalid-typed properties",
            Some(
                r#"{"type":"object","properties":{"spec":{"type":"bug"},"status":{"type":"object"}}}"#,
            ),
            bare.clone(),
            &[],
        ),
        (
            "with non-structural schema",
            Some(r#"{"type":"object","properties":{"foo":{"type":"array"}}}"#),
            bare.clone(),
            &[],
        ),
        (
            "v2",
            Some(
                r#"{"type":"object","properties":{"foo":{"type":"string","oneOf":[{"pattern":"a"},{"pattern":"b"}]}}}"#,
            ),
            format!(
                r#"{{"type":"object","properties":{{{V2_META},"foo":{{"type":"string"}}}},{GVK}}}"#
            ),
            &[],
        ),
        (
            "with selectable fields",
            Some(r#"{"type":"object","properties":{"foo":{"type":"string"}}}"#),
            format!(
                r#"{{"type":"object","properties":{{{V2_META},"foo":{{"type":"string"}}}},{GVK},"x-kubernetes-selectable-fields":[{{"fieldPath":"foo"}}]}}"#
            ),
            &["foo"],
        ),
        (
            "preserve unknown at root v2",
            Some(r#"{"type":"object","x-kubernetes-preserve-unknown-fields":true}"#),
            bare,
            &[],
        ),
    ];
    for (name, schema, want, selectable) in cases {
        let p = publisher(schema.map(parse), "v1", selectable);
        assert_eq!(kind(&p, OpenApiDialect::V2), parse(&want), "{name}");
    }
}

/// Upstream's "with spec.preseveUnknownFields=true": v2 is a bare object, v3 is not.
#[test]
fn crd_preserving_unknown_fields() {
    let schema = json!({"type": "object", "properties": {"foo": {"type": "string"}}});
    let mut p = publisher(Some(schema), "v1", &[]);
    p.preserve_unknown_fields = true;
    let bare = parse(&format!(r#"{{"type":"object",{GVK}}}"#));
    assert_eq!(kind(&p, OpenApiDialect::V2), bare);
    assert!(kind(&p, OpenApiDialect::V3)["properties"]["foo"].is_object());
}

#[test]
fn v2_extensions_case() {
    let schema = json!({"type": "object", "properties": {
        "int-or-string-1": {"x-kubernetes-int-or-string": true,
                            "anyOf": [{"type": "integer"}, {"type": "string"}]},
        "int-or-string-2": {"x-kubernetes-int-or-string": true,
                            "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]},
                                      {"anyOf": [{"minimum": 42.0}]}]},
        "int-or-string-3": {"x-kubernetes-int-or-string": true,
                            "anyOf": [{"type": "integer"}, {"type": "string"}],
                            "allOf": [{"anyOf": [{"minimum": 42.0}]}]},
        "int-or-string-4": {"x-kubernetes-int-or-string": true, "anyOf": [{"minimum": 42.0}]},
        "int-or-string-5": {"x-kubernetes-int-or-string": true, "anyOf": [{"minimum": 42.0}],
                            "allOf": [{"minimum": 42.0}]},
        "int-or-string-6": {"x-kubernetes-int-or-string": true},
        "preserve-unknown-fields": {"x-kubernetes-preserve-unknown-fields": true},
        "embedded-object": {"x-kubernetes-embedded-resource": true,
                            "x-kubernetes-preserve-unknown-fields": true, "type": "object"},
    }});
    let mut want = parse(&format!(
        r#"{{"type":"object","properties":{{{V2_META}}},{GVK}}}"#
    ));
    for i in 1..=6 {
        want["properties"][format!("int-or-string-{i}")] =
            json!({"x-kubernetes-int-or-string": true});
    }
    want["properties"]["preserve-unknown-fields"] =
        json!({"x-kubernetes-preserve-unknown-fields": true});
    want["properties"]["embedded-object"] = json!({"x-kubernetes-embedded-resource": true,
                                                   "x-kubernetes-preserve-unknown-fields": true});
    let p = publisher(Some(schema), "v1", &[]);
    assert_eq!(kind(&p, OpenApiDialect::V2), want);
}

#[test]
fn v3_cases() {
    let cases: [(&str, Option<&str>, String, &[&str]); 5] = [
        ("nil", None, format!(r#"{{"type":"object",{GVK}}}"#), &[]),
        (
            "with properties",
            Some(
                r#"{"type":"object","properties":{"spec":{"type":"object"},"status":{"type":"object"}}}"#,
            ),
            format!(
                r#"{{"type":"object","properties":{{{V3_META},"spec":{{"type":"object"}},"status":{{"type":"object"}}}},{GVK}}}"#
            ),
            &[],
        ),
        (
            "with v3 nullable field",
            Some(
                r#"{"type":"object","properties":{"spec":{"type":"object", "nullable": true},"status":{"type":"object"}}}"#,
            ),
            format!(
                r#"{{"type":"object","properties":{{{V3_META},"spec":{{"type":"object","nullable":true}},"status":{{"type":"object"}}}},{GVK}}}"#
            ),
            &[],
        ),
        (
            "with default not pruned for v3",
            Some(
                r#"{"type":"object","properties":{"spec":{"type":"object","properties":{"field":{"type":"string","default":"foo"}}},"status":{"type":"object"}}}"#,
            ),
            format!(
                r#"{{"type":"object","properties":{{{V3_META},"spec":{{"type":"object","properties":{{"field":{{"type":"string","default":"foo"}}}}}},"status":{{"type":"object"}}}},{GVK}}}"#
            ),
            &[],
        ),
        (
            "with selectable fields",
            Some(
                r#"{"type":"object","properties":{"spec":{"type":"object","properties":{"field":{"type":"string","default":"foo"}}},"status":{"type":"object"}}}"#,
            ),
            format!(
                r#"{{"type":"object","properties":{{{V3_META},"spec":{{"type":"object","properties":{{"field":{{"type":"string","default":"foo"}}}}}},"status":{{"type":"object"}}}},{GVK},"x-kubernetes-selectable-fields":[{{"fieldPath":"spec.field"}}]}}"#
            ),
            &["spec.field"],
        ),
    ];
    for (name, schema, want, selectable) in cases {
        let p = publisher(schema.map(parse), "v1", selectable);
        assert_eq!(kind(&p, OpenApiDialect::V3), parse(&want), "{name}");
    }
}

#[test]
fn v2_prunes_defaults_and_v3_keeps_them() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"field": {"type": "string", "default": "foo"}}}}});
    let p = publisher(Some(schema), "v1", &[]);
    let v2 = p.definitions(OpenApiDialect::V2).kind;
    assert_eq!(
        v2["properties"]["spec"]["properties"]["field"],
        json!({"type": "string"})
    );
    let v3 = p.definitions(OpenApiDialect::V3).kind;
    assert_eq!(
        v3["properties"]["spec"]["properties"]["field"]["default"],
        "foo"
    );
}

#[test]
fn list_schema_is_upstreams() {
    let p = publisher(Some(json!({"type": "object"})), "v2", &[]);
    let list = p.definitions(OpenApiDialect::V2).list;
    let props = list["properties"].as_object().expect("properties");
    let mut keys: Vec<&str> = props.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["apiVersion", "items", "kind", "metadata"]);
    assert_eq!(list["description"], "FooList is a list of Foo");
    assert_eq!(list["required"], json!(["items"]));
    assert_eq!(props["apiVersion"]["type"], "string");
    assert_eq!(props["kind"]["type"], "string");
    assert_eq!(
        props["metadata"]["$ref"],
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"
    );
    assert_eq!(
        props["items"]["items"],
        json!({"$ref": "#/definitions/io.k8s.bar.v2.Foo"})
    );
    assert_eq!(
        props["items"]["description"],
        "List of foos. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md"
    );
    assert_eq!(
        list["x-kubernetes-group-version-kind"],
        json!([{"group": "bar.k8s.io", "kind": "FooList", "version": "v2"}])
    );
    let v3 = p.definitions(OpenApiDialect::V3).list;
    let items = v3["properties"]["items"]["items"]["$ref"]
        .as_str()
        .unwrap_or("");
    assert_eq!(items, "#/components/schemas/io.k8s.bar.v2.Foo");
    assert_eq!(
        v3["properties"]["metadata"]["allOf"][0]["$ref"],
        "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"
    );
}

#[test]
fn descriptions_are_upstreams() {
    let p = publisher(Some(json!({"type": "object"})), "v1", &[]);
    let kind = p.definitions(OpenApiDialect::V3).kind;
    let desc = |k: &str| {
        kind["properties"][k]["description"]
            .as_str()
            .unwrap_or("")
            .to_owned()
    };
    assert!(desc("apiVersion").starts_with("APIVersion defines the versioned schema"));
    assert!(desc("kind").starts_with("Kind is a string value representing the REST resource"));
    assert_eq!(
        desc("metadata"),
        "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
    );
    let list = p.definitions(OpenApiDialect::V3).list;
    assert!(
        list["properties"]["metadata"]["description"]
            .as_str()
            .is_some_and(|d| d.starts_with("Standard list metadata."))
    );
}

#[test]
fn embedded_resources_get_type_meta_and_metadata() {
    let schema = json!({"type": "object", "properties": {
        "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                     "properties": {"spec": {"type": "object"}}},
        "raw": {"type": "object", "x-kubernetes-embedded-resource": true,
                "x-kubernetes-preserve-unknown-fields": true},
    }});
    let p = publisher(Some(schema), "v1", &[]);
    for dialect in [OpenApiDialect::V2, OpenApiDialect::V3] {
        let kind = p.definitions(dialect).kind;
        let template = &kind["properties"]["template"];
        assert_eq!(template["required"], json!(["kind", "apiVersion"]));
        assert!(
            template["properties"]["apiVersion"]["description"]
                .as_str()
                .is_some_and(|d| d.starts_with("apiVersion defines the versioned schema"))
        );
        assert!(template["properties"]["metadata"].is_object());
        let raw = &kind["properties"]["raw"];
        // v2 leaves a node that keeps unknown fields alone.
        assert_eq!(
            raw.get("properties").is_some(),
            dialect == OpenApiDialect::V3
        );
    }
}
