use serde_json::{Value, json};

use crate::patch::{FieldValidation, PatchError, json_patch, json_patch_with};
use crate::status::StatusReason;

fn apply(doc: Value, patch: &str) -> Result<Value, PatchError> {
    json_patch(&doc, patch.as_bytes())
}

#[test]
fn rfc6902_operations() {
    let doc = json!({"a": 1, "list": [1, 2, 3], "o": {"x": "y"}});
    let cases: &[(&str, Value)] = &[
        (
            r#"[{"op":"add","path":"/b","value":2}]"#,
            json!({"a":1,"b":2,"list":[1,2,3],"o":{"x":"y"}}),
        ),
        (
            r#"[{"op":"add","path":"/list/1","value":9}]"#,
            json!({"a":1,"list":[1,9,2,3],"o":{"x":"y"}}),
        ),
        (
            r#"[{"op":"add","path":"/list/-","value":9}]"#,
            json!({"a":1,"list":[1,2,3,9],"o":{"x":"y"}}),
        ),
        (
            r#"[{"op":"add","path":"/list/3","value":9}]"#,
            json!({"a":1,"list":[1,2,3,9],"o":{"x":"y"}}),
        ),
        (
            r#"[{"op":"remove","path":"/a"}]"#,
            json!({"list":[1,2,3],"o":{"x":"y"}}),
        ),
        (
            r#"[{"op":"remove","path":"/list/0"}]"#,
            json!({"a":1,"list":[2,3],"o":{"x":"y"}}),
        ),
        (
            r#"[{"op":"replace","path":"/o/x","value":"z"}]"#,
            json!({"a":1,"list":[1,2,3],"o":{"x":"z"}}),
        ),
        (
            r#"[{"op":"move","from":"/a","path":"/o/a"}]"#,
            json!({"list":[1,2,3],"o":{"a":1,"x":"y"}}),
        ),
        (
            r#"[{"op":"copy","from":"/o","path":"/p"}]"#,
            json!({"a":1,"list":[1,2,3],"o":{"x":"y"},"p":{"x":"y"}}),
        ),
        (
            r#"[{"op":"test","path":"/a","value":1},{"op":"add","path":"/t","value":true}]"#,
            json!({"a":1,"list":[1,2,3],"o":{"x":"y"},"t":true}),
        ),
        (
            r#"[{"op":"add","path":"/a~1b~0c","value":1}]"#,
            json!({"a":1,"a/b~c":1,"list":[1,2,3],"o":{"x":"y"}}),
        ),
        ("null", doc.clone()),
        ("[]", doc.clone()),
    ];
    for (patch, want) in cases {
        assert_eq!(
            &apply(doc.clone(), patch).expect(patch),
            want,
            "patch {patch}"
        );
    }
}

#[test]
fn evanphx_v4_quirks_upstream_keeps() {
    let doc = json!({"list": [1, 2, 3]});
    // Negative indexes count from the end.
    assert_eq!(
        apply(doc.clone(), r#"[{"op":"remove","path":"/list/-1"}]"#).unwrap(),
        json!({"list":[1,2]})
    );
    assert_eq!(
        apply(
            doc.clone(),
            r#"[{"op":"replace","path":"/list/-3","value":0}]"#
        )
        .unwrap(),
        json!({"list":[0,2,3]})
    );
    // replace of a missing object member adds it.
    assert_eq!(
        apply(doc.clone(), r#"[{"op":"replace","path":"/new","value":1}]"#).unwrap(),
        json!({"list":[1,2,3],"new":1})
    );
    // copy of a missing member copies null.
    assert_eq!(
        apply(doc.clone(), r#"[{"op":"copy","from":"/nope","path":"/c"}]"#).unwrap(),
        json!({"list":[1,2,3],"c":null})
    );
    // test against null passes for a missing member.
    assert!(
        apply(
            doc.clone(),
            r#"[{"op":"test","path":"/nope","value":null}]"#
        )
        .is_ok()
    );
    // replace of the whole document.
    assert_eq!(
        apply(
            doc.clone(),
            r#"[{"op":"replace","path":"","value":{"x":1}}]"#
        )
        .unwrap(),
        json!({"x":1})
    );
    // add without a value stores null.
    assert_eq!(
        apply(doc, r#"[{"op":"add","path":"/n"}]"#).unwrap(),
        json!({"list":[1,2,3],"n":null})
    );
}

#[test]
fn apply_failures_are_422_with_the_generic_message() {
    let doc = json!({"a": 1, "list": [1]});
    for patch in [
        r#"[{"op":"test","path":"/a","value":2}]"#,
        r#"[{"op":"remove","path":"/missing"}]"#,
        r#"[{"op":"add","path":"/x/y","value":1}]"#,
        r#"[{"op":"add","path":"","value":{}}]"#,
        r#"[{"op":"add","path":"/list/5","value":1}]"#,
        r#"[{"op":"replace","path":"/list/1","value":1}]"#,
        r#"[{"op":"move","from":"/nope","path":"/b"}]"#,
        r#"[{"op":"bogus","path":"/a"}]"#,
        r#"[{"path":"/a"}]"#,
        "[null]",
    ] {
        let err = apply(doc.clone(), patch).expect_err(patch);
        assert!(
            matches!(err, PatchError::Unprocessable(_)),
            "{patch}: {err:?}"
        );
        let status = err.to_status();
        assert_eq!(status.code, 422);
        assert_eq!(status.reason, Some(StatusReason::Invalid));
        assert_eq!(
            status.message.as_deref(),
            Some("the server rejected our request due to an error in our request")
        );
        let body = String::from_utf8(status.to_json()).unwrap();
        assert!(body.contains(r#""details":{}"#), "{body}");
    }
    assert_eq!(
        apply(doc.clone(), r#"[{"op":"test","path":"/a","value":2}]"#)
            .unwrap_err()
            .to_string(),
        "testing value /a failed: test failed"
    );
    assert_eq!(
        apply(doc, r#"[{"op":"bogus","path":"/a"}]"#)
            .unwrap_err()
            .to_string(),
        "Unexpected kind: bogus"
    );
}

#[test]
fn undecodable_patches_are_400() {
    let doc = json!({});
    let cases: &[(&str, FieldValidation, &str)] = &[
        (
            "{",
            FieldValidation::Warn,
            "error decoding patch: unexpected end of JSON input",
        ),
        ("{", FieldValidation::Ignore, "unexpected end of JSON input"),
        (
            "{}",
            FieldValidation::Strict,
            "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp",
        ),
        (
            "{}",
            FieldValidation::Ignore,
            "json: cannot unmarshal object into Go value of type jsonpatch.Patch",
        ),
        (
            "[1]",
            FieldValidation::Warn,
            "error decoding patch: json: cannot unmarshal number into Go value of type handlers.jsonPatchOp",
        ),
        (
            "[1]",
            FieldValidation::Ignore,
            "json: cannot unmarshal number into Go value of type jsonpatch.Operation",
        ),
        (
            r#"[{"op":"add","path":1}]"#,
            FieldValidation::Warn,
            "error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.path of type string",
        ),
    ];
    for (patch, validation, want) in cases {
        let err = json_patch_with(&doc, patch.as_bytes(), *validation).expect_err(patch);
        assert_eq!(err, PatchError::BadRequest((*want).to_owned()), "{patch}");
        assert_eq!(err.to_status().code, 400);
    }
}

#[test]
fn too_many_operations_is_413() {
    let ops: Vec<Value> = (0..10001)
        .map(|_| json!({"op":"test","path":"/a","value":1}))
        .collect();
    let body = serde_json::to_vec(&ops).unwrap();
    let err = json_patch(&json!({"a": 1}), &body).unwrap_err();
    let status = err.to_status();
    assert_eq!(status.code, 413);
    assert_eq!(
        status.message.as_deref(),
        Some(
            "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"
        )
    );
    let ok: Vec<Value> = (0..10000)
        .map(|_| json!({"op":"test","path":"/a","value":1}))
        .collect();
    assert!(json_patch(&json!({"a": 1}), &serde_json::to_vec(&ok).unwrap()).is_ok());
}
