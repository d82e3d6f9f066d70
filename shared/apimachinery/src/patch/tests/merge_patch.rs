use serde_json::{Value, json};

use crate::patch::{FieldValidation, PatchError, merge_patch, merge_patch_with};

fn apply(doc: Value, patch: &str) -> Value {
    merge_patch(&doc, patch.as_bytes()).expect(patch)
}

#[test]
fn rfc7386_appendix_a() {
    let cases: &[(Value, &str, Value)] = &[
        (json!({"a":"b"}), r#"{"a":"c"}"#, json!({"a":"c"})),
        (json!({"a":"b"}), r#"{"b":"c"}"#, json!({"a":"b","b":"c"})),
        (json!({"a":"b"}), r#"{"a":null}"#, json!({})),
        (json!({"a":"b","b":"c"}), r#"{"a":null}"#, json!({"b":"c"})),
        (json!({"a":["b"]}), r#"{"a":"c"}"#, json!({"a":"c"})),
        (json!({"a":"c"}), r#"{"a":["b"]}"#, json!({"a":["b"]})),
        (
            json!({"a":{"b":"c"}}),
            r#"{"a":{"b":"d","c":null}}"#,
            json!({"a":{"b":"d"}}),
        ),
        (json!({"a":[{"b":"c"}]}), r#"{"a":[1]}"#, json!({"a":[1]})),
        (json!({"e":null}), r#"{"a":1}"#, json!({"a":1,"e":null})),
        (
            json!({}),
            r#"{"a":{"bb":{"ccc":null}}}"#,
            json!({"a":{"bb":{}}}),
        ),
    ];
    for (doc, patch, want) in cases {
        assert_eq!(&apply(doc.clone(), patch), want, "patch {patch}");
    }
}

#[test]
fn evanphx_null_handling() {
    // Nulls stay inside arrays, but are pruned from objects inside added arrays.
    assert_eq!(
        apply(json!({}), r#"{"a":[1,null,{"x":null,"y":1}]}"#),
        json!({"a":[1,null,{"y":1}]})
    );
    // A non-object patch replacing an object keeps its nulls.
    assert_eq!(
        apply(json!({"a":{"x":1}}), r#"{"a":[{"x":null}]}"#),
        json!({"a":[{"x":null}]})
    );
    // An object patch over a scalar is pruned.
    assert_eq!(
        apply(json!({"a":"s"}), r#"{"a":{"x":null,"y":2}}"#),
        json!({"a":{"y":2}})
    );
    // An existing null member is replaced as if missing.
    assert_eq!(
        apply(json!({"a":null}), r#"{"a":{"x":null}}"#),
        json!({"a":{}})
    );
}

#[test]
fn non_object_patches() {
    // Ignore: an array patch replaces the document (nulls in it kept).
    let out = merge_patch_with(&json!({"a":1}), b"[1,null]", FieldValidation::Ignore).unwrap();
    assert_eq!(out, json!([1, null]));
    for body in ["null", "\"x\"", "5", "true", "{"] {
        let err =
            merge_patch_with(&json!({}), body.as_bytes(), FieldValidation::Ignore).unwrap_err();
        assert_eq!(
            err,
            PatchError::BadRequest("Invalid JSON Patch".to_owned()),
            "{body}"
        );
    }
    // Warn (the default): the strict pre-decode rejects first.
    let err = merge_patch(&json!({}), b"[1]").unwrap_err();
    assert_eq!(
        err.to_string(),
        "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}"
    );
    assert_eq!(
        merge_patch(&json!({}), b"{").unwrap_err().to_string(),
        "error decoding patch: unexpected end of JSON input"
    );
    assert_eq!(
        merge_patch(&json!({}), b"null").unwrap_err().to_string(),
        "Invalid JSON Patch"
    );
    assert_eq!(
        merge_patch(&json!({}), b"null")
            .unwrap_err()
            .to_status()
            .code,
        400
    );
}
