//! Cases from upstream's `objectmeta/coerce_test.go` and `validation_test.go`.

use kas_apimachinery::validation::field::Path;
use serde_json::{Value, json};

use super::*;
use crate::schema::Structural;

fn meta(obj: Value, drop: bool, unknown: bool) -> (Result<Vec<String>, String>, Value) {
    let mut obj = obj;
    let map = obj.as_object_mut().expect("object");
    let opts = ObjectMetaOptions {
        drop_malformed_fields: drop,
        return_unknown_field_paths: unknown,
    };
    let res = get_object_meta(map, &Path::nil(), opts).map(|(_, paths)| paths);
    (res, obj)
}

fn unknown_and_malformed() -> Value {
    json!({"kind": "Pod", "apiVersion": "v1", "metadata": {
        "name": "my-meta", "unknownField": "foo", "generateName": null, "generation": null,
        "labels": {"foo": "bar"}, "annotations": 11}})
}

#[test]
fn malformed_metadata_fails_or_is_dropped() {
    let (res, _) = meta(unknown_and_malformed(), false, true);
    assert_eq!(
        res,
        Err("json: cannot unmarshal number into Go struct field ObjectMeta.annotations of type map[string]string".to_owned())
    );
    let (res, obj) = meta(unknown_and_malformed(), true, true);
    assert_eq!(res, Ok(vec!["metadata.unknownField".to_owned()]));
    assert_eq!(
        obj["metadata"],
        json!({"name": "my-meta", "labels": {"foo": "bar"}})
    );
    let (res, obj) = meta(unknown_and_malformed(), true, false);
    assert_eq!(res, Ok(vec![]));
    assert_eq!(
        obj["metadata"],
        json!({"name": "my-meta", "labels": {"foo": "bar"}})
    );
    let (res, _) = meta(json!({"metadata": "x"}), true, false);
    assert_eq!(
        res,
        Err("invalid metadata: expected object, got string".to_owned())
    );
}

#[test]
fn metadata_round_trips_as_object_meta() {
    let (res, obj) = meta(
        json!({"metadata": {"name": "a", "labels": {}, "creationTimestamp": null,
                            "ownerReferences": [{"apiVersion": "v1", "kind": "K", "name": "n",
                                                 "uid": "u", "x": 1}]}}),
        false,
        true,
    );
    assert_eq!(res, Ok(vec!["metadata.ownerReferences[0].x".to_owned()]));
    assert_eq!(
        obj["metadata"],
        json!({"name": "a", "ownerReferences": [{"apiVersion": "v1", "kind": "K", "name": "n", "uid": "u"}]})
    );
    let (_, obj) = meta(
        json!({"metadata": {"creationTimestamp": "2024-01-02T03:04:05.678+01:00"}}),
        false,
        false,
    );
    assert_eq!(
        obj["metadata"],
        json!({"creationTimestamp": "2024-01-02T02:04:05Z"})
    );
    let (_, obj) = meta(json!({"metadata": null}), false, false);
    assert_eq!(obj["metadata"], json!({}));
    let (res, obj) = meta(json!({"kind": "x"}), false, false);
    assert_eq!((res, obj), (Ok(vec![]), json!({"kind": "x"})));
}

fn embedded_schema() -> Structural {
    let embedded = json!({"type": "object", "x-kubernetes-embedded-resource": true,
        "x-kubernetes-preserve-unknown-fields": true});
    let mut nested = embedded.clone();
    nested["properties"] = json!({"embedded": embedded.clone()});
    Structural::new(&json!({"type": "object", "properties": {
        "embedded": embedded.clone(),
        "nested": nested,
        "items": {"type": "array", "items": embedded.clone()},
        "additionalProperties": {"type": "object", "additionalProperties": embedded},
    }}))
}

#[test]
fn coerce_embedded_resources() {
    let s = embedded_schema();
    let opts = ObjectMetaOptions {
        drop_malformed_fields: false,
        return_unknown_field_paths: true,
    };
    let mut obj =
        json!({"items": [{"apiVersion": "v1", "kind": "K", "metadata": {"name": "a", "bad": 1}}]});
    assert_eq!(
        coerce(&Path::nil(), &mut obj, &s, false, opts),
        Ok(vec!["items[0].metadata.bad".to_owned()])
    );
    assert_eq!(obj["items"][0]["metadata"], json!({"name": "a"}));
    let mut obj = json!({"embedded": {"kind": 1}});
    let err = coerce(&Path::nil(), &mut obj, &s, false, opts).expect_err("kind is no string");
    assert_eq!(
        err.to_string(),
        "embedded.kind: Invalid value: 1: must be a string"
    );
    let mut obj = json!({"embedded": {"metadata": {"name": 1}}});
    let err = coerce(&Path::nil(), &mut obj, &s, false, opts).expect_err("name is no string");
    assert_eq!(
        err.to_string(),
        r#"embedded.metadata: Invalid value: map[string]interface {}{"name":1}: json: cannot unmarshal number into Go struct field ObjectMeta.name of type string"#
    );
    let drop = ObjectMetaOptions {
        drop_malformed_fields: true,
        return_unknown_field_paths: false,
    };
    let mut obj = json!({"embedded": {"kind": 1, "metadata": {"name": 1, "namespace": "n"}}});
    assert_eq!(coerce(&Path::nil(), &mut obj, &s, false, drop), Ok(vec![]));
    assert_eq!(obj, json!({"embedded": {"metadata": {"namespace": "n"}}}));
}

fn validation(obj: Value, root: bool) -> Vec<String> {
    validate_embedded_resources(&Path::nil(), &obj, &embedded_schema(), root)
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn embedded_resources_need_type_meta() {
    assert!(validation(json!({}), false).is_empty());
    assert_eq!(
        validation(json!({}), true),
        [
            "apiVersion: Required value: must not be empty",
            "kind: Required value: must not be empty"
        ]
    );
    assert_eq!(
        validation(
            json!({"nested": {"embedded": {}}, "items": [{}], "additionalProperties": {"foo": {}}}),
            false
        ),
        [
            "additionalProperties[foo].apiVersion: Required value: must not be empty",
            "additionalProperties[foo].kind: Required value: must not be empty",
            "items[0].apiVersion: Required value: must not be empty",
            "items[0].kind: Required value: must not be empty",
            "nested.apiVersion: Required value: must not be empty",
            "nested.kind: Required value: must not be empty",
            "nested.embedded.apiVersion: Required value: must not be empty",
            "nested.embedded.kind: Required value: must not be empty",
        ]
    );
}

#[test]
fn embedded_type_and_object_meta_are_validated() {
    let errs = validation(
        json!({"embedded": {"apiVersion": "a/b/c", "kind": "foo.bar-com",
            "metadata": {"name": "..", "namespace": "$$$", "labels": {"#": "#"}, "annotations": {"#": "#"}}}}),
        false,
    );
    assert_eq!(errs.len(), 7, "{errs:#?}");
    assert_eq!(
        errs[0],
        r#"embedded.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c"#
    );
    assert!(errs[1].starts_with(r#"embedded.kind: Invalid value: "foo.bar-com": may have mixed case, but should otherwise match: a DNS-1035 label must consist of"#), "{}", errs[1]);
    assert_eq!(
        errs[2],
        r#"embedded.metadata.name: Invalid value: "..": may not be '..'"#
    );
    assert!(
        errs[3].starts_with(
            r#"embedded.metadata.namespace: Invalid value: "$$$": a lowercase RFC 1123 label"#
        ),
        "{}",
        errs[3]
    );
    assert!(
        errs[4].starts_with(
            r##"embedded.metadata.labels: Invalid value: "#": name part must consist of"##
        ),
        "{}",
        errs[4]
    );
    assert!(
        errs[5].starts_with(
            r##"embedded.metadata.labels: Invalid value: "#": a valid label must be"##
        ),
        "{}",
        errs[5]
    );
    assert!(
        errs[6].starts_with(
            r##"embedded.metadata.annotations: Invalid value: "#": name part must consist of"##
        ),
        "{}",
        errs[6]
    );
    // No name and no namespace are fine.
    assert!(validation(json!({"embedded": {"apiVersion": "v1", "kind": "Foo", "metadata": {"namespace": "kube-system"}}}), false).is_empty());
}
